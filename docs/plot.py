#!/usr/bin/env python3
"""plot.py - draw `gpubatch bench --json` output as an SVG line chart.

    python3 docs/plot.py --op quadratic --y speedup --note 2026-11-23 \\
        -o docs/img/quadratic-speedup.svg bench-a.json bench-b.json

Reads one or more JSON documents written by `gpubatch bench --json` (rows of
several runs are joined; a size measured twice keeps its last row), takes the
rows of one operation that were measured (status "ok"; the block-shape sweep
and the copy rows are left out), and draws one line per variant (GPU kernels,
and CPU code per thread count) against the size, on a logarithmic x axis.
The y axis is one of the row's numbers: speedup (over the article's baseline,
log scale), of_copy (fraction of the copy bandwidth measured in the same run,
linear), gbps or ms (log scale). The title names the operation, the device and
driver (or the CPU backend) and its thread count, taken from the JSON, and
the --note (the JSON holds no date, so pass the date of the run there).

A documentation tool: the Python standard library only; gpubatch itself never
needs Python. Exit status 0, or 1 with a message when no row can be drawn.
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 760, 460
LEFT, RIGHT, TOP, BOTTOM = 70, 230, 80, 56
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
          "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#637939"]
Y_LABELS = {
    "speedup": "speed-up over the article's baseline (log)",
    "of_copy": "fraction of the copy bandwidth",
    "gbps": "GB/s, bytes read + written (log)",
    "ms": "median time, ms (log)",
}
X_LABELS = {
    "reduce": "float32 elements summed",
    "transpose": "N (N x N float32 matrix)",
    "quadratic": "float32 equations",
    "inflate": "float32 elements decoded from blocked gzip",
}


def fail(msg):
    sys.stderr.write("plot.py: %s\n" % msg)
    sys.exit(1)


def size_label(v):
    """1024 -> 1Ki, 10000000 -> 10M: binary units for powers of two."""
    v = int(round(v))
    for unit, name in ((1 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki")):
        if v >= unit and v % unit == 0:
            return "%d%s" % (v // unit, name)
    for unit, name in ((10 ** 9, "G"), (10 ** 6, "M"), (10 ** 3, "k")):
        if v >= unit and v % unit == 0:
            return "%d%s" % (v // unit, name)
    return str(v)


def num_label(v):
    if v == 0:
        return "0"
    if abs(v) >= 1e6 or abs(v) < 0.01:
        e = int(math.floor(math.log10(abs(v)) + 1e-9))
        m = v / 10 ** e
        return ("10^%d" % e) if abs(m - 1) < 1e-9 else ("%gx10^%d" % (m, e))
    return "%g" % v


def load(paths):
    docs = []
    for p in paths:
        try:
            with open(p) as f:
                docs.append((p, json.load(f)))
        except (OSError, ValueError) as e:
            fail("%s: %s" % (p, e))
        if not isinstance(docs[-1][1], dict) or "rows" not in docs[-1][1]:
            fail("%s: not the output of gpubatch bench --json (no \"rows\")" % p)
    return docs


def series_name(row):
    v = row["variant"]
    if row.get("where") == "cpu":
        t = row.get("threads") or 1
        return "%s (CPU, %d thread%s)" % (v, t, "" if t == 1 else "s")
    return "%s (GPU)" % v


def describe(docs):
    """The two lines under the title, from the first document's header."""
    d = docs[0][1]
    dev = d.get("device")
    if dev:
        s = "%s (compute capability %s), driver for CUDA %s; host rows on %s threads" % (
            dev.get("name", "?"), dev.get("compute_capability", "?"), dev.get("driver_cuda", "?"),
            d.get("cpu_threads", "?"))
    else:
        s = "CPU backend (no device rows): CPU code only, on %s threads" % d.get("cpu_threads", "?")
    return s, "backend %s; each point the median of %s timed runs" % (d.get("backend", "?"), d.get("reps", "?"))


def main():
    ap = argparse.ArgumentParser(description="gpubatch bench --json to SVG")
    ap.add_argument("--op", required=True, choices=sorted(X_LABELS))
    ap.add_argument("--y", default="speedup", choices=sorted(Y_LABELS))
    ap.add_argument("--where", default="all", choices=["all", "gpu", "cpu"],
                    help="keep GPU rows, CPU rows, or both (default)")
    ap.add_argument("--title", help="first title line (default: the operation and the y axis)")
    ap.add_argument("--note", default="", help="appended to the machine line, such as the date")
    ap.add_argument("-o", "--output", help="SVG file (default: standard output)")
    ap.add_argument("json", nargs="+", help="gpubatch bench --json output")
    a = ap.parse_args()

    docs = load(a.json)
    series = {}
    order = []
    for _, d in docs:
        for r in d["rows"]:
            if r.get("op") != a.op or r.get("sweep") or r.get("status") != "ok":
                continue
            if a.where != "all" and r.get("where") != a.where:
                continue
            y = r.get(a.y)
            if not isinstance(y, (int, float)) or not isinstance(r.get("size"), (int, float)):
                continue
            if r["size"] <= 0 or (a.y != "of_copy" and y <= 0):
                continue
            name = series_name(r)
            if name not in series:
                series[name] = {}
                order.append(name)
            series[name][float(r["size"])] = float(y)
    if not series:
        fail("no measured %s rows with a %s value in %s" % (a.op, a.y, ", ".join(a.json)))

    xs = sorted({x for s in series.values() for x in s})
    ys = [y for s in series.values() for y in s.values()]
    lx0, lx1 = math.log10(xs[0]), math.log10(xs[-1])
    if lx1 - lx0 < 1e-9:
        lx0, lx1 = lx0 - 0.5, lx1 + 0.5
    logy = a.y != "of_copy"
    if logy:
        ly0 = math.floor(math.log10(min(ys)))
        ly1 = math.ceil(math.log10(max(ys)))
        if ly1 == ly0:
            ly1 += 1
        yticks = [10.0 ** e for e in range(ly0, ly1 + 1)]
        ymap = lambda v: (math.log10(v) - ly0) / (ly1 - ly0)
    else:
        top = max(1.0, max(ys))
        top = math.ceil(top * 10 / 2) * 2 / 10.0  # up to the next 0.2
        yticks = [i * 0.2 for i in range(int(round(top / 0.2)) + 1)]
        ymap = lambda v: v / top
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    px = lambda x: LEFT + (math.log10(x) - lx0) / (lx1 - lx0) * pw
    py = lambda v: TOP + ph - ymap(v) * ph

    out = []
    w = out.append
    w('<?xml version="1.0" encoding="UTF-8"?>')
    w('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
      'font-family="sans-serif" font-size="12">' % (WIDTH, HEIGHT, WIDTH, HEIGHT))
    y_label = Y_LABELS[a.y]
    if a.op == "inflate":  # its rows count the bytes decoded
        y_label = y_label.replace("bytes read + written", "bytes decoded")
    title = a.title or "gpubatch bench %s: %s" % (a.op, y_label.replace(" (log)", ""))
    w('<title>%s</title>' % escape(title))
    w('<rect width="100%" height="100%" fill="white"/>')
    w('<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>' % (LEFT, escape(title)))
    line1, line2 = describe(docs)
    if a.note:
        line2 += "; " + a.note
    w('<text x="%d" y="42" font-size="11" fill="#444">%s</text>' % (LEFT, escape(line1)))
    w('<text x="%d" y="57" font-size="11" fill="#444">%s</text>' % (LEFT, escape(line2)))
    # grid and y ticks
    for t in yticks:
        y = py(t)
        w('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>' % (LEFT, y, LEFT + pw, y))
        w('<text x="%.1f" y="%.1f" text-anchor="end">%s</text>' % (LEFT - 6, y + 4, escape(num_label(t))))
    if not logy:
        y = py(1.0)
        w('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="4 3"/>'
          % (LEFT, y, LEFT + pw, y))
    # x ticks: every size measured
    last = -1e9
    for x in xs:
        X = px(x)
        w('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>' % (X, TOP + ph, X, TOP + ph + 4))
        if X - last >= 34:
            w('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X, TOP + ph + 17, escape(size_label(x))))
            last = X
    w('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>' % (LEFT, TOP, pw, ph))
    w('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
      % (LEFT + pw / 2.0, HEIGHT - 14, escape(X_LABELS[a.op] + " (log)")))
    w('<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">%s</text>'
      % (TOP + ph / 2.0, escape(y_label)))
    # series and legend
    for i, name in enumerate(order):
        c = COLORS[i % len(COLORS)]
        pts = sorted(series[name].items())
        dash = ' stroke-dasharray="5 3"' if "(CPU" in name else ""
        w('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>'
          % (c, dash, " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts), escape(name)))
        for x, y in pts:
            w('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s: %s</title></circle>'
              % (px(x), py(y), c, escape(name), size_label(x), "%.4g" % y))
        ly = TOP + 8 + i * 18
        w('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
          % (LEFT + pw + 14, ly, LEFT + pw + 36, ly, c, dash))
        w('<text x="%d" y="%d">%s</text>' % (LEFT + pw + 42, ly + 4, escape(name)))
    w('</svg>')
    text = "\n".join(out) + "\n"
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
