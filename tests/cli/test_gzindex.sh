#!/bin/sh
# test_gzindex.sh - `gpubatch index` and `--index` on the CPU backend: the
# index of a single-member gzip file (gzip -6 and -1, float32 and int32)
# gives reduce's text, quadratic's and transpose's bytes as the file without
# it, found beside the file (FILE.gzidx) or named; `--shard I/N` of indexed
# gzip merges to one run's text and bytes for several N, with and without
# --axis; rapidgzip (when present: $RAPIDGZIP, /work/shared/peers/rapidgzip or
# on PATH) decodes the file through gpubatch's index, and gpubatch reads
# through rapidgzip's gztool export; stale, foreign and damaged indexes are
# refused in one line naming both files (or read right: never other text);
# what cannot be indexed is refused; --shard of gzip without an index names
# `gpubatch index`.
. "$(dirname "$0")/lib.sh"
need_numpy
R() { "$GB" reduce --backend cpu -q "$@"; }
ALL=sum,mean,min,max,argmin,argmax,sumsq,count

"$NP" - "$T" <<'END'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(55)
f = rng.standard_normal(3_000_000).astype(np.float32)
f[rng.integers(0, f.size, 50)] = np.nan
np.save(f"{d}/f32.npy", f)
np.save(f"{d}/i32.npy", rng.integers(-500, 500, (1500, 2000)).astype(np.int32))
np.save(f"{d}/q.npy", rng.standard_normal((400_000, 3)))
np.save(f"{d}/tp.npy", rng.integers(0, 90, (40, 300, 200)).astype(np.int16))
END
gzip -6 -c "$T/f32.npy" >"$T/f32.npy.gz"
gzip -1 -c "$T/i32.npy" >"$T/i32.npy.gz"
gzip -6 -c "$T/q.npy" >"$T/q.npy.gz"
gzip -6 -c "$T/tp.npy" >"$T/tp.npy.gz"

# the index beside each file; the float one under 1% of it
for f in f32 i32 q tp; do
    check_name="index $f"
    "$GB" index "$T/$f.npy.gz" && [ -s "$T/$f.npy.gz.gzidx" ] && ok || fail "index $f"
done
isz=$(wc -c <"$T/f32.npy.gz.gzidx")
gsz=$(wc -c <"$T/f32.npy.gz")
check_eq "float32 index within 1% of the file" 1 $((isz * 100 <= gsz))
"$GB" index -v -f -o "$T/i32.idx" "$T/i32.npy.gz" 2>"$T/v.err"
check_eq "index -v counts the points" 1 "$(grep -c 'access points' "$T/v.err")"
npts=$(sed -n 's/.*: \([0-9]*\) access points.*/\1/p' "$T/v.err")
check_eq "int32 index has several points" 1 $((npts >= 3))
# the same bytes on every run and thread count: the points are the file's
for f in f32 i32; do
    "$GB" index -f -o "$T/a.idx" "$T/$f.npy.gz"
    "$GB" index -f -o "$T/b.idx" "$T/$f.npy.gz"
    check_files_same "index $f, built again" "$T/a.idx" "$T/b.idx"
    "$GB" index -p 1 -f -o "$T/b.idx" "$T/$f.npy.gz"
    check_files_same "index $f, on one thread" "$T/a.idx" "$T/b.idx"
done

# reduce through the index found beside, named, and without
for f in f32 i32; do
    R --op $ALL --no-index "$T/$f.npy.gz" >"$T/want.txt"
    R --op $ALL "$T/$f.npy.gz" >"$T/got.txt"
    check_files_same "reduce $f, index beside" "$T/want.txt" "$T/got.txt"
    R --op $ALL --index "$T/$f.npy.gz.gzidx" "$T/$f.npy.gz" >"$T/got.txt"
    check_files_same "reduce $f, --index" "$T/want.txt" "$T/got.txt"
done
"$GB" reduce --backend cpu -v --op sum "$T/i32.npy.gz" 2>"$T/v.err" >/dev/null
check_eq "-v names the index" 1 "$(grep -c 'access points of the seek index' "$T/v.err")"
"$GB" reduce --backend cpu -v --op sum --no-index "$T/i32.npy.gz" 2>"$T/v.err" >/dev/null
check_eq "--no-index leaves it" 0 "$(grep -c 'seek index' "$T/v.err")"

# quadratic and transpose through the index: the same bytes
"$GB" quadratic --backend cpu -q --no-index -o "$T/qa.npy.gz" "$T/q.npy.gz"
"$GB" quadratic --backend cpu -q -o "$T/qb.npy.gz" "$T/q.npy.gz"
check_files_same "quadratic through the index" "$T/qa.npy.gz" "$T/qb.npy.gz"
"$GB" transpose --backend cpu -q --no-index -o "$T/ta.npy" "$T/tp.npy.gz"
"$GB" transpose --backend cpu -q -o "$T/tb.npy" "$T/tp.npy.gz"
check_files_same "transpose through the index" "$T/ta.npy" "$T/tb.npy"

# (3, N) planes: each plane's reader starts at the point before it
"$NP" -c "import numpy as np; np.save('$T/pl.npy', np.random.default_rng(5).standard_normal((3, 700000)))"
gzip -6 -c "$T/pl.npy" >"$T/pl.npy.gz"
"$GB" index -o "$T/pl.idx" "$T/pl.npy.gz"
"$GB" quadratic --backend cpu -q --no-index -o "$T/pa.npy" "$T/pl.npy.gz"
"$GB" quadratic --backend cpu -q --index "$T/pl.idx" -o "$T/pb.npy" "$T/pl.npy.gz"
check_files_same "quadratic of planes through the index" "$T/pa.npy" "$T/pb.npy"

# shards of indexed gzip merge to one run: reduce, reduce --axis, quadratic, transpose
for f in f32 i32; do
    R --op $ALL --json --no-index "$T/$f.npy.gz" >"$T/want.txt"
    for n in 2 3 5; do
        rm -f "$T"/st-*
        i=0
        while [ $i -lt $n ]; do
            R --op $ALL --shard $i/$n -o "$T/st-$i" "$T/$f.npy.gz" || fail "$f shard $i/$n"
            i=$((i + 1))
        done
        "$GB" merge --json $(ls "$T"/st-* | shuf) >"$T/got.txt"
        check_files_same "reduce $f $n shards" "$T/want.txt" "$T/got.txt"
    done
done
for ax in 0 1; do
    R --axis $ax --op sum,max,mean --no-index -f -o "$T/ax.npz" "$T/i32.npy.gz"
    for n in 2 4; do
        rm -f "$T"/st-*
        i=0
        while [ $i -lt $n ]; do
            R --axis $ax --op sum,max,mean --shard $i/$n -o "$T/st-$i" "$T/i32.npy.gz" ||
                fail "axis $ax shard $i/$n"
            i=$((i + 1))
        done
        "$GB" merge -o "$T/axm.npz" -f $(ls "$T"/st-* | shuf)
        check_files_same "reduce --axis $ax $n shards" "$T/ax.npz" "$T/axm.npz"
    done
done
# parts CMD SRC N OUT: N shards of CMD over SRC merged into OUT
parts() {
    rm -f "$T"/part-*
    i=0
    while [ $i -lt "$3" ]; do
        "$GB" "$1" --backend cpu -q --shard $i/"$3" -o "$T/part-$i${4##*.npy}" "$2"
        i=$((i + 1))
    done
    "$GB" merge -q -f -o "$4" $(ls "$T"/part-*)
}
for n in 2 3; do
    parts quadratic "$T/q.npy.gz" $n "$T/qm.npy.gz"
    check_files_same "quadratic $n shards" "$T/qa.npy.gz" "$T/qm.npy.gz"
    parts transpose "$T/tp.npy.gz" $n "$T/tm.npy"
    check_files_same "transpose $n shards" "$T/ta.npy" "$T/tm.npy"
done

# --shard of gzip without an index names the command that makes one
cp "$T/i32.npy.gz" "$T/bare.npy.gz"
check_error "--shard without an index" "gpubatch index" R --op sum --shard 0/2 -o "$T/s" "$T/bare.npy.gz"

# rapidgzip: its decode through our index, our reads through its gztool export
RG=${RAPIDGZIP:-}
[ -n "$RG" ] || RG=$(command -v rapidgzip 2>/dev/null || true)
[ -n "$RG" ] || { [ -x /work/shared/peers/rapidgzip ] && RG=/work/shared/peers/rapidgzip; }
if [ -n "$RG" ]; then
    for f in f32 i32; do
        "$RG" --import-index "$T/$f.npy.gz.gzidx" -d -c "$T/$f.npy.gz" >"$T/rg.out"
        check_files_same "rapidgzip through gpubatch's index ($f)" "$T/$f.npy" "$T/rg.out"
        for sparse in --sparse-windows --no-sparse-windows; do
            "$RG" --export-index "$T/rg.gzt" --index-format gztool $sparse -f -o /dev/null "$T/$f.npy.gz" \
                >/dev/null 2>&1 ||
                "$RG" --export-index "$T/rg.gzt" --index-format gztool $sparse -f "$T/$f.npy.gz" >/dev/null
            R --op $ALL --no-index "$T/$f.npy.gz" >"$T/want.txt"
            R --op $ALL --index "$T/rg.gzt" "$T/$f.npy.gz" >"$T/got.txt"
            check_files_same "reduce through rapidgzip's index ($f $sparse)" "$T/want.txt" "$T/got.txt"
        done
    done
    check_error "a part through an index without CRC-32s" "no CRC-32 of its chunks" \
        R --op sum --index "$T/rg.gzt" --shard 1/2 -o "$T/s" "$T/i32.npy.gz"
    "$RG" --export-index "$T/rg.igz" --index-format indexed_gzip -f "$T/i32.npy.gz" >/dev/null 2>&1
    check_error "indexed_gzip's format" "GZIDX) is not read" R --op sum --index "$T/rg.igz" "$T/i32.npy.gz"
else
    missing "rapidgzip not found (RAPIDGZIP=PATH): interoperability not checked"
fi

# stale and foreign indexes: one line naming both files
check_error "another file's index" "i32.npy.gz: the seek index .*f32.npy.gz.gzidx is not this file's" \
    R --op sum --index "$T/f32.npy.gz.gzidx" "$T/i32.npy.gz"
gzip -5 -c "$T/i32.npy" >"$T/re.npy.gz"
cp "$T/i32.npy.gz.gzidx" "$T/re.npy.gz.gzidx"
check_error "a file compressed again" "re.npy.gz: the seek index .*re.npy.gz.gzidx is not this file's" \
    R --op sum "$T/re.npy.gz"
head -c 1000000 "$T/i32.npy.gz" >"$T/cut.npy.gz"
cp "$T/i32.npy.gz.gzidx" "$T/cut.npy.gz.gzidx"
check_error "a cut file" "length differs" R --op sum "$T/cut.npy.gz"
check_error "not an index" "not a seek index" R --op sum --index "$T/f32.npy" "$T/i32.npy.gz"
check_error "a missing index" "nothing.idx" R --op sum --index "$T/nothing.idx" "$T/i32.npy.gz"
check_error "an index of plain data" "i32.npy: the seek index .* is for a gzip file, and this is not gzip" \
    R --op sum --index "$T/i32.npy.gz.gzidx" "$T/i32.npy"
"$NP" -c "import numpy as np; np.savez('$T/a.npz', x=np.arange(10))"
check_error "an index of an archive member" "for a gzip file, and this is a zip archive's member" \
    R --op sum --index "$T/i32.npy.gz.gzidx" "$T/a.npz:x"
"$GB" reduce --op sum --index "$T/i32.idx" "$T/i32.npy.gz" "$T/f32.npy.gz" >/dev/null 2>&1
check_eq "usage: --index with two files" 2 $?

# damaged indexes: refused in one line, or the same text
R --op $ALL --no-index "$T/i32.npy.gz" >"$T/want.txt"
"$NP" - "$T/i32.npy.gz.gzidx" "$T/dmg" <<'END'
import sys, random
src, out = sys.argv[1], sys.argv[2]
d = open(src, 'rb').read()
rng = random.Random(55)
for i in range(24):
    b = bytearray(d)
    if i % 4 == 3:
        b = b[:rng.randrange(len(b))]
    else:
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    open(f"{out}-{i}", 'wb').write(b)
END
bad=0
refused=0
for g in "$T"/dmg-*; do
    if R --op $ALL --index "$g" "$T/i32.npy.gz" >"$T/got.txt" 2>"$T/err.txt"; then
        cmp -s "$T/want.txt" "$T/got.txt" || bad=$((bad + 1))
    else
        refused=$((refused + 1))
        { [ "$(grep -c . "$T/err.txt")" -eq 1 ] && [ ! -s "$T/got.txt" ]; } || bad=$((bad + 1))
    fi
done
check_eq "damaged indexes: no other text, no stray output" 0 $bad
check_eq "damaged indexes refused" 1 $((refused >= 12))

# what gpubatch index refuses
"$PY" "$top/tests/cli/bgzf.py" 1 "$T/i32.npy" "$T/b.npy.gz"
check_error "index of blocked gzip" "needs no seek index" "$GB" index -o "$T/x.idx" "$T/b.npy.gz"
check_error "index of plain data" "not gzip" "$GB" index -o "$T/x.idx" "$T/i32.npy"
cat "$T/f32.npy.gz" "$T/f32.npy.gz" >"$T/two.gz"
check_error "index of two members" "more follows the first gzip member" "$GB" index -o "$T/x.idx" "$T/two.gz"
check_error "index of a cut file" "unexpected end of compressed data" "$GB" index -o "$T/x.idx" "$T/cut.npy.gz"
check_error "index over an existing file" "exists" "$GB" index -o "$T/i32.idx" "$T/i32.npy.gz"
check_error "index over its input" "input" "$GB" index -f -o "$T/i32.npy.gz" "$T/i32.npy.gz"
check_eq "no index left behind" 0 "$(ls "$T"/x.idx* 2>/dev/null | wc -l)"
"$GB" index >/dev/null 2>&1
check_eq "usage: index without FILE" 2 $?
summary
