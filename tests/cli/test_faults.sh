#!/bin/sh
# test_faults.sh - faults a batch job meets: a full disk, SIGINT/SIGTERM in the
# middle of a run, a closed downstream pipe, no driver. Each must end with a
# clear message (or quietly, for the pipe), a non-zero status, and no partial
# or temporary output file.
. "$(dirname "$0")/lib.sh"
need_python
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

# No driver: auto falls back quietly (saying so once with -v); cuda, from
# the option or GPUBATCH_BACKEND, is a clear error.
"$GB" gen --shape 1000 --no-compress -o "$T/a.npy"
GPUBATCH_LIBCUDA=$NODRV "$GB" reduce --op count "$T/a.npy" >"$T/out" 2>"$T/err"
check_eq "fallback result" "count 1000  $T/a.npy" "$(cat "$T/out")"
check_eq "fallback is quiet" "" "$(cat "$T/err")"
GPUBATCH_LIBCUDA=$NODRV "$GB" reduce -v --op count "$T/a.npy" >"$T/out" 2>"$T/err"
check_eq "fallback says so once with -v" 1 "$(grep -c 'no NVIDIA driver.*using the CPU backend' "$T/err")"
export GPUBATCH_LIBCUDA=$NODRV
check_error "--backend cuda without a driver" "no NVIDIA driver" "$GB" reduce --backend cuda "$T/a.npy"
check_error "--backend gpu (cuda) without a driver" "no NVIDIA driver" "$GB" reduce --backend gpu "$T/a.npy"
check_error "GPUBATCH_BACKEND=cuda without a driver" "no NVIDIA driver" \
    env GPUBATCH_BACKEND=cuda "$GB" reduce "$T/a.npy"
GPUBATCH_BACKEND=cuda "$GB" reduce --backend auto --op count "$T/a.npy" >"$T/out" 2>"$T/err"
check_eq "--backend wins over GPUBATCH_BACKEND" "0 count 1000  $T/a.npy" "$? $(cat "$T/out")"
check_error "quadratic --backend cuda without a driver" "no NVIDIA driver" \
    "$GB" quadratic --backend cuda "$T/q.npy" -o "$T/r.npy.gz"
[ -e "$T/r.npy.gz" ] && fail "failed quadratic left an output" || ok
"$GB" info >"$T/info" 2>&1
cp "$T/info" "$T/info.short"
grep -q "^driver: not usable: no NVIDIA driver" "$T/info" && ok || fail "info without a driver: $(head -2 "$T/info")"
grep -q "^cpu backend: available" "$T/info" && ok || fail "info lists no CPU backend"
check_eq "info without a driver: version, driver, kernels and CPU lines" \
    "gpubatch|driver|kernels|cpu backend" "$(sed 's/[ :].*//; s/^cpu$/cpu backend/' "$T/info" | tr '\n' '|' | sed 's/|$//')"
"$GB" info -v >"$T/info" 2>&1
check_eq "info -v without a driver: every embedded module" \
    "$(grep -c '^  [a-z0-9_]* *compute_' "$T/info")" \
    "$(sed -n 's/^kernels: \([0-9]*\) modules embedded: .*/\1/p' "$T/info.short")"
unset GPUBATCH_LIBCUDA

# Inputs that cannot be read: missing, a directory, a read(2) that fails
# (/proc/self/mem at offset 0 gives EIO), and a file without read
# permission. root reads any file whatever its mode, so that case runs as
# the unprivileged user nobody when the tests run as root.
check_error "missing input" "nosuch.npy: No such file or directory" \
    "$GB" reduce --backend cpu "$T/nosuch.npy"
check_error "directory input" "$T: Is a directory" "$GB" reduce --backend cpu "$T"
check_error "quadratic on a directory" "Is a directory" "$GB" quadratic --backend cpu "$T" -o "$T/d.npy"
[ -e "$T/d.npy" ] && fail "quadratic on a directory left an output" || ok
check_error "read error" "/proc/self/mem: Input/output error" \
    "$GB" reduce --backend cpu --dtype uint8 /proc/self/mem
mkdir "$T/perm" && chmod 755 "$T" "$T/perm"
cp "$T/a.npy" "$T/perm/locked.npy" && chmod 000 "$T/perm/locked.npy"
if [ "$(id -u)" -ne 0 ]; then
    check_error "unreadable input" "locked.npy: Permission denied" \
        "$GB" reduce --backend cpu "$T/perm/locked.npy"
elif command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1 &&
    setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups true 2>/dev/null; then
    check_error "unreadable input (as nobody)" "locked.npy: Permission denied" \
        setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
        "$GB" reduce --backend cpu "$T/perm/locked.npy"
else
    echo "note: running as root and cannot become the user nobody: unreadable-input test skipped"
fi

# An input cut short by another process while it is read: the reader notices
# at the end of the file that it is shorter than when it was opened. The
# command is stopped as soon as it has read from the file (read or mapped it),
# the file truncated, the command continued; a try where the command had
# already read the whole file (or ended) before the stop proves nothing and
# is repeated.
"$GB" gen --shape 6000000 --dtype float64 --raw --no-compress -o "$T/shrink.src"
"$GB" gen --shape 6000000 --dtype float64 --raw -1 -o "$T/shrink.src.gz"
"$GB" gen --quadratic 1000000 --dtype float64 -1 -o "$T/shrinkq.src.gz"
# shrink SRC CMD...: copies SRC to $T/victim, runs CMD (which reads it),
# truncates it to a quarter mid-read; prints the exit status and stderr.
shrink() {
    $PY - "$@" <<'END'
import os, shutil, signal, subprocess, sys, time
src, argv = sys.argv[1], sys.argv[2:]
victim = os.path.join(os.path.dirname(src), "victim")
for attempt in range(5):
    shutil.copyfile(src, victim)
    size = os.path.getsize(victim)
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # kill(2) only asks for the stop: a thread inside read(2) finishes that
    # read first. Wait until every thread is stopped, so that the bytes read
    # so far are all the bytes the command will have read before the cut.
    # The command may end, and be reaped by poll(), between any two steps:
    # a signal to it then finds no process.
    def signal_it(sig):
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            pass
    def stop():
        signal_it(signal.SIGSTOP)
        while p.poll() is None:
            try:
                tasks = os.listdir("/proc/%d/task" % p.pid)
                states = [open("/proc/%d/task/%s/stat" % (p.pid, t)).read().rsplit(")", 1)[1].split()[0]
                          for t in tasks]
            except OSError:
                continue
            if all(s in "tTZX" for s in states):
                return
            time.sleep(0.0001)
    stop()
    # Let it run in short steps until it has read from the file: an open
    # file whose size the command has not taken yet (it does before its
    # first read) is not cut mid-read. It reads at offsets of its own
    # (pread, mmap), so a read shows as bytes read (rchar) after the file
    # is open, or the file mapped.
    def victim_open():
        fds = "/proc/%d/fd" % p.pid
        try:
            return any(os.readlink(os.path.join(fds, fd)) == victim for fd in os.listdir(fds))
        except OSError:
            return False
    def mapped():
        try:
            with open("/proc/%d/maps" % p.pid) as f:
                return any(l.rstrip("\n").endswith(" " + victim) for l in f)
        except OSError:
            return False
    def rchar():
        try:
            with open("/proc/%d/io" % p.pid) as f:
                return int(dict(l.split(": ") for l in f.read().splitlines())["rchar"])
        except (OSError, KeyError, ValueError):
            return -1
    first = None
    opened = False
    while p.poll() is None:
        if victim_open():
            if first is None:
                first = rchar()
            elif first < 0 or mapped() or rchar() > first:
                opened = True
                break
        signal_it(signal.SIGCONT)
        time.sleep(0.0002)
        stop()
    if p.poll() is not None:  # it ended before the cut: try again
        p.stderr.read()
        continue
    read = max(rchar(), 0)  # no I/O accounting here: the open check has to do
    os.truncate(victim, size // 4)
    signal_it(signal.SIGCONT)
    err = p.stderr.read().decode()
    st = p.wait()
    if read < size and opened:
        print(st, err.strip())
        sys.exit(0)
print("inconclusive: could not stop the command in the middle of its read, 5 times")
END
}
check_eq "plain raw input shrinks" "1 gpubatch: error: $T/victim: the file shrank" \
    "$(shrink "$T/shrink.src" "$GB" reduce --backend cpu --dtype float64 "$T/victim" | sed 's/ from .*//')"
# Compressed input cut short while it is inflated: the inflater may meet the
# new end of the file before the size check does; either error is right.
check_shrunk_gzip() {
    case "$2" in
    "1 gpubatch: error: $T/victim: the file shrank" | \
        "1 gpubatch: error: $T/victim: unexpected end of compressed data" | \
        "1 gpubatch: error: $T/victim: gzip member at byte "*": unexpected end of compressed data") ok ;;
    *) fail "$1: [$2]" ;;
    esac
}
check_shrunk_gzip "gzip raw input shrinks" \
    "$(shrink "$T/shrink.src.gz" "$GB" reduce --backend cpu --dtype float64 "$T/victim" | sed 's/ from .*//')"
check_shrunk_gzip "quadratic input shrinks" \
    "$(shrink "$T/shrinkq.src.gz" "$GB" quadratic --backend cpu "$T/victim" -o "$T/shrunk.npy.gz" \
        | sed 's/ from .*//')"
[ -e "$T/shrunk.npy.gz" ] && fail "quadratic on a shrinking input left an output" || ok
check_eq "no temporary file left" "" "$(ls -A "$T" | grep -v -e '^shrink' -e '^victim$' -e '\.npy$' \
    -e '^perm$' -e '^q\.npy$' -e '^out$' -e '^err' -e '^info$' -e '^info\.short$' -e '^sig\.out$' -e '^pipe\.')"

# -o naming an input through another path (a symbolic link), even with -f.
ln -s "$T/q.npy" "$T/q-link.npy"
check_error "-o is a link to the input" "would overwrite an input" \
    "$GB" quadratic -f --backend cpu "$T/q.npy" -o "$T/q-link.npy"

# -o naming a symbolic link to a missing file: refused as such without -f;
# with -f the link is replaced (as mv does), and a link to an existing
# file likewise, its target untouched.
mkdir "$T/links"
ln -s "$T/links/nowhere" "$T/links/dangling"
check_error "-o a dangling link" "dangling: is a symbolic link to a missing file (use -f to replace the link)" \
    "$GB" quadratic --backend cpu "$T/q.npy" -o "$T/links/dangling"
"$GB" quadratic -f --backend cpu "$T/q.npy" -o "$T/links/dangling"
check_eq "-f replaces a dangling link" "file absent" \
    "$([ -f "$T/links/dangling" ] && [ ! -L "$T/links/dangling" ] && echo file) $([ -e "$T/links/nowhere" ] || echo absent)"
echo keep >"$T/links/target"
ln -s "$T/links/target" "$T/links/live"
"$GB" quadratic -f --backend cpu "$T/q.npy" -o "$T/links/live"
check_eq "-f replaces a link, not its target" "file keep" \
    "$([ ! -L "$T/links/live" ] && echo file) $(cat "$T/links/target")"
summary
