#!/bin/sh
# test_faults.sh - faults a batch job meets: a full disk, SIGINT/SIGTERM in the
# middle of a run, a closed downstream pipe, no driver. Each must end with a
# clear message (or quietly, for the pipe), a non-zero status, and no partial
# or temporary output file.
. "$(dirname "$0")/lib.sh"
NODRV=/nonexistent/libcuda.so.1

# Disk full: the error names the output, the status is 1.
check_error "gen to /dev/full" "No space left on device" "$GB" gen --shape 3000000 -o /dev/full
"$GB" gen --quadratic 1000 --no-compress -o "$T/q.npy"
check_error "quadratic to /dev/full" "No space left on device" \
    "$GB" quadratic -q --backend cpu "$T/q.npy" -o /dev/full

# A signal in the middle of a run removes the temporary file. (The signal is
# sent from Python: a shell's background job would start with SIGINT ignored.)
for sig in INT TERM; do
    case $sig in INT) num=2 ;; TERM) num=15 ;; esac
    $PY - "$GB" "$T/big-$sig.npy.gz" $sig <<'END' >"$T/sig.out" 2>&1
import signal, subprocess, sys, time
gb, out, name = sys.argv[1:4]
p = subprocess.Popen([gb, "gen", "--shape", "400000000", "-p", "1", "-9", "-o", out],
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(1)
p.send_signal(getattr(signal, "SIG" + name))
print(p.wait())
END
    check_eq "SIG$sig ends the run by the signal" "-$num" "$(cat "$T/sig.out")"
    left=$(ls -A "$T" | grep "big-$sig" || true)
    check_eq "SIG$sig leaves no file" "" "$left"
done

# A closed downstream pipe: a non-zero status and no message.
{ "$GB" gen --shape 50000000 --no-compress -c 2>"$T/pipe.err"; echo $? >"$T/pipe.st"; } | head -c 100 >/dev/null
[ "$(cat "$T/pipe.st")" -ne 0 ] && ok || fail "closed pipe: status 0"
check_eq "closed pipe is quiet" "" "$(cat "$T/pipe.err")"

# No driver: auto falls back with one warning; cuda is a clear error.
"$GB" gen --shape 1000 --no-compress -o "$T/a.npy"
GPUBATCH_LIBCUDA=$NODRV "$GB" reduce --op count "$T/a.npy" >"$T/out" 2>"$T/err"
check_eq "fallback result" "count 1000  $T/a.npy" "$(cat "$T/out")"
check_eq "fallback warns once" 1 "$(grep -c 'no NVIDIA driver.*using the CPU backend' "$T/err")"
export GPUBATCH_LIBCUDA=$NODRV
check_error "--backend cuda without a driver" "no NVIDIA driver" "$GB" reduce --backend cuda "$T/a.npy"
check_error "quadratic --backend cuda without a driver" "no NVIDIA driver" \
    "$GB" quadratic --backend cuda "$T/q.npy" -o "$T/r.npy.gz"
[ -e "$T/r.npy.gz" ] && fail "failed quadratic left an output" || ok
"$GB" info >"$T/info" 2>&1
grep -q "^driver: not usable: no NVIDIA driver" "$T/info" && ok || fail "info without a driver: $(head -2 "$T/info")"
grep -q "^cpu backend: available" "$T/info" && ok || fail "info lists no CPU backend"
unset GPUBATCH_LIBCUDA
summary
