#!/bin/sh
# deflate.sh [OUTDIR [BASELINE_TREE]] - blocked gzip output compressed on the GPU: output
# bytes of --backend cuda against --backend cpu (quadratic and transpose,
# levels, chunk sizes, threads, streams, shards, float32 and float64, batch
# and staged transposes), the outputs read back by gzip, bgzip and Python;
# the kernels' members against the host encoder's on adversarial data with
# compute-sanitizer memcheck, racecheck and synccheck on a small run; the kernels' rate
# beside the device copy and zlib level 1 on every core
# (tests/gpu/bench_gpu_deflate.cu); and whole-process times of quadratic
# over 2^27 float32 rows writing blocked gzip and plain .npy on every
# backend, to /dev/null and to files (in /dev/shm where it has room), with
# -v's timeline and waits of the cuda runs to /dev/null.
# BASELINE_TREE (optional) is another source tree: its kernels' rates are
# taken in turn with this tree's, and its binary raced beside this one.
# Needs a CUDA GPU, nvcc and python3. Full logs go to OUTDIR; a short table
# is printed last.
set -u
out=${1:-gpu-deflate}
base_src=${2:-}
work_name=gpubatch-deflate
. "$(dirname "$0")/lib.sh"
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
# same_part ARGS...: -o output bytes (blocked gzip: the names end in .gz) and
# messages are the same on both backends.
same_part() {
    rm -f "$work/o_cpu.gz" "$work/o_cuda.gz" "$work/o_raw"
    c=$("$GB" "$@" --backend cpu -o "$work/o_cpu.gz" 2>&1; echo "exit $?")
    g=$("$GB" "$@" --backend cuda -o "$work/o_cuda.gz" 2>&1; echo "exit $?")
    check "$*" "$c" "$g"
    check "bytes: $*" "$(md5sum <"$work/o_cpu.gz")" "$(md5sum <"$work/o_cuda.gz")"
}
# same_file ARGS...: as same_part, and the CUDA output decodes to the
# --no-compress output.
same_file() {
    same_part "$@"
    "$GB" "$@" --backend cpu --no-compress -o "$work/o_raw" >/dev/null 2>&1
    check "gzip -dc: $*" "$(md5sum <"$work/o_raw")" "$(gzip -dc "$work/o_cuda.gz" | md5sum)"
    check "python gzip: $*" ok "$(python3 -c 'import gzip,sys; a=gzip.open(sys.argv[1]).read(); b=open(sys.argv[2],"rb").read(); print("ok" if a==b else "differ")' "$work/o_cuda.gz" "$work/o_raw")"
    if command -v bgzip >/dev/null; then
        check "bgzip -t: $*" ok "$(bgzip -t "$work/o_cuda.gz" >/dev/null 2>&1 && echo ok)"
    fi
}

note "== output bytes: --backend cuda against --backend cpu"
for n in 1 4081 1000003; do
    "$GB" gen --quadratic "$n" --seed "$n" -f -o "$work/q$n.npy.gz"
    for args in "" "--chunk 1000000" "--chunk 457000 --streams 2 -p 3" "-6" "--chunk 65292 -p 1"; do
        same_file quadratic $args "$work/q$n.npy.gz"
    done
done
"$GB" gen --quadratic 300001 --dtype float64 --seed 7 -f -o "$work/q64.npy.gz"
same_file quadratic --chunk 777777 "$work/q64.npy.gz"
same_file quadratic --out-layout planes "$work/q4081.npy.gz"
"$GB" gen --quadratic 1000003 --seed 9 --raw --no-compress -f -o "$work/qraw.bin"
same_file quadratic --raw --dtype float32 --chunk 999999 "$work/qraw.bin"
for i in 0 1 2; do
    same_part quadratic --shard "$i/3" --chunk 500000 "$work/q1000003.npy.gz"
done
"$GB" gen --shape 7x300x200 --seed 3 -f -o "$work/t3.npy.gz"
"$GB" gen --shape 1000x17x33 --dtype int16 --seed 4 -f -o "$work/t16.npy.gz"
"$GB" gen --shape 3000x5000 --seed 5 -f -o "$work/tm.npy.gz"
for args in "" "--chunk 1000000" "--chunk 333333 --streams 3 -p 2"; do
    same_file transpose $args "$work/t3.npy.gz"
    same_file transpose $args "$work/t16.npy.gz"
done
same_file transpose --chunk 1000000 "$work/tm.npy.gz"
same_file transpose "$work/tm.npy.gz"
# matrices larger than --chunk, staged whole: their pieces compressed on the
# device one after another, across matrices, at offsets off the blocks
"$GB" gen --shape 3x1000x1001 --seed 6 -f -o "$work/ts.npy.gz"
for args in "--chunk 1000000" "--chunk 777777 -p 3" "--shard 1/2 --chunk 1000000"; do
    same_part transpose $args "$work/ts.npy.gz"
done
same_file transpose --chunk 1000000 "$work/ts.npy.gz"
note "output checks: $pass passed, $fail failed"

note "== kernels: members against the host encoder, sanitizers"
nvcc -O3 -std=c++17 -fmad=false -I. -arch=sm_90 -o "$work/bench" tests/gpu/bench_gpu_deflate.cu -lz \
    -lpthread >"$out/bench_build.log" 2>&1 || note "bench build FAILED"
"$GB" quadratic --backend cpu --no-compress --raw -f -o "$work/roots.bin" "$work/q1000003.npy.gz"
"$GB" gen --quadratic 16777216 --seed 2 -f -o "$work/q24.npy.gz"
"$GB" quadratic --backend cpu --no-compress --raw -f -o "$work/roots24.bin" "$work/q24.npy.gz"
"$GB" gen --shape 67108864 --dist normal --seed 3 --raw --no-compress -f -o "$work/normal.bin"
"$GB" gen --quadratic 65536 --seed 6 -f -o "$work/q65536.npy.gz"
for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$GB" quadratic --backend cuda --chunk 300000 \
        -f -o "$work/san.npy.gz" "$work/q65536.npy.gz" >"$out/sanitizer_$tool.log" 2>&1
    note "compute-sanitizer $tool on quadratic --backend cuda: exit $? ($(tail -1 "$out/sanitizer_$tool.log"))"
done
compute-sanitizer --tool memcheck --error-exitcode 9 "$work/bench" -m 1 -r 1 -s 0 "$work/roots.bin" \
    >"$out/sanitizer_bench.log" 2>&1
note "compute-sanitizer memcheck on the kernels' identity run: exit $? ($(grep -c DIFFER "$out/sanitizer_bench.log") differ)"
"$work/bench" -m 256 -r 5 "$work/roots24.bin" "$work/normal.bin" >"$out/bench.log" 2>&1
note "kernel identity (every level, odd sizes, 64 MiB): exit $?, $(grep -c ': same$' "$out/bench.log") same, $(grep -c DIFFER "$out/bench.log") differ"
if [ -n "$OLD" ] && (cd "$base_src" && nvcc -O3 -std=c++17 -fmad=false -I"$base_src" -arch=sm_90 \
    -o "$work/bench_base" tests/gpu/bench_gpu_deflate.cu -lz -lpthread) >>"$out/bench_build.log" 2>&1; then
    note "== kernels' rates, this tree and the baseline in turn (-m 64 -r 5 -s 0, GB/s)"
    for i in 1 2; do
        for v in bench bench_base; do
            "$work/$v" -m 64 -r 5 -s 0 "$work/roots24.bin" "$work/normal.bin" >"$out/$v.$i.log" 2>&1
            grep -E "^(random|zeros|runs|period3|float|roots|normal)" "$out/$v.$i.log" | cut -c1-60 |
                sed "s/^/  $v $i: /" | tee -a "$sum"
        done
    done
fi
nvcc -O3 -std=c++17 -fmad=false -I. -arch=sm_90 -DDW_PROFILE -o "$work/bench_prof" \
    tests/gpu/bench_gpu_deflate.cu -lz -lpthread >>"$out/bench_build.log" 2>&1 &&
    "$work/bench_prof" -m 64 -r 2 -s 0 "$work/roots24.bin" "$work/normal.bin" | grep '^profile' | tee -a "$sum"

note "== whole process: best of 3 wall times, the variants interleaved, page cache warm"
"$GB" gen --quadratic 134217728 --seed 1 -1 -f -o "$work/qbig.npy.gz"
Q="$work/qbig.npy.gz"
cat "$Q" >/dev/null
# The host's own runs race apart: a GPU run that came right after one that
# kept 16 cores busy for seconds ran up to 0.1 s slower (the same binary,
# 0.596 s after `cpu -1` against 0.481 s in a race without it, on an H200).
# Blocked gzip goes to $nullgz (/dev/null under a .gz name), plain bytes to
# /dev/null.
set -- "$GB,quadratic,--backend,cuda,-1,-o,$nullgz,$Q" \
    "$GB,quadratic,--backend,cuda,--no-compress,-o,/dev/null,$Q" \
    "$GB,quadratic,--backend,auto,-1,-o,$nullgz,$Q" \
    "$GB,quadratic,--backend,auto,--no-compress,-o,/dev/null,$Q"
[ -n "$OLD" ] && set -- "$@" "$OLD,quadratic,--backend,cuda,-1,-o,$nullgz,$Q" \
    "$OLD,quadratic,--backend,cuda,--no-compress,-o,/dev/null,$Q" \
    "$OLD,quadratic,--backend,auto,-1,-o,$nullgz,$Q"
race "quadratic 2^27, output to /dev/null" "$@"
race "quadratic 2^27 on the host's cores, output to /dev/null" "$GB,quadratic,--backend,cpu,-1,-o,$nullgz,$Q"
# where the time goes (-v): the timeline, and the main thread's waits
for args in "-1" "--no-compress"; do
    "$GB" quadratic -v --backend cuda $args -o "$nullgz" "$Q" 2>&1 |
        grep -E "process started|main thread waited" | sed "s|$work/||; s/^/  cuda $args: /" | tee -a "$sum"
done
# into files of a memory file system where there is room, so that the disk's
# write-back does not time the runs
dir=$work
[ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt 8000000 ] &&
    dir=/dev/shm/gpubatch-deflate && mkdir -p "$dir"
note "output files in $dir"
RACE_CLEAN="$dir/e2e.*"
race "quadratic 2^27, output to files" \
    "$GB,quadratic,--backend,cuda,-1,-f,-o,$dir/e2e.npy.gz,$Q" \
    "$GB,quadratic,--backend,cuda,--no-compress,-f,-o,$dir/e2e.npy,$Q" \
    "$GB,quadratic,--backend,auto,-1,-f,-o,$dir/e2e.npy.gz,$Q" \
    "$GB,quadratic,--backend,auto,--no-compress,-f,-o,$dir/e2e.npy,$Q"
race "quadratic 2^27 compressed on the host's cores, output to files" \
    "GPUBATCH_HOST_DEFLATE=1,$GB,quadratic,--backend,cuda,-1,-f,-o,$dir/e2e.npy.gz,$Q" \
    "$GB,quadratic,--backend,cpu,-1,-f,-o,$dir/e2e.npy.gz,$Q" \
    "$GB,quadratic,--backend,cpu,--no-compress,-f,-o,$dir/e2e.npy,$Q"
RACE_CLEAN=
rm -f "$dir"/e2e.*
[ "$dir" = "$work" ] || rmdir "$dir"
note "total: $pass passed, $fail failed"
echo
echo "== summary"
grep -E "^(data|random|zeros|runs|period3|float|roots|normal)" "$out/bench.log"
grep -E "identity failures|output checks|sanitizer|quadratic 2\^27|quadratic|process started|main thread|total:" "$sum"
