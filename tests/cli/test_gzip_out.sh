#!/bin/sh
# test_gzip_out.sh - blocked gzip written by `gen` and `quadratic` (CPU
# backend) at levels 1, 6 and 9 reads back with gzip -d, pigz -d, bgzip -d
# (and passes bgzip -t), Python's gzip module and `gpubatch reduce`; the
# bytes do not depend on -p; incompressible data is stored (each member 26
# bytes of framing and 5 of stored-block header over its data). The output's
# name says what it holds (.gz: blocked gzip; any other name and stdout:
# plain, numpy reads it) unless --compress, a level or --no-compress says
# otherwise, and the options that contradict each other or the name are usage
# errors. A missing external tool is skipped with a note.
. "$(dirname "$0")/lib.sh"
need_python
export GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1

# check_readers WHAT GZ PLAIN [REDUCE_OPTION...]: every reader gives PLAIN's
# bytes from GZ, and `reduce` (with the options, for raw data) the same
# values from both.
check_readers() {
    for tool in gzip pigz bgzip; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            missing "$tool not installed, check skipped"
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

# is_bgzf FILE: its first member is a BGZF block (gzip magic, FEXTRA, "BC").
is_bgzf() {
    [ "$(od -An -tx1 -N 4 "$1" | tr -d ' \n')" = 1f8b0804 ] &&
        [ "$(od -An -tx1 -j 12 -N 2 "$1" | tr -d ' \n')" = 4243 ]
}
# is_npy FILE: it starts as an .npy file does.
is_npy() {
    [ "$(od -An -c -N 6 "$1" | tr -d ' \n')" = "223NUMPY" ]
}
# check_kind WHAT KIND FILE: FILE holds KIND (bgzf or npy).
check_kind() {
    if is_$2 "$3"; then ok; else fail "$1: $3 is not $2: $(od -An -tx1 -N 16 "$3")"; fi
}
G() { "$GB" gen -q --shape 1000x3 --seed 9 "$@"; }
G -o "$T/n.npy"
check_kind "-o x.npy" npy "$T/n.npy"
G --no-compress -o "$T/n-ref.npy"
check_files_same "-o x.npy: the bytes of --no-compress" "$T/n-ref.npy" "$T/n.npy"
G -o "$T/n.npy.gz"
check_kind "-o x.npy.gz" bgzf "$T/n.npy.gz"
gzip -dc "$T/n.npy.gz" | cmp -s - "$T/n.npy" && ok || fail "-o x.npy.gz: not the array's blocked gzip"
G -1 -o "$T/n1.npy.gz"
check_files_same "-o x.npy.gz is level 1" "$T/n1.npy.gz" "$T/n.npy.gz"
G -o - >"$T/n-stdout"
check_files_same "-o -: plain" "$T/n.npy" "$T/n-stdout"
G -c >"$T/n-stdout"
check_files_same "-c: plain" "$T/n.npy" "$T/n-stdout"
G >"$T/n-stdout"
check_files_same "no -o: plain" "$T/n.npy" "$T/n-stdout"
G --compress -c >"$T/n-stdout"
check_files_same "--compress -c: level 1" "$T/n.npy.gz" "$T/n-stdout"
G -6 -c >"$T/n-stdout"
G -6 -o "$T/n6.npy.gz"
check_files_same "-6 -c: as -6 -o x.gz" "$T/n6.npy.gz" "$T/n-stdout"
G --compress -o "$T/nc.npy"
check_files_same "--compress -o x.npy: level 1 whatever the name" "$T/n.npy.gz" "$T/nc.npy"
G -6 --compress -o "$T/nc6.npy"
check_files_same "-6 --compress -o x.npy: level 6" "$T/n6.npy.gz" "$T/nc6.npy"
G --no-compress -o "$T/np.gz"
check_files_same "--no-compress -o x.gz: plain whatever the name" "$T/n.npy" "$T/np.gz"
NP=$(numpy_python)
if [ -n "$NP" ]; then
    check_eq "numpy loads -o x.npy" "(1000, 3) float32" \
        "$("$NP" -c "import numpy as n; a = n.load('$T/n.npy'); print(a.shape, a.dtype)")"
    check_eq "numpy loads transpose's plain standard output" "(3, 1000) float32" \
        "$("$GB" transpose --backend cpu "$T/n.npy" -c | "$NP" -c "import io, sys, numpy as n
a = n.load(io.BytesIO(sys.stdin.buffer.read())); print(a.shape, a.dtype)")"
fi
# Plain input gives plain output under a plain name, and blocked gzip under .gz.
"$GB" transpose -q --backend cpu "$T/n.npy" -o "$T/t.npy"
check_kind "transpose x.npy -o y.npy" npy "$T/t.npy"
"$GB" transpose -q --backend cpu "$T/n.npy.gz" -o "$T/t2.npy"
check_files_same "transpose x.npy.gz -o y.npy: plain" "$T/t.npy" "$T/t2.npy"
"$GB" transpose -q --backend cpu "$T/n.npy" -o "$T/t.npy.gz"
gzip -dc "$T/t.npy.gz" | cmp -s - "$T/t.npy" && ok || fail "transpose -o y.npy.gz"
"$GB" quadratic -q --backend cpu "$T/coef.npy" -o "$T/r.npy"
check_kind "quadratic -o r.npy" npy "$T/r.npy"
"$GB" quadratic -q --backend cpu "$T/coef.npy" -o "$T/r.npy.gz"
gzip -dc "$T/r.npy.gz" | cmp -s - "$T/r.npy" && ok || fail "quadratic -o r.npy.gz"
# Standard output on a terminal: refused (binary or compressed data) unless -f.
# on_tty CMD...: runs CMD with stdout on a pseudo-terminal; prints its exit
# status and the bytes it wrote there.
on_tty() {
    "$PY" - "$@" <<'END' 2>"$T/tty.err"
import os, pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave)
os.close(slave)
n = 0
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    n += len(chunk)
print(p.wait(), n)
END
}
check_eq "plain data to a terminal: refused" "1 0" "$(on_tty "$GB" gen --shape 3 -c)"
grep -q "refusing to write binary data to a terminal" "$T/tty.err" && ok || fail "tty: [$(cat "$T/tty.err")]"
check_eq "compressed data to a terminal: refused" "1 0" "$(on_tty "$GB" gen --shape 3 --compress -c)"
grep -q "refusing to write compressed data to a terminal" "$T/tty.err" && ok || fail "tty: [$(cat "$T/tty.err")]"
check_eq "-f writes to a terminal" "0" "$(on_tty "$GB" gen --shape 3 -f -c | cut -d' ' -f1)"
# Usage errors (status 2, one line naming the problem, no output file).
check_usage_out() {
    what=$1 pat=$2
    shift 2
    rm -f "$T/u.npy" "$T/u.npy.gz"
    "$@" >"$T/u.out" 2>"$T/u.err"
    st=$?
    if [ $st -ne 2 ]; then fail "$what: exit status $st, expected 2"
    elif ! head -1 "$T/u.err" | grep -q -- "$pat"; then fail "$what: [$(cat "$T/u.err")]"
    elif [ -s "$T/u.out" ] || [ -e "$T/u.npy" ] || [ -e "$T/u.npy.gz" ]; then fail "$what: wrote output"
    else ok; fi
}
check_usage_out "gen -6 -o x.npy" "^gpubatch gen: -6 asks for blocked gzip, but '.*u.npy' does not end in .gz" \
    G -6 -o "$T/u.npy"
check_usage_out "transpose -9 -o x.npy" "does not end in .gz" \
    "$GB" transpose --backend cpu -9 "$T/n.npy" -o "$T/u.npy"
check_usage_out "quadratic -2 -o x.npy" "does not end in .gz" \
    "$GB" quadratic --backend cpu -2 "$T/coef.npy" -o "$T/u.npy"
check_usage_out "gen --compress --no-compress" "do not go together" G --compress --no-compress -o "$T/u.npy"
check_usage_out "gen -3 --no-compress" "do not go together" G -3 --no-compress -o "$T/u.npy.gz"
check_usage_out "gen -c -o x" "^gpubatch gen: -c (standard output) and -o .* do not go together" \
    G -c -o "$T/u.npy"
check_usage_out "transpose -c -o x" "do not go together" "$GB" transpose "$T/n.npy" -o "$T/u.npy" -c
summary
