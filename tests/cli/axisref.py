"""axisref.py - an independent reference for `reduce --axis`: the order of
every sum written out in numpy from docs/numerics.md's words (canonical
groups in memory order, stage 1 in the whole-array tile order, stage 2 in
blocks of 16 and the pairwise tree), extrema by order keys, var against exact
fractions. One process checks many cases, read as lines on stdin:

  write FILE DTYPE SHAPE(a,b,..) ORDER(C|F) KIND SEED
  check FILE AXES(0,-1|all) KEEPDIMS(0|1) OPS SKIPNAN(0|1) DDOF RESULT(.npz|.npy) ULPS

(ULPS: how far var and std may be from the exact value).

and prints "ID 0" or "ID 1 reason" per check (ID: the line number)."""
import math
import sys
from fractions import Fraction

import numpy as np

TILE, SUB, LANES, BLOCK = 16384, 2048, 32, 16


def make(dtype, shape, kind, seed):
    """Random or adversarial data of a dtype (bfloat16 given as its bits)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        if kind == "extreme":
            v = rng.choice([info.min, info.max, 0, 1, -1 if info.min else 2], n)
        else:
            v = rng.integers(max(info.min, -1000), min(info.max, 1000), n)
        return v.astype(dtype).reshape(shape)
    base = "float32" if dtype == "bfloat16" else dtype
    if kind == "offset":  # a large offset, a tiny spread: the hard case of the variance
        v = 1e6 + rng.standard_normal(n) * 1e-3
    elif kind == "const":
        v = np.full(n, 0.1)
    else:
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    if kind == "adversarial":
        specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1e300, -1e300, 1e-310]
        if dtype in ("float16", "bfloat16", "float32"):
            specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3e38, -3e38, 1e-40]
        if dtype == "float16":
            specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 6e-8, 6e4, -6e4]
        idx = rng.integers(0, n, max(1, n // 20))
        v[idx] = rng.choice(specials, len(idx))
    a = v.astype(base).reshape(shape)
    if dtype == "bfloat16":
        return (a.view(np.uint32) >> 16).astype(np.uint16)
    return a


def values(a, dtype):
    """The elements as float64 (bfloat16 from its bits)."""
    if dtype == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def canon(shape, axes):
    """Canonical groups of a C-order shape: (length, reduced) pairs."""
    groups = []
    for n, r in zip(shape, [i in axes for i in range(len(shape))]):
        if n == 1:
            continue
        if groups and groups[-1][1] == r:
            groups[-1][0] *= n
        else:
            groups.append([n, r])
    return groups


def pairwise_levels(v, axis):
    """Pairwise tree over a power-of-two axis: (v0+v1)+(v2+v3)..."""
    v = np.moveaxis(v, axis, -1).copy()
    while v.shape[-1] > 1:
        v = v[..., 0::2] + v[..., 1::2]
    return v[..., 0]


def padded_tree(v):
    """Pairwise tree over the last axis, padded with -0.0 to a power of two."""
    n = 1
    while n < v.shape[-1]:
        n *= 2
    pad = np.full(v.shape[:-1] + (n - v.shape[-1],), -0.0)
    return pairwise_levels(np.concatenate([v, pad], axis=-1), -1)


def stage1(x, V):
    """Runs along the last axis (padded with -0.0) in the whole-array order:
    tiles, sub-tiles of 32 lanes x V positions added row after row, the lane
    trees, the halving fold of lanes, the sub-tiles pairwise, tiles by the
    padded tree."""
    R, T = x.shape
    nt = -(-T // TILE)
    p = np.full((R, nt * TILE), -0.0)
    p[:, :T] = x
    rows = SUB // (LANES * V)
    p = p.reshape(R, nt, TILE // SUB, rows, LANES, V)
    acc = np.full((R, nt, TILE // SUB, LANES, V), -0.0)
    for j in range(rows):
        acc = acc + p[:, :, :, j]
    lane = pairwise_levels(acc, -1)  # (R, nt, 8, 32)
    h = LANES // 2
    while h >= 1:
        lane[..., :h] = lane[..., :h] + lane[..., h:2 * h]
        h //= 2
    sub = pairwise_levels(lane[..., 0], -1)  # (R, nt)
    return padded_tree(sub)


def stage2(p):
    """(nout, J) partials: blocks of 16 sequential from -0.0, then the tree."""
    nout, J = p.shape
    nb = -(-J // BLOCK)
    q = np.full((nout, nb * BLOCK), -0.0)
    q[:, :J] = p
    q = q.reshape(nout, nb, BLOCK)
    s = np.full((nout, nb), -0.0)
    for k in range(BLOCK):
        s = s + q[:, :, k]
    return padded_tree(s) if nb else np.full(nout, -0.0)


def ordered_sum(xm, axes_m, V):
    """The sum of a C-order (memory) array along axes_m by the documented
    order; returns the (nout,) results in memory order."""
    groups = canon(xm.shape, axes_m)
    kept = [a for a in range(xm.ndim) if a not in axes_m]
    red = [a for a in range(xm.ndim) if a in axes_m]
    y = np.transpose(xm, kept + red).reshape(int(np.prod([xm.shape[a] for a in kept])), -1)
    T = groups[-1][0] if groups and groups[-1][1] else 1
    nout, full = y.shape
    if full == 0:
        return np.full(nout, -0.0)
    J = full // T
    runs = stage1(y.reshape(nout * J, T), V) if T > 1 else y.reshape(-1)
    return stage2(runs.reshape(nout, J))


def keys(a, dtype):
    """Order keys (unsigned order = numeric order, -0 before +0)."""
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        bits = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16,
                "bfloat16": np.uint16}[dtype]
        u = (a if dtype == "bfloat16" else a.view(bits)).astype(np.uint64)
        w = {"float32": 32, "float64": 64, "float16": 16, "bfloat16": 16}[dtype]
        top = np.uint64(1) << np.uint64(w - 1)
        mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        neg = (u & top) != 0
        return np.where(neg, (~u) & mask, u | top)
    if dtype == "bool":
        return a.astype(np.uint64)
    if dtype.startswith("int"):
        return a.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    return a.astype(np.uint64)


def isnan(a, dtype):
    if dtype == "bfloat16":
        return ((a & 0x7F80) == 0x7F80) & ((a & 0x7F) != 0)
    if dtype.startswith("float"):
        return np.isnan(a)
    return np.zeros(a.shape, bool)


def exact_var(vals, ddof):
    """var of finite doubles as an exact Fraction (None where it is NaN):
    every value an integer over one power of two, the sums exact integers."""
    n = len(vals)
    if n - ddof <= 0 or n == 0 or any(not math.isfinite(v) for v in vals):
        return None
    ratios = [v.as_integer_ratio() for v in vals]
    den = max(d for _, d in ratios)
    ints = [p * (den // d) for p, d in ratios]
    s, q = sum(ints), sum(i * i for i in ints)
    return Fraction(n * q - s * s, n * (n - ddof) * den * den)


def as_double(q):
    """A Fraction rounded to a double (inf beyond the range)."""
    return float(q) if q < Fraction(2) ** 1024 else math.inf


def ulps(a, b):
    if math.isnan(a) and math.isnan(b):
        return 0
    if math.isnan(a) or math.isnan(b):
        return math.inf
    ia = np.array([a]).view(np.int64)[0]
    ib = np.array([b]).view(np.int64)[0]
    ia = ia if ia >= 0 else -(ia & 0x7FFFFFFFFFFFFFFF)
    ib = ib if ib >= 0 else -(ib & 0x7FFFFFFFFFFFFFFF)
    return abs(int(ia) - int(ib))


def check(path, axes_s, keepdims, ops, skipnan, ddof, result, limit):
    a = np.load(path)
    dtype = a.dtype.name
    if a.dtype.kind == "V":
        dtype, a = "bfloat16", a.view(np.uint16)
    a = a.astype(a.dtype.newbyteorder("="))
    fortran = a.ndim > 1 and np.isfortran(a)
    nd = a.ndim
    axes = list(range(nd)) if axes_s == "all" else sorted(
        int(s) % nd for s in axes_s.split(","))
    kept = [i for i in range(nd) if i not in axes]
    rshape = tuple(1 if (i in axes) else a.shape[i] for i in range(nd)) if keepdims \
        else tuple(a.shape[i] for i in kept)
    got = np.load(result)
    got = {ops[0]: got} if result.endswith(".npy") else dict(got)
    got = {k: (x.view(np.uint16) if x.dtype.kind == "V" else x) for k, x in got.items()}
    nan = isnan(a, dtype)
    v = values(a, dtype)
    live = v.copy()
    if skipnan:
        live[nan] = -0.0
    size = a.dtype.itemsize
    V = 16 // size
    # memory order: a Fortran array is the C array of the reversed shape
    xm, axes_m = (live.T, [nd - 1 - i for i in axes]) if fortran else (live, axes)
    xm = np.ascontiguousarray(xm)
    flat = np.transpose(v, kept + axes).reshape(int(np.prod([a.shape[i] for i in kept])), -1)
    fnan = np.transpose(nan, kept + axes).reshape(flat.shape)
    fk = np.transpose(keys(a, dtype), kept + axes).reshape(flat.shape)
    count = (~fnan).sum(axis=1) if skipnan else np.full(flat.shape[0], flat.shape[1])
    isint = not dtype.startswith(("float", "bfloat"))
    for op in ops:
        g = got[op]
        if g.shape != rshape:
            return "%s: shape %s, want %s" % (op, g.shape, rshape)
        g = g.reshape(-1)
        if op in ("sum", "sumsq") and not (isint and (op == "sum" or size < 8)):
            w = ordered_sum(xm if op == "sum" else xm * xm, axes_m, V)
            if fortran:
                w = w.reshape(tuple(reversed(rshape))).T.reshape(-1) if len(rshape) else w
            w = np.where(count == 0, 0.0, w)
            gv = g.astype(np.float64)
            diff = (w.view(np.uint64) != gv.view(np.uint64)) & ~(np.isnan(w) & np.isnan(gv))
            if diff.any():  # the same bits; a NaN's sign and payload are not promised
                i = int(np.argmax(diff))
                return "%s[%d]: %r, want %r" % (op, i, g[i], w[i])
        elif op in ("sum", "sumsq"):
            ints = np.transpose(a, kept + axes).reshape(flat.shape).astype(object)
            w = [int(sum(int(x) ** (2 if op == "sumsq" else 1) for x in row)) for row in ints]
            if [int(x) for x in g] != w:
                return "%s: %s, want %s" % (op, list(g)[:5], w[:5])
        elif op == "count":
            if list(g) != list(count):
                return "count: %s, want %s" % (list(g)[:5], list(count)[:5])
        elif op in ("min", "max", "argmin", "argmax"):
            k = fk.astype(np.uint64)
            mx = op.endswith("max")
            if skipnan:
                k = np.where(fnan, np.uint64(0) if mx else np.uint64(2**64 - 1), k)
            else:
                k = np.where(fnan, np.uint64(2**64 - 1) if mx else np.uint64(0), k)
            best = k.max(axis=1) if mx else k.min(axis=1)
            tied = k == best[:, None]
            if fortran:  # ties go to the lowest index in memory order
                rank = np.transpose(np.arange(a.size).reshape(a.shape[::-1]).T,
                                    kept + axes).reshape(flat.shape)
                idx = np.argmin(np.where(tied, rank, a.size), axis=1)
            else:
                idx = np.argmax(tied, axis=1)
            if op.startswith("arg"):
                if list(g) != list(idx):
                    return "%s: %s, want %s" % (op, list(g)[:8], list(idx)[:8])
            else:
                src = np.transpose(a, kept + axes).reshape(flat.shape)
                w = src[np.arange(len(idx)), idx]
                gb = g.view(np.uint8).reshape(len(g), -1)
                wb = np.ascontiguousarray(w).view(np.uint8).reshape(len(w), -1)
                wn = fnan[np.arange(len(idx)), idx]
                bad = np.where(wn, ~isnan(g, dtype), (gb != wb).any(axis=1))
                if bad.any():
                    i = int(np.argmax(bad))
                    return "%s[%d]: %r, want %r" % (op, i, g[i], w[i])
        elif op == "mean":
            if isint:
                ints = np.transpose(a, kept + axes).reshape(flat.shape).astype(object)
                w = [float(Fraction(int(sum(int(x) for x in row)), len(row))) for row in ints]
                for i, (x, y) in enumerate(zip(g, w)):
                    if ulps(float(x), y) > 1:
                        return "mean[%d]: %r, want %r" % (i, x, y)
            else:
                s = ordered_sum(xm, axes_m, V)
                if fortran and len(rshape):
                    s = s.reshape(tuple(reversed(rshape))).T.reshape(-1)
                w = np.where(count == 0, 0.0, s) / np.where(count == 0, np.nan, count)
                if not np.array_equal(w, g, equal_nan=True):
                    return "mean: %s, want %s" % (g[:4], w[:4])
        elif op in ("var", "std"):
            # exact fractions are slow: up to 48 outputs, spread over the result
            for i in sorted(set(np.linspace(0, flat.shape[0] - 1, 48).astype(int))) \
                    if flat.shape[0] else []:
                row = [float(x) for x, m in zip(flat[i], fnan[i]) if not (skipnan and m)]
                q = None if not skipnan and any(math.isnan(x) for x in row) \
                    else exact_var(row, ddof)
                w = math.nan if q is None else as_double(q)
                big = math.isinf(w)
                if op == "std" and q is not None:
                    k = 1200  # sqrt(q) to far more bits than a double's
                    w = float(Fraction(math.isqrt(q.numerator * q.denominator * 4 ** k),
                                       q.denominator * 2 ** k))
                if big and math.isnan(float(g[i])):
                    continue  # squares beyond the double range: NaN (numpy: inf)
                if ulps(float(g[i]), w) > limit:
                    return "%s[%d]: %r, want %r (%s ulp)" % (op, i, g[i], w, ulps(float(g[i]), w))
    return None


def main():
    for no, line in enumerate(sys.stdin, 1):
        f = line.split()
        if not f:
            continue
        if f[0] == "write":
            _, path, dtype, shape, order, kind, seed = f
            shape = tuple(int(s) for s in shape.split(",") if s)
            a = make(dtype, shape, kind, int(seed))
            if order == "F":
                a = np.asfortranarray(a)
            if order == "B":
                a = a.astype(a.dtype.newbyteorder(">"))
            np.save(path, a.view("V2") if dtype == "bfloat16" else a)
            continue
        _, path, axes, keepdims, ops, skipnan, ddof, result, limit = f
        try:
            why = check(path, axes, keepdims == "1", ops.split(","), skipnan == "1", int(ddof),
                        result, int(limit))
        except Exception as e:  # a reference failure is a failed check, with its reason
            why = "%s: %s" % (type(e).__name__, e)
        print(no, 0 if why is None else 1, why or "")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
