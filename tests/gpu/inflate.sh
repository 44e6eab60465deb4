#!/bin/sh
# inflate.sh [OUTDIR] - blocked gzip input inflated on the GPU: results and
# output bytes against the CPU backend (reduce, quadratic, transpose, shards,
# chunk sizes, block layouts from other writers), bad members reported as
# the CPU backend reports them, compute-sanitizer over good and bad members,
# the kernels' rate beside the device copy (tests/gpu/bench_inflate.cu), and
# whole-process times of --backend auto, cuda and cpu on the same files.
# Needs a CUDA GPU, nvcc and python3. Full logs go to OUTDIR; a short table
# is printed last.
set -u
out=${1:-gpu-inflate}
work_name=gpubatch-inflate
. "$(dirname "$0")/lib.sh"
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
# same_run NAME ARGS...: the command's stdout, stderr and status are the same on both backends.
same_run() {
    name=$1
    shift
    c=$("$GB" "$@" --backend cpu 2>&1; echo "exit $?")
    g=$("$GB" "$@" --backend cuda 2>&1; echo "exit $?")
    check "$name: $*" "$c" "$g"
}
# same_file NAME ARGS...: -o output bytes (blocked gzip: the names end in
# .gz) and messages are the same on both backends.
same_file() {
    name=$1
    shift
    rm -f "$work/o_cpu.gz" "$work/o_cuda.gz"
    c=$("$GB" "$@" --backend cpu -o "$work/o_cpu.gz" 2>&1; echo "exit $?")
    g=$("$GB" "$@" --backend cuda -o "$work/o_cuda.gz" 2>&1; echo "exit $?")
    check "$name: $*" "$c" "$g"
    check "$name bytes: $*" "$(md5sum <"$work/o_cpu.gz" 2>/dev/null || echo none)" \
        "$(md5sum <"$work/o_cuda.gz" 2>/dev/null || echo none)"
}

note "== correctness (CPU backend against device inflate)"
ops=sum,mean,min,max,argmin,argmax,sumsq,count
for spec in 1:float32 65280:float32 1000003:float32 777777:float64 99999:int8 300000:int32 \
    70000:uint16; do
    n=${spec%%:*}
    t=${spec#*:}
    f="$work/r_${n}_$t.npy.gz"
    "$GB" gen --shape "$n" --dtype "$t" --dist normal --seed "$n" -1 -f -o "$f"
    python3 tests/cli/bgzf.py "$n" "$f" "$f.odd.gz" 2>/dev/null ||
        { gzip -dc "$f" >"$work/plain.npy" && python3 tests/cli/bgzf.py "$n" "$work/plain.npy" "$f.odd.gz"; }
    for c in 128k 1M 32M; do
        same_run reduce reduce -q --op $ops --chunk $c "$f"
        same_run reduce-odd reduce -q --op $ops --chunk $c "$f.odd.gz"
    done
    same_run skipnan reduce -q --op sum,mean,max,argmax --skipnan "$f"
    same_run shard reduce -q --op $ops --shard 2/3 -o "$work/state.$n" -f "$f"
done
"$GB" gen --shape 5000000 --dist normal --seed 5 -6 -f -o "$work/l6.npy.gz"
same_run level6 reduce -q --op $ops "$work/l6.npy.gz"
"$GB" gen --quadratic 300001 --seed 3 -1 -f -o "$work/q.npy.gz"
for c in 128k 32M; do
    same_file quadratic quadratic -q --chunk $c "$work/q.npy.gz"
    same_file quadratic-planes quadratic -q --chunk $c --out-layout planes --raw "$work/q.npy.gz"
done
gzip -dc "$work/q.npy.gz" | gzip -1 >"$work/q1.npy.gz"
same_file quadratic-gzip quadratic -q "$work/q1.npy.gz"
for shape in 1000x777 64x64x33 3x4099x517; do
    "$GB" gen --shape $shape --seed 9 -1 -f -o "$work/t.npy.gz"
    for c in 128k 32M; do same_file transpose transpose -q --chunk $c "$work/t.npy.gz"; done
done
note "correctness: $pass passed, $fail failed"

note "== bad members: same message, status and no output"
cpass=$pass
cfail=$fail
"$GB" gen --shape 2000000 --dist normal --seed 2 -1 -f -o "$work/good.npy.gz"
python3 - "$work/good.npy.gz" "$work" <<'PY'
import struct, sys
src, work = sys.argv[1], sys.argv[2]
d = open(src, "rb").read()
offs, o = [], 0
while o < len(d):
    offs.append(o)
    o += struct.unpack_from("<H", d, o + 16)[0] + 1
def bad(name, fn):
    b = bytearray(d)
    fn(b)
    open(f"{work}/bad_{name}.npy.gz", "wb").write(b)
m = offs[20]
bad("crc", lambda b: b.__setitem__(offs[21] - 8, b[offs[21] - 8] ^ 1))
bad("isize", lambda b: b.__setitem__(offs[21] - 4, b[offs[21] - 4] ^ 1))
bad("data", lambda b: b.__setitem__(m + 200, b[m + 200] ^ 0x55))
bad("header", lambda b: b.__setitem__(m + 19, b[m + 19] ^ 0x06))
bad("late", lambda b: b.__setitem__(offs[-3] + 100, b[offs[-3] + 100] ^ 0xff))
open(f"{work}/bad_cut.npy.gz", "wb").write(d[: offs[25] + 1000])
PY
for f in "$work"/bad_*.npy.gz; do
    same_run bad reduce -q --op sum "$f"
    same_file bad-transpose transpose -q "$f"
done
note "bad members: $((pass - cpass)) passed, $((fail - cfail)) failed"
[ -f "$out/fail.txt" ] && head -40 "$out/fail.txt"

note "== compute-sanitizer memcheck (device inflate)"
"$GB" gen --shape 300000 --dist normal --seed 4 -1 -f -o "$work/s.npy.gz"
st=0
python3 tests/gpu/corrupt_bgzf.py "$work/corrupt" >"$out/corrupt.log" 2>&1
for f in "$work/s.npy.gz" "$work"/bad_*.npy.gz "$work/r_70000_uint16.npy.gz.odd.gz" "$work"/corrupt/*.npy.gz; do
    same_run corrupt reduce -q --op sum "$f" # the same message as the CPU backend
    compute-sanitizer --tool memcheck --error-exitcode 9 "$GB" reduce -q --backend cuda --op sum \
        --chunk 128k "$f" >>"$out/sanitizer.log" 2>&1
    [ $? = 9 ] && st=9
done
note "memcheck: exit $st, $(grep -c 'ERROR SUMMARY: 0 errors' "$out/sanitizer.log") clean summaries of $(grep -c 'ERROR SUMMARY' "$out/sanitizer.log")"

note "== kernel rate (bench_inflate: every member of the file at once)"
nvcc -O3 -std=c++17 -fmad=false -prec-div=true -prec-sqrt=true -I. -o "$work/bench_inflate" \
    tests/gpu/bench_inflate.cu -lz >"$out/bench_build.log" 2>&1
"$GB" gen --shape 536870912 --dist normal --seed 1 -1 -f -o "$work/big1.npy.gz"
"$GB" gen --shape 268435456 --dist normal --seed 1 -6 -f -o "$work/big6.npy.gz"
"$GB" gen --shape 268435456 --dtype int32 --low -1000 --high 1000 --seed 1 -1 -f -o "$work/int1.npy.gz"
gzip -dc "$work/int1.npy.gz" | head -c 134217856 >"$work/odd.npy"
python3 tests/cli/bgzf.py 7 "$work/odd.npy" "$work/odd.npy.gz" # blocks of random sizes, zlib level 6
rm -f "$work/odd.npy"
for f in big1 big6 int1 odd; do
    note "$f: $("$work/bench_inflate" "$work/$f.npy.gz" 5 | tr '\n' ' ')"
done
# other launch shapes and table sizes (INFLATE_VARIANTS="threads:litbits ...")
for v in ${INFLATE_VARIANTS:-}; do
    nvcc -O3 -std=c++17 -fmad=false -prec-div=true -prec-sqrt=true -I. -DIF_GPU_THREADS=${v%%:*} \
        -DIF_LIT_BITS=${v#*:} -o "$work/bench_v" tests/gpu/bench_inflate.cu -lz >>"$out/bench_build.log" 2>&1
    note "variant $v big1: $("$work/bench_v" "$work/big1.npy.gz" 3 | tail -2 | tr '\n' ' ')"
done

note "== gpubatch bench inflate"
"$GB" bench inflate 2>&1 | tail -8 | tee -a "$sum"

note "== whole process: best of 3 wall times, the variants of a job interleaved, page cache warm"
# the runs that inflate on the host's cores race apart: a GPU run right after
# one that kept every core busy for a second or more can be slower (see
# deflate.sh)
B1="$work/big1.npy.gz"
cat "$B1" >/dev/null
race "reduce 2 GiB float32 BGZF" "$GB,reduce,--op,sum,--backend,auto,$B1" "$GB,reduce,--op,sum,--backend,cuda,$B1"
race "reduce 2 GiB float32 BGZF, inflated on the host" "$GB,reduce,--op,sum,--backend,cpu,$B1" \
    "GPUBATCH_HOST_INFLATE=1,$GB,reduce,--op,sum,--backend,cuda,$B1"
for o in ${INFLATE_OPTIONS:-}; do
    race "reduce options" "$GB,reduce,--op,sum,--backend,cuda,$o,$B1"
done
"$GB" reduce -v --op sum --backend cuda "$B1" 2>&1 | grep -E "bytes in|backend|process started|main thread waited" |
    sed 's/^/  /' | tee -a "$sum"
gzip -dc "$B1" >"$work/big1.npy"
race "reduce 2 GiB float32 .npy" "$GB,reduce,--op,sum,--backend,auto,$work/big1.npy" \
    "$GB,reduce,--op,sum,--backend,cuda,$work/big1.npy" "$GB,reduce,--op,sum,--backend,cpu,$work/big1.npy"
rm -f "$work/big1.npy"
"$GB" gen --shape 1000 -f -o "$work/tiny.npy.gz"
race "reduce 1000 elements" "$GB,reduce,--op,sum,--backend,auto,$work/tiny.npy.gz" \
    "$GB,reduce,--op,sum,--backend,cuda,$work/tiny.npy.gz" "$GB,reduce,--op,sum,--backend,cpu,$work/tiny.npy.gz"
"$GB" gen --quadratic 134217728 --seed 1 -1 -f -o "$work/qbig.npy.gz"
Q="$work/qbig.npy.gz"
race "quadratic 2^27 float32 rows BGZF, plain out" "$GB,quadratic,--backend,auto,--no-compress,-o,/dev/null,$Q" \
    "$GB,quadratic,--backend,cuda,--no-compress,-o,/dev/null,$Q"
race "quadratic 2^27 float32 rows BGZF, plain out, inflated on the host" \
    "$GB,quadratic,--backend,cpu,--no-compress,-o,/dev/null,$Q" \
    "GPUBATCH_HOST_INFLATE=1,$GB,quadratic,--backend,cuda,--no-compress,-o,/dev/null,$Q"
"$GB" gen --shape 16384x16384 --seed 1 -1 -f -o "$work/tbig.npy.gz"
T="$work/tbig.npy.gz"
race "transpose 16384^2 float32 BGZF, plain out" "$GB,transpose,--backend,auto,--no-compress,-o,/dev/null,$T" \
    "$GB,transpose,--backend,cuda,--no-compress,-o,/dev/null,$T"
race "transpose 16384^2 float32 BGZF, plain out, inflated on the host" \
    "$GB,transpose,--backend,cpu,--no-compress,-o,/dev/null,$T" \
    "GPUBATCH_HOST_INFLATE=1,$GB,transpose,--backend,cuda,--no-compress,-o,/dev/null,$T"
note "total: $pass passed, $fail failed"
