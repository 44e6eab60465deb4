#!/usr/bin/env python3
"""quadref.py - independent checks of `gpubatch quadratic` output.

  quadref.py check COEF.npy ROOTS.npy[.gz] [SAMPLE]   roots within 3 ulps of exact
  quadref.py rows DTYPE OUT a,b,c [a,b,c ...]        writes an (N, 3) .npy
  quadref.py planes ROWS.npy OUT.npy                 (N, 3) rows to (3, N) planes

COEF may be (N, 3) rows or (3, N) planes (C order), ROOTS the (N, 2) complex
roots or the (4, N) planes re x1, re x2, im x1, im x2.

The exact roots come from Python's fractions (an exact discriminant) and
decimal square roots at 80 digits; no numpy is needed.
"""
import decimal
import gzip
import math
import struct
import sys
from fractions import Fraction

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import npyref  # noqa: E402  (our own reader and writer)

decimal.getcontext().prec = 80


def read_any(path):
    """Reads an .npy (optionally gzipped) with real or complex data."""
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    hl = struct.unpack("<H", data[8:10])[0]
    head = eval(data[10:10 + hl].decode())  # our own test files only
    fmt = {"<f4": "f", "<f8": "d", "<c8": "f", "<c16": "d"}[head["descr"]]
    n = 1
    for d in head["shape"]:
        n *= d
    if head["descr"].startswith("<c"):
        n *= 2
    body = data[10 + hl:]
    return head, list(struct.unpack("<%d%s" % (n, fmt), body[:n * struct.calcsize(fmt)])), fmt


def as_rows(head, vals, width):
    """Values of a (width, N) array of planes reordered as N rows of width;
    anything else as it is."""
    shape = head["shape"]
    if len(shape) != 2 or shape[0] != width or (shape[1] == width and width == 3):
        return vals
    n = shape[1]
    return [vals[k * n + i] for i in range(n) for k in range(width)]


def ulp(x, fmt):
    """Spacing of the format at |x| (subnormal spacing at the bottom)."""
    if fmt == "f":
        emin, p = -126, 24
    else:
        emin, p = -1022, 53
    if x == 0:
        return Fraction(2) ** (emin - p + 1)
    e = max(math.frexp(float(x))[1] - 1, emin)
    return Fraction(2) ** (e - p + 1)


def exact_roots(a, b, c):
    """Exact (re1, im1, re2, im2) as Decimals, ordered by gpubatch's rules."""
    a, b, c = Fraction(a), Fraction(b), Fraction(c)
    d = b * b - 4 * a * c
    D = lambda f: decimal.Decimal(f.numerator) / decimal.Decimal(f.denominator)
    if d >= 0:
        # q = -(b + sign(b) sqrt(d)) / 2 adds equal signs: no cancellation
        s = D(d).sqrt()
        q = -(D(b) + (s if b >= 0 else -s)) / 2
        r1 = q / D(a)
        r2 = D(c) / q if q != 0 else r1
        lo, hi = sorted([r1, r2])
        return lo, 0, hi, 0
    s = D(-d).sqrt() / abs(2 * D(a))
    re = -D(b) / (2 * D(a))
    return re, s, re, -s


def main():
    """Command dispatch."""
    if sys.argv[1] == "rows":
        dtype, out = sys.argv[2], sys.argv[3]
        vals = []
        for row in sys.argv[4:]:
            vals += [float(v) for v in row.split(",")]
        npyref.write_npy(out, dtype, [len(vals) // 3, 3], vals)
        return 0
    if sys.argv[1] == "planes":
        dtype, vals = npyref.read_npy(sys.argv[2])
        npyref.write_npy(sys.argv[3], dtype, [3, len(vals) // 3], vals[0::3] + vals[1::3] + vals[2::3])
        return 0
    coef_path, roots_path = sys.argv[2], sys.argv[3]
    sample = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    chead, coef, fmt = read_any(coef_path)
    coef = as_rows(chead, coef, 3)
    head, roots, rfmt = read_any(roots_path)
    n = len(coef) // 3
    assert head["shape"] in ((n, 2), (4, n)), head
    if head["shape"] == (4, n) and not head["descr"].startswith("<c"):
        re1, re2, im1, im2 = (roots[k * n:(k + 1) * n] for k in range(4))
        roots = [v for i in range(n) for v in (re1[i], im1[i], re2[i], im2[i])]
    assert rfmt == fmt
    step = max(1, n // sample)
    worst, bad, checked = Fraction(0), 0, 0
    for i in range(0, n, step):
        a, b, c = coef[3 * i:3 * i + 3]
        got = roots[4 * i:4 * i + 4]
        if a == 0 or not all(map(math.isfinite, (a, b, c))):
            continue
        want = exact_roots(a, b, c)
        big = 3.4e38 if fmt == "f" else 1.7e308
        tiny = 1.2e-38 if fmt == "f" else 2.3e-308
        if any(w != 0 and not (tiny <= abs(float(w)) <= big) for w in want):
            continue  # not representable: outside the promise
        checked += 1
        for g, w in zip(got, want):
            err = abs(Fraction(g) - Fraction(w)) / ulp(w, fmt)
            worst = max(worst, err)
            if err > 3:
                bad += 1
                print("row %d (%r, %r, %r): got %r want %s (%s ulp)" % (i, a, b, c, got, want, err))
                break
    print("checked %d rows, worst %.3f ulp" % (checked, float(worst)))
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
