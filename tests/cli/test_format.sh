#!/bin/sh
# test_format.sh - how results are printed: the shortest text that reads
# back (Python's repr() for doubles, numpy's shortest digits for float32,
# with Python's choice of plain or scientific notation), through the
# formatter on random values and through `reduce` on files; integers beyond
# 2^53 as JSON numbers of their exact digits.
. "$(dirname "$0")/lib.sh"
need_python
NP=$(numpy_python) # float32 references: numpy's shortest digits
FMT="$top/${BUILD:-build}/tests/test_format"
R() { "$GB" reduce --backend cpu -q "$@"; }

# The checker: "d BITS TEXT" against repr(), "f BITS TEXT" against numpy's
# shortest float32 digits (skipped, with a note, without numpy).
cat >"$T/check.py" <<'END'
import struct, sys
try:
    import numpy as np
except ImportError:
    np = None

def layout(neg, digits, exp):
    """Python's repr() notation for the digits d.ddd x 10^exp, no '.0'."""
    sign = "-" if neg else ""
    if exp < -4 or exp >= 16:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return "%s%se%s%02d" % (sign, m, "-" if exp < 0 else "+", abs(exp))
    if exp < 0:
        return sign + "0." + "0" * (-exp - 1) + digits
    if len(digits) <= exp + 1:
        return sign + digits + "0" * (exp + 1 - len(digits))
    return sign + digits[:exp + 1] + "." + digits[exp + 1:]

def want_double(x):
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r

def want_float(x):
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    t = np.format_float_scientific(np.float32(x), unique=True)
    neg = t.startswith("-")
    m, e = t.lstrip("-").split("e")
    digits = m.replace(".", "").rstrip("0") or "0"
    if digits == "0":
        return "-0" if neg else "0"
    return layout(neg, digits, int(e))

bad = floats = 0
for line in open(sys.argv[1]):
    kind, bits, text = line.split()
    if kind == "d":
        want = want_double(struct.unpack(">d", bytes.fromhex(bits))[0])
    elif np is None:
        continue
    else:
        floats += 1
        want = want_float(struct.unpack(">f", bytes.fromhex(bits))[0])
    if text != want:
        bad += 1
        if bad <= 5:
            print("%s %s: printed %s, want %s" % (kind, bits, text, want))
print("mismatches %d" % bad)
if np is None:
    print("note: python3-numpy missing: float32 texts not compared")
END

if [ -x "$FMT" ]; then
    for seed in 1 2 $(date +%s); do
        "$FMT" dump "$(pick 100000 10000)" "$seed" >"$T/dump"
        ${NP:-$PY} "$T/check.py" "$T/dump" >"$T/chk" 2>&1
        note=$(sed -n 's/^note: //p' "$T/chk")
        [ -z "$note" ] || missing "$note"
        check_eq "random values, seed $seed" "mismatches 0" "$(grep -v '^note:' "$T/chk" | tail -n 1)"
        grep -q '^mismatches 0' "$T/chk" || head -n 5 "$T/chk" >&2
    done
else
    fail "$FMT is not built (make tests)"
fi

# Through reduce: sums and float32 extrema of raw files, one value each.
"$PY" - "$T" <<'END'
import random, struct, sys
rng = random.Random(7)
vals = [30.0, 1770.0, 0.1, 1e16, 1e15, 0.0001, 1e-05, 123456.789, -2.5, 5e-324, 1e300, -0.0]
vals += [rng.choice([rng.random(), rng.uniform(-1e6, 1e6), 2.0 ** rng.randint(-80, 80)])
         for _ in range(300)]
for i, v in enumerate(vals):
    with open("%s/d%03d.raw" % (sys.argv[1], i), "wb") as f:
        f.write(struct.pack("<d", v))
    with open("%s/f%03d.raw" % (sys.argv[1], i), "wb") as f:
        f.write(struct.pack("<f", v if abs(v) < 3e38 else 1.5))
END
R --op sum --dtype float64 "$T"/d*.raw | sed 's/^sum \([^ ]*\)  .*/\1/' >"$T/sums"
"$PY" - "$T" <<'END' >"$T/want"
import glob, struct, sys
for p in sorted(glob.glob(sys.argv[1] + "/d*.raw")):
    r = repr(struct.unpack("<d", open(p, "rb").read())[0])
    print(r[:-2] if r.endswith(".0") else r)
END
check_files_same "reduce sum of float64 values" "$T/want" "$T/sums"
check_eq "sum 30" "sum 30  $T/d000.raw" "$(R --op sum --dtype float64 "$T/d000.raw")"
check_eq "sum 1770" "sum 1770  $T/d001.raw" "$(R --op sum --dtype float64 "$T/d001.raw")"
check_eq "float32 max 0.1" "max 0.1  $T/f002.raw" "$(R --op max --dtype float32 "$T/f002.raw")"
if [ -n "$NP" ]; then
    R --op max --dtype float32 "$T"/f*.raw | sed 's/^max \([^ ]*\)  .*/\1/' >"$T/maxes"
    "$NP" - "$T" <<'END' >"$T/fwant"
import glob, sys
import numpy as np
for p in sorted(glob.glob(sys.argv[1] + "/f*.raw")):
    x = np.fromfile(p, dtype="<f4")[0]
    t = np.format_float_positional(x, unique=True, trim="-")
    s = np.format_float_scientific(x, unique=True, trim="-")
    e = int(s.split("e")[1])
    print(t if -4 <= e < 16 else s)
END
    check_files_same "reduce max of float32 values (numpy's shortest digits)" "$T/fwant" "$T/maxes"
else
    missing "python3-numpy missing: float32 extrema not compared with numpy"
fi

# JSON: integers are numbers of their exact digits at any size (Python and
# jq 1.7 keep them exact); floats stay numbers at any size.
"$PY" -c '
import struct, sys
open(sys.argv[1], "wb").write(struct.pack("<3q", 2**62, 2**62, 5))
open(sys.argv[2], "wb").write(struct.pack("<2Q", 2**64 - 1, 3))
open(sys.argv[3], "wb").write(struct.pack("<2q", 2**52, 2**52))
open(sys.argv[4], "wb").write(struct.pack("<2d", 1e300, 1e300))
' "$T/big.raw" "$T/u.raw" "$T/edge.raw" "$T/f.raw"
R --json --op sum,mean,min,max,sumsq,count --dtype int64 "$T/big.raw" >"$T/j1"
R --json --op sum,min,max --dtype uint64 "$T/u.raw" >"$T/j2"
R --json --op sum,max --dtype int64 "$T/edge.raw" >"$T/j3"
R --json --op sum,max --dtype float64 "$T/f.raw" >"$T/j4"
out=$("$PY" -c '
import json, sys
a, b, c, d = (json.load(open(p)) for p in sys.argv[1:5])
print(repr((a["sum"], a["min"], a["max"], a["count"], type(a["mean"]).__name__,
            type(a["sumsq"]).__name__)))
print(repr((b["sum"], b["min"], b["max"])))
print(repr((c["sum"], c["max"])))
print(repr((d["sum"], d["max"])))
' "$T/j1" "$T/j2" "$T/j3" "$T/j4" 2>&1)
check_eq "JSON integers" "(9223372036854775813, 5, 4611686018427387904, 3, 'float', 'float')
(18446744073709551618, 3, 18446744073709551615)
(9007199254740992, 4503599627370496)
(2e+300, 1e+300)" "$out"
if command -v jq >/dev/null 2>&1 && [ "$(echo 9223372036854775813 | jq .)" = 9223372036854775813 ]; then
    check_eq "jq reads the exact digits" "9223372036854775813" "$(jq .sum "$T/j1")"
    # jq keeps a number's digits only while no arithmetic touches it.
    check_eq "jq reads a sum past 2^64 exactly" "18446744073709551618" "$(jq .sum "$T/j2")"
else
    echo "note: jq 1.7 or later missing: its exact reading of the JSON not checked"
fi
check_eq "jq reads a large sum as a number" "number" "$(jq -r '.sum|type' "$T/j2" 2>&1)"

summary
