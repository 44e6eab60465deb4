#!/bin/sh
# compare.sh [OUTDIR] - our kernels beside library equivalents, in one run on
# a GPU machine with the CUDA toolkit: `gpubatch bench --json` at the sizes
# below, tests/gpu/compare.cu (CUB DeviceReduce::Sum, cuBLAS sgeam, CUB
# DeviceFor::Bulk with the textbook and the accurate quadratic solvers), and
# PyTorch and CuPy where python3 can import them. Prints one table: for each
# op and size, our time, their time and our time / their time (below 1: ours
# is faster). Sizes and repetitions come from the environment:
#   REDUCE_SIZES (default 4194304,268435456), TRANSPOSE_SIZES (1024,16384),
#   QUADRATIC_SIZES (10000000,67108864), REPS (20).
set -u
out=${1:-compare-results}
mkdir -p "$out"
out=$(cd "$out" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=${GPUBATCH_WORK:-/tmp/gpubatch-gpu}
mkdir -p "$work"
NVCC=${NVCC:-nvcc}
PY=${PYTHON:-python3}
R=${REDUCE_SIZES:-4194304,268435456}
TR=${TRANSPOSE_SIZES:-1024,16384}
Q=${QUADRATIC_SIZES:-10000000,67108864}
REPS=${REPS:-20}

make -j"$(nproc)" >"$out/build.log" 2>&1 || { echo "build FAILED"; tail -20 "$out/build.log"; exit 1; }
sizes=$(for n in $(echo "$R" | tr , ' '); do printf 'reduce:%s,' "$n"; done
    for n in $(echo "$TR" | tr , ' '); do printf 'transpose:%s,' "$n"; done
    for n in $(echo "$Q" | tr , ' '); do printf 'quadratic:%s,' "$n"; done)
./gpubatch bench --json --reps "$REPS" --sizes "${sizes%,}" >"$out/bench.json" 2>"$out/bench.err" ||
    { echo "gpubatch bench FAILED: $(cat "$out/bench.err")"; exit 1; }

: >"$out/library.txt"
if $NVCC -O2 -std=c++17 -fmad=false -prec-div=true -prec-sqrt=true -I. -o "$work/compare" \
    tests/gpu/compare.cu -lcublas >"$out/compare_build.log" 2>&1; then
    "$work/compare" "$R" "$TR" "$Q" "$REPS" >>"$out/library.txt" 2>>"$out/compare.err" ||
        echo "compare FAILED: $(tail -3 "$out/compare.err")"
else
    echo "compare.cu build FAILED: $(tail -5 "$out/compare_build.log")"
fi

# PyTorch and CuPy, each only where it imports and sees a GPU.
$PY - "$R" "$TR" "$Q" "$REPS" >>"$out/library.txt" 2>"$out/python.err" <<'END'
import statistics, sys
def sizes(s):
    return [int(v) for v in s.split(",") if v and v != "-"]
R, T, Q = (sizes(a) for a in sys.argv[1:4])
reps = int(sys.argv[4])

def median_ms(fn, event, elapsed):
    fn(); fn()
    times = []
    for _ in range(reps):
        a, b = event(), event()
        a.record(); fn(); b.record(); b.synchronize()
        times.append(elapsed(a, b))
    return statistics.median(times)

try:
    import torch
    ok = torch.cuda.is_available()
except Exception:
    ok = False
if ok:
    ev = lambda: torch.cuda.Event(enable_timing=True)
    el = lambda a, b: a.elapsed_time(b)
    for n in R:
        x = torch.rand(n, device="cuda") * 2 - 1
        print("reduce %d torch-sum %.6f" % (n, median_ms(lambda: x.sum(), ev, el)))
        del x
    for n in T:
        a = torch.rand(n, n, device="cuda")
        print("transpose %d torch-t-contiguous %.6f" % (n, median_ms(lambda: a.t().contiguous(), ev, el)))
        del a
    for n in Q:
        a, b, c = torch.rand(3, n, device="cuda") * 2 - 1
        def textbook():
            d = b * b - 4 * a * c
            sq = torch.sqrt(d.abs())
            real = d >= 0
            two_a = 2 * a
            x1 = torch.where(real, (-b - sq) / two_a, -b / two_a)
            x2 = torch.where(real, (-b + sq) / two_a, -b / two_a)
            im = torch.where(real, torch.zeros_like(sq), sq / two_a)
            return x1, x2, im
        print("quadratic %d torch-textbook-soa %.6f" % (n, median_ms(textbook, ev, el)))
        del a, b, c
    torch.cuda.empty_cache()
else:
    print("note: PyTorch with CUDA not importable", file=sys.stderr)

try:
    import cupy
    ok = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:
    ok = False
if ok:
    ev = cupy.cuda.Event
    el = cupy.cuda.get_elapsed_time
    for n in R:
        x = cupy.random.random(n, dtype=cupy.float32) * 2 - 1
        print("reduce %d cupy-sum %.6f" % (n, median_ms(lambda: cupy.sum(x), ev, el)))
        del x
    for n in T:
        a = cupy.random.random((n, n), dtype=cupy.float32)
        print("transpose %d cupy-ascontiguousarray-T %.6f" % (n, median_ms(lambda: cupy.ascontiguousarray(a.T), ev, el)))
        del a
    k = cupy.ElementwiseKernel(
        "float32 a, float32 b, float32 c", "float32 re1, float32 re2, float32 im1, float32 im2",
        """
        float d = b * b - 4.0f * a * c;
        if (d >= 0.0f) {
            float sq = sqrtf(d);
            float x = (-b - sq) / (2.0f * a), y = (-b + sq) / (2.0f * a);
            re1 = y < x ? y : x; re2 = y < x ? x : y; im1 = 0.0f; im2 = 0.0f;
        } else {
            float im = fabsf(sqrtf(-d) / (2.0f * a));
            re1 = -b / (2.0f * a); re2 = re1; im1 = im; im2 = -im;
        }
        """, "textbook")
    for n in Q:
        a, b, c = (cupy.random.random(n, dtype=cupy.float32) * 2 - 1 for _ in range(3))
        outs = [cupy.empty(n, dtype=cupy.float32) for _ in range(4)]
        print("quadratic %d cupy-elementwise-textbook-soa %.6f" % (n, median_ms(lambda: k(a, b, c, *outs), ev, el)))
        del a, b, c, outs
else:
    print("note: CuPy not importable", file=sys.stderr)
END
grep '^note' "$out/python.err"

# One table: ours (the production row, else the fastest correct GPU ladder
# row; the soa ladder row against textbook solvers) against every library
# row of the same op and size.
$PY - "$out/bench.json" "$out/library.txt" <<'END' | tee "$out/compare.txt"
import json, sys
doc = json.load(open(sys.argv[1]))
dev = doc.get("device") or {}
print("device: %s, driver CUDA %s; median of %d runs; ours/theirs < 1: ours is faster"
      % (dev.get("name", "?"), dev.get("driver_cuda", "?"), doc["reps"]))
rows = [r for r in doc["rows"] if r["where"] == "gpu" and r["status"] == "ok" and not r["sweep"]]
theirs = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4:
        theirs.setdefault((f[0], int(f[1])), []).append((f[2], float(f[3])))
print("%-10s %11s  %-22s %10s  %-34s %10s %11s" % ("op", "size", "ours", "ms", "theirs", "ms", "ours/theirs"))
for (op, size), libs in sorted(theirs.items()):
    mine = [r for r in rows if r["op"] == op and r["size"] == size]
    prod = [r for r in mine if r["variant"] == "production"]
    soa = [r for r in mine if r["variant"] == "soa"]
    for name, ms in libs:
        if "textbook" in name and soa:  # the textbook formula: our soa ladder kernel
            best = soa[0]
        else:
            best = prod[0] if prod else min(mine, key=lambda r: r["ms"]) if mine else None
        if best is None:
            print("%-10s %11d  %-22s %10s  %-34s %10.4f %11s" % (op, size, "-", "-", name, ms, "-"))
        else:
            print("%-10s %11d  %-22s %10.4f  %-34s %10.4f %11.3f"
                  % (op, size, best["variant"], best["ms"], name, ms, best["ms"] / ms))
END
echo "== gpubatch bench JSON in $out/bench.json, library times in $out/library.txt"
