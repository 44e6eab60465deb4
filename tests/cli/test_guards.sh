#!/bin/sh
# test_guards.sh - what an output and its messages must never do: contradictory
# gen options are a usage error; option errors are one line naming the option
# (with the nearest long option for a near miss), --version works after any
# command, and the options that do not go together, an operand where none is
# taken, a --seed beyond 64 bits and a bad GPUBATCH_BACKEND are usage errors;
# a --shape that contradicts an .npy header is an error naming the file; no signal that can be caught leaves a
# temporary file, and a file-size limit is a clear error; -f keeps the
# replaced file's mode and group; an output that is an input read through
# stdin is refused; a failed write to stdout (/dev/full) is an error line and
# status 1 for every command; a header that claims more data than the file
# holds says truncated with the file's name; a full $TMPDIR is not blamed on
# stdout; file names in error lines and in --json are escaped.
. "$(dirname "$0")/lib.sh"
need_python

# check_usage WHAT CMD...: exit 2, nothing written to stdout or left in $T/u.
check_usage() {
    what=$1
    shift
    "$@" >"$T/u.out" 2>"$T/u.err"
    st=$?
    if [ "$st" -ne 2 ]; then
        fail "$what: exit status $st, expected 2"
    elif [ -s "$T/u.out" ] || [ -e "$T/u.npy" ]; then
        fail "$what: wrote output"
    else
        ok
    fi
}
check_usage "gen --quadratic with --shape" "$GB" gen --quadratic 10 --shape 5 -o "$T/u.npy"
check_usage "gen --shape with --quadratic" "$GB" gen --shape 5 --quadratic 10 -o "$T/u.npy"
check_usage "gen --quadratic with --dist" "$GB" gen --quadratic 10 --dist normal -o "$T/u.npy"
check_usage "gen --quadratic with --low" "$GB" gen --quadratic 10 --low 2 --high 3 -o "$T/u.npy"
check_usage "gen --low with --mean" "$GB" gen --shape 5 --low 1 --mean 2 -o "$T/u.npy"
check_usage "gen --dist normal with --high" "$GB" gen --shape 5 --dist normal --high 2 -o "$T/u.npy"
check_usage "gen --std without --dist normal" "$GB" gen --shape 5 --std 2 -o "$T/u.npy"
"$GB" gen --shape 5 --dist normal --mean 2 --std 3 --seed 4 --no-compress -o "$T/n.npy"
check_eq "gen --dist normal --mean --std still works" 148 "$(wc -c <"$T/n.npy")"

# check_usage_line WHAT LINE CMD...: exit 2, no output, and stderr is LINE
# then the pointer to --help.
check_usage_line() {
    what=$1 line=$2
    shift 2
    "$@" >"$T/u.out" 2>"$T/u.err"
    st=$?
    cmd=$(printf '%s\n' "$line" | sed -n 's/^gpubatch \([a-z]*\): .*/\1/p')
    printf '%s\nTry '"'"'gpubatch %s --help'"'"' for more information.\n' "$line" "$cmd" >"$T/u.want"
    if [ "$st" -ne 2 ]; then
        fail "$what: exit status $st, expected 2 [$(cat "$T/u.err")]"
    elif [ -s "$T/u.out" ]; then
        fail "$what: wrote to stdout"
    elif ! cmp -s "$T/u.want" "$T/u.err"; then
        fail "$what: stderr [$(cat "$T/u.err")], expected [$(cat "$T/u.want")]"
    else
        ok
    fi
}
check_usage_line "missing argument of a long option" \
    "gpubatch reduce: option '--op' needs an argument" "$GB" reduce --op
check_usage_line "missing argument of an abbreviated long option" \
    "gpubatch reduce: option '--shard' needs an argument" "$GB" reduce --shar
check_usage_line "missing argument of a short option" \
    "gpubatch transpose: option '-o' needs an argument" "$GB" transpose -o
check_usage_line "near miss" \
    "gpubatch reduce: unknown option '--chunkk' (did you mean '--chunk'?)" "$GB" reduce --chunkk 1M x
check_usage_line "swapped letters" \
    "gpubatch gen: unknown option '--dtpye' (did you mean '--dtype'?)" "$GB" gen --dtpye=int8
check_usage_line "far from every option" \
    "gpubatch reduce: unknown option '--frobnicate'" "$GB" reduce --frobnicate
check_usage_line "a short one-letter miss is not suggested from far" \
    "gpubatch merge: unknown option '--zz'" "$GB" merge --zz
check_usage_line "unknown short option" "gpubatch reduce: unknown option '-Z'" "$GB" reduce -Z
check_usage_line "unknown short option in a group" "gpubatch merge: unknown option '-Z'" "$GB" merge --json -qZf
check_usage_line "argument to a flag" \
    "gpubatch reduce: option '--json' takes no argument" "$GB" reduce --json=1
check_usage_line "argument to a flag with a short form" \
    "gpubatch merge: option '--force' takes no argument" "$GB" merge --force=yes
check_usage_line "ambiguous abbreviation" \
    "gpubatch quadratic: option '--s' is ambiguous: --shard, --stdout, --streams, --shape" "$GB" quadratic --s 3
check_usage_line "-q with -v" \
    "gpubatch reduce: -q (--quiet) and -v (--verbose) do not go together" "$GB" reduce -q -v x
check_usage_line "gen -v with -q" \
    "gpubatch gen: -q (--quiet) and -v (--verbose) do not go together" "$GB" gen --shape 3 -v --quiet
check_usage_line "merge -q with -v" \
    "gpubatch merge: -q (--quiet) and -v (--verbose) do not go together" "$GB" merge -qv x
check_usage_line "gen -c with -o" \
    "gpubatch gen: -c (standard output) and -o $T/u.npy do not go together" \
    "$GB" gen --shape 3 -c -o "$T/u.npy"
[ -e "$T/u.npy" ] && fail "gen -c -o left an output" || ok
check_usage_line "info with an operand" \
    "gpubatch info: unexpected argument 'extra' (info takes no FILE)" "$GB" info extra
check_usage_line "gen --seed above 2^64-1" \
    "gpubatch gen: bad --seed '18446744073709551616' (0 to 18446744073709551615)" \
    "$GB" gen --shape 3 --seed 18446744073709551616 -c
check_usage_line "bench --seed above 2^64-1" \
    "gpubatch bench: bad --seed '99999999999999999999' (0 to 18446744073709551615)" \
    "$GB" bench --backend cpu --seed 99999999999999999999
check_usage_line "gen --quadratic above 2^64-1" \
    "gpubatch gen: bad --quadratic '18446744073709551616'" "$GB" gen --quadratic 18446744073709551616 -c
"$GB" gen --shape 4 --seed 18446744073709551615 -c >"$T/s1" && ok || fail "gen --seed 2^64-1 refused"
"$GB" gen --shape 4 --seed 0xffffffffffffffff -c >"$T/s2"
check_files_same "gen --seed 2^64-1 in hex" "$T/s1" "$T/s2"
"$GB" gen --shape 4 --seed 18446744073709551614 -c >"$T/s2"
cmp -s "$T/s1" "$T/s2" && fail "gen --seed 2^64-1 and 2^64-2 give the same data" || ok
check_usage_line "a bad GPUBATCH_BACKEND" \
    "gpubatch reduce: unknown backend 'gpus' in GPUBATCH_BACKEND (auto, cuda, cpu)" \
    env GPUBATCH_BACKEND=gpus "$GB" reduce "$T/n.npy"
GPUBATCH_BACKEND=gpus "$GB" reduce --backend cpu "$T/n.npy" >/dev/null 2>&1
check_eq "--backend wins over a bad GPUBATCH_BACKEND" 0 $?
GPUBATCH_BACKEND=cpu "$GB" reduce -v "$T/n.npy" 2>&1 >/dev/null | grep -q "^gpubatch: backend cpu: " && ok ||
    fail "GPUBATCH_BACKEND=cpu is not the CPU backend"
GPUBATCH_BACKEND= "$GB" reduce -v "$T/n.npy" 2>&1 >/dev/null | grep -q "^gpubatch: backend auto" && ok ||
    fail "an empty GPUBATCH_BACKEND is not auto"
"$GB" --version >"$T/v.want"
for cmd in reduce quadratic transpose gen info bench merge; do
    "$GB" $cmd --version >"$T/v.out" 2>"$T/v.err"
    check_eq "$cmd --version: status" 0 $?
    check_files_same "$cmd --version prints what gpubatch --version does" "$T/v.want" "$T/v.out"
done
grep -q "^gpubatch [0-9]" "$T/v.want" && ok || fail "--version: [$(head -1 "$T/v.want")]"
# A --shape (or --dtype) that the .npy header contradicts: one error line
# naming the file, status 1, no output.
check_error "reduce --shape against the header" \
    "^gpubatch: error: $T/n.npy: --shape 2x5 contradicts the .npy header's shape 5" \
    "$GB" reduce --backend cpu --shape 2x5 "$T/n.npy"
check_error "reduce --shape of as many elements, another rank" "contradicts the .npy header's shape 5" \
    "$GB" reduce --backend cpu --shape 5x1 "$T/n.npy"
"$GB" reduce --backend cpu --shape 5 "$T/n.npy" >/dev/null && ok || fail "reduce --shape that agrees"
"$GB" gen --shape 3x4 -o "$T/m34.npy"
check_error "transpose --shape against the header" "m34.npy: --shape 4x3 contradicts the .npy header's shape 3x4" \
    "$GB" transpose --backend cpu --shape 4x3 "$T/m34.npy" -o "$T/u.npy"
[ -e "$T/u.npy" ] && fail "a refused transpose left an output" || ok
"$GB" gen --quadratic 4 -o "$T/q4.npy.gz"
check_error "quadratic --shape against the header" "q4.npy.gz: --shape 3x4 contradicts the .npy header's shape 4x3" \
    "$GB" quadratic --backend cpu --shape 3x4 "$T/q4.npy.gz" -o "$T/u.npy"

# Signals that end the process remove the temporary file and end it by the
# same signal. (Sent from Python, which starts the child with the signal's
# default action.)
mkdir "$T/sig"
for sig in QUIT USR1 USR2 ALRM XCPU VTALRM PROF HUP; do
    $PY - "$GB" "$T/sig/big-$sig.npy.gz" $sig <<'END' >"$T/sig.out" 2>&1
import signal, subprocess, sys, time, os
gb, out, name = sys.argv[1:4]
num = getattr(signal, "SIG" + name)
def child():
    signal.signal(num, signal.SIG_DFL)
p = subprocess.Popen([gb, "gen", "--shape", "400000000", "-p", "1", "-9", "-o", out],
                     preexec_fn=child, stderr=subprocess.DEVNULL)
for _ in range(200):  # until the temporary file exists
    if os.listdir(os.path.dirname(out)):
        break
    time.sleep(0.01)
time.sleep(0.2)
p.send_signal(num)
print(p.wait() == -num)
END
    check_eq "SIG$sig ends the run by the signal" "True" "$(cat "$T/sig.out")"
    check_eq "SIG$sig leaves no file" "" "$(ls -A "$T/sig")"
done

# A file-size limit: EFBIG as a clear error, status 1, nothing left.
(ulimit -f 64 && "$GB" gen --shape 3000000 --no-compress -o "$T/sig/limited.npy") >"$T/fs.out" 2>"$T/fs.err"
check_eq "ulimit -f: status 1" 1 $?
check_eq "ulimit -f: the error" "gpubatch: error: $T/sig/limited.npy: File too large" "$(cat "$T/fs.err")"
check_eq "ulimit -f leaves no file" "" "$(ls -A "$T/sig")"

# An output that cannot fit the free space is refused before writing:
# plain (its exact size), compressed (estimated from a sample), and
# standard output redirected to a file; nothing is left.
check_error "gen of 40 TB" "huge.npy: the output needs 40000000000000 bytes and its file system has [0-9]* bytes free" \
    "$GB" gen --shape 10000000000000 -o "$T/sig/huge.npy"
check_error "gen of 40 TB compressed" "huge.npy.gz: the output needs about [0-9]* bytes and its file system has" \
    "$GB" gen --shape 10000000000000 -o "$T/sig/huge.npy.gz"
check_error "gen of 40 TB to a redirected stdout" "(stdout): the output needs 40000000000000 bytes" \
    sh -c '"$1" gen --shape 10000000000000 >"$2"' sh "$GB" "$T/sig/huge.out"
rm -f "$T/sig/huge.out"
check_eq "gen refused for room leaves no file" "" "$(ls -A "$T/sig")"

# -f over an existing file keeps its mode (and group), never widening it.
"$GB" gen --shape 10 --no-compress -o "$T/m.npy"
for mode in 600 640 444 604; do
    chmod $mode "$T/m.npy"
    "$GB" gen --shape 11 --no-compress -f -o "$T/m.npy"
    check_eq "-f keeps mode $mode" "$mode" "$(stat -c %a "$T/m.npy")"
done
if [ "$(id -u)" -eq 0 ] && getent group daemon >/dev/null 2>&1; then
    chgrp daemon "$T/m.npy"
    "$GB" gen --shape 12 --no-compress -f -o "$T/m.npy"
    check_eq "-f keeps the group" "daemon" "$(stat -c %G "$T/m.npy")"
fi

# The output is the input read through stdin: refused, the input intact.
"$GB" gen --shape 40x30 -o "$T/in.npy.gz"
cp "$T/in.npy.gz" "$T/in.copy"
check_error "transpose -f -o the stdin input" "in.npy.gz: would overwrite an input" \
    sh -c '"$1" transpose --backend cpu -f -o "$2" <"$2"' sh "$GB" "$T/in.npy.gz"
check_files_same "the stdin input is intact" "$T/in.npy.gz" "$T/in.copy"
"$GB" gen --quadratic 100 -o "$T/q.npy.gz"
cp "$T/q.npy.gz" "$T/q.copy"
check_error "quadratic -f -o the stdin input" "would overwrite an input" \
    sh -c '"$1" quadratic --backend cpu -f -o "$2" <"$2"' sh "$GB" "$T/q.npy.gz"
check_files_same "the quadratic stdin input is intact" "$T/q.npy.gz" "$T/q.copy"

# Standard output that is an input (-c, -o -, the default, appending, a
# descriptor open read-write, standard input's file) is refused before the
# first byte, as a named output is: status 1, the input intact.
"$GB" gen --shape 30x20 --no-compress -o "$T/so.npy"
"$GB" gen --quadratic 3000000 --no-compress -o "$T/soq.npy"
"$GB" reduce --backend cpu --shard 0/2 -o "$T/sop0.state" "$T/so.npy"
"$GB" reduce --backend cpu --shard 1/2 -o "$T/sop1.state" "$T/so.npy"
"$GB" quadratic --backend cpu --shard 0/2 -o "$T/sop0" "$T/soq.npy"
"$GB" quadratic --backend cpu --shard 1/2 -o "$T/sop1" "$T/soq.npy"
for f in so.npy soq.npy sop0.state sop0; do cp "$T/$f" "$T/$f.copy"; done
for c in 'transpose "$1/so.npy" -c 1<>"$1/so.npy"' 'transpose "$1/so.npy" -o - 1<>"$1/so.npy"' \
    'transpose "$1/so.npy" >>"$1/so.npy"' 'transpose - 1<>"$1/so.npy" <"$1/so.npy"' \
    'reduce "$1/so.npy" >>"$1/so.npy"' 'reduce "$1/sop1.state" "$1/so.npy" >>"$1/so.npy"' \
    'quadratic - 1<>"$1/soq.npy" <"$1/soq.npy"' \
    'quadratic --chunk 1M "$1/soq.npy" -c 1<>"$1/soq.npy"' \
    'merge "$1/sop0.state" "$1/sop1.state" >>"$1/sop0.state"' \
    'merge "$1/sop0" "$1/sop1" 1<>"$1/sop0"' 'merge "$1/sop0" "$1/sop1" -o - >>"$1/sop0"'; do
    check_error "stdout is an input: $c" "(stdout): would overwrite an input" \
        sh -c "GPUBATCH_BACKEND=cpu \"\$0\" $c" "$GB" "$T"
done
for f in so.npy soq.npy sop0.state sop0; do
    check_files_same "stdout is an input: $f intact" "$T/$f" "$T/$f.copy"
done
"$GB" transpose --backend cpu "$T/so.npy" >/dev/null
check_eq "stdout on /dev/null is no input" 0 $?

# stdout on a full disk: one error line and status 1, for every command.
"$GB" reduce --backend cpu --shard 0/1 -o "$T/s.state" "$T/in.npy.gz"
for cmd in "reduce --backend cpu $T/in.npy.gz" "merge $T/s.state" "info" "--help" "--version" \
    "reduce --help" "merge --help" "gen --help"; do
    # shellcheck disable=SC2086
    check_error "$cmd > /dev/full" "(stdout): No space left on device" sh -c '"$0" "$@" >/dev/full' "$GB" $cmd
done

# A header that claims far more data than the file holds: truncated, named.
$PY - "$T/huge.npy" <<'END'
import sys
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }"
h += b" " * (118 - len(h)) + b"\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + bytes(4000))
END
gzip -c "$T/huge.npy" >"$T/huge.npy.gz"
check_error "transpose of a 4 KB file claiming 100000x100000" \
    "huge.npy: truncated: expected 40000000000 bytes of data, the input has 4000" \
    "$GB" transpose --backend cpu "$T/huge.npy" -o "$T/t.npy"
check_error "transpose of its gzip" "huge.npy.gz: truncated: expected 40000000000 bytes" \
    "$GB" transpose --backend cpu "$T/huge.npy.gz" -o "$T/t.npy"
[ -e "$T/t.npy" ] && fail "a refused transpose left an output" || ok

# A spool in a $TMPDIR that cannot take it is named, not "(stdout)".
"$GB" gen --quadratic 300000 --no-compress -o "$T/q3.npy"
(ulimit -f 200 && "$GB" quadratic --backend cpu --out-layout planes "$T/q3.npy" -c 2>"$T/tmp.err" | cat >/dev/null)
grep -q "(stdout)" "$T/tmp.err" && fail "full TMPDIR blamed on stdout: $(cat "$T/tmp.err")" || ok
grep -q "writing a temporary file: File too large" "$T/tmp.err" && ok ||
    fail "full TMPDIR: [$(cat "$T/tmp.err")]"

# File names with a newline, an escape sequence, a backslash and a byte that
# is not UTF-8: escaped in error lines, valid JSON.
bad=$(printf 'x\ny\033[31m\\z\377.npy.gz')
"$GB" reduce --backend cpu "$T/$bad" >"$T/e.out" 2>"$T/e.err"
check_eq "error line count for an odd name" 1 "$(wc -l <"$T/e.err")"
printf '%s\n' "gpubatch: error: $T/x\\ny\\x1b[31m\\\\z\\xff.npy.gz: No such file or directory" >"$T/e.want"
check_files_same "odd name escaped in the error line" "$T/e.want" "$T/e.err"
cp "$T/in.npy.gz" "$T/$bad"
"$GB" reduce --backend cpu --json "$T/$bad" >"$T/e.json"
$PY -c 'import json, sys; d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8")); print(d["file"].endswith("x\ny\x1b[31m\\z\\xff.npy.gz"))' \
    "$T/e.json" >"$T/e.ok" 2>&1
check_eq "--json of an odd name is valid UTF-8 JSON" "True" "$(cat "$T/e.ok")"
summary
