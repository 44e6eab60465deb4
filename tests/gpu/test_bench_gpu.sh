#!/bin/sh
# test_bench_gpu.sh - on a machine with a CUDA GPU: `gpubatch bench` runs every
# ladder kernel and production kernel at small and odd sizes (one element,
# sizes around tile and block multiples, the sparse reduction input) and
# every row's output check passes: exact sums, exact transposes for every
# block shape of the sweep, textbook and accurate roots bit-identical to the
# CPU's, and blocked gzip inflated on the device to the input's bytes (one
# member, a full one, one byte more, many members), and the same data as one
# deflate stream too.
. "$(dirname "$0")/../cli/lib.sh"
sizes=reduce:1,reduce:1023,reduce:1048577,reduce:4194319,transpose:1,transpose:33,transpose:1000
sizes=$sizes,quadratic:1,quadratic:257,quadratic:100003
sizes=$sizes,inflate:1,inflate:16320,inflate:16321,inflate:4194319
"$GB" bench --backend cuda --reps 3 --json --sizes "$sizes" >"$T/b.json" 2>"$T/b.err"
check_eq "bench --backend cuda exit status ($(head -c 300 "$T/b.err"))" 0 $?
$PY - "$T/b.json" >"$T/check.out" 2>&1 <<'END'
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
rows = doc["rows"]
if doc["backend"] != "cuda" or not doc["device"]:
    bad.append("backend %s" % doc["backend"])
for r in rows:
    if r["status"] != "ok":
        bad.append("%s %s size %d block %s: %s" % (r["op"], r["variant"], r["size"], r["block"], r["check"]))
want = {
    "reduce": {"serial", "contiguous", "interleaved", "tree", "last-warp", "unrolled", "last-block",
               "atomic", "shuffle", "production"},
    "transpose": {"cpu", "naive", "shared", "padded", "production"},
    "quadratic": {"cpu aos", "naive", "shared", "soa", "production"},
    "inflate": {"host", "production", "stream"},
}
sizes = {"reduce": [1, 1023, 1048577, 4194319], "transpose": [1, 33, 1000], "quadratic": [1, 257, 100003],
         "inflate": [1, 16320, 16321, 4194319]}
for op, names in want.items():
    for n in sizes[op]:
        got = {r["variant"] for r in rows if r["op"] == op and r["size"] == n and not r["sweep"]}
        if got != names:
            bad.append("%s %d variants %s" % (op, n, sorted(got ^ names)))
for n in sizes["transpose"]:
    shapes = {tuple(r["block"]) for r in rows if r["sweep"] and r["size"] == n}
    if len(shapes) != 60:
        bad.append("transpose %d: %d sweep shapes" % (n, len(shapes)))
copies = [r["variant"] for r in rows if r["op"] == "copy"]
if copies != ["device copy", "host copy"]:
    bad.append("copies %s" % copies)
print("\n".join(bad) if bad else "all rows ok")
END
check_eq "every bench row right on the GPU" "all rows ok" "$(cat "$T/check.out")"
# The table too, and no FAIL in it.
"$GB" bench --reps 2 --sizes reduce:100000,transpose:100,quadratic:1000,inflate:100000 >"$T/t.txt" 2>&1
check_eq "bench table exit status" 0 $?
check_eq "no FAIL in the table" 0 "$(grep -c FAIL "$T/t.txt")"
if grep -q "^  naive transpose by block shape" "$T/t.txt"; then ok; else fail "no sweep table"; fi
summary
