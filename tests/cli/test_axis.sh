#!/bin/sh
# test_axis.sh - `reduce --axis` on the CPU backend against the reference of
# tests/cli/axisref.py (the documented order of every sum, bit for bit;
# extrema by order keys; var and std within 4 ulp of exact fractions), on
# random and adversarial data of every dtype, C and Fortran order,
# big-endian, several axes, negative axes, keepdims and empty axes; the
# bits independent of --chunk and --threads; outputs that np.load reads;
# text and JSON; and every error: one line naming the file, no output.
. "$(dirname "$0")/lib.sh"
need_numpy
REF="$top/tests/cli/axisref.py"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count,var,std
R() { "$GB" reduce --backend cpu -q "$@"; }
# check_status WHAT STATUS PATTERN CMD...: that status, nothing on stdout,
# one line on stderr holding PATTERN (and the --help line after a usage error).
check_status() {
    what=$1 want=$2 pat=$3
    shift 3
    check_name=$what
    "$@" >"$T/err.out" 2>"$T/err.err"
    st=$?
    # a usage error (2) adds the line pointing at --help
    if [ "$st" -ne "$want" ] || [ -s "$T/err.out" ] ||
        [ "$(grep -c . "$T/err.err")" -ne $((want == 2 ? 2 : 1)) ] ||
        ! head -n 1 "$T/err.err" | grep -q -- "$pat"; then
        fail "$what: status $st, stdout [$(head -c 100 "$T/err.out")], stderr [$(cat "$T/err.err")]"
    else
        ok
    fi
}

# var and std: within 4 ulp of the exact value on the hard cases (a large
# offset with a tiny spread, constants, halves); data mixing magnitudes of
# 1e-3 to 1e3 (a shift far from its accumulator's mean) within 16.
ulps() { case $1 in random | adversarial) echo 16 ;; *) echo 4 ;; esac; }
# cases: "NAME DTYPE SHAPE ORDER KIND AXES" ; each is written, reduced with
# every op (skipnan off and on for floats) and checked.
cat >"$T/cases" <<'END'
f32-7x5 float32 7,5 C adversarial 0
f32-7x5r float32 7,5 C adversarial 1
f32-7x5n float32 7,5 C random -1,-2
f64-1x9 float64 1,9 C adversarial 0
f64-9x1 float64 9,1 C adversarial 0
f32-run float32 3,40000 C adversarial 1
f32-col float32 3,40000 C random 0
f64-cols float64 1000,67 C adversarial 0
f32-4d float32 2,3,4,5 C adversarial 0,2
f64-4d float64 2,3,4,5 C random 1,3
f32-4dn float32 2,3,4,5 C random -1,-3
f32-4dall float32 2,3,4,5 C adversarial all
f64-mid float64 3,20,5,7 C adversarial 1,3
f32-none float32 20,3,18,5 C adversarial 0,2
f32-noner float32 40,3,18,5 C random 0,2
f64-midr float64 3,40,5,7 C random 1,3
f32-blk float32 20,3,32,5 C random 0,2
f64-F float64 7,5,3 F adversarial 1
f64-F2 float64 7,5,3 F adversarial 0,2
f32-F3 float32 4,6,5 F random 0,1
f16 float16 33,17 C adversarial 0
f16r float16 33,17 C random 1
bf16 bfloat16 33,17 C adversarial 0
bf16r bfloat16 20,900 C random 1
i8 int8 40,9 C extreme 0
i32 int32 40,9 C random 1
i64 int64 17,33 C random 0
i64r int64 3,20000 C random 1
u8 uint8 40,9 C extreme 0,1
u64 uint64 17,33 C random 1
b bool 31,7 C random 0
bB float32 7,5 B adversarial 0
i16B int16 7,5 B random 1
off float64 3,5000 C offset 1
offc float64 5000,3 C offset 0
off32 float32 700,4 C offset 0
const float64 50,3 C const 0
const32 float32 3,50 C const 1
END
: >"$T/writes"
: >"$T/checks"
: >"$T/ids"
while read -r name dt shape order kind axes; do
    echo "write $T/$name.npy $dt $shape $order $kind 7" >>"$T/writes"
done <"$T/cases"
$NP "$REF" <"$T/writes" >/dev/null
while read -r name dt shape order kind axes; do
    for skip in 0 1; do
        flag=
        [ $skip = 1 ] && flag=--skipnan
        case $dt in float* | bfloat16) ;; *) [ $skip = 1 ] && continue ;; esac
        for keep in 0 1; do
            # keepdims changes the shape alone: a few cases
            [ $keep = 1 ] && { [ $skip = 1 ] || ! echo "$name" | grep -q "^f32-4d\|^f64-F\|^i8"; } &&
                continue
            kflag=
            [ $keep = 1 ] && kflag=--keepdims
            ax=$axes
            [ "$axes" = all ] && ax=$("$NP" -c "print(','.join(map(str, range(len('$shape'.split(','))))))")
            out="$T/$name-$skip-$keep.npz"
            # empty reductions of some outputs legitimately refuse min/argmin/... (all NaN)
            if R --axis "$ax" $kflag --op $ALL $flag -o "$out" "$T/$name.npy" 2>"$T/err"; then
                echo "check $T/$name.npy $axes $keep $ALL $skip 0 $out $(ulps $kind)" >>"$T/checks"
                echo "$name:skipnan=$skip:keepdims=$keep" >>"$T/ids"
            elif grep -q "zero-size reduction" "$T/err" && [ ! -e "$out" ]; then
                R --axis "$ax" $kflag --op sum,mean,sumsq,count,var,std $flag -o "$out" \
                    "$T/$name.npy" 2>/dev/null
                echo "check $T/$name.npy $axes $keep sum,mean,sumsq,count,var,std $skip 0 $out $(ulps $kind)" \
                    >>"$T/checks"
                echo "$name:skipnan=$skip:keepdims=$keep(no extrema)" >>"$T/ids"
            else
                check_name="$name skipnan=$skip"
                fail "$name skipnan=$skip: $(cat "$T/err")"
            fi
        done
    done
done <"$T/cases"
# ddof 1 and 3 on a few
for c in "off 1" "f64-cols 0" "i32 1"; do
    set -- $c
    R --axis $2 --op var,std --ddof 3 -o "$T/$1-ddof.npz" "$T/$1.npy" 2>/dev/null
    echo "check $T/$1.npy $2 0 var,std 0 3 $T/$1-ddof.npz 4" >>"$T/checks"
    echo "$1:ddof=3" >>"$T/ids"
done
$NP "$REF" <"$T/checks" >"$T/checked"
check_eq "every result checked" "$(wc -l <"$T/checks")" "$(wc -l <"$T/checked")"
paste -d' ' "$T/ids" "$T/checked" | while read -r id no st text; do
    check_name=$id
    if [ "$st" = 0 ]; then echo ok; else echo "fail $id: $text"; fi
done >"$T/verdicts"
while read -r v rest; do
    if [ "$v" = ok ]; then ok; else fail "$rest"; fi
done <"$T/verdicts"

# One op to .npy, and compressed by the name: the same array.
R --axis 0 --op sum -o "$T/s.npy" "$T/f64-cols.npy"
R --axis 0 --op sum -o "$T/s.npy.gz" "$T/f64-cols.npy"
same=$("$NP" -c "
import gzip, io, numpy as np, sys
a = np.load(sys.argv[1]); b = np.load(io.BytesIO(gzip.open(sys.argv[2]).read()))
c = np.load(sys.argv[3])['sum']
print(a.shape == (67,) and a.tobytes() == b.tobytes() == c.tobytes())" \
    "$T/s.npy" "$T/s.npy.gz" "$T/f64-cols-0-0.npz")
check_eq ".npy, .npy.gz and the .npz member agree" True "$same"

# Entries longer than a 256 KiB piece (float64 rows of 64 columns: 512 KiB)
# are read from a file into each thread's buffer whole: the bytes of the
# same array from a pipe.
"$GB" gen --shape 5000x64 --dtype float64 --dist normal --mean 3 --no-compress -o "$T/wide.npy"
for op in var argmax; do
    R --axis 0 --op $op -o "$T/wide-f.npy" "$T/wide.npy"
    cat "$T/wide.npy" | R --axis 0 --op $op -o "$T/wide-p.npy" -
    check_eq "$op of entries longer than a piece: file and pipe" "$(cksum <"$T/wide-p.npy")" \
        "$(cksum <"$T/wide-f.npy")"
done

# Bits independent of the chunk size (rows, runs, tiles and blocks cut
# anywhere) and the thread count.
for name in f32-run f64-cols f64-mid f32-none f32-blk; do
    ax=$(awk -v n=$name '$1 == n { print $6 }' "$T/cases")
    rm -f "$T/ref.npz"
    R --axis "$ax" --op $ALL -o "$T/ref.npz" "$T/$name.npy"
    for opts in "--chunk 128k" "--chunk 128k --threads 1" "--threads 3"; do
        rm -f "$T/alt.npz"
        R --axis "$ax" --op $ALL $opts -o "$T/alt.npz" "$T/$name.npy"
        check_files_same "$name with $opts" "$T/ref.npz" "$T/alt.npz"
    done
done
# Many short rows, each its own output: stored and finished by slices of
# outputs on several threads, the same bytes on one thread and with rows cut
# between chunks.
"$GB" gen -q --shape 140000,5 --dist normal --seed 3 -o "$T/rows.npy"
"$GB" gen -q --shape 70001,3 --dtype int16 --seed 4 -o "$T/rows16.npy"
for name in rows rows16; do
    rm -f "$T/ref.npz"
    R --axis -1 --op $ALL --threads 1 -o "$T/ref.npz" "$T/$name.npy"
    for opts in "--threads 2" "--threads 3" "--chunk 128k --threads 4"; do
        rm -f "$T/alt.npz"
        R --axis -1 --op $ALL $opts -o "$T/alt.npz" "$T/$name.npy"
        check_files_same "$name with $opts" "$T/ref.npz" "$T/alt.npz"
    done
done
# gzip input and stdin: the same bytes
gzip -c "$T/f32-run.npy" >"$T/run.npy.gz"
rm -f "$T/ref.npz"
R --axis 1 --op $ALL -o "$T/ref.npz" "$T/f32-run.npy"
R --axis 1 --op $ALL -o "$T/gz.npz" "$T/run.npy.gz"
check_files_same "gzip input" "$T/ref.npz" "$T/gz.npz"
R --axis 1 --op $ALL -o "$T/in.npz" - <"$T/run.npy.gz"
check_files_same "stdin" "$T/ref.npz" "$T/in.npz"

# --axis over every axis is the whole-array reduction, to the bit.
whole=$(R --op sum,sumsq,min,max,count,var,std "$T/f32-run.npy" | sed 's/  .*//')
along=$(R --axis 0,1 --op sum,sumsq,min,max,count,var,std "$T/f32-run.npy" | sed 's/  .*//')
check_eq "all axes == whole array" "$whole" "$along"

# Text and JSON: nested lists in C order (Fortran input too).
"$NP" -c "import numpy as np; np.save('$T/t.npy', np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)))"
check_eq "text" "sum [[12, 15, 18, 21], [48, 51, 54, 57]]  $T/t.npy" "$(R --axis 1 "$T/t.npy")"
check_eq "text keepdims" "max [[[8, 9, 10, 11]], [[20, 21, 22, 23]]]  $T/t.npy" \
    "$(R --axis 1 --keepdims --op max "$T/t.npy")"
check_eq "text argmin, two axes" "argmax [11, 11]  $T/t.npy" "$(R --axis 1,2 --op argmax "$T/t.npy")"
json=$(R --axis 0 --op sum,mean --json "$T/t.npy")
good=$("$NP" -c "
import json, sys
d = json.loads(sys.argv[1])
print(d['sum'] == [[12, 14, 16, 18], [20, 22, 24, 26], [28, 30, 32, 34]] and d['result_shape'] == [3, 4] and d['mean'][0][0] == 6)" "$json")
check_eq "json" True "$good"
"$NP" -c "import numpy as np; np.save('$T/u.npy', np.array([[2**62 + 1, 7], [2**62 + 3, 2**64 - 8]], dtype=np.uint64))"
check_eq "json exact integers" '{"sum": [9223372036854775812, 18446744073709551615]}' \
    "$(R --axis 0 --json "$T/u.npy" | sed 's/.*"sum"/{"sum"/')"
check_status "sum beyond 64 bits" 1 "sum: an exact sum does not fit 64 bits" R --axis 1 "$T/u.npy"

# Empty axes: sum 0, count 0, mean NaN with a warning, min an error alone.
"$NP" -c "import numpy as np; np.save('$T/e.npy', np.zeros((4, 0, 3), np.float32))"
out=$("$GB" reduce --backend cpu --axis 1 --op sum,count,mean,min "$T/e.npy" 2>"$T/err"; echo "rc=$?")
check_eq "empty axis values" "sum [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]  $T/e.npy
mean [[nan, nan, nan], [nan, nan, nan], [nan, nan, nan], [nan, nan, nan]]  $T/e.npy
count [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]  $T/e.npy
rc=1" "$out"
check_eq "empty axis messages" "gpubatch: warning: $T/e.npy: mean: an empty reduction (or with --ddof, too few elements) gives NaN, as numpy's
gpubatch: error: $T/e.npy: min: zero-size reduction along the axes has no value" "$(cat "$T/err")"
check_eq "kept empty axis" "sum [[]]  $T/e.npy" "$(R --axis 0 "$T/e.npy" 2>&1)"

# Errors: one line naming the file (or the option), status 1 (2 for usage), no output.
check_status "axis out of range" 1 "$T/t.npy: axis 3 is out of bounds for an array of 3 dimensions" \
    R --axis 3 -o "$T/no.npy" "$T/t.npy"
check_status "axis given twice (negative)" 1 "$T/t.npy: axis 2 given twice in --axis '2,-1'" \
    R --axis 2,-1 -o "$T/no.npy" "$T/t.npy"
check_status "axis twice" 2 "axis 0 given twice" R --axis 0,0 "$T/t.npy"
check_status "bad axis" 2 "bad --axis 'x'" R --axis x "$T/t.npy"
check_status "empty axis list" 2 "empty --axis list" R --axis "" "$T/t.npy"
check_status "keepdims alone" 2 "--keepdims goes with --axis" R --keepdims "$T/t.npy"
check_status "several ops to .npy" 2 "several operations go to an .npz archive" \
    R --axis 0 --op sum,max -o "$T/no.npy" "$T/t.npy"
check_status "bad ddof" 2 "bad --ddof '-1'" R --axis 0 --op var --ddof -1 "$T/t.npy"
check_status "min of an empty axis to a file" 1 "zero-size reduction along the axes" \
    R --axis 1 --op sum,min -o "$T/no.npz" "$T/e.npy"
check_status "text too long" 1 "write it with -o FILE.npy" R --axis 0 "$T/f32-col.npy"
check_eq "no output after errors" "" "$(ls "$T" | grep '^no\.')"
cp "$T/t.npy" "$T/keep.npy"
check_status "input not overwritten" 1 "" R --axis 0 -o "$T/keep.npy" -f "$T/keep.npy"
check_eq "input intact" "$(cat "$T/t.npy" | cksum)" "$(cat "$T/keep.npy" | cksum)"

# The --axis parser on junk: a usage error or a run, never a crash.
for a in "0," ",0" "0,,1" "-" "+1" " 1" "1 " "99999999999999999999" "-99" "0x1" "1e0" "0,1,2,3,4"; do
    R --axis "$a" "$T/t.npy" >/dev/null 2>&1
    rc=$?
    check_name="axis parser '$a'"
    if [ $rc -le 2 ]; then ok; else fail "--axis '$a': status $rc"; fi
done

summary
