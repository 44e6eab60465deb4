#!/bin/sh
# test_driver_faults.sh - the GPU error paths, reached on any machine through
# a stand-in driver (tests/cli/fakecuda.c, named by GPUBATCH_LIBCUDA): out of
# device memory for an absurd --chunk, and a failing kernel launch, each a
# clear error naming what failed, status 1 and no output file.
. "$(dirname "$0")/lib.sh"
use_fake_driver

"$GB" info >"$T/info" 2>&1
grep -q "^device 0: Fake GPU" "$T/info" && ok || fail "the stand-in driver is not used: $(head -3 "$T/info")"

# Out of device memory: 1 GiB chunks on a 512 MiB device. Raw gzip input has
# no known size, so the chunk is not shrunk to the input. Two streams, not
# the default four: the pages of each stream's 1 GiB host buffer are
# faulted in before the device refuses, seconds of system time a buffer.
"$GB" gen --shape 300000 --raw -o "$T/a.raw.gz"
export FAKECUDA_MEM_BYTES=536870912
check_error "--chunk 1G on a 512 MiB device, --backend cuda" \
    "out of device memory: a chunk buffer (--chunk) needs 1073741824 bytes, 536870912 of 536870912 free on device 0 (CUDA_ERROR_OUT_OF_MEMORY (out of memory))" \
    "$GB" reduce --backend cuda --dtype float32 --chunk 1G --streams 2 "$T/a.raw.gz"
# auto goes on with the CPU (warning if the GPU was ready in time to be tried)
"$GB" reduce --backend auto --dtype float32 --chunk 1G "$T/a.raw.gz" >"$T/auto.out" 2>"$T/auto.err"
check_eq "--chunk 1G on a 512 MiB device, --backend auto: status" 0 $?
"$GB" reduce --backend cpu --dtype float32 "$T/a.raw.gz" >"$T/cpu.out"
check_files_same "--chunk 1G on a 512 MiB device, --backend auto: the CPU's result" "$T/cpu.out" \
    "$T/auto.out"
grep -v "cannot use the GPU: out of device memory: a chunk buffer.*going on with the CPU" \
    "$T/auto.err" >"$T/auto.other"
check_eq "--chunk 1G on a 512 MiB device, --backend auto: no other message" "" "$(cat "$T/auto.other")"
# a device too small for the chunk buffers, the GPU always tried (it counts
# as ready once the CPU has taken a chunk): the warning says why, and the
# CPU does the rest
"$GB" gen --shape 3000000 --seed 1 -o "$T/b.npy.gz"
"$GB" reduce --backend cpu "$T/b.npy.gz" >"$T/cpu.out"
FAKECUDA_MEM_BYTES=3000000 GPUBATCH_GPU_START=always GPUBATCH_GPU_READY_AFTER=1 "$GB" reduce \
    --backend auto --chunk 1M "$T/b.npy.gz" >"$T/auto.out" 2>"$T/auto.err"
check_eq "auto, the device's memory too small: status" 0 $?
check_files_same "auto, the device's memory too small: the CPU's result" "$T/cpu.out" "$T/auto.out"
check_eq "auto, the device's memory too small: the warning" "1" \
    "$(grep -c "warning: cannot use the GPU: out of device memory: a compressed chunk buffer.*going on with the CPU" \
        "$T/auto.err")"
rm -f "$T/auto.out" "$T/auto.err" "$T/auto.other" "$T/cpu.out" "$T/b.npy.gz"
"$GB" gen --quadratic 100000 -o "$T/q.npy.gz"
"$GB" gen --quadratic 100000 --raw -o "$T/q.raw.gz"
check_error "quadratic --chunk 1G on a 512 MiB device" \
    "out of device memory: a compressed chunk buffer (--chunk) needs" \
    "$GB" quadratic --backend cuda --chunk 1G --streams 2 --dtype float32 --raw "$T/q.raw.gz" \
    -o "$T/r1.gz"
[ -e "$T/r1.gz" ] && fail "quadratic out of device memory left an output" || ok
check_error "the same with a --chunk that fits is not out of memory" "launching kernel" \
    env FAKECUDA_LAUNCH_ERROR=719 "$GB" reduce --backend cuda --dtype float32 --chunk 16M "$T/a.raw.gz"
unset FAKECUDA_MEM_BYTES

# A failing launch names the kernel, the grid and the driver's error text:
# the command's kernel on uncompressed input, the device inflate's first
# kernel on blocked gzip.
export FAKECUDA_LAUNCH_ERROR=719
gzip -dc "$T/a.raw.gz" >"$T/a.raw"
gzip -dc "$T/q.npy.gz" >"$T/q.npy"
check_error "reduce launch failure" \
    "a.raw: launching kernel rdk_moments ([0-9]* blocks of 256) failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)" \
    "$GB" reduce --backend cuda --dtype float32 "$T/a.raw"
check_error "reduce extrema launch failure" "launching kernel rdk_extrema" \
    "$GB" reduce --backend cuda --dtype float32 --op max "$T/a.raw"
check_error "device inflate launch failure" \
    "a.raw.gz: launching kernel gzk_inflate ([0-9]* blocks of [0-9]*) failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)" \
    "$GB" reduce --backend cuda --dtype float32 "$T/a.raw.gz"
check_error "quadratic launch failure" \
    "q.npy: launching kernel qdk_rows ([0-9]* blocks of 256) failed: CUDA_ERROR_LAUNCH_FAILED" \
    "$GB" quadratic --backend cuda "$T/q.npy" -o "$T/r2.npy.gz"
[ -e "$T/r2.npy.gz" ] && fail "quadratic launch failure left an output" || ok
export FAKECUDA_LAUNCH_ERROR=700
check_error "illegal address" "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)" \
    "$GB" reduce --dtype float32 "$T/a.raw.gz"
unset FAKECUDA_LAUNCH_ERROR

# A failing copy to the device: the error names the driver call and its
# text, whatever stage it failed in (a gzip stream inflated on the device,
# a blocked-gzip chunk, a plain chunk, a matrix), status 1, no output file;
# a chunk whose copy failed is never collected (its member check was never
# made on the device: reading it crashed, now and then, before).
export FAKECUDA_COPY_ERROR=700
illegal="cuMemcpyHtoDAsync at runtime/[a-z_/]*\.c:[0-9]*: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
gzip -dc "$T/a.raw.gz" | gzip -1 >"$T/a-stream.raw.gz"
check_error "a copy fails, a gzip stream on the device" \
    "a-stream.raw.gz: inflating a gzip stream on the device: $illegal" \
    env GPUBATCH_HOST_INFLATE=0 "$GB" reduce --backend cuda --dtype float32 "$T/a-stream.raw.gz"
check_error "a copy fails, blocked gzip" "a.raw.gz: queueing a reduction chunk: $illegal" \
    "$GB" reduce --backend cuda --dtype float32 "$T/a.raw.gz"
check_error "a copy fails, plain data" "a.raw: queueing a reduction chunk: $illegal" \
    "$GB" reduce --backend cuda --dtype float32 "$T/a.raw"
for i in 1 2 3 4 5 6 7 8; do
    check_error "a copy fails, quadratic of blocked gzip (run $i)" \
        "q.npy.gz: queueing a quadratic chunk: $illegal" \
        "$GB" quadratic --backend cuda --chunk 256k "$T/q.npy.gz" -o "$T/r3.npy.gz"
    [ -e "$T/r3.npy.gz" ] && fail "a failed copy left an output" || ok
done
unset FAKECUDA_COPY_ERROR
rm -f "$T/a-stream.raw.gz"
check_eq "no temporary file left" "" "$(ls -A "$T" | grep -v -e '^a\.raw\.gz$' -e '^a\.raw$' -e '^q\.npy$' -e '^q\.npy\.gz$' -e '^q\.raw\.gz$' -e '^info$' -e '^err\.')"
summary
