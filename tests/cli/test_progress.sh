#!/bin/sh
# test_progress.sh - the progress line: drawn on a terminal's stderr (a
# pseudo-terminal here) for reduce, quadratic, transpose and gen, with the size, the
# percentage and the time left when the input size is known; erased at the
# end and before an error line; never written when stderr is a file or a
# pipe, with -q, or for work shorter than the delay.
. "$(dirname "$0")/lib.sh"
need_python
ESC=$(printf '\033')
CR=$(printf '\r')

# ptyrun OUT ERR CMD...: runs CMD with stdout to OUT and stderr on a
# pseudo-terminal whose bytes go to ERR; prints the exit status.
ptyrun() {
    $PY - "$@" <<'END'
import os, pty, subprocess, sys
out, err, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
master, slave = pty.openpty()
with open(out, "wb") as fout:
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fout, stderr=slave)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO once the child has closed the terminal
        break
    if not chunk:
        break
    data += chunk
os.close(master)
open(err, "wb").write(data)
print(p.wait())
END
}

"$GB" gen --shape 3000000 --seed 5 --no-compress -o "$T/a.npy"
"$GB" gen --shape 3000000 --seed 5 -o "$T/a.npy.gz"
"$GB" gen --quadratic 300000 -o "$T/q.npy.gz"
"$GB" reduce -q --backend cpu --op sum,max "$T/a.npy" >"$T/want"
export GPUBATCH_PROGRESS_DELAY=0

# On a terminal: name, sizes, percentage, rate and time left, then erased.
st=$(ptyrun "$T/out" "$T/err" "$GB" reduce --backend cpu --chunk 128k --op sum,max "$T/a.npy")
check_eq "reduce on a tty: status" 0 "$st"
check_files_same "reduce on a tty: results" "$T/want" "$T/out"
grep -q "$T/a.npy: [0-9.]* [kMG]*B of 12.00 MB ([0-9]*%), [0-9.]* [kMG]*B/s, [0-9]*:[0-9][0-9] left" "$T/err" \
    && ok || fail "reduce on a tty: no progress line in [$(cat -v "$T/err" | head -c 300)]"
case $(cat "$T/err") in *"$CR$ESC[K") ok ;; *) fail "reduce on a tty: line not erased at the end: [$(cat -v "$T/err" | tail -c 100)]" ;; esac
check_eq "reduce on a tty: nothing but the line" "" "$(tr "$CR" '\n' <"$T/err" | grep -v -e '^$' -e 'left' -e "^$ESC\[K\$")"

# Compressed input: progress over the compressed bytes of the file.
size=$(wc -c <"$T/a.npy.gz")
st=$(ptyrun "$T/out" "$T/err" "$GB" reduce --backend cpu --chunk 128k --op sum,max "$T/a.npy.gz")
check_eq "gzip input on a tty: status" 0 "$st"
grep -q "of $($PY -c "print('%.2f MB' % ($size / 1e6))") (" "$T/err" && ok \
    || fail "gzip input: total is not the compressed size $size: [$(cat -v "$T/err" | head -c 200)]"

# Standard input from a pipe: bytes and rate, no total; from a file: its size.
st=$(ptyrun "$T/out" "$T/err" sh -c "cat \"$T/a.npy\" | \"$GB\" reduce --backend cpu --chunk 128k -")
check_eq "piped stdin on a tty: status" 0 "$st"
grep -q "$CR-: [0-9.]* [kMG]*B, [0-9.]* [kMG]*B/s$ESC" "$T/err" \
    && ok || fail "piped stdin on a tty: [$(cat -v "$T/err" | head -c 200)]"
grep -q "left" "$T/err" && fail "piped stdin on a tty: a time left without a size" || ok
st=$(ptyrun "$T/out" "$T/err" sh -c "exec \"$GB\" reduce --backend cpu --chunk 128k - <\"$T/a.npy\"")
check_eq "stdin from a file on a tty: status" 0 "$st"
grep -q "$CR-: .* of 12.00 MB" "$T/err" && ok || fail "stdin from a file: [$(cat -v "$T/err" | head -c 200)]"

# quadratic and gen draw it too.
st=$(ptyrun "$T/out" "$T/err" "$GB" quadratic --backend cpu --chunk 128k "$T/q.npy.gz" -o "$T/r.npy.gz")
check_eq "quadratic on a tty: status" 0 "$st"
grep -q "q.npy.gz: .* left" "$T/err" && ok || fail "quadratic on a tty: [$(cat -v "$T/err" | head -c 200)]"
st=$(ptyrun "$T/out" "$T/err" "$GB" gen --shape 3000000 -o "$T/g.npy.gz")
check_eq "gen on a tty: status" 0 "$st"
grep -q "g.npy.gz: .* of 12.00 MB" "$T/err" && ok || fail "gen on a tty: [$(cat -v "$T/err" | head -c 200)]"

# transpose: a batch follows its input; a matrix larger than --chunk, staged
# whole and written only after its input is read, follows its output then.
"$GB" gen --shape 1500,1000 --seed 6 --no-compress -o "$T/m.npy"
"$GB" transpose --backend cpu --chunk 256k "$T/m.npy" -o "$T/tw.npy"
st=$(ptyrun "$T/out" "$T/err" "$GB" transpose --backend cpu --chunk 256k "$T/m.npy" -o "$T/tp.npy")
check_eq "transpose of a staged matrix on a tty: status" 0 "$st"
check_files_same "transpose of a staged matrix on a tty: output" "$T/tw.npy" "$T/tp.npy"
grep -q "$CR$T/tp.npy: [0-9.]* [kMG]*B of 6.00 MB ([0-9]*%), .* left" "$T/err" && ok \
    || fail "transpose of a staged matrix on a tty: no line for the output: [$(cat -v "$T/err" | head -c 300)]"
case $(cat "$T/err") in *"$CR$ESC[K") ok ;; *) fail "transpose on a tty: line not erased at the end" ;; esac
"$GB" gen --shape 100,150,100 --seed 6 --no-compress -o "$T/b.npy"
st=$(ptyrun "$T/out" "$T/err" "$GB" transpose --backend cpu --chunk 256k "$T/b.npy" -o "$T/tb.npy")
check_eq "transpose of a batch on a tty: status" 0 "$st"
grep -q "$CR$T/b.npy: .* of 6.00 MB (" "$T/err" && ok \
    || fail "transpose of a batch on a tty: [$(cat -v "$T/err" | head -c 300)]"

# An error: the line is erased first, so the message starts its own line.
head -c 2000000 "$T/a.npy.gz" >"$T/cut.npy.gz"
st=$(ptyrun "$T/out" "$T/err" "$GB" reduce --backend cpu --chunk 128k "$T/cut.npy.gz")
check_eq "error on a tty: status" 1 "$st"
grep -q "left" "$T/err" && ok || fail "error on a tty: no progress before the error"
grep -q "$CR$ESC\[Kgpubatch: error: $T/cut.npy.gz: gzip member at byte [0-9]*: unexpected end" "$T/err" && ok \
    || fail "error on a tty: not erased before the message: [$(cat -v "$T/err" | tail -c 200)]"

# Never without a terminal, never with -q, not before the delay.
"$GB" reduce --backend cpu --chunk 128k "$T/a.npy" >/dev/null 2>"$T/err.file"
check_eq "stderr to a file" "" "$(cat "$T/err.file")"
"$GB" reduce --backend cpu --chunk 128k "$T/a.npy" 2>&1 >/dev/null | cat >"$T/err.pipe"
check_eq "stderr to a pipe" "" "$(cat "$T/err.pipe")"
"$GB" gen --shape 3000000 -c 2>"$T/err.gen" | cat >/dev/null
check_eq "gen with stderr to a file" "" "$(cat "$T/err.gen")"
st=$(ptyrun "$T/out" "$T/err" "$GB" reduce -q --backend cpu --chunk 128k "$T/a.npy")
check_eq "-q on a tty: status" 0 "$st"
check_eq "-q on a tty" "" "$(cat "$T/err")"
GPUBATCH_PROGRESS_DELAY=1000 ptyrun "$T/out" "$T/err" "$GB" reduce --backend cpu "$T/a.npy" >/dev/null
check_eq "work shorter than the delay" "" "$(cat "$T/err")"

# -v's timeline: when the devices opened, the first and the last chunk were
# done and the command ended, in seconds after the process started.
timeline() {
    sed -n -e 's/.*devices open \([0-9.]*\) s after the process started$/\1/p' \
        -e 's/.*first chunk done \([0-9.]*\) s, last \([0-9.]*\) s after the process started$/\1 \2/p' \
        -e 's/^gpubatch: done \([0-9.]*\) s after the process started$/\1/p' "$1" | tr '\n' ' '
}
# in_order TIMES N: "ordered" when TIMES holds N numbers, none below the one before.
in_order() {
    echo "$1" | awk -v n="$2" '{ for (i = 2; i <= NF; i++) if ($i + 0 < $(i - 1) + 0) bad = 1
        print (NF == n && !bad) ? "ordered" : "not in order: " $0 }'
}
# waits TEXT: "fits" when the loop's waits for input and for results and its
# writing (three numbers) add up to no more than the run's end.
waits() {
    sed -n -e 's/.*the main thread waited \([0-9.]*\) s for input and \([0-9.]*\) s for results, and wrote for \([0-9.]*\) s$/\1 \2 \3/p' \
        -e 's/^gpubatch: done \([0-9.]*\) s after the process started$/\1/p' "$1" | tr '\n' ' ' |
        awk '{ print (NF == 4 && $1 + $2 + $3 <= $4 + 0.0005) ? "fits" : "does not fit: " $0 }'
}
"$GB" gen --shape 300000 --seed 1 -o "$T/tl.npy.gz" -f
"$GB" reduce -v --backend cpu --chunk 256k --op sum "$T/tl.npy.gz" >/dev/null 2>"$T/err"
check_eq "-v timeline: reduce, cpu" ordered "$(in_order "$(timeline "$T/err")" 3)"
check_eq "-v waits: reduce, cpu" fits "$(waits "$T/err")"
"$GB" gen --quadratic 200000 --seed 1 -o "$T/tlq.npy.gz" -f
"$GB" quadratic -v --backend cpu --chunk 256k "$T/tlq.npy.gz" -o "$T/tlr.npy.gz" -f 2>"$T/err"
check_eq "-v timeline: quadratic, cpu" ordered "$(in_order "$(timeline "$T/err")" 3)"
check_eq "-v waits: quadratic, cpu" fits "$(waits "$T/err")"
FAKE="$top/${BUILD:-build}/tests/libfakecuda.so"
unset CUDA_VISIBLE_DEVICES # the stand-in reads it as a driver does
if [ -f "$FAKE" ]; then
    GPUBATCH_LIBCUDA="$FAKE" "$GB" reduce -v --backend cuda --chunk 256k --op sum "$T/tl.npy.gz" \
        >/dev/null 2>"$T/err"
    check_eq "-v timeline: reduce, cuda" ordered "$(in_order "$(timeline "$T/err")" 4)"
    check_eq "-v waits: reduce, cuda" fits "$(waits "$T/err")"
    GPUBATCH_LIBCUDA="$FAKE" "$GB" quadratic -v --backend cuda --chunk 256k "$T/tlq.npy.gz" \
        -o "$T/tlr.npy.gz" -f 2>"$T/err"
    check_eq "-v waits: quadratic, cuda" fits "$(waits "$T/err")"
fi
"$GB" reduce -v --backend cpu --op sum "$T/missing.npy" >/dev/null 2>"$T/err"
check_eq "-v timeline: no end after an error" 0 "$(grep -c 'gpubatch: done' "$T/err")"
summary
