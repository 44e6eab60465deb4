#!/bin/sh
# gzip_files.sh DIR [GPUBATCH] - writes the three one-member gzip -6 files
# that the single-stream decoder is measured on (128 MiB of data each):
#   float.npy.gz  float32 normal (.npy; compresses little, ratio about 1.08)
#   int.npy.gz    int32 uniform in 0..299 (.npy; ratio about 2.5)
#   text.u8.gz    generated log-like text lines (raw uint8; ratio about 20)
# The data are deterministic; gzip's output is that of the local gzip.
set -eu
dir=${1:?usage: gzip_files.sh DIR [GPUBATCH]}
gb=${2:-./gpubatch}
mkdir -p "$dir"
n=$((128 * 1024 * 1024 / 4))
"$gb" gen -q --shape $n --dtype float32 --dist normal --seed 1 -o "$dir/float.npy" -f
"$gb" gen -q --shape $n --dtype int32 --low 0 --high 299 --seed 2 -o "$dir/int.npy" -f
# Log-like lines: a time stamp and one of six messages, picked by a fixed
# linear congruential sequence (exact in awk's doubles), cut at 128 MiB.
awk 'BEGIN {
    s = 12345; t = 1700000000; u = 0;
    split("INFO [net] request served|INFO [net] request served|INFO [disk] flushed pages|" \
          "DEBUG [cache] cache hit|INFO [net] connection opened|WARN [sched] queue long", ms, "|");
    for (;;) {
        s = (s * 69069 + 1) % 4294967296; r = int(s / 65536);
        if (r % 8 == 0) u++;
        if (u == 1000) { u = 0; t++ }
        printf "%d.%03d %s\n", t, u, ms[1 + int(r / 8) % 6];
    }
}' | head -c $((128 * 1024 * 1024)) > "$dir/text.u8"
for f in float.npy int.npy text.u8; do
    gzip -6 -n -c "$dir/$f" > "$dir/$f.gz"
    rm -f "$dir/$f"
done
ls -l "$dir"
