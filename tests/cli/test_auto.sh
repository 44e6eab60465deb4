#!/bin/sh
# test_auto.sh - --backend auto: the CPU works while the driver starts beside
# it (GPUBATCH_GPU_START=always: whatever the input's size). With the
# stand-in driver made slow (FAKECUDA_INIT_DELAY_MS) every chunk runs on the
# CPU, compressed chunks decoded on the host: results and output bytes must
# equal the CPU backend's, errors must be its messages, and a run must end
# without waiting for the driver. With the stand-in driver quick, chunks
# must reach the (fake) GPU once it is ready, and where the CPU's share of a
# chunk costs far more than the GPU's (compressed output), the CPU stops
# taking chunks at the driver's usual start time. By default a small job
# does not start the driver at all.
. "$(dirname "$0")/lib.sh"
need_python
FAKE="$top/build/tests/libfakecuda.so"
if [ ! -f "$FAKE" ]; then
    echo "skip test_auto.sh: $FAKE not built"
    summary
    exit
fi
export GPUBATCH_GPU_START=always
unset CUDA_VISIBLE_DEVICES # the stand-in reads it as a driver does
SLOW="env GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=20000"

# Seconds a command takes, to 0.01 s (python3 is at hand in every test).
elapsed() {
    $PY -c 'import subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("%.2f" % (time.monotonic() - t))' "$@"
}

"$GB" gen --shape 1000 --dist normal --seed 3 --no-compress -o "$T/tiny.npy"
"$GB" gen --shape 3000000 --dist normal --seed 4 -o "$T/f.npy.gz"
"$GB" gen --shape 700000 --dtype int32 --seed 5 -1 -o "$T/i.npy.gz"
"$GB" gen --shape 1500000 --dist normal --seed 6 --no-compress -o "$T/f.npy"
"$GB" gen --quadratic 300000 --seed 7 -o "$T/q.npy.gz"
"$GB" gen --shape 700x900 --seed 8 -o "$T/m.npy.gz"
"$GB" gen --shape 30x50x70 --dtype int16 --seed 9 -o "$T/b.npy.gz"

# A run that ends before the driver is ready does not wait for it, and
# exits cleanly with the CPU's result.
secs=$(elapsed $SLOW "$GB" reduce --backend auto --op sum,max "$T/tiny.npy")
$SLOW "$GB" reduce --backend auto -v --op sum,max "$T/tiny.npy" >"$T/auto.out" 2>"$T/auto.err"
check_eq "tiny run exit status" 0 $?
"$GB" reduce --backend cpu --op sum,max "$T/tiny.npy" >"$T/cpu.out"
check_files_same "tiny run: the CPU's result" "$T/cpu.out" "$T/auto.out"
$PY -c "import sys; sys.exit(0 if float('$secs') < 10 else 1)" && ok ||
    fail "tiny run waited for the driver: $secs s"
grep -q "1 chunks on the CPU, 0 on the GPU" "$T/auto.err" && ok ||
    fail "tiny run: -v chunk counts [$(cat "$T/auto.err")]"
grep -q "warning" "$T/auto.err" && fail "tiny run warned: $(cat "$T/auto.err")" || ok

# Every chunk on the CPU, compressed ones decoded on the host: the CPU
# backend's results, for any chunk size.
for f in f.npy.gz i.npy.gz f.npy; do
    for c in 128k 1M 64M; do
        "$GB" reduce --backend cpu --chunk $c --op sum,mean,min,max,argmin,argmax,sumsq,count \
            "$T/$f" >"$T/cpu.out"
        $SLOW "$GB" reduce --backend auto --chunk $c \
            --op sum,mean,min,max,argmin,argmax,sumsq,count "$T/$f" >"$T/auto.out"
        check_files_same "reduce $f --chunk $c" "$T/cpu.out" "$T/auto.out"
    done
done
"$GB" reduce --backend cpu --op sum,count "$T/f.npy.gz" "$T/i.npy.gz" "$T/f.npy" >"$T/cpu.out"
$SLOW "$GB" reduce --backend auto --op sum,count "$T/f.npy.gz" "$T/i.npy.gz" "$T/f.npy" \
    >"$T/auto.out"
check_files_same "reduce of three files" "$T/cpu.out" "$T/auto.out"
for c in 256k 32M; do
    "$GB" quadratic --backend cpu -q --chunk $c "$T/q.npy.gz" -o "$T/q-cpu.npy.gz" -f
    $SLOW "$GB" quadratic --backend auto -q --chunk $c "$T/q.npy.gz" -o "$T/q-auto.npy.gz" -f
    check_files_same "quadratic --chunk $c" "$T/q-cpu.npy.gz" "$T/q-auto.npy.gz"
    for f in m b; do # one matrix staged whole (with 256k) and a batch
        "$GB" transpose --backend cpu -q --chunk $c "$T/$f.npy.gz" -o "$T/t-cpu.npy.gz" -f
        $SLOW "$GB" transpose --backend auto -q --chunk $c "$T/$f.npy.gz" -o "$T/t-auto.npy.gz" -f
        check_files_same "transpose $f --chunk $c" "$T/t-cpu.npy.gz" "$T/t-auto.npy.gz"
    done
done

# Corrupt members decoded on the host: the CPU backend's message.
if "$PY" "$top/tests/gpu/corrupt_bgzf.py" "$T/bad" 4 >"$T/gen.out" 2>&1; then
    for f in $(pick "$T/bad/*.npy.gz" "$T/bad/crc.npy.gz $T/bad/valid.npy.gz"); do
        "$GB" reduce --backend cpu "$f" >"$T/cpu.out" 2>"$T/cpu.err"
        st_cpu=$?
        $SLOW "$GB" reduce --backend auto "$f" >"$T/auto.out" 2>"$T/auto.err"
        check_eq "${f##*/}: status" "$st_cpu" $?
        check_files_same "${f##*/}: message" "$T/cpu.err" "$T/auto.err"
        check_files_same "${f##*/}: output" "$T/cpu.out" "$T/auto.out"
    done
else
    fail "corrupt_bgzf.py: $(cat "$T/gen.out")"
fi

# A quick driver: chunks reach the GPU once it is ready (the stand-in's
# kernels compute nothing, so only the counts are checked).
GPUBATCH_LIBCUDA=$FAKE FAKECUDA_REPORT="$T/report" "$GB" reduce --backend auto -v --chunk 128k \
    "$T/f.npy" >/dev/null 2>"$T/quick.err"
check_eq "quick driver: exit status" 0 $?
gpu_chunks=$(sed -n 's/.* chunks on the CPU, \([0-9]*\) on the GPU/\1/p' "$T/quick.err")
[ "${gpu_chunks:-0}" -gt 0 ] && ok || fail "quick driver: no chunk on the GPU [$(cat "$T/quick.err")]"
grep -q "device 0 launches [1-9]" "$T/report" && ok || fail "quick driver: no launch"

# Blocked gzip on both sides: a chunk the CPU takes keeps its buffer until
# it is written, one the GPU takes gives it back once copied (twice as many
# chunks in flight as buffers); the run goes through either way. The gate
# GPUBATCH_GPU_READY_AFTER holds the devices back for the first 6 chunks,
# whatever the timing: exactly 6 on the CPU, the rest on the GPU.
"$GB" gen --shape 2000000 --seed 12 -1 -o "$T/g.npy.gz"
GPUBATCH_GPU_START=always GPUBATCH_GPU_READY_AFTER=6 GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=100 \
    "$GB" reduce --backend auto -v -p 1 --chunk 128k "$T/g.npy.gz" >/dev/null 2>"$T/both.err"
check_eq "blocked gzip on both sides: exit status" 0 $?
cpu_chunks=$(sed -n 's/.*: \([0-9]*\) chunks on the CPU, [0-9]* on the GPU/\1/p' "$T/both.err")
gpu_chunks=$(sed -n 's/.* chunks on the CPU, \([0-9]*\) on the GPU/\1/p' "$T/both.err")
[ "${cpu_chunks:-0}" -eq 6 ] && [ "${gpu_chunks:-0}" -ge 1 ] && ok ||
    fail "blocked gzip on both sides: chunks [$(cat "$T/both.err")]"

# Output compressed on the device: the CPU takes chunks only while their
# estimated work (2 threads, 33 ns per byte: 17 ms for each 1 MiB chunk)
# fits in 0.15 s, then waits for the GPU's start (0.4 s here) and the GPU
# takes the rest; a start slower than the wait's bound (20 s) leaves the
# CPU to finish the job, with the CPU backend's bytes.
"$GB" gen --quadratic 3000000 --seed 10 -o "$T/q3.npy.gz"
GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=400 "$GB" quadratic --backend auto -v -p 2 \
    --chunk 1M "$T/q3.npy.gz" -o "$T/q3-fake.npy.gz" -f 2>"$T/cap.err"
check_eq "capped CPU: exit status" 0 $?
cpu_chunks=$(sed -n 's/.*: \([0-9]*\) chunks on the CPU, [0-9]* on the GPU/\1/p' "$T/cap.err")
gpu_chunks=$(sed -n 's/.* chunks on the CPU, \([0-9]*\) on the GPU/\1/p' "$T/cap.err")
[ "${cpu_chunks:-99}" -le 8 ] && [ "${gpu_chunks:-0}" -ge 1 ] && ok ||
    fail "capped CPU: chunks [$(cat "$T/cap.err")]"
"$GB" quadratic --backend cpu -q --chunk 1M "$T/q3.npy.gz" -o "$T/q3-cpu.npy.gz" -f
secs=$(elapsed $SLOW "$GB" quadratic --backend auto -p 2 --chunk 1M "$T/q3.npy.gz" \
    -o "$T/q3-auto.npy.gz" -f)
check_files_same "capped CPU, slow driver: the CPU's bytes" "$T/q3-cpu.npy.gz" "$T/q3-auto.npy.gz"
$PY -c "import sys; sys.exit(0 if float('$secs') < 10 else 1)" && ok ||
    fail "capped CPU, slow driver: waited for the driver: $secs s"

# No driver, start waited for: the CPU's result, silently (a CPU node is
# normal for auto); with -v, one line says so.
GPUBATCH_GPU_START=wait GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1 "$GB" reduce --op sum "$T/f.npy" \
    >"$T/auto.out" 2>"$T/auto.err"
"$GB" reduce --backend cpu --op sum "$T/f.npy" >"$T/cpu.out"
check_files_same "no driver: the CPU's result" "$T/cpu.out" "$T/auto.out"
check_eq "no driver: nothing on stderr" "" "$(cat "$T/auto.err")"
GPUBATCH_GPU_START=wait GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1 "$GB" reduce -v --op sum "$T/f.npy" \
    >"$T/auto.out" 2>"$T/auto.err"
check_eq "no driver, -v: one line" 1 "$(grep -c '^gpubatch: no NVIDIA driver.*using the CPU backend' "$T/auto.err")"
check_eq "no driver, -v: no warning" 0 "$(grep -c 'warning' "$T/auto.err")"
# On a machine with no NVIDIA driver at all (no GPUBATCH_LIBCUDA, no
# /dev/nvidiactl nor /dev/dxg), auto prepares nothing for devices while the
# start finds that out: transposing a 64 MiB gzip member takes the CPU
# backend's memory (it took twice as much, staging for a device that could
# not exist).
if [ -e /dev/nvidiactl ] || [ -e /dev/dxg ]; then
    echo "note: an NVIDIA driver's device is here: auto's memory without one not checked"
else
    # peak_kb CMD...: the largest resident set of CMD, in KiB, run with no
    # GPUBATCH_LIBCUDA.
    peak_kb() {
        env -u GPUBATCH_LIBCUDA $PY -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
    }
    "$GB" gen -q --shape 4096x4096 --seed 5 --no-compress -o "$T/nd.npy" -f
    gzip -1 -c "$T/nd.npy" >"$T/nd.npy.gz"
    cpu_kb=$(peak_kb "$GB" transpose --backend cpu -q "$T/nd.npy.gz" -o /dev/null --no-compress)
    auto_kb=$(peak_kb "$GB" transpose --backend auto -q "$T/nd.npy.gz" -o /dev/null --no-compress)
    [ "$auto_kb" -le $((cpu_kb * 5 / 4 + 16384)) ] && ok ||
        fail "no driver on the machine: auto's peak memory $auto_kb KiB against cpu's $cpu_kb KiB"
    rm -f "$T/nd.npy" "$T/nd.npy.gz"
fi
# Any other failure of the GPU under auto is still a warning.
GPUBATCH_GPU_START=wait GPUBATCH_LIBCUDA=$FAKE FAKECUDA_DRIVER_VERSION=10020 "$GB" reduce --op sum "$T/f.npy" \
    >"$T/auto.out" 2>"$T/auto.err"
check_files_same "driver too old: the CPU's result" "$T/cpu.out" "$T/auto.out"
check_eq "driver too old: one warning" 1 "$(grep -c "warning: .*too old.*using the CPU backend" "$T/auto.err")"

# The default: a job this small (estimated from the input's size) does
# not start the driver, whose start would outlast it.
env -u GPUBATCH_GPU_START GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=20000 \
    "$GB" reduce -v --op sum "$T/f.npy" >"$T/auto.out" 2>"$T/auto.err"
check_files_same "small job: the CPU's result" "$T/cpu.out" "$T/auto.out"
grep -q "too little to start the GPU" "$T/auto.err" && ok ||
    fail "small job: the GPU was started [$(cat "$T/auto.err")]"
# The estimate counts a deflated .npz member at gzip's cost (about 60 MB of
# it is work enough for one thread to start the driver), a stored one of
# the same size at plain data's.
"$GB" gen --shape 18000000 --dist normal --seed 3 --no-compress -f -o "$T/big.npy"
for how in ZIP_DEFLATED ZIP_STORED; do
    $PY -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w', zipfile.$how, compresslevel=1).write(sys.argv[2], 'x.npy')" \
        "$T/$how.npz" "$T/big.npy"
    env -u GPUBATCH_GPU_START GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=20000 \
        "$GB" reduce -v -p 1 --op count "$T/$how.npz" >"$T/auto.out" 2>"$T/auto.err"
    check_eq "$how .npz: the count" "count 18000000  $T/$how.npz:x" "$(cat "$T/auto.out")"
    started=$(grep -c "the CUDA devices starting beside them" "$T/auto.err")
    check_eq "$how .npz, 72 MB: the driver started" "$([ $how = ZIP_DEFLATED ] && echo 1 || echo 0)" "$started"
done

# A single gzip member counts its decoded bytes (the trailer's length), not
# its compressed ones, at a cost that falls with its ratio: 144 MB of text
# lines compress to under 30 MB (0.15 s of work by that size, too little to
# start the driver), but 144 MB to inflate at a ratio of 7 is work enough
# to start it (0.44 s), 72 MB not (0.22 s; at float32's cost it would).
$PY -c "import random, sys; r = random.Random(7); w = ['INFO', 'WARN', 'net', 'disk', 'served', 'opened', 'flushed']
sys.stdout.write(''.join('%d.%03d %s [%s] %s\\n' % (1700000000 + i // 900, i % 1000, r.choice(w), r.choice(w), r.choice(w)) for i in range(2250000)))" \
    | head -c 72000000 >"$T/text72.u8"
cat "$T/text72.u8" "$T/text72.u8" >"$T/text.u8"
for n in 72 144; do
    src=$T/text.u8
    [ $n = 144 ] || src=$T/text72.u8
    gzip -6 -c "$src" >"$T/text$n.u8.gz"
    env -u GPUBATCH_GPU_START GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=20000 \
        "$GB" reduce -v -p 1 --dtype uint8 --op count "$T/text$n.u8.gz" >"$T/auto.out" 2>"$T/auto.err"
    check_eq "text member: the count" "count ${n}000000  $T/text$n.u8.gz" "$(cat "$T/auto.out")"
    check_eq "text member, $n MB decoded: the driver started" "$([ $n = 144 ] && echo 1 || echo 0)" \
        "$(grep -c "the CUDA devices starting beside them" "$T/auto.err")"
done
check_eq "text member: under 30 MB compressed" 1 "$([ "$(wc -c <"$T/text144.u8.gz")" -lt 30000000 ] && echo 1 || echo 0)"
head -c 4000000 "$T/text.u8" | gzip -6 >"$T/small.u8.gz"
env -u GPUBATCH_GPU_START GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=20000 \
    "$GB" reduce -v -p 1 --dtype uint8 --op count "$T/small.u8.gz" >/dev/null 2>"$T/auto.err"
check_eq "text member, 4 MB decoded: too little to start" 1 \
    "$(grep -c "too little to start the GPU" "$T/auto.err")"
# Along axes the estimate is the axis run's own (cost_axis_ns, the shape
# from the header): a row of 3 elements with var costs the CPU about a
# thousand times a whole-array byte, so 1.2 MB of such rows start the
# driver and go to the device; the whole array and the cheap axis 0 of the
# same file do not start it.
"$GB" gen --shape 100000x3 --seed 2 --no-compress -o "$T/r3.npy"
"$GB" gen --shape 100000x3 --seed 2 -o "$T/r3b.npy.gz"
for f in r3.npy r3b.npy.gz; do
    for job in "axis1 --axis 1 --op mean,std" "whole --op sum,min,max" "axis0 --axis 0 --op sum"; do
        set -- $job
        what=$1
        shift
        env -u GPUBATCH_GPU_START GPUBATCH_LIBCUDA=$FAKE "$GB" reduce -v -p 1 "$@" "$T/$f" \
            >/dev/null 2>"$T/auto.err"
        check_eq "$f $what: chunks on the GPU" "$([ $what = axis1 ] && echo 1 || echo 0)" \
            "$(grep -c '0 chunks on the CPU, 1 on the GPU' "$T/auto.err")"
        check_eq "$f $what: too little to start" "$([ $what = axis1 ] && echo 0 || echo 1)" \
            "$(grep -c 'too little to start the GPU' "$T/auto.err")"
    done
done
# A gzip member's data along axes is inflated on the device (as the whole
# array's is): the stand-in's decoder does nothing, so the device stops at
# once and the host reads on from there.
gzip -1 -c "$T/r3.npy" >"$T/r3.npy.gz"
GPUBATCH_HOST_INFLATE=0 GPUBATCH_LIBCUDA=$FAKE "$GB" reduce --backend cuda -v --axis 0 \
    --op mean,std,min,max "$T/r3.npy.gz" >/dev/null 2>"$T/auto.err"
check_eq "gzip member along axes: inflated on the device" 1 \
    "$(grep -c 'bytes of data inflated on the GPU in' "$T/auto.err")"
# With auto, the host's thread runs a 128 MB member's start while the
# devices start, the CPU's lane taking the chunks it inflates, and the
# device goes on from where it paused. The stand-in driver starts in about
# 0.2 s (a delay of 100 ms and the kernel images), so that the host's
# decoder has begun by then even on a loaded machine; one thread takes 0.3 s
# or more for the member, and the host has inflated only its first chunks
# when the device is up, so that the host does not end it first.
"$GB" gen --shape 33000000 --dist normal --seed 3 --no-compress -f -o "$T/bigger.npy"
gzip -1 -c "$T/bigger.npy" >"$T/bigm.npy.gz"
rm -f "$T/bigger.npy"
GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=100 "$GB" reduce --backend auto -v -p 1 --chunk 1M --axis 0 \
    --op sum "$T/bigm.npy.gz" >/dev/null 2>"$T/auto.err"
check_eq "gzip member along axes, auto: handed to the device" 1 \
    "$(grep -c "inflated on the host's threads while the GPU started; the GPU went on" "$T/auto.err")"
# The same members read from a pipe: with cuda the device takes one from
# its start, with auto from where the host paused once the host's thread
# has fallen behind the pipe (cost_pipe_behind: `cat` writes the 132 MB far
# faster than one thread decodes them). A writer slower than the host (20
# MB/s: slower than one thread under the sanitizers on a loaded machine)
# keeps the member on the host, which decodes it all (the device would wait
# for the same bytes; the stand-in's kernels compute nothing, so only where
# the member was decoded is checked).
cat "$T/r3.npy.gz" | GPUBATCH_HOST_INFLATE=0 GPUBATCH_LIBCUDA=$FAKE "$GB" reduce --backend cuda -v \
    --axis 0 --op mean,std,min,max - >/dev/null 2>"$T/auto.err"
check_eq "gzip member from a pipe: inflated on the device" 1 \
    "$(grep -c 'bytes of data inflated on the GPU in' "$T/auto.err")"
cat "$T/bigm.npy.gz" | GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=100 "$GB" reduce \
    --backend auto -v -p 1 --chunk 1M --axis 0 --op sum - >/dev/null 2>"$T/auto.err"
check_eq "gzip member from a pipe, auto: handed to the device" 1 "$(grep -c \
    "inflated on the host's threads while the GPU started; the GPU went on" "$T/auto.err")"
"$GB" gen --shape 5000000 --dist normal --seed 4 --no-compress -f -o "$T/slow.npy"
gzip -1 -c "$T/slow.npy" >"$T/slow.npy.gz"
$PY -c 'import sys, time
d = open(sys.argv[1], "rb").read()
for i in range(0, len(d), 1 << 20):
    sys.stdout.buffer.write(d[i:i + (1 << 20)])
    sys.stdout.buffer.flush()
    time.sleep(0.05)' "$T/slow.npy.gz" |
    GPUBATCH_LIBCUDA=$FAKE FAKECUDA_INIT_DELAY_MS=100 "$GB" reduce --backend auto -v -p 1 \
        --chunk 1M --op count - >"$T/auto.out" 2>"$T/auto.err"
check_eq "a pipe slower than the host, auto: status" 0 $?
check_eq "a pipe slower than the host, auto: the data" "count 5000000  -" "$(cat "$T/auto.out")"
check_eq "a pipe slower than the host, auto: kept on the host" 0 "$(grep -c 'the GPU went on' "$T/auto.err")"
check_eq "a pipe slower than the host, auto: the device was ready" 1 "$(grep -c 'CUDA ready' "$T/auto.err")"
# A member cut short, damaged in its middle or with a wrong CRC-32, read
# from a pipe and taken by the device: the CPU backend's message and exit
# status (the stand-in's decoder stops at once, the host reading on).
gzip -1 -c "$T/f.npy" >"$T/fm.npy.gz"
$PY -c "import sys
d = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(d[:len(d) // 2])
m = bytearray(d)
for i in range(16):
    m[len(d) // 2 + 7 * i] ^= 0x5a
open(sys.argv[3], 'wb').write(m)
open(sys.argv[4], 'wb').write(d[:-8] + bytes([d[-8] ^ 1]) + d[-7:])" \
    "$T/fm.npy.gz" "$T/pcut.gz" "$T/pbad.gz" "$T/pcrc.gz"
for f in pcut pbad pcrc; do
    cat "$T/$f.gz" | "$GB" reduce --backend cpu --op sum - >/dev/null 2>"$T/cpu.err"
    st_cpu=$?
    cat "$T/$f.gz" | GPUBATCH_HOST_INFLATE=0 GPUBATCH_LIBCUDA=$FAKE "$GB" reduce --backend cuda \
        --op sum - >"$T/cuda.out" 2>"$T/cuda.err"
    check_eq "$f from a pipe: status" "$st_cpu" $?
    check_files_same "$f from a pipe: message" "$T/cpu.err" "$T/cuda.err"
    check_eq "$f from a pipe: no output" "" "$(cat "$T/cuda.out")"
    cat "$T/$f.gz" | GPUBATCH_HOST_INFLATE=0 GPUBATCH_LIBCUDA=$FAKE "$GB" reduce --backend cuda -v \
        --op sum - >/dev/null 2>"$T/cuda.err"
    check_eq "$f from a pipe: taken by the device" 1 \
        "$(grep -c 'bytes of data inflated on the GPU in' "$T/cuda.err")"
done
# A named pipe likewise: the device takes the member, the data the host's.
if mkfifo "$T/fifo" 2>/dev/null; then
    cat "$T/pbad.gz" | "$GB" reduce --backend cpu --op sum - >/dev/null 2>"$T/cpu.err"
    cat "$T/pbad.gz" >"$T/fifo" &
    GPUBATCH_HOST_INFLATE=0 GPUBATCH_LIBCUDA=$FAKE "$GB" reduce --backend cuda -v --op sum \
        "$T/fifo" >/dev/null 2>"$T/cuda.err"
    check_eq "a named pipe: status" 1 $?
    wait
    check_eq "a named pipe: taken by the device" 1 \
        "$(grep -c 'bytes of data inflated on the GPU in' "$T/cuda.err")"
    check_eq "a named pipe: the CPU's message" "$(sed "s|: -:|: $T/fifo:|" "$T/cpu.err")" \
        "$(grep error "$T/cuda.err")"
fi
# An empty pipe, and members too small for the parallel decoder or just
# past it, read through with cuda.
for n in 0 1000 300000; do
    head -c $n "$T/text.u8" | gzip -1 | GPUBATCH_HOST_INFLATE=0 GPUBATCH_LIBCUDA=$FAKE "$GB" \
        reduce --backend cuda --dtype uint8 --op sum - >/dev/null 2>"$T/cuda.err"
    check_eq "a member of $n bytes from a pipe: status" 0 $?
    check_eq "a member of $n bytes from a pipe: no message" "" "$(cat "$T/cuda.err")"
done
printf '' | GPUBATCH_LIBCUDA=$FAKE "$GB" reduce --backend cuda --dtype uint8 --op count - \
    >"$T/cuda.out" 2>"$T/cuda.err"
check_eq "an empty pipe: status" 0 $?
check_eq "an empty pipe: the count" "count 0  -" "$(cat "$T/cuda.out")"
summary
