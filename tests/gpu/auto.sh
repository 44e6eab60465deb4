#!/bin/sh
# auto.sh [OUTDIR [BASELINE_TREE]] - --backend auto on a GPU machine: its
# results and output bytes against the CPU backend when both sides take
# chunks, compute-sanitizer over such runs, and whole-process times of auto,
# cuda and cpu (best of 3, interleaved, page cache warm) on the jobs of the
# start-up table: tiny and large reductions (plain and blocked gzip),
# quadratic with plain and blocked-gzip output, transpose; the start with an
# empty JIT cache; `info`; the binary's size. BASELINE_TREE (optional) is
# another source tree, built and timed beside this one in the same races.
# Full logs go to OUTDIR; a short table is printed last.
set -u
out=${1:-gpu-auto}
base_src=${2:-}
work_name=gpubatch-auto
other=auto
. "$(dirname "$0")/lib.sh"
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) cores"
note "binary: $(stat -c %s "$GB") bytes${OLD:+, baseline $(stat -c %s "$OLD") bytes}"
"$GB" info >"$out/info.txt" 2>&1
note "== auto against cpu, both sides taking chunks"
n=$((1 << 28))
"$GB" gen --shape $n --dist normal --seed 1 -1 -f -o "$work/r.npy.gz"
"$GB" gen --shape $n --dtype int32 --seed 2 -1 -f -o "$work/ri.npy.gz"
gzip -dc "$work/r.npy.gz" >"$work/r.npy"
"$GB" gen --quadratic $((1 << 25)) --seed 3 -1 -f -o "$work/q.npy.gz"
"$GB" gen --shape 4096x65536 --dtype int16 --seed 4 -1 -f -o "$work/t.npy.gz"
"$GB" gen --shape 4096x64x64 --seed 5 -1 -f -o "$work/b.npy.gz"
for f in r.npy.gz ri.npy.gz r.npy; do
    for c in 4M 64M; do
        ops=sum,mean,min,max,argmin,argmax,sumsq,count
        a=$("$GB" reduce --backend cpu --chunk $c --op $ops "$work/$f" 2>&1)
        b=$("$GB" reduce --backend auto -v --chunk $c --op $ops "$work/$f" 2>"$work/v.err")
        check "reduce $f --chunk $c" "$a" "$b"
        note "  reduce $f --chunk $c: $(grep -o '[0-9]* chunks on the CPU, [0-9]* on the GPU' "$work/v.err")"
    done
done
for c in 8M 64M; do
    "$GB" quadratic --backend cpu --chunk $c "$work/q.npy.gz" -o "$work/q-cpu.npy.gz" -f
    "$GB" quadratic --backend auto -v --chunk $c "$work/q.npy.gz" -o "$work/q-auto.npy.gz" -f 2>"$work/v.err"
    check "quadratic --chunk $c" "$(md5sum <"$work/q-cpu.npy.gz")" "$(md5sum <"$work/q-auto.npy.gz")"
    note "  quadratic --chunk $c: $(grep -o '[0-9]* chunks on the CPU, [0-9]* on the GPU' "$work/v.err")"
    for f in t b; do
        "$GB" transpose --backend cpu --chunk $c --no-compress "$work/$f.npy.gz" -o "$work/t-cpu.npy" -f
        "$GB" transpose --backend auto --chunk $c --no-compress "$work/$f.npy.gz" -o "$work/t-auto.npy" -f
        check "transpose $f --chunk $c" "$(md5sum <"$work/t-cpu.npy")" "$(md5sum <"$work/t-auto.npy")"
    done
done
if python3 tests/gpu/corrupt_bgzf.py "$work/bad" 256 >>"$out/build.log" 2>&1; then
    for f in "$work"/bad/*.npy.gz; do
        a=$("$GB" reduce --backend cpu "$f" 2>&1; echo "exit $?")
        b=$("$GB" reduce --backend auto "$f" 2>&1; echo "exit $?")
        check "corrupt ${f##*/}" "$a" "$b"
    done
fi
note "auto = cpu: $pass passed, $fail failed"

note "== compute-sanitizer memcheck on auto runs (the GPU's start waited for at the end)"
compute-sanitizer --tool memcheck --error-exitcode 9 env GPUBATCH_GPU_START=wait "$GB" reduce -v \
    --backend auto --chunk 4M --op sum,min,argmax "$work/r.npy.gz" >"$out/sanitizer.log" 2>&1
st=$?
compute-sanitizer --tool memcheck --error-exitcode 9 env GPUBATCH_GPU_START=wait "$GB" quadratic -v \
    --backend auto --chunk 4M "$work/q.npy.gz" -o /dev/null --no-compress >>"$out/sanitizer.log" 2>&1
note "memcheck: exit $st/$?, $(grep -c 'ERROR SUMMARY: 0 errors' "$out/sanitizer.log") clean summaries;" \
    "$(grep -o '[0-9]* chunks on the CPU, [0-9]* on the GPU' "$out/sanitizer.log" | tr '\n' ' ')"

note "== whole process: best of 3 wall times, variants interleaved, page cache warm"
# job NAME ARGS...: races auto and cuda (and the baseline's auto and cuda)
# on one job, then times cpu on its own: a GPU run right after one that
# kept every core busy for seconds can be slower (see deflate.sh).
job() {
    name=$1
    shift
    a=$(echo "$*" | tr ' ' ',')
    set -- "$GB,$a,--backend,auto" "$GB,$a,--backend,cuda"
    for v in ${AUTO_VARIANTS:-}; do set -- "$@" "$v,$GB,$a,--backend,auto"; done
    [ -n "$OLD" ] && set -- "$@" "$OLD,$a,--backend,auto" "$OLD,$a,--backend,cuda"
    race "$name" "$@"
    race "$name, cpu" "$GB,$a,--backend,cpu"
}
"$GB" gen --shape 10 -f --no-compress -o "$work/ten.npy"
job "reduce sum, 10 elements" reduce --op sum "$work/ten.npy"
job "reduce 5 ops, 10 elements" reduce --op sum@mean@min@max@argmax "$work/ten.npy"
race "reduce 5 ops, 10 elements, empty JIT cache" \
    "CUDA_CACHE_DISABLE=1,$GB,reduce,--op,sum@mean@min@max@argmax,--backend,cuda,$work/ten.npy" \
    "$GB,reduce,--op,sum@mean@min@max@argmax,--backend,cuda,$work/ten.npy" \
    "CUDA_CACHE_DISABLE=1,$GB,reduce,--op,sum@mean@min@max@argmax,--backend,auto,$work/ten.npy"
"$GB" gen --shape $((1 << 29)) --dist normal --seed 1 -1 -f -o "$work/big.npy.gz"
gzip -dc "$work/big.npy.gz" >"$work/big.npy"
cat "$work/big.npy.gz" "$work/big.npy" >/dev/null
job "reduce sum, 2 GiB float32 .npy" reduce --op sum "$work/big.npy"
job "reduce sum, 2 GiB float32 BGZF" reduce --op sum "$work/big.npy.gz"
for b in auto cuda cpu; do
    "$GB" reduce -v --op sum --backend $b "$work/big.npy.gz" 2>&1 >/dev/null | sed "s/^/  $b: /" >>"$out/verbose.txt"
done
rm -f "$work/big.npy"
"$GB" gen --quadratic $((1 << 27)) --seed 1 -1 -f -o "$work/qbig.npy.gz"
job "quadratic 2^27 float32 rows BGZF, plain .npy out" quadratic --no-compress -o /dev/null "$work/qbig.npy.gz"
job "quadratic 2^27 float32 rows BGZF, BGZF out" quadratic -o "$nullgz" "$work/qbig.npy.gz"
"$GB" gen --shape 16384x16384 --seed 1 --no-compress -f -o "$work/tbig.npy"
job "transpose 16384^2 float32 .npy" transpose --no-compress -o /dev/null "$work/tbig.npy"
"$GB" gen --shape 16384x16384 --seed 1 -1 -f -o "$work/tbig.npy.gz"
job "transpose 16384^2 float32 BGZF, plain out" transpose --no-compress -o /dev/null "$work/tbig.npy.gz"
for b in auto; do
    "$GB" quadratic -v --no-compress -o /dev/null --backend $b "$work/qbig.npy.gz" 2>&1 | sed "s/^/  quadratic $b: /" >>"$out/verbose.txt"
    "$GB" transpose -v --no-compress -o /dev/null --backend $b "$work/tbig.npy" 2>&1 | sed "s/^/  transpose $b: /" >>"$out/verbose.txt"
done
grep -E "chunks on|ready|bytes in" "$out/verbose.txt" | tee -a "$sum"
note "total: $pass passed, $fail failed"
