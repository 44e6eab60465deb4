#!/bin/sh
# test_npz.sh - .npz archives (tests/cli/npzmake.py) on the CPU backend:
# reduce (text and --json), quadratic and transpose of every member of
# np.savez (stored), np.savez_compressed (deflated) and zip64 archives give
# what the same arrays give as .npy files, byte for byte; FILE.npz means
# every member in archive order and FILE.npz:KEY one; --shard reads stored
# members in parts and refuses deflated ones; every damaged archive ends in
# one error line naming the file, status 1 and no output file.
. "$(dirname "$0")/lib.sh"
need_python
need_numpy
MK="$top/tests/cli/npzmake.py"
R() { "$GB" reduce --backend cpu -q "$@"; }
D="$T/a"
mkdir "$D" "$T/bad" "$T/out"
$NP "$MK" arrays "$D" 11 || fail "npzmake.py arrays"
$NP "$MK" corrupt "$T/bad" || fail "npzmake.py corrupt"
keys=$(cat "$D/keys")
reduced=$(grep -v -e c64 -e rows -e planes -e row1 "$D/keys") # reduce's dtypes, not (N, 3)

# reduce: every member, in archive order, each as FILE.npz:KEY, equals the .npy's result.
ALL=sum,sumsq,count
for k in $reduced; do R --op $ALL "$D/$k.npy" | sed "s|$D/$k.npy|KEY|"; done >"$T/want.txt"
for a in s z z64; do
    R --op $ALL $(for k in $reduced; do echo "$D/$a.npz:$k"; done) | sed "s|$D/$a.npz:[a-z0-9_]*|KEY|" >"$T/got.txt"
    check_files_same "reduce $a.npz members" "$T/want.txt" "$T/got.txt"
done
R --op count "$D/s.npz" 2>/dev/null | sed 's/.*  //' >"$T/order.txt"
check_eq "reduce s.npz: every member in archive order (complex64 refused)" \
    "$(for k in $keys; do [ $k = c64 ] || echo "$D/s.npz:$k"; done)" "$(cat "$T/order.txt")"
for k in $reduced; do
    [ "$k" = empty ] && continue
    ops=sum,mean,min,max,argmin,argmax,sumsq,count
    want=$(R --op $ops --json "$D/$k.npy" | sed "s|$D/$k.npy|K|")
    for a in s z z64; do
        check_eq "reduce --json $a.npz:$k" "$want" "$(R --op $ops --json "$D/$a.npz:$k" | sed "s|$D/$a.npz:$k|K|")"
    done
    check_eq "reduce $k.npy key" "$(R --op max "$D/s.npz:$k.npy")" "$(R --op max "$D/s.npz:$k")"
done
check_eq "reduce --json names the member" \
    "{\"file\": \"$D/z.npz:one\", \"dtype\": \"float64\", \"shape\": [1], \"count\": 1}" \
    "$(R --op count --json "$D/z.npz:one")"
check_eq "reduce of a member on small chunks" "$(R --op sum "$D/f_float64.npy" | sed 's/  .*//')" \
    "$(R --op sum --chunk 128k -p 2 "$D/z.npz:f_float64" | sed 's/  .*//')"

# quadratic and transpose: the member's output is the .npy's, byte for byte.
for a in s z z64; do
    for k in rows planes row1 rows0; do
        "$GB" quadratic --backend cpu -q "$D/$k.npy" -o "$T/want.gz" -f
        "$GB" quadratic --backend cpu -q --chunk 128k "$D/$a.npz:$k" -o "$T/got.gz" -f
        check_eq "quadratic $a.npz:$k status" 0 $?
        check_files_same "quadratic $a.npz:$k" "$T/want.gz" "$T/got.gz"
    done
    for k in m2 m3 c64 one i_int8; do
        "$GB" transpose --backend cpu -q "$D/$k.npy" -o "$T/want.gz" -f 2>"$T/want.err"
        st=$?
        "$GB" transpose --backend cpu -q "$D/$a.npz:$k" -o "$T/got.gz" -f 2>"$T/got.err"
        check_eq "transpose $a.npz:$k status" $st $?
        if [ $st -eq 0 ]; then
            check_files_same "transpose $a.npz:$k" "$T/want.gz" "$T/got.gz"
        else
            check_eq "transpose $a.npz:$k message" "$(sed "s|$D/$k.npy|K|" "$T/want.err")" \
                "$(sed "s|$D/$a.npz:$k|K|" "$T/got.err")"
        fi
    done
done
$NP -c "import numpy as np; np.savez_compressed('$T/one.npz', np.load('$D/rows.npy'))"
"$GB" quadratic --backend cpu -q "$D/rows.npy" -o "$T/want.gz" -f
"$GB" quadratic --backend cpu -q "$T/one.npz" -o "$T/got.gz" -f
check_files_same "quadratic of an archive holding one array" "$T/want.gz" "$T/got.gz"

# --shard: stored members in parts, merged, equal one run; deflated ones refused.
for k in f_float32 i_int64; do
    for i in 0 1 2; do R --op sum,min,argmax --shard $i/3 -o "$T/st$i" -f "$D/s.npz:$k"; done
    check_eq "reduce --shard of s.npz:$k" "$(R --op sum,min,argmax "$D/s.npz:$k")" \
        "$("$GB" merge "$T/st0" "$T/st1" "$T/st2")"
done
for i in 0 1; do
    "$GB" quadratic --backend cpu -q --shard $i/2 "$D/s.npz:rows" -o "$T/part$i" -f
done
"$GB" merge "$T/part0" "$T/part1" -o "$T/merged.gz" -f
"$GB" quadratic --backend cpu -q "$D/rows.npy" -o "$T/want.gz" -f
check_files_same "quadratic --shard of s.npz:rows" "$T/want.gz" "$T/merged.gz"
check_error "reduce --shard of a deflated member" "^gpubatch: error: $D/z.npz:f_float32: a deflated zip member cannot be read from an offset" \
    R --shard 0/2 -o "$T/out/st" "$D/z.npz:f_float32"
check_error "reduce --shard of a whole archive" "^gpubatch: error: $D/s.npz: holds [0-9]* arrays and this command reads one: name it as $D/s.npz:KEY" \
    R --shard 0/2 -o "$T/out/st" "$D/s.npz"
check_error "quadratic --shard of a deflated member" "a deflated zip member cannot be read from an offset" \
    "$GB" quadratic --backend cpu -q --shard 0/2 "$D/z.npz:rows" -o "$T/out/p"

# Selection errors, stdin, and a file whose name holds a colon.
check_error "no such member" "^gpubatch: error: $D/s.npz: no member nope$" R "$D/s.npz:nope"
check_error "quadratic of several arrays" "holds [0-9]* arrays and this command reads one" \
    "$GB" quadratic --backend cpu -q "$D/z.npz" -o "$T/out/q"
check_error "transpose of several arrays" "holds [0-9]* arrays and this command reads one" \
    "$GB" transpose --backend cpu -q "$D/z.npz" -o "$T/out/t"
check_error "an archive on stdin" "^gpubatch: error: -: a zip archive (.npz) is read from a regular file only" \
    sh -c "\"$GB\" reduce --backend cpu -q < \"$D/s.npz\""
$NP -c "import numpy as np; np.savez('$T/empty.npz')"
check_error "an archive with no arrays" "^gpubatch: error: $T/empty.npz: the archive holds no arrays" R "$T/empty.npz"
cp "$D/one.npy" "$T/x.npz:one"
check_eq "a file named like a member is that file" "count 1  $T/x.npz:one" "$(R --op count "$T/x.npz:one")"
cp "$D/s.npz" "$T/archive.bin"
check_eq "an archive told by its first bytes" "count 1  $T/archive.bin:one" \
    "$(R --op count "$T/archive.bin:one")"
check_eq "an .npz after an error goes on to the next file" "count 1  $D/s.npz:one" \
    "$(R --op count "$T/bad/dup.npz" "$D/s.npz:one" 2>/dev/null)"

# Damaged archives: one line naming the file, status 1, nothing written.
while read -r f phrase; do
    p="$T/bad/$f"
    check_error "reduce $f" "^gpubatch: error: $p[:a-z]*: .*$phrase" R "$p"
    check_error "quadratic $f" "^gpubatch: error: $p[:a-z]*: .*$phrase" \
        "$GB" quadratic --backend cpu -q "$p" -o "$T/out/q.npy.gz"
    check_error "transpose $f" "^gpubatch: error: $p[:a-z]*: .*$phrase" \
        "$GB" transpose --backend cpu -q "$p" -o "$T/out/t.npy.gz"
    check_eq "$f leaves no file" "" "$(ls -A "$T/out")"
done <"$T/bad/cases"
check_eq "damaged archive kinds" 15 "$(grep -c . "$T/bad/cases")"
summary
