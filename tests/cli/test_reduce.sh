#!/bin/sh
# test_reduce.sh - `gpubatch reduce` on the CPU backend against the Python
# reference (tests/cli/npyref.py), bit-identity across chunk sizes, threads
# and streams, every input framing, and the error cases.
. "$(dirname "$0")/lib.sh"
need_python
REF="$top/tests/cli/npyref.py"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count
R() { "$GB" reduce --backend cpu -q "$@"; }

# Values against the reference, for every dtype and several kinds and sizes.
# Big-endian data (a '>' descriptor) is swapped as it is read: same checks.
# The reference writes every file, then checks every result, in one process
# each (npyref.py batch): a process for each would cost most of the test.
# cases: "FILE ID" for each dtype, order, size and kind; the .npy files.
for dt in $(pick "float32 float64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 bool" \
    "float32 float64 int8 int64 uint16 uint64 float16 bfloat16 bool") \
    $(pick "float16-big float32-big float64-big int16-big int64-big uint32-big bfloat16-big" \
    "float16-big int64-big"); do
    order=${dt#*-}
    [ "$order" = big ] || order=
    dt=${dt%-big}
    for n in $(pick "1 7 8191 8193 40000" "1 8193 40000"); do
        for kind in random adversarial ints-extreme; do
            case $dt in
            float* | bfloat16 | bool) [ $kind = ints-extreme ] && continue ;;
            *) [ $kind = adversarial ] && continue ;;
            esac
            f="$T/$dt-$n-$kind$order.npy"
            echo "$f $dt$order:n=$n:$kind" >>"$T/cases"
            echo "- write $dt $n $kind $n $f $order" >>"$T/writes"
        done
    done
done
$PY "$REF" batch <"$T/writes" | grep -v '^- 0 $' | sed 's/^/write: /' >&2
: >"$T/checks"
while read -r f id; do
    for skip in 0 1; do
        flag=""
        [ $skip = 1 ] && flag=--skipnan
        out="${f%.npy}-$skip.json"
        if R --json --op $ALL $flag "$f" >"$out" 2>"$T/out.err"; then
            echo "$id:skipnan=$skip check $f $ALL $skip $out" >>"$T/checks"
        else
            # all-NaN arrays legitimately refuse mean/min/...; check the count alone
            if grep -q "every element is NaN" "$T/out.err"; then ok; else
                fail "$id skipnan=$skip: $(cat "$T/out.err")"
            fi
        fi
    done
done <"$T/cases"
$PY "$REF" batch <"$T/checks" >"$T/checked"
check_eq "every result checked" "$(wc -l <"$T/checks")" "$(wc -l <"$T/checked")"
while read -r id st text; do
    check_name=$id
    if [ "$st" = 0 ]; then ok; else fail "$id: $text"; fi
done <"$T/checked"

# Bit-identity: chunk sizes, threads and streams give the same text.
f="$T/big.npy"
$PY "$REF" write float32 300001 adversarial 7 "$f"
R --op $ALL "$f" >"$T/ref.txt"
for opts in "--chunk 64k" "--chunk 192k" "--chunk 1M" "--threads 1" "--threads 3" \
    "--streams 2" "--streams 7 --chunk 128k"; do
    R --op $ALL $opts "$f" >"$T/alt.txt"
    check_files_same "float32 with $opts" "$T/ref.txt" "$T/alt.txt"
done
R --op $ALL --skipnan "$f" >"$T/ref2.txt"
R --op $ALL --skipnan --chunk 64k --threads 2 "$f" >"$T/alt2.txt"
check_files_same "skipnan with small chunks" "$T/ref2.txt" "$T/alt2.txt"
f64="$T/big64.npy"
$PY "$REF" write float64 200003 random 8 "$f64"
R --op sum,sumsq "$f64" | sed "s|$f64|X|" >"$T/r64.txt"
R --op sum,sumsq --chunk 64k --threads 2 "$f64" | sed "s|$f64|X|" >"$T/a64.txt"
check_files_same "float64 chunking" "$T/r64.txt" "$T/a64.txt"

# Framings: gzip, multi-member gzip, stdin, raw with --dtype, all give the same values.
R --op $ALL "$f" | sed 's/  .*//' >"$T/v.txt"
gzip -c "$f" >"$T/big.npy.gz"
R --op $ALL "$T/big.npy.gz" | sed 's/  .*//' >"$T/v2.txt"
check_files_same "gzip input" "$T/v.txt" "$T/v2.txt"
head -c 500000 "$f" | gzip -1 >"$T/multi.gz"
tail -c +500001 "$f" | gzip -9 >>"$T/multi.gz"
R --op $ALL "$T/multi.gz" | sed 's/  .*//' >"$T/v3.txt"
check_files_same "multi-member gzip" "$T/v.txt" "$T/v3.txt"
R --op $ALL - <"$T/big.npy.gz" | sed 's/  .*//' >"$T/v4.txt"
check_files_same "gzip on stdin" "$T/v.txt" "$T/v4.txt"
tail -c +129 "$f" >"$T/big.raw"
hl=$(od -An -tu2 -j8 -N2 "$f" | tr -d ' ')
tail -c +$((hl + 11)) "$f" >"$T/big.raw"
R --op $ALL --dtype float32 "$T/big.raw" | sed 's/  .*//' >"$T/v5.txt"
check_files_same "raw --dtype" "$T/v.txt" "$T/v5.txt"
R --op $ALL --dtype f4 --shape 300001 "$T/big.raw" | sed 's/  .*//' >"$T/v6.txt"
check_files_same "raw --dtype --shape" "$T/v.txt" "$T/v6.txt"

# Blocked gzip (BGZF, as gen writes it) is inflated in parallel: same values,
# and a corrupt block is an error.
"$GB" gen --shape 3000001 --dist normal --seed 4 -o "$T/bgzf.npy.gz"
gzip -dc "$T/bgzf.npy.gz" >"$T/bgzf.npy"
R --op $ALL "$T/bgzf.npy" | sed 's/  .*//' >"$T/b1.txt"
R --op $ALL "$T/bgzf.npy.gz" | sed 's/  .*//' >"$T/b2.txt"
check_files_same "BGZF input" "$T/b1.txt" "$T/b2.txt"
R --op $ALL - <"$T/bgzf.npy.gz" | sed 's/  .*//' >"$T/b3.txt"
check_files_same "BGZF on stdin" "$T/b1.txt" "$T/b3.txt"
# A regular file on stdin is left past what was read, as a read(2) loop leaves it.
left=$({ R --op count - >/dev/null; wc -c; } <"$T/bgzf.npy.gz")
check_eq "stdin left at its end" 0 "$left"
"$GB" gen --shape 100000 --seed 3 --no-compress -o "$T/stdin.npy"
left=$({ R --op count - >/dev/null; wc -c; } <"$T/stdin.npy")
check_eq "plain stdin left at its end" 0 "$left"
cp "$T/bgzf.npy.gz" "$T/badblock.gz"
printf 'ZZZZ' | dd of="$T/badblock.gz" bs=1 seek=600000 conv=notrunc 2>/dev/null
check_error "corrupt BGZF block" "badblock.gz: " R "$T/badblock.gz"

# Output format: one line per op, name like sha256sum; JSON per file.
$PY "$REF" write int32 5 random 3 "$T/small.npy"
out=$(R --op count,sum "$T/small.npy" "$T/small.npy" | wc -l)
check_eq "two files, two ops" 4 "$out"
line=$(R --op count "$T/small.npy")
check_eq "text line" "count 5  $T/small.npy" "$line"
out=$(R --json --op count "$T/small.npy")
check_eq "json" "{\"file\": \"$T/small.npy\", \"dtype\": \"int32\", \"shape\": [5], \"count\": 5}" "$out"

# Empty arrays: sum 0, count 0; mean and extrema refuse.
$PY "$REF" write float32 0 random 1 "$T/empty.npy"
check_eq "empty sum,count" "sum 0  $T/empty.npy
count 0  $T/empty.npy" "$(R --op sum,count "$T/empty.npy")"
check_error "empty mean" "empty.npy: mean: the array is empty" R --op mean "$T/empty.npy"
check_error "empty argmax" "argmax: the array is empty" R --op argmax "$T/empty.npy"
# An op without a value hides no other: those are printed, it is reported
# alone (null in JSON), status 1.
# check_partial WHAT STDOUT STDERR CMD...: status 1 and exactly these outputs.
check_partial() {
    what=$1 want_out=$2 want_err=$3
    shift 3
    "$@" >"$T/part.out" 2>"$T/part.err"
    check_eq "$what: status" 1 $?
    check_eq "$what: stdout" "$want_out" "$(cat "$T/part.out")"
    check_eq "$what: stderr" "$want_err" "$(cat "$T/part.err")"
}
check_partial "empty sum,count,min" "sum 0  $T/empty.npy
count 0  $T/empty.npy" "gpubatch: error: $T/empty.npy: min: the array is empty" \
    R --op sum,count,min "$T/empty.npy"
check_partial "empty sum,count,min,mean --json" \
    "{\"file\": \"$T/empty.npy\", \"dtype\": \"float32\", \"shape\": [0], \"sum\": 0, \"mean\": null, \"min\": null, \"count\": 0}" \
    "gpubatch: error: $T/empty.npy: mean, min: the array is empty" \
    R --json --op sum,count,min,mean "$T/empty.npy"
: >"$T/empty.raw"
check_eq "empty raw" "sum 0  $T/empty.raw" "$(R --dtype int16 "$T/empty.raw")"

# Exact integer sums past 64 bits.
printf '\377\377\377\377\377\377\377\377%.0s' 1 2 3 4 >"$T/u64max.raw"
check_eq "uint64 sum beyond 2^64" "sum 73786976294838206460  $T/u64max.raw" \
    "$(R --dtype uint64 "$T/u64max.raw")"

# Bad input: one clear line naming the file, exit 1, nothing on stdout.
head -c 100000 "$T/big.npy.gz" >"$T/trunc.gz"
check_error "truncated gzip" "trunc.gz: .*unexpected end" R "$T/trunc.gz"
cp "$T/big.npy.gz" "$T/corrupt.gz"
printf 'XXXXXXXXXXXXXXXX' | dd of="$T/corrupt.gz" bs=1 seek=2000 conv=notrunc 2>/dev/null
check_error "corrupt deflate" "corrupt.gz: " R "$T/corrupt.gz"
head -c 100000 "$f" >"$T/short.npy"
check_error "npy shorter than its header says" "short.npy: truncated" R "$T/short.npy"
cat "$f" "$T/small.npy" >"$T/long.npy"
check_error "npy longer than its header says" "long.npy: .*more than" R "$T/long.npy"
head -c 10 "$T/big.raw" >"$T/odd.raw"
check_error "raw size not a multiple" "odd.raw: size 10 bytes is not a multiple" R --dtype float32 "$T/odd.raw"
check_error "raw without dtype" "big.raw: not an .npy file" R "$T/big.raw"
check_error "missing file" "nosuch.npy: " R "$T/nosuch.npy"
check_error "directory" "[Ii]s a directory" R "$T"
$PY -c "import struct,sys; h=\"{'descr': '<V4', 'fortran_order': False, 'shape': (3,), }\"; h+=' '*((64-(11+len(h))%64)%64)+'\\n'; sys.stdout.buffer.write(b'\\x93NUMPY\\x01\\x00'+struct.pack('<H',len(h))+h.encode()+bytes(12))" >"$T/v4.npy"
check_error "4-byte void npy" "v4.npy: .*unsupported dtype '<V4'" R "$T/v4.npy"
check_error "complex data" "reduce does not support complex64" R --dtype complex64 "$T/big.raw"
"$GB" reduce --dtype float99 "$f" >/dev/null 2>&1
check_eq "unknown dtype is a usage error" 2 $?
"$GB" reduce --op median "$f" >/dev/null 2>&1
check_eq "unknown op is a usage error" 2 $?
for ops in sum, sum,,min ,sum sum,min,sum; do
    "$GB" reduce --op $ops "$f" >"$T/ops.out" 2>"$T/ops.err"
    check_eq "--op $ops is a usage error" "2 $(case $ops in sum,min,sum) echo "operation 'sum' given twice" ;;
        sum,) echo "a comma ends the list" ;; *) echo "unknown operation ''" ;; esac)" \
        "$? $(head -n 1 "$T/ops.err" | sed -e 's/^gpubatch reduce: //' -e 's/: no operation after it//' \
            -e 's/ (expected.*//')"
done

# Fortran order: layout-independent ops work, flat indices are refused.
$PY -c "import struct,sys; h=\"{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\"; h+=' '*((64-(11+len(h))%64)%64)+'\\n'; sys.stdout.buffer.write(b'\\x93NUMPY\\x01\\x00'+struct.pack('<H',len(h))+h.encode()+struct.pack('<6i',5,-1,7,2,9,0))" >"$T/fortran.npy"
check_eq "fortran sum,min" "sum 22  $T/fortran.npy
min -1  $T/fortran.npy" "$(R --op sum,min "$T/fortran.npy")"
check_error "fortran argmax" "fortran.npy: argmin/argmax of a Fortran-order array" R --op argmax "$T/fortran.npy"
check_partial "fortran sum,argmin,max" "sum 22  $T/fortran.npy
max 9  $T/fortran.npy" "gpubatch: error: $T/fortran.npy: argmin: not supported for a Fortran-order array" \
    R --op sum,argmin,max "$T/fortran.npy"
check_partial "fortran sum,argmax --json" \
    "{\"file\": \"$T/fortran.npy\", \"dtype\": \"int32\", \"shape\": [2, 3], \"sum\": 22, \"argmax\": null}" \
    "gpubatch: error: $T/fortran.npy: argmax: not supported for a Fortran-order array" \
    R --json --op sum,argmax "$T/fortran.npy"

# A bad file among good ones: the good ones are reported, the status is 1.
R --op count "$T/small.npy" "$T/trunc.gz" "$T/small.npy" >"$T/mixed.out" 2>"$T/mixed.err"
check_eq "mixed status" 1 $?
check_eq "mixed stdout" 2 "$(wc -l <"$T/mixed.out")"

summary
