#!/bin/sh
# test_simd.sh - every instruction-set variant of the CPU tile code this
# machine runs (GPUBATCH_CPU_SIMD: baseline, avx2, avx512; each capped by
# what the CPU has), and input read through buffers or in place
# (GPUBATCH_MAP=0 or not), prints the same text for every dtype, op set, NaN policy,
# chunk size and thread count, on random, adversarial and extreme data; -v
# names the variant; an unknown name is a usage error.
. "$(dirname "$0")/lib.sh"
REF="$top/tests/cli/npyref.py"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count

# Runs reduce with each variant and compares every output to the baseline's,
# and the baseline's on input read through the buffers (GPUBATCH_MAP=0) to
# its on input read in place.
same_on_every_variant() {
    what=$1
    shift
    GPUBATCH_CPU_SIMD=baseline "$GB" reduce -q --backend cpu "$@" >"$T/base.txt" 2>&1
    echo "exit $?" >>"$T/base.txt"
    GPUBATCH_MAP=0 GPUBATCH_CPU_SIMD=baseline "$GB" reduce -q --backend cpu "$@" >"$T/read.txt" 2>&1
    echo "exit $?" >>"$T/read.txt"
    check_files_same "$what: read as mapped" "$T/base.txt" "$T/read.txt"
    for v in avx2 avx512; do
        GPUBATCH_CPU_SIMD=$v "$GB" reduce -q --backend cpu "$@" >"$T/$v.txt" 2>&1
        echo "exit $?" >>"$T/$v.txt"
        check_files_same "$what: $v as baseline" "$T/base.txt" "$T/$v.txt"
    done
}

for dt in float32 float64 float16 bfloat16 int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool; do
    case $dt in float* | bfloat16 | bool) kinds="random adversarial" ;; *) kinds="random ints-extreme" ;; esac
    for kind in $kinds; do
        for n in 1 7 31 33 4097 8193 65537 300007; do
            f="$T/$dt-$kind-$n.npy"
            $PY "$REF" write $dt $n $kind $n "$f" || { fail "npyref.py write $dt $n $kind"; continue; }
            same_on_every_variant "$dt $kind n=$n" --op $ALL "$f"
            case $dt in float* | bfloat16)
                same_on_every_variant "$dt $kind n=$n skipnan" --op $ALL --skipnan "$f" ;;
            esac
        done
        same_on_every_variant "$dt $kind small chunks, 3 threads" --op $ALL --chunk 4k -p 3 \
            "$T/$dt-$kind-300007.npy"
        rm -f "$T/$dt-$kind-"*.npy
    done
done

# -v names the variant in use, never a wider one than asked.
$PY "$REF" write float32 1000 random 1 "$T/v.npy"
GPUBATCH_CPU_SIMD=baseline "$GB" reduce -v --backend cpu "$T/v.npy" >/dev/null 2>"$T/v.err"
grep -q "backend cpu: [0-9]* threads, baseline$" "$T/v.err" && ok || fail "-v: $(grep 'backend cpu' "$T/v.err")"
"$GB" reduce -v --backend cpu "$T/v.npy" >/dev/null 2>"$T/v.err"
grep -q "backend cpu: [0-9]* threads, \(baseline\|avx2\|avx512\)$" "$T/v.err" && ok ||
    fail "-v without GPUBATCH_CPU_SIMD: $(grep 'backend cpu' "$T/v.err")"
# An unknown name is a usage error (status 2) naming the variable.
GPUBATCH_CPU_SIMD=sse9 "$GB" reduce --backend cpu "$T/v.npy" >"$T/o" 2>"$T/e"
check_eq "an unknown instruction set: status" "2" "$?"
grep -q "unknown instruction set 'sse9' in GPUBATCH_CPU_SIMD" "$T/e" && ok || fail "unknown set: $(cat "$T/e")"
[ -s "$T/o" ] && fail "an unknown instruction set printed results" || ok
summary
