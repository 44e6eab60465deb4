#!/usr/bin/env python3
"""npyref.py - an independent reference for the command-line tests.

Writes .npy files with chosen contents, and checks gpubatch reduce's JSON
output against values computed here with Python's own arithmetic (exact
integers, math.fsum for correctly rounded float sums). No numpy needed:
float16 goes through struct's 'e' format, bfloat16 through the top half of
a float32's bits, a bool is one byte (any nonzero byte true).

  npyref.py write DTYPE SHAPE KIND SEED OUT [big]   KIND: random, adversarial, ints-extreme
  npyref.py check FILE OPS SKIPNAN JSONFILE   exit 0 when every value agrees
  npyref.py batch    one command a line on stdin, "ID write|check ARGS...";
                     prints "ID STATUS TEXT" for each (one process for many)

"big" writes the data big-endian, with a '>' descriptor.
"""
import json
import math
import random
import struct
import sys

FMT = {"float32": "f", "float64": "d", "int8": "b", "int16": "h", "int32": "i",
       "int64": "q", "uint8": "B", "uint16": "H", "uint32": "I", "uint64": "Q",
       "float16": "e", "bfloat16": "H", "bool": "B"}
DESCR = {"float32": "<f4", "float64": "<f8", "int8": "|i1", "int16": "<i2",
         "int32": "<i4", "int64": "<i8", "uint8": "|u1", "uint16": "<u2",
         "uint32": "<u4", "uint64": "<u8", "float16": "<f2", "bfloat16": "<V2",
         "bool": "|b1"}
BY_DESCR = {v: k for k, v in DESCR.items()}
BY_DESCR.update({"<i1": "int8", "<u1": "uint8", "|V2": "bfloat16", "<b1": "bool"})


def isfloat(dtype):
    """Types with NaN."""
    return dtype.startswith("float") or dtype == "bfloat16"


def bf16_value(bits):
    """The bfloat16 with these 16 bits, as a Python float (exact)."""
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def bf16_bits(v):
    """Bits of a bfloat16 value: the top half of its float32 (v must be one)."""
    return struct.unpack("<I", struct.pack("<f", v))[0] >> 16


def round_to(x, p, emin, emax):
    """x rounded to nearest-even in a binary format of p significand bits and
    exponents emin..emax (subnormals below, infinity above)."""
    if x == 0 or math.isnan(x) or math.isinf(x):
        return x
    lead = max(math.frexp(x)[1] - 1, emin)
    if lead > emax:
        return math.copysign(math.inf, x)
    q = math.ldexp(1.0, lead - p + 1)
    r = round(x / q) * q  # x / q is exact; round() ties to even
    return math.copysign(math.inf, x) if abs(r) >= math.ldexp(1.0, emax + 1) else r


def to_type(dtype, x):
    """Rounds x to a float type the way gpubatch's printed value is read back."""
    if dtype == "float32":
        return round_to(x, 24, -126, 127)
    if dtype == "float16":
        return round_to(x, 11, -14, 15)
    if dtype == "bfloat16":
        return round_to(x, 8, -126, 127)
    return x


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
    """Element values of a test array (a bool's as raw bytes)."""
    if dtype == "bool":
        if kind == "adversarial":
            return [rng.choice([0, 1, 2, 128, 255, 0, 1]) for _ in range(n)]
        return [rng.randint(0, 1) for _ in range(n)]
    if dtype in ("float16", "bfloat16"):
        f16 = dtype == "float16"
        special = [math.nan, math.inf, -math.inf, 0.0, -0.0]
        special += [2.0 ** -24, -2.0 ** -24, 65504.0, -65504.0, 2.0 ** -14, 1e-5, -3e-6] if f16 \
            else [2.0 ** -133, -2.0 ** -133, bf16_value(0x7f7f), -bf16_value(0x7f7f),
                  2.0 ** -126, 1e-39]
        out = []
        for _ in range(n):
            if kind == "adversarial" and rng.random() < 0.05:
                v = rng.choice(special)
            elif kind == "adversarial":
                v = rng.uniform(-1, 1) * 2.0 ** (rng.randint(-26, 16) if f16 else rng.randint(-135, 127))
            else:
                v = rng.uniform(-1000, 1000)
            v = to_type(dtype, v)
            if not f16 and math.isfinite(v):
                v = bf16_value(bf16_bits(v))  # exact already: a no-op that checks it
            out.append(v)
        return out
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


def pack(dtype, vals, order):
    """The data bytes of vals in byte order '<' or '>'."""
    if dtype == "bfloat16":
        vals = [0x7fc0 if math.isnan(v) else bf16_bits(v) for v in vals]
    return struct.pack("%s%d%s" % (order, len(vals), FMT[dtype]), *vals)


def write_npy(path, dtype, shape, vals, big=False):
    """Writes a version 1.0 .npy file (big-endian data with big)."""
    shape_txt = "(%s)" % "".join("%d, " % d for d in shape).rstrip(" ") if len(shape) != 1 \
        else "(%d,)" % shape[0]
    if len(shape) > 1:
        shape_txt = "(" + ", ".join(str(d) for d in shape) + ")"
    if len(shape) == 0:
        shape_txt = "()"
    descr = DESCR[dtype]
    if big and descr[0] == "<":
        descr = ">" + descr[1:]
    head = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    total = 10 + len(head) + 1
    head += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(pack(dtype, vals, ">" if big else "<"))


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
    descr = header["descr"]
    order = ">" if descr[0] == ">" else "<"
    dtype = BY_DESCR[descr] if order == "<" else BY_DESCR.get("<" + descr[1:], BY_DESCR.get("|" + descr[1:]))
    n = 1
    for d in header["shape"]:
        n *= d
    body = data[start + hl:]
    vals = list(struct.unpack("%s%d%s" % (order, n, FMT[dtype]), body[:n * struct.calcsize(FMT[dtype])]))
    if dtype == "bfloat16":
        vals = [bf16_value(b) for b in vals]
    return dtype, vals


def fkey(v):
    """Total order of gpubatch: -0 before +0."""
    return (v, math.copysign(1.0, v))


def reference(dtype, vals, skipnan):
    """Every op's value the way gpubatch defines it."""
    fl = isfloat(dtype)
    if dtype == "bool":
        vals = [int(v != 0) for v in vals]
    idx = list(range(len(vals)))
    if fl:
        nan_idx = [i for i in idx if math.isnan(vals[i])]
        live = [i for i in idx if not math.isnan(vals[i])]
    else:
        nan_idx, live = [], idx
    r = {}
    use = live if skipnan else idx
    r["count"] = len(use)
    if fl:
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
        if fl and nan_idx and not skipnan:
            r["min"] = r["max"] = math.nan
            r["argmin"] = r["argmax"] = nan_idx[0]
        else:
            mi = min(live, key=lambda i: (fkey(vals[i]) if fl else vals[i], i))
            ma = min(live, key=lambda i: (tuple(-c for c in fkey(vals[i])) if fl else -vals[i], i))
            r["min"], r["argmin"] = vals[mi], mi
            r["max"], r["argmax"] = vals[ma], ma
    return r


def parse(v):
    """JSON value back to a Python number: non-finite floats come as
    strings."""
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    return v


def integer_op(op, dtype):
    """Whether gpubatch gives op of dtype as an exact integer."""
    if op in ("count", "argmin", "argmax"):
        return True
    if isfloat(dtype) or op == "mean":
        return False
    return op != "sumsq" or struct.calcsize(FMT[dtype]) < 8


def json_kind_ok(v, is_int):
    """An integer result is a JSON integer of its exact digits at any size
    (json.load keeps it exact); a float result is never a string of digits."""
    if is_int:
        return isinstance(v, int)  # bool extrema are true and false
    return not (isinstance(v, str) and v.lstrip("-").isdigit())


def same(op, want, got, dtype):
    """Exact for integers, extrema and counts; 1e-12 relative for float sums."""
    if want is None:
        return True
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if op in ("sum", "sumsq", "mean") and (isfloat(dtype) or op == "mean"):
        if math.isinf(want):
            return got == want
        return abs(got - want) <= 1e-12 * max(1.0, abs(want)) or \
            (op != "mean" and abs(got - want) <= 1e-9 * abs(want))
    if op in ("min", "max") and isinstance(want, float):
        got = to_type(dtype, got)  # printed as the shortest text of its type
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    if op in ("min", "max") and dtype == "bool":
        return isinstance(got, bool) and got == bool(want)
    return got == want


def main(argv):
    """Command dispatch."""
    if argv[1] == "batch":
        import pybatch
        return pybatch.run(main, argv[0])
    if argv[1] == "write":
        dtype, shape, kind, seed, out = argv[2:7]
        big = argv[7:8] == ["big"]
        dims = [int(d) for d in shape.split("x")] if shape else []
        n = 1
        for d in dims:
            n *= d
        write_npy(out, dtype, dims, values(dtype, n, kind, random.Random(int(seed))), big)
        return 0
    if argv[1] == "check":
        path, ops, skipnan, jpath = argv[2:6]
        dtype, vals = read_npy(path)
        ref = reference(dtype, vals, skipnan == "1")
        got = json.load(open(jpath))
        bad = 0
        for op in ops.split(","):
            if op not in got:
                print("missing %s" % op)
                bad += 1
            elif not json_kind_ok(got[op], integer_op(op, dtype)):
                print("%s %s: %r is not written as a JSON integer"
                      % (path, op, got[op]))
                bad += 1
            elif not same(op, ref.get(op), parse(got[op]), dtype):
                print("%s %s: want %r got %r" % (path, op, ref.get(op), got[op]))
                bad += 1
        return 1 if bad else 0
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
