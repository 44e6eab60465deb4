#!/bin/sh
# run.sh [OUTDIR [PHASE]] - every GPU check in one call, on a machine with a
# CUDA GPU and the CUDA toolkit: build, the whole test suite (GPU tests
# included), compute-sanitizer, the benchmarks, and with several GPUs the
# multi-device tests and scaling. PHASE (default all) picks a part:
#   tests    the test suite and compute-sanitizer
#   perf     the benchmarks: kernels, then end to end and codec scaling
#   kernels  the kernel benchmarks, `gpubatch bench all` and compare.sh
#   e2e      end to end and codec scaling
#   devices  several GPUs: tests, compute-sanitizer, scaling and the node's
#            table (bench_node.sh)
# Full logs go to OUTDIR; a short table is printed last.
set -u
out=${1:-gpu-results}
phase=${2:-all}
mkdir -p "$out"
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=${GPUBATCH_WORK:-/tmp/gpubatch-gpu}
mkdir -p "$work"
sum="$out/summary.txt"
: >"$sum"
note() { echo "$*" | tee -a "$sum"; }
NVCC=${NVCC:-nvcc}

note "== build"
make -j"$(nproc)" >"$out/build.log" 2>&1 || { note "build FAILED"; tail -20 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/device.txt" 2>&1
note "device: $(cat "$out/device.txt")"
./gpubatch info >"$out/info.txt" 2>&1
grep -E '^(driver|device)' "$out/info.txt" | tee -a "$sum"

# Whether PHASE runs part $1.
part() {
    case "$phase:$1" in
    all:* | "$1:$1" | perf:kernels | perf:e2e) return 0 ;;
    esac
    return 1
}
ndev=$(grep -c '^device [0-9]*:' "$out/info.txt")

if part tests; then
note "== tests (CPU suite + GPU vs CPU bit identity)"
make test >"$out/test.log" 2>&1
grep -E '^(ok|FAIL|skip)|passed,' "$out/test.log" | tail -n 25 | tee -a "$sum"

note "== compute-sanitizer"
for n in 1 31 33 8191 8193 65535 65537; do
    ./gpubatch gen --shape $n --dist normal --seed $n --no-compress -o "$work/s$n.npy" -f
    ./gpubatch gen --shape $n --dtype int64 --seed $n --no-compress -o "$work/s64_$n.npy" -f
done
for n in 1 33 65537; do
    ./gpubatch gen --quadratic $n --seed $n --no-compress -o "$work/q$n.npy" -f
    python3 tests/cli/quadref.py planes "$work/q$n.npy" "$work/qp$n.npy"
done
for tool in memcheck racecheck initcheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch reduce -q --backend cuda \
        --op sum,min,max,argmin,sumsq,count --chunk 64k "$work"/s*.npy >"$out/sanitizer-$tool.log" 2>&1
    st=$?
    compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch reduce -q --backend cuda \
        --op sum,mean,max,argmax --skipnan "$work"/s1*.npy >>"$out/sanitizer-$tool.log" 2>&1
    st2=$?
    for n in 1 33 65537; do
        compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch quadratic -q --backend cuda \
            --chunk 128k --raw --no-compress "$work/q$n.npy" -o /dev/null >>"$out/sanitizer-$tool.log" 2>&1 || st2=$?
        compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch quadratic -q --backend cuda \
            --chunk 128k --raw --no-compress --out-layout planes "$work/qp$n.npy" -o /dev/null >>"$out/sanitizer-$tool.log" 2>&1 || st2=$?
    done
    for shape in 33x31 64x64 130x260 5x7x9; do
        ./gpubatch gen --shape $shape --seed 7 --no-compress -o "$work/t$shape.npy" -f
        for c in 32M 128k; do
            compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch transpose -q --backend cuda \
                --chunk $c --no-compress "$work/t$shape.npy" -o /dev/null >>"$out/sanitizer-$tool.log" 2>&1 || st2=$?
        done
    done
    ./gpubatch gen --shape 130x260 --dtype int8 --seed 7 --no-compress -o "$work/t8.npy" -f
    compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch transpose -q --backend cuda \
        --no-compress "$work/t8.npy" -o /dev/null >>"$out/sanitizer-$tool.log" 2>&1 || st2=$?
    note "sanitizer $tool: exit $st/$st2, $(grep -cE "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" "$out/sanitizer-$tool.log") clean summaries"
done

fi
if part kernels; then
note "== kernel resources (ptxas for sm_90 from the embedded PTX)"
make -s ptx-unpack >"$out/ptx-unpack.log" 2>&1 || note "make ptx-unpack FAILED"
for k in f32_moments f32_extrema f64_moments; do
    ptxas -arch=sm_90 -v -o "$work/$k.cubin" "build/ptx/reduce_$k.compute_75.ptx" 2>&1 | grep -E 'registers|spill' | tr '\n' ' ' | sed "s/^/$k: /" | tee -a "$sum"
    echo | tee -a "$sum"
    cuobjdump -sass "$work/$k.cubin" >"$out/sass-$k.txt" 2>&1
    # Order of wide loads and first uses in the tile kernel: all loads of a
    # sub-tile should be issued before the first conversion.
    note "$k: $(awk '/Function : rdk_/{f=1} f && /LDG.E.128|F2F.F64|I2F/{printf "%s ", ($0 ~ /LDG/ ? "L" : "c")}' "$out/sass-$k.txt" | cut -c1-120)"
done

note "== kernel benchmark (data in device memory)"
objs="build/runtime/reduce.o build/runtime/backend.o build/runtime/gpu.o build/runtime/ptx_blobs.o build/runtime/cu.o build/io/dtype.o build/io/par.o build/io/clock.o build/io/status.o build/io/view.o build/io/cpu.o build/runtime/simd.o build/ptx_table.o"
if $NVCC -O2 -std=c++17 -I. -o "$work/bench_reduce" tests/gpu/bench_reduce.cu $objs -lcuda -ldl -l:libz.a \
    >"$out/bench_build.log" 2>&1; then
    "$work/bench_reduce" "build/ptx/reduce_f32_moments.compute_75.ptx" 30 >"$out/bench_reduce.txt" 2>&1
    tee -a "$sum" <"$out/bench_reduce.txt"
    # the 16-bit float sums, at the same bytes (against float32 CUB and the copy)
    for d in f16:float16 bf16:bfloat16; do
        "$work/bench_reduce" "build/ptx/reduce_${d%%:*}_moments.compute_75.ptx" 30 "${d#*:}" \
            >"$out/bench_reduce_${d%%:*}.txt" 2>&1
        note "${d#*:}: $(grep -E '^[0-9]+ ' "$out/bench_reduce_${d%%:*}.txt" | tail -2 |
            awk '{printf "%s elements %s of copy (%s); ", $1, $7, $8}')"
    done
else
    note "bench_reduce build FAILED"
    tail -5 "$out/bench_build.log"
fi

note "== reductions along axes (arrays in device memory; kernels vs the CPU's parts, then the rows)"
objs_all=$(ls build/runtime/*.o build/runtime/*/*.o build/io/*.o build/io/*/*.o build/ptx_table.o)
if ${CC:-cc} -std=c11 -O2 -ffp-contract=off -I. -o "$work/axis_gpu" tests/gpu/axis_gpu.c $objs_all \
    -l:libz.a -ldl -lm -pthread >"$out/axis_build.log" 2>&1; then
    "$work/axis_gpu" >"$out/axis_kernels.txt" 2>&1
    note "axis kernels vs CPU: $(tail -1 "$out/axis_kernels.txt")"
    "$work/axis_gpu" bench 2>&1 | tee "$out/bench_axis.txt" | tee -a "$sum"
else
    note "axis_gpu build FAILED"
    tail -5 "$out/axis_build.log"
fi
if $NVCC -O2 -std=c++17 -arch=sm_90 -I. -o "$work/bench_segreduce" tests/gpu/bench_segreduce.cu \
    >"$out/bench_segreduce_build.log" 2>&1; then
    "$work/bench_segreduce" 2>&1 | tee "$out/bench_segreduce.txt" | tee -a "$sum"
else
    note "bench_segreduce build FAILED"
    tail -5 "$out/bench_segreduce_build.log"
fi

python3 tests/gpu/bench_torch_axis.py 2>&1 | tee "$out/bench_torch_axis.txt" | tee -a "$sum"

note "== quadratic kernel (coefficients in device memory)"
if $NVCC -O2 -std=c++17 -fmad=false -prec-div=true -prec-sqrt=true -I. -o "$work/bench_quadratic" \
    tests/gpu/bench_quadratic.cu -lcuda >"$out/bench_quadratic_build.log" 2>&1; then
    "$work/bench_quadratic" 250000000 2>&1 | tee -a "$sum"
else
    note "bench_quadratic build FAILED"
    tail -5 "$out/bench_quadratic_build.log"
fi

note "== transpose kernels (matrices in device memory)"
if $NVCC -O2 -std=c++17 -I. -o "$work/bench_transpose" tests/gpu/bench_transpose.cu -lcuda \
    >"$out/bench_transpose_build.log" 2>&1; then
    "$work/bench_transpose" "build/ptx/transpose.compute_75.ptx" 20 2>&1 | tee -a "$sum"
else
    note "bench_transpose build FAILED"
    tail -5 "$out/bench_transpose_build.log"
fi
python3 - <<'PYEOF' 2>&1 | tee -a "$sum"
try:
    import torch
except ImportError:
    print("pytorch: not installed")
    raise SystemExit
import sys
sys.path.insert(0, "tests/gpu")
from bench_torch_axis import ms
x = torch.rand(8192, 8192, device="cuda")
y = torch.empty_like(x)
tc = ms(lambda: y.copy_(x), 20)
tt = ms(lambda: x.t().contiguous(), 20)
print(f"pytorch 8192x8192 float32: copy {tc:.3f} ms, .t().contiguous() {tt:.3f} ms = {tc / tt:.3f} of copy")
PYEOF
note "== gpubatch bench all (the articles' ladders beside the production kernels)"
./gpubatch bench all >"$out/bench.txt" 2>&1
note "gpubatch bench: exit $?, $(grep -c FAIL "$out/bench.txt") FAIL rows"
tee -a "$sum" <"$out/bench.txt"
for tool in memcheck racecheck initcheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch bench -q --backend cuda --reps 1 \
        --sizes reduce:5000,reduce:4194319,transpose:70,quadratic:3001,inflate:100003 \
        >"$out/sanitizer-bench-$tool.log" 2>&1
    note "sanitizer $tool on bench (every ladder kernel, the inflate kernels): exit $?"
done

note "== libraries side by side (tests/gpu/compare.sh)"
sh tests/gpu/compare.sh "$out/compare" >"$out/compare.txt" 2>&1
tee -a "$sum" <"$out/compare.txt"
fi

if part e2e; then
note "== end to end"
cc -std=c11 -D_GNU_SOURCE -O2 -I. -o "$work/init_time" tests/gpu/init_time.c build/runtime/gpu.o build/runtime/cu.o \
    build/runtime/ptx_blobs.o build/ptx_table.o build/io/status.o build/io/clock.o -l:libz.a -ldl -pthread
"$work/init_time" >"$out/init.txt" 2>&1
n=536870912 # 2 GiB of float32
./gpubatch gen --shape $n --dist normal --seed 1 -1 -o "$work/e2e.npy.gz" -f
./gpubatch gen --shape $n --dist normal --seed 1 --no-compress -o "$work/e2e.npy" -f
gz_bytes=$(stat -c %s "$work/e2e.npy.gz")
raw_bytes=$(stat -c %s "$work/e2e.npy")
# Wall-clock seconds of a command (output discarded).
secs() {
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}
t_gzip=$(secs gzip -dc "$work/e2e.npy.gz")
t_ours_gz=$(secs ./gpubatch reduce -q --backend cuda --op sum,min,max "$work/e2e.npy.gz")
cat "$work/e2e.npy" >/dev/null
t_ours_raw=$(secs ./gpubatch reduce -q --backend cuda --op sum "$work/e2e.npy")
t_ours_raw2=$(secs ./gpubatch reduce -q --backend cuda --op sum "$work/e2e.npy")
./gpubatch gen --shape 1000 --no-compress -o "$work/tiny.npy" -f
t_tiny=$(secs ./gpubatch reduce -q --backend cuda "$work/tiny.npy")
./gpubatch gen --quadratic 100000000 --seed 2 -1 -o "$work/quad.npy.gz" -f
t_qgzip=$(secs gzip -dc "$work/quad.npy.gz")
t_quad=$(secs ./gpubatch quadratic -q --backend cuda "$work/quad.npy.gz" -o "$work/roots.npy.gz" -f)
note "quadratic 1e8 float32 rows, gzip in and out: $t_quad s; gzip -dc of the input alone: $t_qgzip s"
t_quad_soa=$(secs ./gpubatch quadratic -q --backend cuda --out-layout planes "$work/quad.npy.gz" -o "$work/soa.npy.gz" -f)
note "quadratic 1e8 float32 rows to (4, N) root planes, gzip in and out: $t_quad_soa s"
./gpubatch gen --shape 8192x16384 --seed 4 -1 -o "$work/mat.npy.gz" -f
t_tgzip=$(secs gzip -dc "$work/mat.npy.gz")
t_tp=$(secs ./gpubatch transpose -q --backend cuda "$work/mat.npy.gz" -o "$work/matt.npy.gz" -f)
t_tp_plain=$(secs ./gpubatch transpose -q --backend cuda --no-compress "$work/mat.npy.gz" -o "$work/matt.npy" -f)
note "transpose 8192x16384 float32 (512 MiB), gzip in and out: $t_tp s; gzip out off: $t_tp_plain s; gzip -dc of the input alone: $t_tgzip s"
./gpubatch reduce -v --backend cuda --op sum "$work/e2e.npy" >"$out/e2e-verbose.txt" 2>&1
./gpubatch reduce -v --backend cuda --op sum,min,max "$work/e2e.npy.gz" >>"$out/e2e-verbose.txt" 2>&1
./gpubatch reduce -v --backend cuda --op sum --chunk 128M "$work/e2e.npy" >>"$out/e2e-verbose.txt" 2>&1
grep 'GB/s' "$out/e2e-verbose.txt" | tee -a "$sum"
h2d=$(grep 'pinned H2D' "$out/bench_reduce.txt" | awk '{print $(NF-1)}')
awk -v gz="$gz_bytes" -v raw="$raw_bytes" -v tg="$t_gzip" -v to="$t_ours_gz" -v tr="$t_ours_raw2" \
    -v tt="$t_tiny" -v h2d="$h2d" '
    BEGIN {
        printf "gzip -dc:               %6.2f s  %7.3f GB/s of data\n", tg, raw / tg / 1e9
        printf "reduce .npy.gz (cuda):  %6.2f s  %7.3f GB/s  = %.2fx gzip -dc\n", to, raw / to / 1e9, tg / to
        printf "reduce .npy cached:     %6.2f s  %7.3f GB/s  vs pinned H2D %s GB/s\n", tr, raw / tr / 1e9, h2d
        printf "reduce tiny file:       %6.3f s  (whole process)\n", tt
    }' | tee -a "$sum"
tee -a "$sum" <"$out/init.txt"

note "== codec scaling (CPU: deflate and blocked-gzip inflate on 1..16 cores)"
ELEMS=${ELEMS:-33554432} sh tests/gpu/bench_codec.sh "$out/codec" >"$out/codec.txt" 2>&1
tee -a "$sum" <"$out/codec.txt"
fi
if part devices && [ "$ndev" -ge 2 ]; then
note "== several GPUs ($ndev)"
lscpu | grep -E '^(CPU\(s\)|Thread|Core|Socket|Model name|NUMA node\(s\))' | tee -a "$sum"
nvidia-smi topo -m >"$out/topo.txt" 2>&1
head -$((ndev + 1)) "$out/topo.txt" | tee -a "$sum"
sh tests/gpu/test_multi_gpu.sh >"$out/multi_gpu.log" 2>&1
note "test_multi_gpu: $(tail -1 "$out/multi_gpu.log")"
grep FAIL "$out/multi_gpu.log" | head -5 | tee -a "$sum"
every=$(seq -s, 0 $((ndev - 1)))
./gpubatch gen --shape 1000003 --seed 3 --no-compress -o "$work/m.npy" -f
./gpubatch gen --quadratic 100003 --seed 3 --no-compress -o "$work/mq.npy" -f
./gpubatch gen --shape 300x70x90 --seed 3 --no-compress -o "$work/mt.npy" -f
for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch reduce -q --backend cuda --device $every \
        --chunk 128k --op sum,min,argmax "$work/m.npy" >"$out/sanitizer-devices-$tool.log" 2>&1
    st=$?
    compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch quadratic -q --backend cuda --device $every \
        --chunk 128k --no-compress "$work/mq.npy" -o /dev/null >>"$out/sanitizer-devices-$tool.log" 2>&1 || st=$?
    compute-sanitizer --tool $tool --error-exitcode 9 ./gpubatch transpose -q --backend cuda --device $every \
        --chunk 128k --no-compress "$work/mt.npy" -o /dev/null >>"$out/sanitizer-devices-$tool.log" 2>&1 || st=$?
    note "sanitizer $tool on --device $every: exit $st"
done
sh tests/gpu/bench_devices.sh "$out/devices" 2>&1 | tee -a "$sum"
note "== the node: --device all, auto and cpu over 1, 4 and 32 files; the driver's start; processes at once"
sh tests/gpu/bench_node.sh "$out/node" 2>&1 | grep -v "^  32 files" | tee -a "$sum"
fi

# Everything but the summary in one archive, so a caller gets two files.
tar czf "$work/logs.tgz" -C "$out" --exclude=summary.txt --exclude=logs.tgz . &&
    (cd "$out" && find . -type f ! -name summary.txt -delete) && mv "$work/logs.tgz" "$out/logs.tgz"
note "== summary in $sum, full logs in $out/logs.tgz"
