#!/bin/sh
# test_order.sh - the summation order that docs/numerics.md and the manual
# page describe, written out in Python from their words, gives the bits of
# `reduce`'s sum and sumsq for float32, float64 and int64 data, sizes around
# the vector, sub-tile and tile boundaries, and NaN skipped with --skipnan.
. "$(dirname "$0")/lib.sh"
need_python
R() { "$GB" reduce --backend cpu -q "$@"; }

cat >"$T/order.py" <<'END'
import random, struct, sys

TILE, SUB, LANES = 16384, 2048, 32

def pairwise(v):
    """(v0+v1)+(v2+v3)... over a power-of-two count of values."""
    h = 1
    v = list(v)
    while h < len(v):
        for k in range(0, len(v), 2 * h):
            v[k] = v[k] + v[k + h]
        h *= 2
    return v[0]

def tile(xs, size):
    """One tile: per lane one accumulator per position in a 16-byte vector,
    elements added vector after vector; each lane's accumulators pairwise;
    the 32 lanes halving (l with l+16, then l+8, ...); the 8 sub-tiles
    pairwise. Absent and skipped elements add nothing."""
    V = 16 // size
    subs = []
    for w in range(TILE // SUB):
        lanes = []
        for t in range(LANES):
            acc = [-0.0] * V
            for j in range(SUB // (V * LANES)):
                for k in range(V):
                    o = w * SUB + (t + LANES * j) * V + k
                    if o < len(xs) and xs[o] is not None:
                        acc[k] = acc[k] + xs[o]
            lanes.append(pairwise(acc))
        h = LANES // 2
        while h >= 1:
            for l in range(h):
                lanes[l] = lanes[l] + lanes[l + h]
            h //= 2
        subs.append(lanes[0])
    return pairwise(subs)

def tree(values):
    """Pairwise over tile indices, padded with -0.0 to a power of two."""
    n = 1
    while n < len(values):
        n *= 2
    return pairwise(values + [-0.0] * (n - len(values)))

def reduce(xs, size):
    tiles = [tile(xs[i:i + TILE], size) for i in range(0, len(xs), TILE)]
    count = sum(x is not None for x in xs)
    return tree(tiles) if count else 0.0

fmt, size, n, seed, skipnan, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6]
rng = random.Random(seed)
if fmt == "q":
    raw = [rng.randint(-2**62, 2**62) * rng.choice([1, 1, 0]) for _ in range(n)]
else:
    raw = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-8, 8) for _ in range(n)]
    for _ in range(n // 50):
        raw[rng.randrange(n)] = float("nan") if skipnan else rng.choice([1e20, -1e20, 3.0])
data = struct.pack("<%d%s" % (n, fmt), *raw)
open(path, "wb").write(data)
xs = list(struct.unpack("<%d%s" % (n, fmt), data))
if fmt == "q":  # the sum is exact; the sum of squares of 64-bit integers is a double
    print(repr(reduce([float(x) * float(x) for x in xs], size)))
else:
    live = [None if x != x else x for x in xs]
    print(repr(reduce(live, size)), repr(reduce([None if x is None else x * x for x in live], size)))
END

for case in "f 4 1" "f 4 7" "f 4 2049" "f 4 16391" "f 4 49200" "d 8 3" "d 8 16384" "d 8 33000" \
    "q 8 16500"; do
    set -- $case
    for skip in 0 1; do
        [ "$1" = q ] && [ $skip = 1 ] && continue
        dt=float32
        [ "$1" = d ] && dt=float64
        [ "$1" = q ] && dt=int64
        flag=
        [ $skip = 1 ] && flag=--skipnan
        want=$("$PY" "$T/order.py" "$1" "$2" "$3" 5 $skip "$T/x.raw")
        if [ "$1" = q ]; then
            got=$(R --dtype $dt --op sumsq "$T/x.raw" | sed 's/^sumsq \([^ ]*\) .*/\1/')
        else
            got=$(R --dtype $dt --op sum,sumsq $flag "$T/x.raw" | sed 's/^[a-z]* \([^ ]*\) .*/\1/' |
                tr '\n' ' ')
        fi
        # compare as doubles: Python's repr and gpubatch's text of the same bits
        same=$("$PY" -c 'import sys; a = [float(x) for x in sys.argv[1].split()]; b = [float(x) for x in sys.argv[2].split()]; print(a == b and all(str(x) == str(y) for x, y in zip(a, b)))' "$want" "$got")
        check_eq "$dt n=$3 skipnan=$skip: $want" True "$same"
    done
done

summary
