#!/usr/bin/env python3
"""npyref.py - an independent reference for the command-line tests.

Writes .npy files with chosen contents, and checks gpubatch reduce's JSON
output against values computed here with Python's own arithmetic (exact
integers, math.fsum for correctly rounded float sums). No numpy needed.

  npyref.py write DTYPE SHAPE KIND SEED OUT   KIND: random, adversarial, ints-extreme
  npyref.py check FILE OPS SKIPNAN JSONFILE   exit 0 when every value agrees
"""
import json
import math
import random
import struct
import sys

FMT = {"float32": "f", "float64": "d", "int8": "b", "int16": "h", "int32": "i",
       "int64": "q", "uint8": "B", "uint16": "H", "uint32": "I", "uint64": "Q"}
DESCR = {"float32": "<f4", "float64": "<f8", "int8": "|i1", "int16": "<i2",
         "int32": "<i4", "int64": "<i8", "uint8": "|u1", "uint16": "<u2",
         "uint32": "<u4", "uint64": "<u8"}
BY_DESCR = {v: k for k, v in DESCR.items()}
BY_DESCR.update({"<i1": "int8", "<u1": "uint8"})


def limits(dtype):
    """Range of an integer dtype."""
    bits = struct.calcsize(FMT[dtype]) * 8
    if dtype.startswith("u"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def to_f32(x):
    """Rounds a Python float to float32."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def values(dtype, n, kind, rng):
    """Element values of a test array."""
    if dtype.startswith("float"):
        special = [math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-45,
                   1.4e-45, 3.4e38, -3.4e38, 1e308, -1e308, 2.2250738585072014e-308,
                   1.1754943508222875e-38, 1e-40]
        out = []
        for _ in range(n):
            if kind == "adversarial" and rng.random() < 0.02:
                v = rng.choice(special)
            elif kind == "adversarial":
                v = rng.uniform(-1, 1) * 2.0 ** rng.randint(-140, 120)
            else:
                v = rng.uniform(-1000, 1000)
            if dtype == "float32":
                try:
                    v = to_f32(v)
                except OverflowError:
                    v = math.copysign(math.inf, v)
            out.append(v)
        return out
    lo, hi = limits(dtype)
    if kind == "ints-extreme":
        return [rng.choice([lo, hi, lo + 1, hi - 1, 0, rng.randint(lo, hi)]) for _ in range(n)]
    return [rng.randint(lo, hi) for _ in range(n)]


def write_npy(path, dtype, shape, vals):
    """Writes a version 1.0 .npy file."""
    shape_txt = "(%s)" % "".join("%d, " % d for d in shape).rstrip(" ") if len(shape) != 1 \
        else "(%d,)" % shape[0]
    if len(shape) > 1:
        shape_txt = "(" + ", ".join(str(d) for d in shape) + ")"
    if len(shape) == 0:
        shape_txt = "()"
    head = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (DESCR[dtype], shape_txt)
    total = 10 + len(head) + 1
    head += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%d%s" % (len(vals), FMT[dtype]), *vals))


def read_npy(path):
    """Reads a C-order .npy file written by write_npy or gpubatch gen."""
    import gzip
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    major = data[6]
    if major == 1:
        hl = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        hl = struct.unpack("<I", data[8:12])[0]
        start = 12
    header = eval(data[start:start + hl].decode())  # our own test files only
    dtype = BY_DESCR[header["descr"]]
    n = 1
    for d in header["shape"]:
        n *= d
    body = data[start + hl:]
    return dtype, list(struct.unpack("<%d%s" % (n, FMT[dtype]), body[:n * struct.calcsize(FMT[dtype])]))


def fkey(v):
    """Total order of gpubatch: -0 before +0."""
    return (v, math.copysign(1.0, v))


def reference(dtype, vals, skipnan):
    """Every op's value the way gpubatch defines it."""
    isfloat = dtype.startswith("float")
    idx = list(range(len(vals)))
    if isfloat:
        nan_idx = [i for i in idx if math.isnan(vals[i])]
        live = [i for i in idx if not math.isnan(vals[i])]
    else:
        nan_idx, live = [], idx
    r = {}
    use = live if skipnan else idx
    r["count"] = len(use)
    if isfloat:
        if nan_idx and not skipnan:
            r["sum"] = r["sumsq"] = r["mean"] = math.nan
        else:
            xs = [vals[i] for i in live]
            if any(math.isfinite(x) and abs(x) > 1e300 for x in xs):
                r["sum"] = None  # partial sums may overflow: order-dependent
            elif any(math.isinf(x) for x in xs):
                pos, neg = any(x == math.inf for x in xs), any(x == -math.inf for x in xs)
                r["sum"] = math.nan if pos and neg else (math.inf if pos else -math.inf)
            else:
                try:
                    r["sum"] = math.fsum(xs)
                except OverflowError:
                    r["sum"] = None  # overflow: order-dependent, not compared
            r["sumsq"] = math.fsum(x * x for x in xs) if all(math.isfinite(x * x) for x in xs) else None
            r["mean"] = r["sum"] / len(xs) if xs and r["sum"] is not None else None
    else:
        r["sum"] = sum(vals)
        r["sumsq"] = sum(v * v for v in vals) if struct.calcsize(FMT[dtype]) < 8 else None
        r["mean"] = sum(vals) / len(vals) if vals else None
    if use:
        if isfloat and nan_idx and not skipnan:
            r["min"] = r["max"] = math.nan
            r["argmin"] = r["argmax"] = nan_idx[0]
        else:
            mi = min(live, key=lambda i: (fkey(vals[i]) if isfloat else vals[i], i))
            ma = min(live, key=lambda i: (tuple(-c for c in fkey(vals[i])) if isfloat else -vals[i], i))
            r["min"], r["argmin"] = vals[mi], mi
            r["max"], r["argmax"] = vals[ma], ma
    return r


def parse(v):
    """JSON value back to a Python number: non-finite floats and integers
    beyond 2^53 come as strings."""
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    return v


def integer_op(op, dtype):
    """Whether gpubatch gives op of dtype as an exact integer."""
    if op in ("count", "argmin", "argmax"):
        return True
    if dtype.startswith("float") or op == "mean":
        return False
    return op != "sumsq" or struct.calcsize(FMT[dtype]) < 8


def json_kind_ok(v, is_int):
    """An integer result is a JSON number up to 2^53 in magnitude and a
    string of digits beyond; a float result is never such a string."""
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return is_int and abs(int(v)) > 2 ** 53
    if is_int:
        return isinstance(v, int) and abs(v) <= 2 ** 53
    return True


def same(op, want, got, dtype):
    """Exact for integers, extrema and counts; 1e-12 relative for float sums."""
    if want is None:
        return True
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if op in ("sum", "sumsq", "mean") and (dtype.startswith("float") or op == "mean"):
        if math.isinf(want):
            return got == want
        return abs(got - want) <= 1e-12 * max(1.0, abs(want)) or \
            (op != "mean" and abs(got - want) <= 1e-9 * abs(want))
    if op in ("min", "max") and isinstance(want, float):
        if dtype == "float32":  # printed as the shortest float32 text
            got = to_f32(got)
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return got == want


def main():
    """Command dispatch."""
    if sys.argv[1] == "write":
        dtype, shape, kind, seed, out = sys.argv[2:7]
        dims = [int(d) for d in shape.split("x")] if shape else []
        n = 1
        for d in dims:
            n *= d
        write_npy(out, dtype, dims, values(dtype, n, kind, random.Random(int(seed))))
        return 0
    if sys.argv[1] == "check":
        path, ops, skipnan, jpath = sys.argv[2:6]
        dtype, vals = read_npy(path)
        ref = reference(dtype, vals, skipnan == "1")
        got = json.load(open(jpath))
        bad = 0
        for op in ops.split(","):
            if op not in got:
                print("missing %s" % op)
                bad += 1
            elif not json_kind_ok(got[op], integer_op(op, dtype)):
                print("%s %s: %r is not written as a number up to 2^53 and a string beyond"
                      % (path, op, got[op]))
                bad += 1
            elif not same(op, ref.get(op), parse(got[op]), dtype):
                print("%s %s: want %r got %r" % (path, op, ref.get(op), got[op]))
                bad += 1
        return 1 if bad else 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
