#!/bin/sh
# test_transpose.sh - `gpubatch transpose` on the CPU backend against numpy
# (tests/cli/tpref.py): every element size, adversarial shapes, batches,
# Fortran order, raw and compressed input, identical bytes for any chunk
# size, thread and stream count, and the error cases.
. "$(dirname "$0")/lib.sh"
need_python
need_numpy
REF="$top/tests/cli/tpref.py"
TP() { "$GB" transpose --backend cpu -q "$@"; }

# check_case DTYPE SHAPE ORDER [OPTIONS]: transpose a random array, compare;
# queued, and run by run_cases: the reference makes every input, then checks
# every output, in one process each (tpref.py batch).
n=0
: >"$T/cases"
check_case() {
    n=$((n + 1))
    echo "$n $*" >>"$T/cases"
}

# Runs the queued cases.
run_cases() {
    awk '{ print $1, "make", $2, $3, $4, $1, T "/in-" $1 ".npy" }' T="$T" "$T/cases" |
        $NP "$REF" batch | grep -v '^[0-9]* 0 $' | sed 's/^/tpref.py make: /' >&2
    : >"$T/checks"
    while read -r k dt shape order opts; do
        # shellcheck disable=SC2086
        if TP $opts "$T/in-$k.npy" -o "$T/out-$k.npy.gz" -f; then
            echo "$k check $T/in-$k.npy $T/out-$k.npy.gz" >>"$T/checks"
        else
            fail "$dt $shape $order $opts: exit status $?"
        fi
    done <"$T/cases"
    $NP "$REF" batch <"$T/checks" >"$T/checked"
    check_eq "every transpose checked" "$(wc -l <"$T/checks")" "$(wc -l <"$T/checked")"
    while read -r k st text; do
        set -- $(sed -n "s/^$k //p" "$T/cases")
        check_name="$*"
        if [ "$st" = 0 ]; then ok; else fail "$*: $text"; fi
    done <"$T/checked"
    rm -f "$T"/in-*.npy "$T"/out-*.npy.gz
}

# Every element size, on square, odd, prime, thin and degenerate shapes;
# whole matrices per chunk and matrices staged across chunks.
for dt in $(pick "int8 uint16 float32 int64 complex128 float16 V2 bool >f4 >c8 >f2" \
    "int8 float32 complex128 float16 >f4"); do
    for shape in 1x1 1x37 37x1 64x64 61x67 3x1000 1000x3 0x5 5x0; do
        check_case $dt $shape C
    done
    check_case $dt 509x263 C --chunk 128k
    check_case $dt 7x33x65 C
    check_case $dt 2x3x5x7 C --chunk 128k
done
for dt in $(pick "float64 complex64 uint8 int32 float32" "float64 uint8 int32"); do
    check_case $dt 40x50 F
    check_case $dt 6x40x50 F
    check_case $dt 1x40x50 F
done
check_case float32 0x3x4 C
check_case int16 3x0x4 C
check_case uint8 8191x8193 C --chunk 16M --no-compress
check_case float32 1031x1033 C --chunk 128k -p 3
check_case complex128 300x16 C --chunk 128k --streams 2
check_case ">f8" 509x263 F --chunk 128k
check_case ">i2" 3x61x67 C --chunk 128k
check_case ">u8" 40x1 C
run_cases

# Identical bytes for any chunk size, thread count and stream count.
$NP "$REF" make float64 9x211x307 C 99 "$T/b.npy"
TP "$T/b.npy" -o "$T/b.npy.gz"
for opts in "--chunk 128k" "--chunk 1M -p 1" "--streams 2 -p 3" "--chunk 384k --streams 7" "--chunk 4M"; do
    TP $opts "$T/b.npy" --compress -c >"$T/alt.npy.gz"
    check_files_same "batch output with $opts" "$T/b.npy.gz" "$T/alt.npy.gz"
done

# Compressed input (gzip, concatenated members, stdin) and raw input/output.
gzip -c "$T/b.npy" >"$T/b.gz"
TP "$T/b.gz" --compress -c >"$T/alt.npy.gz"
check_files_same "gzip input" "$T/b.npy.gz" "$T/alt.npy.gz"
head -c 100000 "$T/b.npy" | gzip -c >"$T/m.gz"
tail -c +100001 "$T/b.npy" | gzip -c >>"$T/m.gz"
TP --compress - <"$T/m.gz" >"$T/alt.npy.gz"
check_files_same "multi-member gzip on stdin" "$T/b.npy.gz" "$T/alt.npy.gz"
tail -c +129 "$T/b.npy" >"$T/b.raw"
TP --dtype float64 --shape 9x211x307 --no-compress "$T/b.raw" -o "$T/b.out.raw"
if $NP "$REF" check-raw "$T/b.npy" "$T/b.out.raw" >"$T/chk" 2>&1; then ok; else
    fail "raw in, raw out: $(cat "$T/chk")"
fi
TP --raw --no-compress "$T/b.npy" -c >"$T/b.out2.raw"
check_files_same "--raw output" "$T/b.out.raw" "$T/b.out2.raw"
"$GB" gen --shape 300x500 --seed 3 -o "$T/g.npy.gz"
TP "$T/g.npy.gz" -o "$T/gt.npy.gz"
gzip -dc "$T/g.npy.gz" >"$T/g.npy"
if $NP "$REF" check "$T/g.npy" "$T/gt.npy.gz" >"$T/chk" 2>&1; then ok; else
    fail "blocked gzip input: $(cat "$T/chk")"
fi
TP "$T/g.npy.gz" --compress -c | TP - -c >"$T/back.npy"
check_files_same "transposing twice gives the input back" "$T/g.npy" "$T/back.npy"
TP "$T/g.npy.gz" -c | TP - -c >"$T/back2.npy"
check_files_same "transposing twice, plain through the pipe" "$T/g.npy" "$T/back2.npy"

# --shard: parts of a batch merge into one run's output, in any order; the
# compressed bytes too when the cuts can fall on block boundaries (16-byte
# matrices), the decompressed bytes always (8580-byte matrices). Merged into
# the other form, compressed parts are inflated into one run's plain bytes,
# and plain parts compressed into one run's blocked gzip.
for spec in "float32 20000x2x2" "float32 700x33x65" "int16 9x300x301"; do
    set -- $spec
    $NP "$REF" make $1 $2 C 41 "$T/sb.npy"
    TP -f "$T/sb.npy" -o "$T/sb1.npy.gz"
    TP -f --no-compress "$T/sb.npy" -o "$T/sb1.npy"
    for n in $(pick "1 3 7" "1 7"); do
        parts="" plain=""
        i=0
        while [ $i -lt $n ]; do
            TP --shard $i/$n "$T/sb.npy" -o "$T/part$i.gz" && ok || fail "$2 shard $i/$n"
            TP --shard $i/$n --no-compress "$T/sb.npy" -o "$T/plain$i" && ok || fail "$2 plain shard $i/$n"
            parts="$T/part$i.gz $parts" plain="$T/plain$i $plain"
            i=$((i + 1))
        done
        "$GB" merge -q $parts -o "$T/sbm.npy.gz" -f
        "$GB" merge -q $plain -o "$T/sbm.npy" -f
        check_files_same "$2 merged plain parts of $n" "$T/sb1.npy" "$T/sbm.npy"
        gzip -dc "$T/sbm.npy.gz" >"$T/sbm.dec"
        check_files_same "$2 merged parts of $n, decompressed" "$T/sb1.npy" "$T/sbm.dec"
        [ "$2" = 20000x2x2 ] && check_files_same "$2 merged parts of $n, compressed" "$T/sb1.npy.gz" "$T/sbm.npy.gz"
        "$GB" merge -q $parts -o "$T/sbm2.npy" -f
        check_files_same "$2 compressed parts of $n merged plain" "$T/sb1.npy" "$T/sbm2.npy"
        "$GB" merge -q $plain -o "$T/sbm2.npy.gz" -f
        check_files_same "$2 plain parts of $n merged compressed" "$T/sb1.npy.gz" "$T/sbm2.npy.gz"
        "$GB" merge -q -6 $parts -o "$T/sbm6.npy.gz" -f
        TP -f -6 "$T/sb.npy" -o "$T/sb6.npy.gz"
        check_files_same "$2 level-1 parts of $n merged at level 6" "$T/sb6.npy.gz" "$T/sbm6.npy.gz"
        "$GB" merge -q --compress $parts -c >"$T/sbm3.npy.gz"
        check_files_same "$2 merged parts of $n to stdout, --compress" "$T/sbm.npy.gz" "$T/sbm3.npy.gz"
        "$GB" merge -q $parts >"$T/sbm3.npy"
        check_files_same "$2 merged parts of $n to stdout, plain" "$T/sb1.npy" "$T/sbm3.npy"
        rm -f "$T"/part* "$T"/plain*
    done
done
"$GB" merge --help | tr '\n' ' ' | grep -q 'from quadratic and transpose' && ok ||
    fail "merge --help does not name the parts of transpose --shard"
check_error "--shard of one matrix" "splits a batch" TP --shard 0/2 "$T/g.npy" -o "$T/e7"
[ -e "$T/e7" ] && fail "--shard of one matrix left an output" || ok
TP --shard 0/2 "$T/g.npy" >/dev/null 2>&1
check_eq "--shard without -o is a usage error" 2 $?

# Errors: one line, exit 1, no output file left behind.
$NP "$REF" make float32 100 C 5 "$T/vec.npy"
check_error "1-D input" "no two axes to transpose" TP "$T/vec.npy" -o "$T/e1.npy"
[ -e "$T/e1.npy" ] && fail "1-D input left an output" || ok
check_error "raw without shape" "needs --shape" TP --dtype float32 "$T/b.raw" -o "$T/e2.npy"
check_error "raw shape larger than the data" "" TP --dtype float64 --shape 10x211x307 "$T/b.raw" -o "$T/e3"
[ -e "$T/e3" ] && fail "short raw input left an output" || ok
check_error "raw shape smaller than the data" "" TP --dtype float64 --shape 8x211x307 "$T/b.raw" -o "$T/e4"
[ -e "$T/e4" ] && fail "long raw input left an output" || ok
gzip -c "$T/b.npy" | head -c 300000 >"$T/trunc.gz"
check_error "truncated input" "trunc.gz: .*unexpected end" TP "$T/trunc.gz" -o "$T/e5.npy.gz"
check_error "truncated input, staged" "trunc.gz: .*unexpected end" TP --chunk 128k "$T/trunc.gz" -o "$T/e5.npy.gz"
[ -e "$T/e5.npy.gz" ] && fail "truncated input left a partial output" || ok
ls -a "$T" | grep -q '^\.e5' && fail "a temporary file was left behind" || ok
# A damaged gzip member read through the device path (the stand-in driver's
# device, from the member's start) fails as on the CPU: one line, exit 1,
# no output, the staged matrix never written.
gzip -1 -c "$T/b.npy" | $PY -c "import sys; b = bytearray(sys.stdin.buffer.read()); n = len(b) // 2
b[n:n + 40] = bytes(x ^ 0x5a for x in b[n:n + 40]); sys.stdout.buffer.write(b)" >"$T/bad.npy.gz"
"$GB" transpose --backend cpu --chunk 128k "$T/bad.npy.gz" -o "$T/e8.npy" 2>"$T/bad_cpu.err"
check_eq "damaged member on the CPU: exit status" 1 $?
if [ -f "$top/${BUILD:-build}/tests/libfakecuda.so" ]; then
    GPUBATCH_LIBCUDA="$top/${BUILD:-build}/tests/libfakecuda.so" GPUBATCH_HOST_INFLATE=0 \
        "$GB" transpose --backend cuda --chunk 128k "$T/bad.npy.gz" -o "$T/e8.npy" 2>"$T/bad_cuda.err"
    check_eq "damaged member on the device path: exit status" 1 $?
    check_files_same "damaged member: the CPU's error line" "$T/bad_cpu.err" "$T/bad_cuda.err"
fi
[ -e "$T/e8.npy" ] && fail "a damaged member left an output" || ok
$NP "$REF" make float32 2x3x4x5 F 6 "$T/f4.npy"
check_error "Fortran order with two batch axes" "more than one batch axis" TP "$T/f4.npy" -o "$T/e6"
cp "$T/b.npy.gz" "$T/exists.npy.gz"
check_error "existing output" "already exists" TP "$T/b.npy" -o "$T/exists.npy.gz"
check_files_same "existing output untouched" "$T/b.npy.gz" "$T/exists.npy.gz"
check_error "output over the input" "would overwrite an input" TP -f "$T/b.npy" -o "$T/b.npy"
summary
