#!/bin/sh
# test_axis_gpu.sh - on a machine with a CUDA GPU: the kernels of reductions
# along axes and the whole-array variance give the CPU's partials bit for bit
# (tests/gpu/axis_gpu.c), and `reduce --axis` and var/std on --backend cuda
# write the files --backend cpu writes, byte for byte.
. "$(dirname "$0")/../cli/lib.sh"
REF="$top/tests/cli/npyref.py"
cd "$top" || exit 1
objs=$(ls build/runtime/*.o build/runtime/*/*.o build/io/*.o build/io/*/*.o build/ptx_table.o)
if ${CC:-cc} -std=c11 -O2 -ffp-contract=off -I. -o "$T/axis_gpu" tests/gpu/axis_gpu.c $objs \
    -l:libz.a -ldl -lm -pthread 2>"$T/build.err"; then
    ok
else
    fail "axis_gpu.c does not build: $(head -3 "$T/build.err")"
fi
if "$T/axis_gpu" >"$T/kernels.out" 2>"$T/kernels.err"; then
    ok
else
    fail "kernels differ from the CPU: $(tail -1 "$T/kernels.out"); $(head -5 "$T/kernels.err")"
fi

# The whole command on both backends: the same bytes in each output file.
same_files() {
    what=$1
    shift
    "$GB" reduce -q --backend cpu "$@" -o "$T/cpu.npz" >"$T/cpu.txt" 2>"$T/cpu.err"
    s1=$?
    "$GB" reduce -q --backend cuda "$@" -o "$T/gpu.npz" >"$T/gpu.txt" 2>"$T/gpu.err"
    s2=$?
    if [ $s1 -ne $s2 ]; then
        fail "$what: status cpu $s1 cuda $s2: $(head -2 "$T/gpu.err")"
    elif [ $s1 -ne 0 ]; then
        # refused on both (an exact integer result beyond 64 bits): the same
        # line, and no file from either
        if cmp -s "$T/cpu.err" "$T/gpu.err" && [ ! -e "$T/cpu.npz" ] && [ ! -e "$T/gpu.npz" ]; then
            ok
        else
            fail "$what: cpu and cuda refuse differently: $(head -1 "$T/cpu.err") / $(head -1 "$T/gpu.err")"
        fi
    elif cmp -s "$T/cpu.npz" "$T/gpu.npz" && cmp -s "$T/cpu.txt" "$T/gpu.txt"; then
        ok
    else
        fail "$what: cuda's output differs from cpu's"
    fi
    rm -f "$T/cpu.npz" "$T/gpu.npz"
}
ALL=sum,mean,min,max,argmin,argmax,sumsq,count,var,std
for dt in $(pick "float32 float64 float16 bfloat16 int32 uint8 int64" "float32 bfloat16 int64"); do
    case $dt in float* | bfloat16) kinds="adversarial uniform" ;; *) kinds=ints-extreme ;; esac
    for kind in $kinds; do
        for shape in $(pick "1000x3 64x1000 3x100000 100000x3 2049x9 5x40000 30x7x11" "64x1000 100000x3 5x40000 30x7x11"); do
            f="$T/$dt-$shape.npy"
            $PY "$REF" write $dt $shape $kind 7 "$f" || { fail "npyref $dt $shape"; continue; }
            for axes in 0 -1 0,-1; do
                same_files "$dt $kind $shape axis $axes" --axis $axes --op $ALL --chunk 64k "$f"
            done
            # extreme integers: the exact sums and squares of int64 (and the
            # squares of int32) overflow their 64-bit results, so the ops with
            # a floating or an index result are compared on their own too
            case $dt in *int*)
                same_files "$dt $kind $shape axis 0 (no exact sums)" --axis 0 \
                    --op mean,min,max,argmin,argmax,count,var,std --chunk 64k "$f" ;;
            esac
            case $dt in float* | bfloat16)
                same_files "$dt $kind $shape axis 0 skipnan" --axis 0 --op $ALL --skipnan "$f" ;;
            esac
            # shard states without argmin/argmax: the CPU finds an extremum's
            # block of rows, the GPU its row; the saved bytes are the same
            case $dt in float* | bfloat16)
                for b in cpu cuda; do
                    "$GB" reduce -q --backend $b --axis 0 --op mean,std,min,max --chunk 64k \
                        --shard 1/2 -o "$T/$b.state" "$f" 2>"$T/$b.err"
                done
                check_files_same "$dt $kind $shape axis 0 shard state" "$T/cpu.state" "$T/cuda.state"
                rm -f "$T/cpu.state" "$T/cuda.state" ;;
            esac
            "$GB" reduce -q --backend cpu --op var,std,sum --ddof 1 "$f" >"$T/c.txt" 2>&1
            "$GB" reduce -q --backend cuda --op var,std,sum --ddof 1 "$f" >"$T/g.txt" 2>&1
            check_files_same "$dt $kind $shape whole-array var/std" "$T/c.txt" "$T/g.txt"
        done
    done
done
summary
