#!/bin/sh
# test_gzip_out.sh - blocked gzip written by `gen` and `quadratic` (CPU
# backend) at levels 1, 6 and 9 reads back with gzip -d, pigz -d, bgzip -d
# (and passes bgzip -t), Python's gzip module and `gpubatch reduce`; the
# bytes do not depend on -p; incompressible data is stored (each member 26
# bytes of framing and 5 of stored-block header over its data). A missing
# external tool is skipped with a note.
. "$(dirname "$0")/lib.sh"
need_python
export GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1

# check_readers WHAT GZ PLAIN [REDUCE_OPTION...]: every reader gives PLAIN's
# bytes from GZ, and `reduce` (with the options, for raw data) the same
# values from both.
check_readers() {
    for tool in gzip pigz bgzip; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "note: $tool not installed, check skipped" >&2
            continue
        fi
        "$tool" -dc <"$2" >"$T/back" 2>"$T/tool.err" || fail "$1: $tool -dc failed"
        check_files_same "$1: $tool -dc" "$3" "$T/back"
    done
    if command -v bgzip >/dev/null 2>&1; then
        if bgzip -t "$2" 2>"$T/tool.err"; then ok; else fail "$1: bgzip -t: $(cat "$T/tool.err")"; fi
    fi
    "$PY" -c 'import gzip, sys; sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())' "$2" \
        >"$T/back" || fail "$1: python gzip failed"
    check_files_same "$1: python gzip" "$3" "$T/back"
    what=$1 gz=$2 plain=$3
    shift 3
    a=$("$GB" reduce -q --op sum,min,max,count "$@" "$gz" | sed 's/  .*//')
    b=$("$GB" reduce -q --op sum,min,max,count "$@" "$plain" | sed 's/  .*//')
    case $b in *count*) ok ;; *) fail "$what: reduce of the plain data printed [$b]" ;; esac
    check_eq "$what: reduce of gz and plain" "$b" "$a"
}

"$GB" gen -q --shape 300000 --dist normal --seed 3 --no-compress -o "$T/f.npy"
"$GB" gen -q --quadratic 50000 --seed 3 --no-compress -o "$T/coef.npy"
"$GB" quadratic -q --backend cpu --raw --no-compress -o "$T/roots" "$T/coef.npy"
for level in 1 6 9; do
    "$GB" gen -q --shape 300000 --dist normal --seed 3 -$level -p 1 -o "$T/f$level.npy.gz"
    "$GB" gen -q --shape 300000 --dist normal --seed 3 -$level -p 3 -o "$T/f$level-p3.npy.gz"
    check_files_same "gen -$level: -p 1 and -p 3" "$T/f$level.npy.gz" "$T/f$level-p3.npy.gz"
    check_readers "gen -$level" "$T/f$level.npy.gz" "$T/f.npy"
    "$GB" quadratic -q --backend cpu --raw -$level -p 2 -o "$T/r$level.gz" "$T/coef.npy"
    check_readers "quadratic -$level" "$T/r$level.gz" "$T/roots" --dtype float32
done

# Incompressible: uniform random bytes are stored, member by member.
"$GB" gen -q --shape 200000 --dtype uint8 --seed 5 --raw -1 -o "$T/u8.gz"
"$GB" gen -q --shape 200000 --dtype uint8 --seed 5 --raw --no-compress -o "$T/u8"
n=200000
members=$(((n + 65279) / 65280))
check_eq "stored size" "$((n + members * 31 + 28))" "$(wc -c <"$T/u8.gz" | tr -d ' ')"
gzip -dc <"$T/u8.gz" >"$T/back"
check_files_same "stored round trip" "$T/u8" "$T/back"
summary
