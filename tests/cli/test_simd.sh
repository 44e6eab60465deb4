#!/bin/sh
# test_simd.sh - every instruction-set variant of the CPU code this
# machine runs (GPUBATCH_CPU_SIMD: baseline, avx2, avx512; each capped by
# what the CPU has), and input read through buffers or in place
# (GPUBATCH_MAP=0 or not), gives the same results: reduce's text for every
# dtype, op set, NaN policy, chunk size and thread count, on random,
# adversarial and extreme data; the bytes of quadratic's roots and of
# transposes of every element size; -v names the variant; an unknown name
# is a usage error.
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
        sizes="1 7 31 33 4097 8193 65537 300007"
        # the files of every size written by one process
        for n in $sizes; do echo "$n write $dt $n $kind $n $T/$dt-$kind-$n.npy"; done |
            $PY "$REF" batch >"$T/written"
        # every size in one process per variant, its lines naming the files,
        # largest first (each file read into buffers a larger one filled)
        files=
        for n in $sizes; do
            grep -qx "$n 0 " "$T/written" || fail "npyref.py write $dt $n $kind"
            files="$T/$dt-$kind-$n.npy $files"
        done
        same_on_every_variant "$dt $kind n=$sizes" --op $ALL $files
        case $dt in float* | bfloat16)
            same_on_every_variant "$dt $kind n=$sizes skipnan" --op $ALL --skipnan $files ;;
        esac
        same_on_every_variant "$dt $kind small chunks, 3 threads" --op $ALL --chunk 4k -p 3 \
            "$T/$dt-$kind-300007.npy"
        rm -f "$T/$dt-$kind-"*.npy
    done
done

# Runs one command (its output file OUT, then its arguments) with each
# variant and compares the files each wrote, byte for byte, and the exit
# status, to the baseline's.
same_file_on_every_variant() {
    what=$1
    out=$2
    shift 2
    for v in baseline avx2 avx512; do
        rm -f "$out"
        GPUBATCH_CPU_SIMD=$v "$GB" "$@" -q --backend cpu -o "$out" >"$T/$v.err" 2>&1
        echo "exit $?" >>"$T/$v.err"
        [ -e "$out" ] && mv "$out" "$T/$v.out" || : >"$T/$v.out"
    done
    for v in avx2 avx512; do
        check_files_same "$what: $v as baseline" "$T/baseline.out" "$T/$v.out"
        check_files_same "$what: $v's status as baseline's" "$T/baseline.err" "$T/$v.err"
    done
}

# The quadratic solver: every variant writes the same roots.
for dt in float32 float64 float16 bfloat16; do
    for kind in random adversarial; do
        $PY "$REF" write $dt 20011x3 $kind 7 "$T/q.npy" || { fail "npyref.py write $dt q"; continue; }
        same_file_on_every_variant "quadratic $dt $kind" "$T/roots.npy" quadratic "$T/q.npy"
    done
done
$PY "$REF" write float64 3x5003 adversarial 8 "$T/q.npy"
same_file_on_every_variant "quadratic planes" "$T/roots.npy" quadratic --layout planes "$T/q.npy"

# The transpose: every variant writes the same bytes, for every element
# size, shapes with and without whole squares of registers, batches, and a
# matrix staged whole (larger than --chunk).
for dt in int8 int16 float32 float64; do
    for shape in 1x1 7x9 8x8 37x53 64x96 3x33x65 300x257; do
        $PY "$REF" write $dt $shape random 9 "$T/m.npy" || { fail "npyref.py write $dt $shape"; continue; }
        same_file_on_every_variant "transpose $dt $shape" "$T/t.npy" transpose "$T/m.npy"
    done
    same_file_on_every_variant "transpose $dt staged" "$T/t.npy" transpose --chunk 4k "$T/m.npy"
done
"$GB" gen -q --raw --dtype uint64 --shape 6600 --seed 3 -o "$T/m.raw" || fail "gen 16-byte elements"
same_file_on_every_variant "transpose complex128" "$T/t.npy" transpose --dtype complex128 \
    --shape 33x100 "$T/m.raw"

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
