#!/bin/sh
# test_integrity.sh - --shard and merge never report success with wrong data:
# a BGZF block whose BSIZE lies fails the shard (reduce, quadratic) or the
# plane read that trusts it; BGZF with an extra subfield beside BC shards
# like any other; merge refuses shards of different inputs (naming both
# files), state files that were edited (even with their check recomputed:
# a sum tree left empty, subtree bits against their hex float, a count),
# and parts with a flipped byte, before writing anything.
. "$(dirname "$0")/lib.sh"
SF="$top/tests/cli/shardfile.py"
need_python
need_numpy
R() { "$GB" reduce --backend cpu -q "$@"; }

# make_bgzf OUT LIE EXTRA: random float32 (raw, 300000 values) as BGZF of
# 30000-byte blocks; LIE=1 makes block 3's BSIZE swallow block 4; EXTRA=1
# puts a subfield beside BC in every block's extra field.
make_bgzf() {
    "$NP" - "$top/tests/cli" "$@" <<'END'
import struct, sys, numpy as np
sys.path.insert(0, sys.argv[1])
import bgzf
out, lie, extra = sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
data = np.random.default_rng(1).standard_normal(300000).astype(np.float32).tobytes()
blocks = []
for pos in range(0, len(data), 30000):
    b = bgzf.block(data[pos:pos + 30000])
    if extra:  # XLEN 12: a subfield "XY" of 2 bytes before BC
        b = b[:10] + struct.pack("<H", 12) + b"XY\x02\x00ab" + b[12:16] + struct.pack("<H", len(b) + 5) + b[18:]
    blocks.append(b)
if lie:
    b = bytearray(blocks[3])
    struct.pack_into("<H", b, 16, len(b) + len(blocks[4]) - 1)
    blocks[3] = bytes(b)
open(out, "wb").write(b"".join(blocks) + bgzf.EOF_BLOCK)
END
}
make_bgzf "$T/good.f4.gz" 0 0
make_bgzf "$T/lie.f4.gz" 1 0
make_bgzf "$T/extra.f4.gz" 0 1

# shards N FILE OPTS: writes the states st-0..st-N-1 of FILE (errors to
# $T/sh.err) and prints how many shards failed.
shards() {
    n=$1 f=$2 bad=0
    shift 2
    rm -f "$T"/st-*
    for i in $(seq 0 $((n - 1))); do
        R "$@" --shard "$i/$n" -o "$T/st-$i" "$f" 2>>"$T/sh.err" || bad=$((bad + 1))
    done
    echo $bad
}
R --dtype float32 --op sum,count "$T/good.f4.gz" | sed "s|$T/good.f4.gz|F|" >"$T/one.txt"
for n in 2 3 7; do
    check_eq "good: $n shards succeed" 0 "$(shards $n "$T/good.f4.gz" --dtype float32 --op sum,count)"
    "$GB" merge "$T"/st-* | sed "s|$T/good.f4.gz|F|" >"$T/m.txt"
    check_files_same "good: $n shards merge to one run's result" "$T/one.txt" "$T/m.txt"
    : >"$T/sh.err"
    check_eq "lying BSIZE: one of $n shards fails" 1 \
        "$(shards $n "$T/lie.f4.gz" --dtype float32 --op sum,count)"
    grep -q "lie.f4.gz: gzip member at byte [0-9]*: its deflate data does not end where its BGZF block does" \
        "$T/sh.err" && ok || fail "lying BSIZE, $n shards: [$(cat "$T/sh.err")]"
    "$GB" merge "$T"/st-* >/dev/null 2>&1 && fail "lying BSIZE, $n shards: merge succeeded" || ok
    check_eq "extra subfield: $n shards succeed" 0 \
        "$(shards $n "$T/extra.f4.gz" --dtype float32 --op sum,count)"
    "$GB" merge "$T"/st-* | sed "s|$T/extra.f4.gz|F|" >"$T/m.txt"
    check_files_same "extra subfield: $n shards merge to one run's result" "$T/one.txt" "$T/m.txt"
done
R --dtype float32 --op sum,count "$T/extra.f4.gz" | sed "s|$T/extra.f4.gz|F|" >"$T/m.txt"
check_files_same "extra subfield: a plain read" "$T/one.txt" "$T/m.txt"

# quadratic --shard of raw rows (float32, 100000 rows of 3) with the lie.
for i in 0 1 2; do
    "$GB" quadratic --backend cpu -q --dtype float32 --raw --shard $i/3 -o "$T/qp-$i" "$T/lie.f4.gz" \
        2>>"$T/q.err"
done
grep -q "its deflate data does not end where its BGZF block does" "$T/q.err" && ok ||
    fail "quadratic --shard over a lying BSIZE: [$(cat "$T/q.err")]"
"$GB" merge -o "$T/qm" "$T"/qp-* >/dev/null 2>&1 && fail "quadratic parts over a lie merged" || ok

# (3, N) planes read through a skip over the lying block.
"$NP" - "$top/tests/cli" "$T/planes.npy.gz" <<'END'
import io, struct, sys, numpy as np
sys.path.insert(0, sys.argv[1])
import bgzf
b = io.BytesIO()
np.save(b, np.random.default_rng(2).standard_normal((3, 200000)))
data = b.getvalue()
blocks = [bgzf.block(data[p:p + 30000]) for p in range(0, len(data), 30000)]
x = bytearray(blocks[5])
struct.pack_into("<H", x, 16, len(x) + len(blocks[6]) - 1)
blocks[5] = bytes(x)
open(sys.argv[2], "wb").write(b"".join(blocks) + bgzf.EOF_BLOCK)
END
check_error "planes over a lying BSIZE" "its deflate data does not end where its BGZF block does" \
    "$GB" quadratic --backend cpu -q "$T/planes.npy.gz" -o "$T/pl.npy"

# Shards of two inputs of the same name, size and shape.
"$GB" gen --shape 100000 --seed 1 --no-compress -o "$T/in.npy"
R --shard 0/2 -o "$T/x-0" "$T/in.npy"
"$GB" gen --shape 100000 --seed 2 --no-compress -f -o "$T/in.npy"
R --shard 1/2 -o "$T/x-1" "$T/in.npy"
check_error "states of different inputs" "x-1: not a shard of the same input and run as .*x-0 (input data" \
    "$GB" merge "$T/x-0" "$T/x-1"
"$GB" gen --quadratic 5000 --seed 1 --no-compress -o "$T/q.npy"
"$GB" quadratic --backend cpu -q --shard 0/2 -o "$T/y-0" "$T/q.npy"
"$GB" gen --quadratic 5000 --seed 2 --no-compress -f -o "$T/q.npy"
"$GB" quadratic --backend cpu -q --shard 1/2 -o "$T/y-1" "$T/q.npy"
check_error "parts of different inputs" "y-1: not a shard of the same input and run as .*y-0" \
    "$GB" merge -o "$T/ym.npy.gz" "$T/y-0" "$T/y-1"
[ -e "$T/ym.npy.gz" ] && fail "refused merge left an output" || ok

# Edited states: refused by their check, and, resealed, by what they say.
"$GB" gen --shape 100000 --seed 3 -f -o "$T/in.npy.gz"
for i in 0 1; do R --op sum,count,min --shard $i/2 -o "$T/s-$i" "$T/in.npy.gz"; done
sed 's/^count .*/count 1/' "$T/s-1" >"$T/e-1"
check_error "edited state" "the check does not match the text" "$GB" merge "$T/s-0" "$T/e-1"
$PY "$SF" reseal "$T/e-1"
check_error "resealed edited count" "count and shard-elements disagree" "$GB" merge "$T/s-0" "$T/e-1"
awk '/^sum-tree /{print "sum-tree 0"; skip=1; next} /^sumsq-tree/{skip=0} !skip' "$T/s-1" >"$T/e-1"
$PY "$SF" reseal "$T/e-1"
check_error "sum tree edited to nothing" "the sum tree does not cover" "$GB" merge "$T/s-0" "$T/e-1"
awk '/^sum-tree /{t=1; print; next} t==1{ $3 = "0000000000000000"; t=2 } {print}' "$T/s-1" >"$T/e-1"
$PY "$SF" reseal "$T/e-1"
check_error "subtree bits against their hex float" "bad sum-tree subtree" "$GB" merge "$T/s-0" "$T/e-1"

# Parts with one flipped byte in their deflate data: refused before any
# output; the same part untouched merges to what gzip -t accepts.
"$GB" gen --quadratic 20000 --seed 4 -o "$T/q4.npy.gz"
for i in 0 1; do "$GB" quadratic --backend cpu -q --shard $i/2 -o "$T/p-$i.gz" "$T/q4.npy.gz"; done
"$GB" merge -o "$T/pm.npy.gz" "$T/p-0.gz" "$T/p-1.gz" && gzip -t "$T/pm.npy.gz" && ok || fail "parts merge"
"$NP" - "$T/p-1.gz" "$T/f-1" <<'END'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[b.index(b"\ndata\n") + 6 + 5000] ^= 0x10
open(sys.argv[2], "wb").write(b)
END
check_error "part with a flipped byte" "f-1: " "$GB" merge -o "$T/fm.npy.gz" "$T/p-0.gz" "$T/f-1"
$PY "$SF" reseal "$T/f-1"
"$GB" merge -o "$T/fm.npy.gz" "$T/p-0.gz" "$T/f-1" >/dev/null 2>"$T/f.err"
check_eq "resealed flipped part: status" 1 $?
grep -q "f-1: gzip member at byte" "$T/f.err" && ok || fail "resealed flipped part: [$(cat "$T/f.err")]"
[ -e "$T/fm.npy.gz" ] && fail "refused part merge left an output" || ok
summary
