#!/bin/sh
# test_devices.sh - --device lists and `all`, reached on any machine through
# the stand-in driver (tests/cli/fakecuda.c) with several devices: chunks go
# round the listed devices, every driver call runs with its own device's
# context current (the stand-in refuses anything else), a staged matrix uses
# the first device, copies to two devices overlap, and bad lists are usage
# errors or clear errors. The driver starts only the devices --device names
# (CUDA_VISIBLE_DEVICES, which the stand-in reads as a driver does), and
# every message still numbers them as --device does.
. "$(dirname "$0")/lib.sh"
use_fake_driver
export FAKECUDA_DEVICES=3
REP="$T/launches"
# --device all starts only the devices the input pays for (one, for these
# small files: see the end); with the narrowing off it starts every one.
EVERY="env GPUBATCH_NARROW_DEVICES=0"

# Runs CMD... with a fresh launch report; checks exit 0 and that the devices
# got exactly the launch counts listed in EXPECTED ("N N N"; "+" for any
# count above zero).
check_launches() {
    what=$1
    expected=$2
    shift 2
    rm -f "$REP"
    if ! FAKECUDA_REPORT="$REP" "$@" >"$T/dev.out" 2>"$T/dev.err"; then
        fail "$what: exit status $?: $(cat "$T/dev.err")"
        return
    fi
    got=$(awk '{print $4}' "$REP" | tr '\n' ' ' | sed 's/ $//')
    want_re=$(echo "$expected" | sed 's/+/[1-9][0-9]*/g')
    if echo "$got" | grep -qx "$want_re"; then ok; else
        fail "$what: launches per device [$got], expected [$expected]"
    fi
}

"$GB" gen --shape 3000000 --seed 1 -o "$T/a.npy.gz"
check_launches "reduce --device all" "+ + +" \
    $EVERY "$GB" reduce --backend cuda --device all --chunk 1M "$T/a.npy.gz"
check_launches "reduce --device all, sums of squares" "+ + +" \
    $EVERY "$GB" reduce --backend cuda --device all --chunk 1M --op sum,sumsq,count "$T/a.npy.gz"
check_launches "reduce --device 2,0" "+ 0 +" \
    "$GB" reduce --backend cuda --device 2,0 --chunk 1M "$T/a.npy.gz"
check_launches "reduce --device 1" "0 + 0" \
    "$GB" reduce --backend cuda --device 1 --chunk 1M "$T/a.npy.gz"
check_launches "reduce of two files on all devices" "+ + +" \
    $EVERY "$GB" reduce --backend cuda --device all --chunk 1M "$T/a.npy.gz" "$T/a.npy.gz"
# 12 chunks over 3 devices that open at once: each open device takes
# chunks in turn (three launches a chunk: the blocked gzip inflated and
# checked on the device, then the sum); a device may open a chunk or two
# after the first, so each takes 2 to 6 chunks, 36 launches in all.
rm -f "$REP"
FAKECUDA_REPORT="$REP" $EVERY "$GB" reduce --backend cuda --device all --chunk 1M --op sum "$T/a.npy.gz" \
    >/dev/null 2>&1
check_eq "chunks split in turn" "fair" "$(awk '{ n += $4; if ($4 < 6 || $4 > 18) bad = 1 }
    END { print (n == 36 && NR == 3 && !bad) ? "fair" : "unfair" }' "$REP")"

# reduce starts on the first device to open and takes each other as it
# opens: a device whose context comes too late takes nothing, one that
# comes in the middle takes the chunks after it, and one that cannot be
# opened is an error while the run goes on (exit 1, no result).
check_launches "reduce: a device that opens after the run" "+ 0 0" \
    env FAKECUDA_CTX_DELAY_MS=0,3000 "$GB" reduce --backend cuda --device 0,1 --chunk 1M "$T/a.npy.gz"
check_launches "reduce: a device that opens during the run" "+ + 0" \
    env FAKECUDA_CTX_DELAY_MS=0,100 FAKECUDA_COPY_MS=10 \
    "$GB" reduce --backend cuda --device 0,1 --chunk 1M "$T/a.npy.gz"
# (device 1 opens 300 ms in, with 12 chunks of 50 ms to go round: device 0
# has taken chunks by then even on a loaded machine, and some are left)
check_launches "-v: device 1 joins late" "+ + 0" \
    env FAKECUDA_CTX_DELAY_MS=0,300 FAKECUDA_COPY_MS=50 \
    "$GB" reduce -v --backend cuda --device 0,1 --chunk 1M "$T/a.npy.gz"
grep -q "device 1 (Fake GPU) taking chunks .* after [1-9][0-9]* on other devices" "$T/dev.err" &&
    ok || fail "-v: device 1 joins late: $(grep 'taking chunks' "$T/dev.err")"
for d in 0 1; do
    check_error "reduce: device $d does not open" "cannot open CUDA device $d: " \
        env FAKECUDA_CTX_ERROR_DEVICE=$d FAKECUDA_CTX_DELAY_MS=20,40 FAKECUDA_COPY_MS=10 \
        "$GB" reduce -q --backend cuda --device 0,1 --chunk 1M "$T/a.npy.gz"
done
# auto drives each device the same way: every device takes chunks from the
# one after it opens (the CPU those before the first), and one that cannot
# be opened while others are open is left with a warning, the run going on
# with those (exit 0); where none opens, the CPU does it all.
check_launches "auto: devices that open during the run" "+ + +" \
    env GPUBATCH_GPU_START=always FAKECUDA_CTX_DELAY_MS=0,40,80 FAKECUDA_COPY_MS=30 \
    "$GB" reduce -v --device 0,1,2 --chunk 1M "$T/a.npy.gz"
check_eq "auto: -v says when the first device was ready, then each device" "1 3" \
    "$(grep -c 'backend auto: CUDA ready' "$T/dev.err") $(grep -c 'taking chunks' "$T/dev.err")"
check_launches "auto: a device that does not open, others open" "+ 0 +" \
    env GPUBATCH_GPU_START=always FAKECUDA_CTX_ERROR_DEVICE=1 FAKECUDA_CTX_DELAY_MS=0,50,0 \
    FAKECUDA_COPY_MS=30 "$GB" reduce --device 0,1,2 --chunk 1M "$T/a.npy.gz"
grep -q "warning: cannot use every CUDA device: cannot open CUDA device 1: .*; going on with those open" \
    "$T/dev.err" && ok || fail "auto, device 1 fails: $(cat "$T/dev.err")"
"$GB" reduce --backend cpu --op sum "$T/a.npy.gz" >"$T/cpu.txt"
GPUBATCH_GPU_START=always FAKECUDA_CTX_ERROR_DEVICE=0 "$GB" reduce --device 0 --op sum \
    "$T/a.npy.gz" >"$T/auto.txt" 2>"$T/auto.err"
check_eq "auto: its only device does not open: exit" "0" "$?"
check_files_same "auto: its only device does not open: the CPU's result" "$T/cpu.txt" "$T/auto.txt"
grep -q "warning: cannot open CUDA device 0: .*; using the CPU backend" "$T/auto.err" && ok ||
    fail "auto, no device opens: $(cat "$T/auto.err")"
"$GB" gen --quadratic 300000 -o "$T/qj.npy.gz"
check_launches "quadratic waits for every device" "+ + 0" \
    env FAKECUDA_CTX_DELAY_MS=0,100 "$GB" quadratic --backend cuda --device 0,1 --chunk 1M \
    "$T/qj.npy.gz" -o "$T/q3.npy.gz"

"$GB" gen --quadratic 300000 -o "$T/q.npy.gz"
check_launches "quadratic rows on all devices" "+ + +" \
    $EVERY "$GB" quadratic --backend cuda --device all --chunk 1M "$T/q.npy.gz" -o "$T/q1.npy.gz"
"$GB" gen --quadratic 300000 --no-compress -o "$T/q.npy"
$PY "$top/tests/cli/quadref.py" planes "$T/q.npy" "$T/qp.npy" 2>/dev/null &&
    check_launches "quadratic planes in and out on all devices" "+ + +" \
        $EVERY "$GB" quadratic --backend cuda --device all --chunk 1M --out-layout planes "$T/qp.npy" \
        -o "$T/q2.npy.gz"

"$GB" gen --shape 64x100x100 -o "$T/b.npy.gz"
check_launches "batched transpose on all devices" "+ + +" \
    $EVERY "$GB" transpose --backend cuda --device all --chunk 128k "$T/b.npy.gz" -o "$T/b1.npy.gz"
"$GB" gen --shape 1000x1000 -o "$T/m.npy.gz"
check_launches "a staged matrix on the first listed device" "0 0 +" \
    "$GB" transpose --backend cuda --device 2,1 --chunk 128k "$T/m.npy.gz" -o "$T/m1.npy.gz"

check_launches "--shard on all devices" "+ + +" \
    $EVERY "$GB" reduce --backend cuda --device all --chunk 1M --shard 0/1 -o "$T/state" \
    "$(gzip -dc "$T/a.npy.gz" >"$T/a.npy" && echo "$T/a.npy")"

# -v names every device in use (in the order they open: compared sorted).
# Chunks that each take a while to copy leave the second device time to open
# before the input ends, however busy the machine.
FAKECUDA_COPY_MS=20 "$GB" reduce -v --backend cuda --device 0,2 --chunk 1M "$T/a.npy.gz" \
    2>"$T/v.err" >/dev/null
check_eq "-v names the devices" "device 0|device 2" \
    "$(sed -n 's/.*backend cuda: \(device [0-9]*\).*/\1/p' "$T/v.err" | sort | tr '\n' '|' | sed 's/|$//')"

# Bad lists.
for bad in x 0,,1 1, -1 0,0 "2,1,2" all,0 ""; do
    "$GB" reduce --backend cuda --device "$bad" "$T/a.npy.gz" >"$T/o" 2>"$T/e"
    st=$?
    if [ $st -eq 2 ] && grep -q "bad --device" "$T/e"; then ok; else
        fail "--device '$bad': status $st, [$(head -1 "$T/e")]"
    fi
done
check_error "a device beyond the machine's" "no CUDA device 3 (this machine has fewer than 4)" \
    "$GB" reduce --backend cuda --device 0,3 "$T/a.npy.gz"
check_error "a device beyond the machine's, not narrowed" "no CUDA device 3 (this machine has 3)" \
    env GPUBATCH_NARROW_DEVICES=0 "$GB" reduce --backend cuda --device 0,3 "$T/a.npy.gz"
# cuda's devices start beside the input's set-up: a device that does not
# open is still an error naming it, with no output file, and a slow start
# changes nothing in the results.
for cmd in "quadratic $T/q.npy.gz" "transpose $T/m.npy.gz"; do
    rm -f "$T/never.gz"
    check_error "${cmd%% *}: a device beyond the machine's" "no CUDA device 5 (this machine has fewer than 6)" \
        "$GB" ${cmd%% *} --backend cuda --device 5 -o "$T/never.gz" ${cmd#* }
    [ ! -e "$T/never.gz" ] && ok || fail "${cmd%% *}: an output file after a device error"
done
check_error "reduce of two files, a device beyond the machine's: one error, no results" \
    "no CUDA device 5 (this machine has fewer than 6)" "$GB" reduce --backend cuda --device 5 "$T/a.npy.gz" \
    "$T/a.npy.gz"
check_error "a missing input, devices still starting" "nothere.npy" \
    env FAKECUDA_INIT_DELAY_MS=300 "$GB" reduce --backend cuda "$T/nothere.npy"
"$GB" reduce --backend cpu "$T/a.npy.gz" >"$T/cpu.txt"
"$GB" reduce --device 1,7 "$T/a.npy.gz" >"$T/auto.txt" 2>"$T/auto.err"
check_eq "auto falls back to the CPU for a missing device" "0" "$?"
check_files_same "the fallback gives the CPU's result" "$T/cpu.txt" "$T/auto.txt"
grep -q "no CUDA device 7 (this machine has fewer than 8); using the CPU backend" "$T/auto.err" && ok ||
    fail "fallback warning: $(cat "$T/auto.err")"
"$GB" bench --device all reduce >"$T/o" 2>"$T/e"
check_eq "bench takes one device" "2" "$?"
grep -q "bench times one device" "$T/e" && ok || fail "bench --device all: $(cat "$T/e")"

# Out of device memory names the device: 4 buffers of 12 MiB per device do
# not fit in 30 MB.
FAKECUDA_MEM_BYTES=30000000 "$GB" reduce --backend cuda --device all "$T/a.npy" >"$T/o" 2>"$T/e"
check_eq "out of device memory: status" "1" "$?"
grep -q "out of device memory: a chunk buffer (--chunk) needs [0-9]* bytes, [0-9]* of 30000000 free on device [0-9]" "$T/e" &&
    ok || fail "out of memory message: $(cat "$T/e")"

# Devices that cannot map pinned host memory: level -1 output is compressed
# on the host, as with GPUBATCH_HOST_DEFLATE=1 (the same launches), and the
# run succeeds; devices that can launch the deflate kernels too (batches,
# and a matrix larger than --chunk, staged whole).
launches() {
    rm -f "$REP"
    FAKECUDA_REPORT="$REP" "$@" >/dev/null 2>"$T/launch.err" || echo "exit $?: $(cat "$T/launch.err")"
    awk '{print $4}' "$REP" | tr '\n' ' '
}
"$GB" gen --shape 40x300x200 --seed 3 -o "$T/t.npy.gz"
for cmd in "quadratic --chunk 1M $T/q.npy.gz" "transpose --chunk 1M $T/t.npy.gz" \
    "transpose --chunk 128k $T/m.npy.gz"; do
    set -- "$GB" ${cmd%% *} --backend cuda --device 1 -f -o "$T/map.gz" ${cmd#* }
    host=$(GPUBATCH_HOST_DEFLATE=1 launches "$@")
    check_eq "${cmd%% *}, no mapped memory" "$host" "$(FAKECUDA_NO_MAPPED=1 launches "$@")"
    device=$(launches "$@")
    [ "$device" != "$host" ] && ok || fail "${cmd%% *}: device deflate launched [$device], as the host's [$host]"
done

# A slow driver start: the reader fills the buffers meanwhile, and the
# devices get the same work (the stand-in's kernels compute nothing; the
# GPU tests compare results). reduce's devices each take chunks from when
# they open, so only its total is fixed; quadratic and transpose wait for
# every device, so each device's count is.
launch_total() {
    launches "$@" >/dev/null
    awk '{ n += $4 } END { print n }' "$REP"
}
set -- "$GB" reduce --op sum,max --backend cuda --device 2,0 --chunk 1M "$T/a.npy.gz"
check_eq "reduce after a slow driver start" "$(launch_total "$@")" \
    "$(FAKECUDA_INIT_DELAY_MS=200 launch_total "$@")"
for cmd in "quadratic -f -o $T/slow.gz $T/q.npy.gz" "transpose -f -o $T/slow.gz $T/b.npy.gz"; do
    set -- "$GB" ${cmd%% *} --backend cuda --device 2,0 --chunk 1M ${cmd#* }
    check_eq "${cmd%% *} after a slow driver start" "$(launches "$@")" \
        "$(FAKECUDA_INIT_DELAY_MS=200 launches "$@")"
done

# A slot's buffers are made when its first chunk comes: a run of one chunk
# pins fewer host buffers than one of many chunks with the same options.
pins() {
    rm -f "$T/pins"
    FAKECUDA_PIN_REPORT="$T/pins" "$GB" "$@" --backend cuda --chunk 1M --compress -o /dev/null >/dev/null 2>&1
    sed -n 's/^pinned //p' "$T/pins"
}
"$GB" gen --quadratic 1000 --seed 5 -o "$T/q1k.npy.gz"
"$GB" gen --shape 2x30x20 --seed 5 -o "$T/t2.npy.gz"
for pair in "quadratic $T/q1k.npy.gz $T/q.npy.gz" "transpose $T/t2.npy.gz $T/t.npy.gz"; do
    set -- $pair
    one=$(pins "$1" "$2")
    many=$(pins "$1" "$3")
    [ -n "$one" ] && [ -n "$many" ] && [ "$one" -lt "$many" ] && ok ||
        fail "$1: $one host buffers pinned for one chunk, $many for many"
done

# A chunk's copy to one device does not hold up the next chunk's copy to
# another: with each copy taking 20 ms on the stand-in (one link per
# device), two devices copy at once and one device never does.
copying() {
    rm -f "$T/copying"
    FAKECUDA_COPY_MS=20 FAKECUDA_COPY_REPORT="$T/copying" "$GB" "$@" >"$T/copy.out" 2>"$T/copy.err" ||
        fail "$*: $(cat "$T/copy.err")"
    sed -n 's/^copying //p' "$T/copying"
}
for d in 0 0,1; do
    want=$([ $d = 0 ] && echo 1 || echo 2)
    for f in a.npy.gz a.npy; do
        check_eq "reduce $f --device $d: devices copying at once" "$want" \
            "$(copying reduce -q --backend cuda --device $d --chunk 1M "$T/$f")"
    done
    check_eq "quadratic --device $d: devices copying at once" "$want" \
        "$(copying quadratic -q --backend cuda --device $d --chunk 1M "$T/q.npy.gz" -o "$T/qc.npy.gz" -f)"
done

# Prints the settings the stand-in saw at cuInit (FAKECUDA_ENV_REPORT) on
# one line, those named by the pattern PAT (grep -E) only.
env_seen() {
    grep -E "^($1)=" "$T/env" | tr '\n' ' ' | sed 's/ $//'
}

# The driver starts with 4 hardware queues per context and loads every
# kernel of a module with the module, unless the user set otherwise
# (CUDA_DEVICE_MAX_CONNECTIONS, CUDA_MODULE_LOADING).
(unset CUDA_DEVICE_MAX_CONNECTIONS CUDA_MODULE_LOADING
    FAKECUDA_ENV_REPORT="$T/env" "$GB" reduce --backend cuda "$T/a.npy" >/dev/null 2>&1)
check_eq "the driver's settings by default" "CUDA_DEVICE_MAX_CONNECTIONS=4 CUDA_MODULE_LOADING=EAGER" \
    "$(env_seen 'CUDA_DEVICE_MAX_CONNECTIONS|CUDA_MODULE_LOADING')"
CUDA_DEVICE_MAX_CONNECTIONS=16 CUDA_MODULE_LOADING=LAZY FAKECUDA_ENV_REPORT="$T/env" \
    "$GB" reduce --backend cuda "$T/a.npy" >/dev/null 2>&1
check_eq "the driver's settings as the user set them" \
    "CUDA_DEVICE_MAX_CONNECTIONS=16 CUDA_MODULE_LOADING=LAZY" \
    "$(env_seen 'CUDA_DEVICE_MAX_CONNECTIONS|CUDA_MODULE_LOADING')"

# The driver starts only the devices --device names: CUDA_VISIBLE_DEVICES
# as the stand-in saw it at cuInit, on 4 devices, and the exit status
# when it is not 0.
export FAKECUDA_DEVICES=4
visible() {
    rm -f "$T/env"
    FAKECUDA_ENV_REPORT="$T/env" "$@" >"$T/vis.out" 2>"$T/vis.err"
    st=$?
    echo "$(env_seen CUDA_VISIBLE_DEVICES)$([ $st = 0 ] || echo " (exit $st)")"
}
check_eq "the default device alone" "CUDA_VISIBLE_DEVICES=0" \
    "$(visible "$GB" reduce --backend cuda "$T/a.npy")"
check_eq "auto: the default device alone" "CUDA_VISIBLE_DEVICES=0" \
    "$(visible "$GB" reduce "$T/a.npy")"
check_eq "--device 2" "CUDA_VISIBLE_DEVICES=2" \
    "$(visible "$GB" reduce --backend cuda --device 2 "$T/a.npy")"
check_eq "--device 1,3" "CUDA_VISIBLE_DEVICES=1,3" \
    "$(visible "$GB" reduce --backend cuda --device 1,3 "$T/a.npy")"
check_eq "--device 3,0 keeps its order" "CUDA_VISIBLE_DEVICES=3,0" \
    "$(visible "$GB" quadratic --backend cuda --device 3,0 -f -o "$T/nq.npy.gz" "$T/q.npy.gz")"
check_eq "--device all, GPUBATCH_NARROW_DEVICES=0: every device" "CUDA_VISIBLE_DEVICES=unset" \
    "$(GPUBATCH_NARROW_DEVICES=0 visible "$GB" reduce --backend cuda --device all "$T/a.npy")"
check_eq "--device all, the user's list: its first entry for a small input" "CUDA_VISIBLE_DEVICES=3" \
    "$(CUDA_VISIBLE_DEVICES=3,1 visible "$GB" reduce --backend cuda --device all "$T/a.npy")"
check_eq "the user's list: --device 1 is its second entry" "CUDA_VISIBLE_DEVICES=1" \
    "$(CUDA_VISIBLE_DEVICES=3,1,0 visible "$GB" reduce --backend cuda --device 1 "$T/a.npy")"
check_eq "the user's list: --device 2,0" "CUDA_VISIBLE_DEVICES=0,3" \
    "$(CUDA_VISIBLE_DEVICES=3,1,0 visible "$GB" reduce --backend cuda --device 2,0 "$T/a.npy")"
check_eq "the user's list of UUIDs: picked as written" "CUDA_VISIBLE_DEVICES=MIG-b/1/0 (exit 1)" \
    "$(CUDA_VISIBLE_DEVICES=GPU-a,MIG-b/1/0 visible "$GB" reduce --backend cuda --device 1 "$T/a.npy")"
check_eq "GPUBATCH_NARROW_DEVICES=0" "CUDA_VISIBLE_DEVICES=unset" \
    "$(GPUBATCH_NARROW_DEVICES=0 visible "$GB" reduce --backend cuda --device 2 "$T/a.npy")"
check_eq "GPUBATCH_NARROW_DEVICES=0, the user's list" "CUDA_VISIBLE_DEVICES=3,1,0" \
    "$(CUDA_VISIBLE_DEVICES=3,1,0 GPUBATCH_NARROW_DEVICES=0 visible "$GB" reduce --backend cuda \
        --device 1 "$T/a.npy")"
# A list whose entries up to the one asked for are not all devices is left
# to the driver, which stops at the first one that is not.
for bad in "" "x" "1,x,2" "0,,2" "-1,2"; do
    check_eq "the user's list '$bad', --device 2: as it is" "CUDA_VISIBLE_DEVICES=$bad (exit 1)" \
        "$(CUDA_VISIBLE_DEVICES=$bad visible "$GB" reduce --backend cuda --device 2 "$T/a.npy")"
done
check_error "the user's list '1,x,2', --device 2" "no CUDA device 2 (this machine has 1)" \
    env CUDA_VISIBLE_DEVICES=1,x,2 "$GB" reduce --backend cuda --device 2 "$T/a.npy"
check_eq "the user's list '1,x,2', --device 0: its first entry" "CUDA_VISIBLE_DEVICES=1" \
    "$(CUDA_VISIBLE_DEVICES=1,x,2 visible "$GB" reduce --backend cuda "$T/a.npy")"
check_error "an empty list hides every device" "no CUDA device: the driver found no GPU" \
    env CUDA_VISIBLE_DEVICES= "$GB" reduce --backend cuda "$T/a.npy"
check_eq "a list with one entry at two places asked for: as it is" "CUDA_VISIBLE_DEVICES=2,2 (exit 1)" \
    "$(CUDA_VISIBLE_DEVICES=2,2 visible "$GB" reduce --backend cuda --device 1,0 "$T/a.npy")"

# --device all starts the first devices the input pays for
# (runtime/cost.h): one for a small input, a pipe, or a gzip stream that
# is not blocked or a deflated .npz member (one device inflates it), or
# where the links are not known
# (a device then takes 40 GB/s, more than the host's 30); where the GPUs'
# links are slow (a stand-in sysfs: PCIe 2.5 GT/s x1 behind the root port,
# 0.2 GB/s a device), two for 128 MiB of plain or blocked-gzip input.
slow="$T/sysfs/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
mkdir -p "$slow" "$T/sysfs/bus/pci/devices" "$T/nosysfs"
echo 0x10de >"$slow/vendor"
echo 0x030200 >"$slow/class"
echo "2.5 GT/s PCIe" >"$slow/max_link_speed"
echo 1 >"$slow/max_link_width"
ln -sf "$slow" "$T/sysfs/bus/pci/devices/0000:01:00.0"
"$GB" gen --shape 33554432 --dist normal --seed 8 --no-compress -o "$T/big.npy"
"$GB" gen --shape 33554432 --dist normal --seed 8 -1 -o "$T/big.npy.gz"
gzip -1 -c "$T/big.npy" >"$T/big-stream.npy.gz"
check_eq "--device all, a small input: the first device" "CUDA_VISIBLE_DEVICES=0" \
    "$(GPUBATCH_SYSFS="$T/sysfs" visible "$GB" reduce --backend cuda --device all "$T/a.npy")"
check_eq "--device all, a pipe: the first device" "CUDA_VISIBLE_DEVICES=0" \
    "$(GPUBATCH_SYSFS="$T/sysfs" visible sh -c "cat '$T/big.npy' | '$GB' reduce --backend cuda --device all")"
for f in big.npy big.npy.gz; do
    check_eq "--device all, slow links, 128 MiB $f: two devices" "CUDA_VISIBLE_DEVICES=0,1" \
        "$(GPUBATCH_SYSFS="$T/sysfs" visible "$GB" reduce --backend cuda --device all "$T/$f")"
    check_eq "--device all, links not known, 128 MiB $f: one device" "CUDA_VISIBLE_DEVICES=0" \
        "$(GPUBATCH_SYSFS="$T/nosysfs" visible "$GB" reduce --backend cuda --device all "$T/$f")"
done
check_eq "--device all, slow links, a 128 MiB gzip stream: one device" "CUDA_VISIBLE_DEVICES=0" \
    "$(GPUBATCH_SYSFS="$T/sysfs" visible "$GB" reduce --backend cuda --device all "$T/big-stream.npy.gz")"
# An .npz: a deflated member is one stream, a stored one plain data.
for how in ZIP_DEFLATED:0 ZIP_STORED:0,1; do
    $PY -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w', zipfile.${how%:*}, compresslevel=1).write(sys.argv[2], 'x.npy')" \
        "$T/big.npz" "$T/big.npy"
    check_eq "--device all, slow links, a 128 MiB ${how%:*} .npz" "CUDA_VISIBLE_DEVICES=${how#*:}" \
        "$(GPUBATCH_SYSFS="$T/sysfs" visible "$GB" reduce --backend cuda --device all "$T/big.npz")"
done
check_eq "--device all, slow links, auto: two devices" "CUDA_VISIBLE_DEVICES=0,1" \
    "$(GPUBATCH_SYSFS="$T/sysfs" visible "$GB" reduce --device all "$T/big.npy")"
check_eq "--device all, slow links, the user's list: its first two entries" "CUDA_VISIBLE_DEVICES=3,1" \
    "$(CUDA_VISIBLE_DEVICES=3,1,0 GPUBATCH_SYSFS="$T/sysfs" visible "$GB" reduce --backend cuda \
        --device all "$T/big.npy")"
check_eq "--device all, slow links, quadratic of a small input: one device" "CUDA_VISIBLE_DEVICES=0" \
    "$(GPUBATCH_SYSFS="$T/sysfs" visible "$GB" quadratic --backend cuda --device all -f \
        -o "$T/nq.npy.gz" "$T/q.npy.gz")"
GPUBATCH_SYSFS="$T/sysfs" "$GB" reduce -v --backend cuda --device all --op sum "$T/big.npy" \
    >/dev/null 2>"$T/plan.err"
grep -q "driver: --device all starts at most 2 devices (CUDA_VISIBLE_DEVICES=0,1): 0.13 GB of input that devices can share, each further device's start about 0.25 s, a device taking 0.2 GB/s (PCIe link 0.2 GB/s), the host handing over 30 GB/s" "$T/plan.err" &&
    ok || fail "-v of the plan: $(grep driver: "$T/plan.err")"
check_eq "--device all on two devices: both take chunks" "2" \
    "$(grep -c 'backend cuda: device [01] (.*) taking chunks' "$T/plan.err")"

# The devices narrowed to do the work, and every message numbers them as
# --device does.
check_launches "--device 2, narrowed: the launches on device 2" "0 0 + 0" \
    "$GB" reduce -v --backend cuda --device 2 --chunk 1M "$T/a.npy.gz"
grep -q "backend cuda: device 2[ ,]" "$T/dev.err" && ok ||
    fail "-v of --device 2: $(grep 'backend cuda: device' "$T/dev.err")"
grep -q "driver: starting only the devices of --device (CUDA_VISIBLE_DEVICES=2)" "$T/dev.err" && ok ||
    fail "-v of --device 2 does not say what the driver starts: $(cat "$T/dev.err")"
check_launches "--device 3,1, narrowed" "0 + 0 +" \
    "$GB" reduce -v --backend cuda --device 3,1 --chunk 1M "$T/a.npy.gz"
check_eq "-v names the devices, narrowed" "device 1|device 3" \
    "$(sed -n 's/.*backend cuda: \(device [0-9]*\).*/\1/p' "$T/dev.err" | sort | tr '\n' '|' | sed 's/|$//')"
check_launches "the user's list 3,1,0, --device 2,0" "+ 0 0 +" \
    env CUDA_VISIBLE_DEVICES=3,1,0 "$GB" reduce -v --backend cuda --device 2,0 --chunk 1M "$T/a.npy.gz"
check_eq "-v names the devices as the user's list numbers them" "device 0|device 2" \
    "$(sed -n 's/.*backend cuda: \(device [0-9]*\).*/\1/p' "$T/dev.err" | sort | tr '\n' '|' | sed 's/|$//')"
"$GB" reduce --device 3 --op sum "$T/a.npy.gz" >/dev/null 2>"$T/auto2.err"
check_eq "auto on --device 3, narrowed: no fallback" "" "$(grep 'CPU backend' "$T/auto2.err")"
check_launches "a late device, narrowed, in -v" "0 + 0 +" \
    env FAKECUDA_CTX_DELAY_MS=0,0,0,300 FAKECUDA_COPY_MS=50 \
    "$GB" reduce -v --backend cuda --device 1,3 --chunk 1M "$T/a.npy.gz"
grep -q "device 3 (Fake GPU) taking chunks .* after [1-9][0-9]* on other devices" "$T/dev.err" &&
    ok || fail "-v: device 3 joins late: $(grep 'taking chunks' "$T/dev.err")"
check_launches "bench --device 2, narrowed" "0 0 + 0" \
    "$GB" bench --backend cuda --device 2 --reps 1 --sizes inflate:100003 inflate
check_error "a device that does not open, narrowed" "cannot open CUDA device 3: " \
    env FAKECUDA_CTX_ERROR_DEVICE=3 "$GB" reduce -q --backend cuda --device 1,3 --chunk 1M "$T/a.npy.gz"
FAKECUDA_MEM_BYTES=30000000 "$GB" reduce --backend cuda --device 2 "$T/a.npy" >"$T/o" 2>"$T/e"
grep -q "of 30000000 free on device 2" "$T/e" && ok || fail "out of memory, narrowed: $(cat "$T/e")"

# A device beyond the machine's is still an error naming it; a user's list
# without that place is left to the driver, which counts its devices.
for d in 5 0,5 5,0; do
    check_error "--device $d of 4" "no CUDA device 5 (this machine has fewer than 6)" \
        "$GB" reduce --backend cuda --device $d "$T/a.npy"
done
check_error "--device 2 of the user's 2" "no CUDA device 2 (this machine has 2)" \
    env CUDA_VISIBLE_DEVICES=3,1 "$GB" reduce --backend cuda --device 2 "$T/a.npy"
check_error "--device 1 of the user's list, its entry missing" \
    "no CUDA device 1 (this machine has fewer than 2)" \
    env CUDA_VISIBLE_DEVICES=0,7 "$GB" reduce --backend cuda --device 1 "$T/a.npy"
"$GB" reduce --device 6 "$T/a.npy" >/dev/null 2>"$T/auto.err"
grep -q "no CUDA device 6 (this machine has fewer than 7); using the CPU backend" "$T/auto.err" &&
    ok || fail "auto, --device 6 of 4: $(cat "$T/auto.err")"

# info sees every device.
rm -f "$T/env"
FAKECUDA_ENV_REPORT="$T/env" "$GB" info --no-jit --device 2 >"$T/info.out" 2>&1
check_eq "info: every device" "CUDA_VISIBLE_DEVICES=unset|4" \
    "$(env_seen CUDA_VISIBLE_DEVICES)|$(sed -n 's/^driver: .*, \([0-9]*\) devices$/\1/p' "$T/info.out")"
summary
