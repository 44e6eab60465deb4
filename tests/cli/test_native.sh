#!/bin/sh
# test_native.sh - which embedded code each GPU loads, through the stand-in
# driver (tests/cli/fakecuda.c) as GPUs of several compute capabilities: the
# native code (cubin) of the device's major version and the highest minor
# version at or below its own, else the PTX through the JIT; the PTX when
# the driver refuses the cubin (as a driver older than the cubin's format
# does), with the driver's reason in `info`; and a reduction's kernels run
# either way.
. "$(dirname "$0")/lib.sh"
use_fake_driver
REP="$T/launches"
"$GB" gen --shape 100000 --seed 3 -o "$T/a.npy.gz"
for f in "$top"/ptx/images/*.img; do sed -n '2,/^$/p' "$f"; done |
    awk '$2 == "ptx" { print $1 }' | sort -u >"$T/modules"
n_modules=$(wc -l <"$T/modules")

# info_loads WHAT HOW: `info` loads every module as HOW; a reduction runs.
info_loads() {
    "$GB" info -v >"$T/info" 2>&1
    check_eq "$1: info exit status" 0 $?
    check_eq "$1: every module loaded as $2" "$n_modules" "$(grep -cF " $2 loaded in " "$T/info")"
    rm -f "$REP"
    if FAKECUDA_REPORT="$REP" "$GB" reduce --backend cuda "$T/a.npy.gz" >"$T/o" 2>"$T/e" &&
        grep -q "^device 0 launches [1-9]" "$REP"; then ok; else
        fail "$1: reduce on the stand-in GPU: $(cat "$T/e" "$REP" 2>/dev/null)"
    fi
}

for row in "7.5 sm_75" "8.0 sm_80" "8.6 sm_86" "8.7 sm_86" "8.9 sm_89" "9.0 sm_90" \
    "10.0 sm_100" "10.3 sm_100" "12.0 sm_120" "12.1 sm_120"; do
    set -- $row
    export FAKECUDA_CC=$1
    info_loads "compute capability $1" "$2 native code"
done
# No native code of that major version: the PTX, which runs on every GPU.
export FAKECUDA_CC=11.0
info_loads "compute capability 11.0" "compute_75 PTX (JIT)"
FAKECUDA_CC=7.0 "$GB" info -v >"$T/info" 2>&1
check_eq "compute capability 7.0: nothing runs" "$n_modules" \
    "$(grep -c ' no variant runs here: no embedded PTX or native code of module [a-z0-9_]* runs on compute capability 7\.0' "$T/info")"

# --no-jit says what would be tried, loading nothing.
FAKECUDA_CC=8.6 "$GB" info -v --no-jit >"$T/info" 2>&1
check_eq "--no-jit: native code first" "$n_modules" \
    "$(grep -cF ' sm_86 native code (else compute_75 PTX, JIT)' "$T/info")"
check_eq "--no-jit: nothing loaded" 0 "$(grep -c ' loaded in ' "$T/info")"
FAKECUDA_CC=8.6 "$GB" info --no-jit >"$T/info" 2>&1
check_eq "--no-jit without -v: the device's line" \
    "device 0: Fake GPU, compute capability 8.6, $n_modules sm_86 native code (else compute_75 PTX, JIT), not loaded" \
    "$(sed -n 's/^\(device 0: Fake GPU, compute capability 8\.6\), .*; kernels: /\1, /p' "$T/info")"
FAKECUDA_CC=7.0 "$GB" info >"$T/info" 2>&1
grep -q "^device 0: .*; kernels: $n_modules with no variant that runs here (first: [a-z0-9_]*: no embedded PTX or native code of module [a-z0-9_]* runs on compute capability 7\.0)\$" "$T/info" &&
    ok || fail "compute capability 7.0, info without -v: $(grep '^device 0' "$T/info")"

# A driver that refuses the native code: the PTX, and info says why.
export FAKECUDA_CC=9.0 FAKECUDA_CUBIN_ERROR=200
info_loads "cubins refused" "compute_75 PTX (JIT; the driver refused sm_90: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid))"
export FAKECUDA_CUBIN_ERROR=209
info_loads "no binary for the GPU" \
    "compute_75 PTX (JIT; the driver refused sm_90: CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available for execution on the device))"
# ... and the PTX too: the error names the PTX the driver refused last.
export FAKECUDA_NEWEST_PTX_ISA=6.5
check_error "cubin and PTX refused" \
    "a.npy.gz: the NVIDIA driver (CUDA 13\.0) cannot load module [a-z0-9_]*: its PTX ISA [0-9.]* needs CUDA [0-9.]* (driver R[0-9]*) or newer, and the driver says CUDA_ERROR_UNSUPPORTED_PTX_VERSION" \
    "$GB" reduce --backend cuda "$T/a.npy.gz"
unset FAKECUDA_NEWEST_PTX_ISA
# Out of memory loading the cubin is not a refusal: no fallback, an error.
export FAKECUDA_CUBIN_ERROR=2
check_error "out of memory loading a cubin" \
    "a.npy.gz: .*loading module [a-z0-9_]* (sm_90) failed: CUDA_ERROR_OUT_OF_MEMORY" \
    "$GB" reduce --backend cuda "$T/a.npy.gz"
unset FAKECUDA_CUBIN_ERROR FAKECUDA_CC
summary
