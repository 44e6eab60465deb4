#!/bin/sh
# test_bench.sh - `gpubatch bench` on the CPU backend with small sizes: the
# table and the JSON document, every row checked right, the exact sum of the
# reduction input against an independent Python computation from `gpubatch
# gen`'s words, the inflate input against `gpubatch gen`'s blocked gzip, the
# rates against the times, usage errors (exit 2), the clear refusal of the
# default (GPU) backend on a machine without a driver, and the inflate check
# failing a device whose kernels write nothing (the stand-in driver).
. "$(dirname "$0")/lib.sh"
need_python
NODRV=/nonexistent/libcuda.so.1
SIZES=reduce:5000,reduce:4194319,transpose:67,quadratic:3001,inflate:16320,inflate:100003

# --- the table ---------------------------------------------------------------
# The CPU code's instruction-set variants this CPU runs (runtime/simd.h): a
# row each for reduce, transpose and quadratic.
"$GB" gen -q --shape 10 -o "$T/one.npy"
case $(env -u GPUBATCH_CPU_SIMD "$GB" reduce -v --backend cpu "$T/one.npy" 2>&1 >/dev/null) in
*"threads, avx512"*) NV=3 ;;
*"threads, avx2"*) NV=2 ;;
*) NV=1 ;;
esac
"$GB" bench --backend cpu -p 2 --reps 3 --sizes reduce:5000,transpose:67,quadratic:3001,inflate:100003 \
    >"$T/table.txt" 2>"$T/table.err"
check_eq "bench --backend cpu exit status ($(cat "$T/table.err"))" 0 $?
for h in "copy of the largest working set" "reduce (sum of n float32), n = 5000" \
    "transpose (N x N float32 matrix), N = 67" "quadratic (n float32 equations), n = 3001" \
    "inflate (n normal float32 in blocked gzip, level 1), n = 100003 (0.4 MiB decoded)"; do
    if grep -qF "$h" "$T/table.txt"; then ok; else fail "table lacks heading '$h'"; fi
done
for v in "cpu loop" "production" "cpu tiled" "cpu aos" "cpu soa" "host copy"; do
    if grep -q "^  $v " "$T/table.txt"; then ok; else fail "table lacks row '$v'"; fi
done
if grep -q FAIL "$T/table.txt"; then fail "a CPU variant failed its check: $(grep FAIL "$T/table.txt")"; else ok; fi
check_eq "reduce rows exact" $((2 + NV)) "$(grep -c 'sum exact' "$T/table.txt")"
check_eq "transpose rows exact" $((2 + NV)) "$(grep -c 'transpose exact' "$T/table.txt")"
check_eq "quadratic rows bit-identical" $((5 + NV)) "$(grep -c 'bit-identical' "$T/table.txt")"
check_eq "a row per variant and op" "$((3 * NV))" \
    "$(grep -cE '^  cpu (baseline|avx2|avx512) ' "$T/table.txt")"
check_eq "inflate row checked" 1 "$(grep -c '^  host .*decoded bytes equal the input (8 members' "$T/table.txt")"
check_eq "no GPU rows on the CPU backend" 0 "$(grep -cE '^  .{12} gpu ' "$T/table.txt")"
check_eq "stderr is quiet" "" "$(cat "$T/table.err")"

# --- the JSON document ---------------------------------------------------------
"$GB" bench --backend cpu --reps 3 --seed 7 --json --sizes "$SIZES" >"$T/b.json" 2>"$T/b.err"
check_eq "bench --json exit status ($(cat "$T/b.err"))" 0 $?
"$GB" gen --shape 5000 --dtype uint32 --seed 7 --raw --no-compress -o "$T/w5000"
"$GB" gen --shape 4194319 --dtype uint32 --seed 7 --raw --no-compress -o "$T/w4194319"
# The inflate input: normal float32 of the seed, blocked gzip at level 1.
"$GB" gen --shape 16320 --dist normal --seed 7 --raw -1 -o "$T/z16320.gz"
"$GB" gen --shape 100003 --dist normal --seed 7 --raw -1 -o "$T/z100003.gz"
$PY - "$T/b.json" "$T" "$NV" >"$T/json.out" 2>&1 <<'END'
import array, json, re, struct, sys, zlib
doc = json.load(open(sys.argv[1]))
tmp = sys.argv[2]
nv = int(sys.argv[3])  # the CPU's instruction-set variants: a reduce row each
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
need(doc["backend"] == "cpu" and doc["device"] is None, "backend cpu, no device")
need(doc["reps"] == 3 and doc["seed"] == 7, "reps and seed")
rows = doc["rows"]
ops = sorted(set(r["op"] for r in rows))
need(ops == ["copy", "inflate", "quadratic", "reduce", "transpose"], "ops %s" % ops)
copy = [r for r in rows if r["op"] == "copy"]
need(len(copy) == 1 and copy[0]["variant"] == "host copy", "one host copy row")
# The copy is as large as the largest working set: 4194319 floats read.
need(copy[0]["size"] == 4 * 4194319 and copy[0]["bytes"] == 8 * 4194319, "copy size %s" % copy[0]["size"])
per = {"reduce": lambda n: 4 * n, "transpose": lambda n: 8 * n * n, "quadratic": lambda n: 28 * n,
       "inflate": lambda n: 4 * n}
for r in rows:
    where = "%s %s %s" % (r["op"], r["variant"], r["size"])
    need(r["status"] == "ok", where + " status " + r["status"])
    need(r["where"] == "cpu" and r["threads"] >= 1, where + " cpu row")
    need(r["ms"] > 0 and r["reps"] >= 1, where + " time")
    need(abs(r["gbps"] - r["bytes"] / r["ms"] / 1e6) <= 1e-4 * r["gbps"], where + " GB/s")
    if r["op"] != "copy":
        need(r["bytes"] == per[r["op"]](r["size"]), where + " bytes")
        need(abs(r["of_copy"] - r["gbps"] / copy[0]["gbps"]) <= 1e-4 * r["of_copy"], where + " of copy")
        base = [b for b in rows if b["op"] == r["op"] and b["size"] == r["size"] and b["baseline"]]
        need(len(base) == 1, where + " one baseline")
        if base:
            need(abs(r["speedup"] - base[0]["ms"] / r["ms"]) <= 1e-4 * r["speedup"], where + " speed-up")
sizes = {op: sorted(set(r["size"] for r in rows if r["op"] == op)) for op in per}
need(sizes == {"reduce": [5000, 4194319], "transpose": [67], "quadratic": [3001],
                "inflate": [16320, 100003]}, "sizes %s" % sizes)
# The inflate rows: one host row (its own baseline) per size, whose input is
# gen's blocked gzip of the same seed: its members (walked here, each
# decoding to its ISIZE and CRC-32, all to the normal float32) and its size.
for n in (16320, 100003):
    blob = open("%s/z%d.gz" % (tmp, n), "rb").read()
    off, members, data = 0, 0, b""
    while off < len(blob):
        total = struct.unpack("<H", blob[off + 16:off + 18])[0] + 1
        part = zlib.decompress(blob[off + 18:off + total - 8], -15)
        crc, isize = struct.unpack("<II", blob[off + total - 8:off + total])
        need(len(part) == isize and zlib.crc32(part) == crc, "gen member at %d of n=%d" % (off, n))
        data += part
        off += total
        members += 1
    need(len(data) == 4 * n and members == -(-4 * n // 65280) + 1, "gen's blocked gzip of n=%d" % n)
    got = [r for r in rows if r["op"] == "inflate" and r["size"] == n]
    need([r["variant"] for r in got] == ["host"], "inflate rows at %d: %s" % (n, got))
    for r in got:
        need(r["baseline"] and r["speedup"] == 1, "inflate %d: the host row is the baseline" % n)
        m = re.match(r"decoded bytes equal the input \((\d+) members, (\d+) bytes compressed", r["check"])
        need(m and int(m.group(1)) == members and int(m.group(2)) == len(blob),
             "inflate %d check '%s', gen: %d members, %d bytes" % (n, r["check"], members, len(blob)))
# The reduction input, rebuilt from gen's words: k = w mod (2s+1) - s with
# s = 2^22 // n, or +-1 with probability 2^22 / n for larger n; |k| summed
# in index order stays below 2^24; x = k 2^-10.
for n in (5000, 4194319):
    w = array.array("I")
    w.frombytes(open("%s/w%d" % (tmp, n), "rb").read())
    need(w.itemsize == 4 and len(w) == n, "words of n=%d" % n)
    s = (1 << 22) // n
    if s:
        k = [v % (2 * s + 1) - s for v in w]
    else:
        k = [(1 if v & 1 else -1) for v in w if (v >> 1) * n < (1 << 53)]
    need(sum(abs(v) for v in k) < (1 << 24), "budget never reached for n=%d" % n)
    need(sum(1 for v in k if v) > 1000, "enough nonzero inputs for n=%d" % n)
    exact = float(sum(k)) * 2.0 ** -10
    got = [r for r in rows if r["op"] == "reduce" and r["size"] == n]
    need(len(got) == 2 + nv, "%d reduce rows at %d" % (2 + nv, n))
    for r in got:
        text = r["check"]
        need(text.startswith("sum exact (") and float(text[len("sum exact ("):-1]) == exact,
             "%s: %s, exact %r" % (r["variant"], text, exact))
print("\n".join(bad) if bad else "json ok")
END
check_eq "bench --json content" "json ok" "$(cat "$T/json.out")"

# The same seed gives the same inputs; another seed others.
s7=$("$GB" bench --backend cpu --reps 1 --seed 7 --sizes reduce:5000 reduce | grep 'cpu loop')
s8=$("$GB" bench --backend cpu --reps 1 --seed 8 --sizes reduce:5000 reduce | grep 'cpu loop')
check_eq "seed 7 gives the JSON run's sum" "$(echo "$s7" | sed 's/.*sum exact/sum exact/')" \
    "$($PY -c 'import json,sys; print([r["check"] for r in json.load(open(sys.argv[1]))["rows"] if r["op"]=="reduce" and r["size"]==5000][0])' "$T/b.json")"
if [ "$(echo "$s7" | sed 's/.*sum exact//')" != "$(echo "$s8" | sed 's/.*sum exact//')" ]; then ok; else
    fail "seeds 7 and 8 give the same reduction input"
fi
# One op only; -p sets the host threads.
"$GB" bench --backend cpu -p 1 --reps 1 --sizes 40 transpose >"$T/t.txt" 2>&1
check_eq "bench transpose exit status" 0 $?
check_eq "bench transpose runs transpose only" "copy transpose" \
    "$(sed -n -e 's/^\(copy\) of .*/\1/p' -e 's/^\([a-z]*\) (.*/\1/p' "$T/t.txt" | tr '\n' ' ' | sed 's/ $//')"
check_eq "-p 1: every host row on one thread" "$((3 + NV)) $((3 + NV))" \
    "$(grep -cE '^  .{12} cpu x' "$T/t.txt") $(grep -cE '^  .{12} cpu x1 ' "$T/t.txt")"

# inflate alone, and `all` names every op.
"$GB" bench --backend cpu -p 1 --reps 1 --sizes 1000 inflate >"$T/i.txt" 2>&1
check_eq "bench inflate exit status" 0 $?
check_eq "bench inflate runs inflate only" "copy inflate" \
    "$(sed -n -e 's/^\(copy\) of .*/\1/p' -e 's/^\([a-z]*\) (.*/\1/p' "$T/i.txt" | tr '\n' ' ' | sed 's/ $//')"
check_eq "inflate of 1000 float32: two members, checked" 1 \
    "$(grep -c '^  host         cpu x1 .*decoded bytes equal the input (2 members' "$T/i.txt")"
"$GB" bench --backend cpu --reps 1 --sizes 40 all >"$T/a.txt" 2>&1
check_eq "bench all exit status" 0 $?
check_eq "bench all runs every op" "copy reduce transpose quadratic inflate" \
    "$(sed -n -e 's/^\(copy\) of .*/\1/p' -e 's/^\([a-z]*\) (.*/\1/p' "$T/a.txt" | tr '\n' ' ' | sed 's/ $//')"

# --- usage errors --------------------------------------------------------------
for args in "nosuch" "--reps 0" "--reps x" "--sizes foo:10" "--sizes reduce:0" \
    "--sizes transpose:40000" "--sizes reduce:1x" "--seed -1" "--nosuch" "--backend nosuch" \
    "--sizes inflate:0" "--sizes inflate:1G" "--sizes inflate:x" "--sizes inflate:600M inflate"; do
    "$GB" bench --backend cpu $args >"$T/u.out" 2>"$T/u.err"
    st=$?
    check_eq "bench $args exit status" 2 $st
    check_eq "bench $args prints nothing on stdout" "" "$(cat "$T/u.out")"
    if grep -q "Try 'gpubatch bench --help'" "$T/u.err"; then ok; else fail "bench $args: no --help hint: $(cat "$T/u.err")"; fi
done
# Usage is checked before the device: exit 2 even without a driver.
GPUBATCH_LIBCUDA=$NODRV "$GB" bench --reps 0 >/dev/null 2>&1
check_eq "usage error without a driver" 2 $?
"$GB" bench --help >"$T/h.txt"
check_eq "bench --help exit status" 0 $?
if grep -q -- '--sizes' "$T/h.txt" && grep -q -- '--json' "$T/h.txt"; then ok; else fail "bench --help lacks options"; fi

# --- no GPU --------------------------------------------------------------------
check_error "bench (auto) without a GPU" "no usable GPU.*--backend cpu" \
    env GPUBATCH_LIBCUDA=$NODRV "$GB" bench
check_error "bench --backend cuda without a GPU" "no NVIDIA driver" \
    env GPUBATCH_LIBCUDA=$NODRV "$GB" bench --backend cuda reduce

# --- a device whose kernels do nothing -----------------------------------------
# The stand-in driver runs no kernel: both blocked-gzip kernels are launched
# once, the poisoned output is caught and the row is not timed; the stream
# row's first decode round (launched once) leaves every segment undecoded,
# so the device declines the stream; the host row is right.
use_fake_driver
FAKECUDA_REPORT="$T/launches" "$GB" bench --backend cuda --reps 2 --json --sizes inflate:100003 \
    inflate >"$T/f.json" 2>"$T/f.err"
check_eq "bench inflate on the stand-in driver exit status ($(cat "$T/f.err"))" 0 $?
check_eq "inflate kernels launched" "device 0 launches 3" "$(cat "$T/launches")"
check_eq "inflate rows on the stand-in driver" \
    "host cpu ok baseline | production gpu wrong decoded byte 0 differs from the input | stream gpu wrong the device declined the stream" \
    "$($PY -c 'import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["op"] == "inflate"]
print(" | ".join("%s %s %s %s" % (r["variant"], r["where"], r["status"],
      "baseline" if r["baseline"] else r["check"]) for r in rows))' "$T/f.json")"

# The axis rows (GPU only): a row per shape, each launching reduce --axis's
# kernels; on the stand-in driver the parts stay poisoned and every row's
# check (the outputs folded on the host against exact sums) fails it.
FAKECUDA_REPORT="$T/launches" "$GB" bench --backend cuda --reps 2 --json --sizes axis:1M \
    axis >"$T/x.json" 2>"$T/x.err"
check_eq "bench axis on the stand-in driver exit status ($(cat "$T/x.err"))" 0 $?
check_eq "axis rows on the stand-in driver" \
    "18 rows: f32 C=1 f32 C=3 f32 C=64 f32 C=1000 f32 C=1e5 f32 N=3 f32 N=64 f32 N=1000 f32 N=1e6 f64 C=1 f64 C=3 f64 C=64 f64 C=1000 f64 C=1e5 f64 N=3 f64 N=64 f64 N=1000 f64 N=1e6; wrong: 18" \
    "$($PY -c 'import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["op"] == "axis"]
print("%d rows: %s; wrong: %d" % (len(rows), " ".join(r["variant"] for r in rows),
      sum(r["status"] == "wrong" and "sum differs" in r["check"] for r in rows)))' "$T/x.json")"
"$GB" bench --backend cpu --reps 1 --sizes 1M axis >"$T/xc.txt" 2>&1
check_eq "bench axis on the CPU backend: no rows" "" \
    "$(sed -n 's/^\([a-z]*\) (.*/\1/p; s/^copy of the largest.*/copy/p' "$T/xc.txt" | tr '\n' ' ' | sed 's/ $//')"
summary
