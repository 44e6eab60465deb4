#!/bin/sh
# test_quadratic.sh - `gpubatch quadratic` on the CPU backend: roots against
# an independent exact reference (tests/cli/quadref.py), the documented
# degenerate cases, identical bytes for any chunk size and thread count,
# numpy reading the output, and the error cases (no partial output left).
. "$(dirname "$0")/lib.sh"
need_python
QREF="$top/tests/cli/quadref.py"
Q() { "$GB" quadratic --backend cpu -q "$@"; }

for dt in float32 float64; do
    "$GB" gen --quadratic 30011 --dtype $dt --seed 11 --no-compress -o "$T/q-$dt.npy"
    Q "$T/q-$dt.npy" -o "$T/r-$dt.npy.gz"
    if $PY "$QREF" check "$T/q-$dt.npy" "$T/r-$dt.npy.gz" 4000 >"$T/chk" 2>&1; then ok; else
        fail "$dt roots against the exact reference: $(tail -3 "$T/chk")"
    fi
    for opts in "--chunk 128k" "--chunk 1M -p 1" "--streams 2 -p 3" "--chunk 384k --streams 7"; do
        Q $opts "$T/q-$dt.npy" --compress -c >"$T/alt.npy.gz"
        check_files_same "$dt output with $opts" "$T/r-$dt.npy.gz" "$T/alt.npy.gz"
    done
    gzip -c "$T/q-$dt.npy" | Q - -1 -c >"$T/stdin.npy.gz"
    check_files_same "$dt gzip on stdin" "$T/r-$dt.npy.gz" "$T/stdin.npy.gz"
done

# Without --chunk, a run on the cores alone takes chunks of a few MiB from
# a single gzip member or a plain file (two threads: 4 MiB, so this 9.6 MB
# input is three): the same bytes as one 64 MiB chunk, in either layout.
"$GB" gen --quadratic 400009 --dtype float64 --seed 12 --no-compress -o "$T/big.npy"
gzip -1 -c "$T/big.npy" >"$T/big.npy.gz"
Q -p 2 --chunk 64M "$T/big.npy" -o "$T/big-one.npy"
Q -p 2 --chunk 64M --out-layout planes "$T/big.npy" -o "$T/bigp-one.npy"
for in in big.npy big.npy.gz; do
    Q -p 2 "$T/$in" -o "$T/big-def.npy" -f
    check_files_same "$in with the default chunk" "$T/big-one.npy" "$T/big-def.npy"
    Q -p 2 --out-layout planes "$T/$in" -o "$T/bigp-def.npy" -f
    check_files_same "$in planes out with the default chunk" "$T/bigp-one.npy" "$T/bigp-def.npy"
done

# numpy reads the output (plain for a name without .gz, and on standard
# output) and agrees on shape and dtype; the .gz output holds the same bytes.
NP=$(numpy_python)
if [ -n "$NP" ]; then
    Q "$T/q-float64.npy" -o "$T/r.npy"
    out=$("$NP" -c "import numpy as n; a=n.load('$T/r.npy'); print(a.shape, a.dtype)")
    check_eq "numpy loads the roots" "(30011, 2) complex128" "$out"
    out=$(Q "$T/q-float64.npy" -c | "$NP" -c "import io, sys, numpy as n
a = n.load(io.BytesIO(sys.stdin.buffer.read())); print(a.shape, a.dtype)")
    check_eq "numpy loads the roots from standard output" "(30011, 2) complex128" "$out"
    gzip -dc "$T/r-float64.npy.gz" >"$T/r-dec.npy"
    check_files_same "the .gz output decompresses to the plain output" "$T/r.npy" "$T/r-dec.npy"
else
    missing "python3-numpy missing: numpy check skipped"
fi

# The documented conventions, exactly (re1 im1 re2 im2 per row).
$PY "$QREF" rows float64 "$T/deg.npy" 1,-3,2 1,0,1 1,2,1 0,2,-4 0,0,5 0,0,0 1,0,-4 2,4,0 nan,1,1 inf,1,1
Q --raw --no-compress "$T/deg.npy" -c | od -An -v -tf8 -w32 | tr -s ' ' | sed 's/^ //' >"$T/deg.txt"
cat >"$T/deg.want" <<'END'
1 0 2 0
0 1 0 -1
-1 0 -1 0
2 0 nan nan
nan nan nan nan
nan nan nan nan
-2 0 2 0
-2 0 0 0
nan nan nan nan
nan nan nan nan
END
check_files_same "degenerate rows" "$T/deg.want" "$T/deg.txt"

# Raw input: the row count comes from --shape or the file size.
tail -c +129 "$T/q-float32.npy" >"$T/q.raw"
Q --dtype float32 "$T/q.raw" --compress -c >"$T/raw.npy.gz"
check_files_same "raw input, size from the file" "$T/r-float32.npy.gz" "$T/raw.npy.gz"
cat "$T/q.raw" | Q --dtype float32 --shape 30011x3 - --compress -c >"$T/raw2.npy.gz"
check_files_same "raw input on a pipe with --shape" "$T/r-float32.npy.gz" "$T/raw2.npy.gz"
check_error "raw pipe without shape" "number of rows of raw input on a stream is unknown" \
    sh -c "cat '$T/q.raw' | '$GB' quadratic --backend cpu --dtype float32 - -c"

# Errors: one line, exit 1, and no output file left behind.
$PY "$top/tests/cli/npyref.py" write float32 4x4 random 1 "$T/wide.npy"
check_error "wrong shape" "expected an (N, 3) array" Q "$T/wide.npy" -o "$T/out1.npy.gz"
[ -e "$T/out1.npy.gz" ] && fail "wrong shape left an output" || ok
$PY "$top/tests/cli/npyref.py" write int32 4x3 random 1 "$T/int.npy"
check_error "integer coefficients" "must be float16, bfloat16, float32 or float64, not int32" \
    Q "$T/int.npy" -o "$T/out2.npy.gz"
gzip -c "$T/q-float64.npy" | head -c 200000 >"$T/trunc.gz"
check_error "truncated input" "trunc.gz: .*unexpected end" Q "$T/trunc.gz" -o "$T/out3.npy.gz"
[ -e "$T/out3.npy.gz" ] && fail "truncated input left a partial output" || ok
ls -a "$T" | grep -q '^\.out3' && fail "a temporary file was left behind" || ok
cp "$T/r-float32.npy.gz" "$T/exists.npy.gz"
check_error "existing output" "already exists" Q "$T/q-float32.npy" -o "$T/exists.npy.gz"
check_files_same "existing output untouched" "$T/r-float32.npy.gz" "$T/exists.npy.gz"
Q -f "$T/q-float32.npy" -o "$T/exists.npy.gz" && ok || fail "-f did not overwrite"
check_error "output over the input" "would overwrite an input" Q -f "$T/q-float32.npy" -o "$T/q-float32.npy"
summary
