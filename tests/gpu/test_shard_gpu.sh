#!/bin/sh
# test_shard_gpu.sh - on a machine with a CUDA GPU: shards reduced and solved
# on the GPU and on the CPU, mixed in one run, merge into exactly what one
# CPU run over the whole input prints and writes. (GPU_BACKEND=cpu runs the
# same script without a GPU, to check the script itself.)
. "$(dirname "$0")/../cli/lib.sh"
REF="$top/tests/cli/npyref.py"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count
GPU=${GPU_BACKEND:-cuda}

# Shards of FILE with OPTS: even ones on the GPU, odd ones on the CPU.
mixed_states() {
    n=$1
    f=$2
    shift 2
    rm -f "$T"/st-*
    i=0
    while [ $i -lt $n ]; do
        be=$GPU
        [ $((i % 2)) = 1 ] && be=cpu
        "$GB" reduce -q --backend $be "$@" --shard $i/$n -o "$T/st-$i" "$f" ||
            fail "shard $i/$n on $be"
        i=$((i + 1))
    done
}

for dt in float32 float64 int16 uint64; do
    for n in 1 16385 1000003; do
        case $dt in float*) kind=adversarial ;; *) kind=ints-extreme ;; esac
        f="$T/$dt-$n.npy"
        $PY "$REF" write $dt $n $kind $n "$f"
        for skip in "" --skipnan; do
            "$GB" reduce -q --backend cpu --op $ALL $skip "$f" >"$T/one.txt" 2>&1
            shard_counts="2 7"
            [ $dt = float32 ] && [ $n = 1000003 ] && shard_counts="2 7 64"
            for shards in $shard_counts; do
                mixed_states $shards "$f" --op $ALL $skip --chunk 128k
                "$GB" merge "$T"/st-* >"$T/merged.txt" 2>&1
                check_files_same "$dt n=$n $skip $shards mixed shards" "$T/one.txt" "$T/merged.txt"
            done
            # one shard's state from each backend: the same bytes (NaNs written as one)
            "$GB" reduce -q --backend cpu --op $ALL,std $skip --shard 1/3 -o "$T/c.state" "$f"
            "$GB" reduce -q --backend $GPU --op $ALL,std $skip --shard 1/3 -o "$T/g.state" "$f"
            check_files_same "$dt n=$n $skip state bytes" "$T/c.state" "$T/g.state"
            rm -f "$T/c.state" "$T/g.state"
        done
    done
done

f="$T/coef.npy.gz"
"$GB" gen --quadratic 300000 --seed 3 -o "$f"
"$GB" quadratic -q --backend cpu -o "$T/roots.npy.gz" "$f"
for shards in 2 7; do
    rm -f "$T"/part-*
    i=0
    while [ $i -lt $shards ]; do
        be=$GPU
        [ $((i % 2)) = 1 ] && be=cpu
        "$GB" quadratic -q --backend $be --shard $i/$shards -o "$T/part-$i.gz" "$f"
        i=$((i + 1))
    done
    rm -f "$T/merged.npy.gz"
    "$GB" merge -o "$T/merged.npy.gz" "$T"/part-*
    check_files_same "quadratic, $shards mixed shards" "$T/roots.npy.gz" "$T/merged.npy.gz"
done
summary
