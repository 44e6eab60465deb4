#!/bin/sh
# test_reduce_gpu.sh - on a machine with a CUDA GPU: `reduce --backend cuda`
# prints exactly what the CPU backend prints, for every dtype, op set, NaN
# policy, chunk size and stream count; and the GPU errors are clear.
. "$(dirname "$0")/../cli/lib.sh"
REF="$top/tests/cli/npyref.py"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count

# Compares the two backends on one file with the given options.
same_as_cpu() {
    what=$1
    shift
    "$GB" reduce -q --backend cpu "$@" >"$T/cpu.txt" 2>"$T/cpu.err"
    s1=$?
    "$GB" reduce -q --backend cuda "$@" >"$T/gpu.txt" 2>"$T/gpu.err"
    s2=$?
    if [ $s1 -ne $s2 ]; then
        fail "$what: status cpu $s1 gpu $s2: $(cat "$T/gpu.err")"
    elif cmp -s "$T/cpu.txt" "$T/gpu.txt"; then
        ok
    else
        fail "$what: gpu differs from cpu"
        diff "$T/cpu.txt" "$T/gpu.txt" | head -6 >&2
    fi
}

for dt in float32 float64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 bool; do
    for n in 1 31 33 8191 8192 8193 65537 1000003; do
        case $dt in float* | bfloat16 | bool) kind=adversarial ;; *) kind=ints-extreme ;; esac
        f="$T/$dt-$n.npy"
        $PY "$REF" write $dt $n $kind $n "$f"
        same_as_cpu "$dt n=$n" --op $ALL "$f"
        case $dt in float* | bfloat16) same_as_cpu "$dt n=$n skipnan" --op $ALL --skipnan "$f" ;; esac
    done
done
# Big-endian data, swapped by the host as it is read (gzip too, which is
# then inflated on the host, not the device): the CPU's text, and the text
# of the same values little-endian.
for dt in float16 float32 float64 int64 bfloat16; do
    f="$T/$dt-be.npy"
    $PY "$REF" write $dt 300007 adversarial 3 "$f" big
    same_as_cpu "$dt big-endian" --op $ALL --skipnan "$f"
    "$GB" reduce -q --backend cuda --op $ALL "$f" | sed 's/  .*//' >"$T/be.txt"
    $PY "$REF" write $dt 300007 adversarial 3 "$T/$dt-le.npy"
    "$GB" reduce -q --backend cuda --op $ALL "$T/$dt-le.npy" | sed 's/  .*//' >"$T/le.txt"
    check_files_same "$dt big-endian as little-endian" "$T/le.txt" "$T/be.txt"
    gzip -c "$f" >"$T/be.npy.gz"
    same_as_cpu "$dt big-endian gzip" --op $ALL --chunk 1M "$T/be.npy.gz"
    $PY "$top/tests/cli/bgzf.py" 5 "$f" "$T/be.bgzf"
    same_as_cpu "$dt big-endian blocked gzip" --op $ALL "$T/be.bgzf"
done
for dt in float32 float64 int32 uint8; do
    f="$T/gen-$dt.npy"
    "$GB" gen --dtype $dt --dist normal --shape 3000017 --seed 5 --no-compress -o "$f"
    same_as_cpu "gen $dt" --op $ALL "$f"
    same_as_cpu "gen $dt small chunks" --op $ALL --chunk 64k --streams 3 "$f"
    same_as_cpu "gen $dt sum only" --op sum "$f"
    same_as_cpu "gen $dt min only" --op min,argmax "$f"
done
f="$T/big.npy.gz"
"$GB" gen --shape 20000000 --dist normal --seed 9 -o "$f"
for opts in "--chunk 64k" "--chunk 1M --streams 2" "--chunk 256M" "--streams 16"; do
    "$GB" reduce -q --backend cuda --op $ALL $opts "$f" >"$T/g1.txt"
    "$GB" reduce -q --backend cpu --op $ALL "$f" >"$T/c1.txt"
    check_files_same "gzip 2e7 with $opts" "$T/c1.txt" "$T/g1.txt"
done

# Single deflate streams (gzip, pigz, Python, several members) inflated on
# the device (whatever their size: GPUBATCH_HOST_INFLATE=0): the CPU's text;
# damaged ones: the CPU's message and status.
export GPUBATCH_HOST_INFLATE=0
same_with_gpu_inflate() {
    what=$1
    shift
    "$GB" reduce -v --backend cuda "$@" 2>"$T/gv.err" >/dev/null
    grep -q "inflated on the GPU" "$T/gv.err" && ok || fail "$what: not inflated on the GPU: $(tail -3 "$T/gv.err")"
    same_as_cpu "$what" "$@"
}
# A damaged file: the CPU's message and exit status.
same_message() {
    "$GB" reduce -q --backend cpu --op sum "$2" >/dev/null 2>"$T/c.err"
    echo "exit $?" >>"$T/c.err"
    "$GB" reduce -q --backend cuda --op sum "$2" >/dev/null 2>"$T/g.err"
    echo "exit $?" >>"$T/g.err"
    check_files_same "$1: the CPU's message" "$T/c.err" "$T/g.err"
}
"$GB" gen --shape 30000017 --dist normal --seed 11 --no-compress -o "$T/s.npy"
"$GB" gen --shape 20000003 --dtype int16 --dist uniform --seed 12 --no-compress -o "$T/si.npy"
for lvl in 1 6 9; do
    gzip -$lvl -c "$T/s.npy" >"$T/s$lvl.npy.gz"
    same_with_gpu_inflate "gzip -$lvl float32" --op $ALL "$T/s$lvl.npy.gz"
done
"$GB" reduce -v --backend auto --op $ALL "$T/s1.npy.gz" 2>"$T/gv.err" >"$T/auto.txt"
grep -q "inflated on the GPU" "$T/gv.err" && ok || fail "auto: not inflated on the GPU: $(tail -3 "$T/gv.err")"
"$GB" reduce --backend cpu --op $ALL "$T/s1.npy.gz" >"$T/cpu1.txt"
check_files_same "auto, inflated on the GPU" "$T/cpu1.txt" "$T/auto.txt"
gzip -6 -c "$T/si.npy" >"$T/si.npy.gz"
same_with_gpu_inflate "gzip -6 int16" --op $ALL "$T/si.npy.gz"
same_as_cpu "gzip -6 int16 small chunks" --op $ALL --chunk 64k "$T/si.npy.gz"
if command -v pigz >/dev/null; then
    pigz -c "$T/s.npy" >"$T/sp.npy.gz"
    same_with_gpu_inflate "pigz float32" --op $ALL "$T/sp.npy.gz"
fi
$PY -c "import gzip,sys; open(sys.argv[2],'wb').write(gzip.compress(open(sys.argv[1],'rb').read()))" \
    "$T/s.npy" "$T/spy.npy.gz" && same_with_gpu_inflate "Python gzip" --op $ALL "$T/spy.npy.gz"
# Deflated .npz members (np.savez_compressed): the same path, each member's
# end checked against the central directory; a damaged one: the CPU's
# message and status.
$PY -c "import numpy as np, sys; a = np.load(sys.argv[1]); np.savez_compressed(sys.argv[2], x=a, y=a[::3])" \
    "$T/s.npy" "$T/s.npz"
same_with_gpu_inflate "np.savez_compressed, two members" --op $ALL "$T/s.npz"
same_with_gpu_inflate "np.savez_compressed, one member named" --op $ALL "$T/s.npz:y"
cp "$T/s.npz" "$T/bad.npz"
printf '\377' | dd of="$T/bad.npz" bs=1 seek=$(($(stat -c %s "$T/s.npz") / 4)) conv=notrunc 2>/dev/null
same_message "a damaged byte in an .npz member" "$T/bad.npz"
tail -c +129 "$T/s.npy" >"$T/s.raw"
head -c 40000000 "$T/s.raw" | gzip -1 >"$T/m.raw.gz"
tail -c +40000001 "$T/s.raw" | gzip -6 >>"$T/m.raw.gz"
same_as_cpu "two members" --dtype float32 --op $ALL "$T/m.raw.gz"
size=$(stat -c %s "$T/s1.npy.gz")
head -c $((size - 5)) "$T/s1.npy.gz" >"$T/cut.npy.gz"
same_message "cut inside the trailer" "$T/cut.npy.gz"
head -c $((size / 2)) "$T/s1.npy.gz" >"$T/half.npy.gz"
same_message "cut in half" "$T/half.npy.gz"
for at in $((size / 3)) $((size - 12)) $((size - 3)); do
    cp "$T/s1.npy.gz" "$T/bad.npy.gz"
    printf '\377' | dd of="$T/bad.npy.gz" bs=1 seek=$at conv=notrunc 2>/dev/null
    same_message "a damaged byte at $at" "$T/bad.npy.gz"
done
# Damaged single streams sent to the device from their start (gzip and
# .npz members: spans zeroed or made random, CRC-32 and length lies, cut
# short): the first line of the message and the status are the CPU's.
"$GB" gen --shape 2000003 --dist normal --seed 21 --no-compress -o "$T/d.npy"
$PY - "$T/d.npy" "$T/dmg" <<'PY'
import gzip, io, os, random, struct, sys, zipfile, zlib
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
data = open(src, "rb").read()
gz = gzip.compress(data, 6)
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("x.npy", data)
npz = buf.getvalue()
rng = random.Random(7)
def put(name, b):
    open(os.path.join(out, name), "wb").write(bytes(b))
for kind, good, lo, hi, ext in (("gz", gz, 10, len(gz) - 8, "npy.gz"),
                                ("npz", npz, 40, len(npz) - 200, "npz")):
    for k in range(8):
        at, n = rng.randrange(lo, hi - 64), rng.randint(1, 64)
        b = bytearray(good)
        b[at:at + n] = bytes(n)
        put("%s-zero%d.%s" % (kind, k, ext), b)
        b = bytearray(good)
        b[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
        put("%s-rand%d.%s" % (kind, k, ext), b)
b = bytearray(gz); b[-8] ^= 1; put("gz-crc.npy.gz", b)
b = bytearray(gz); struct.pack_into("<I", b, len(b) - 4, len(data) + 4); put("gz-long.npy.gz", b)
b = bytearray(gz); struct.pack_into("<I", b, len(b) - 4, len(data) - 4); put("gz-short.npy.gz", b)
put("gz-cut.npy.gz", gz[:len(gz) // 2])
put("gz-cuttrailer.npy.gz", gz[:-3])
cen = npz.rfind(b"PK\x01\x02")
b = bytearray(npz); b[cen + 16] ^= 1; put("npz-crc.npz", b)
b = bytearray(npz); struct.pack_into("<I", b, cen + 24, len(data) + 4); put("npz-long.npz", b)
b = bytearray(npz); struct.pack_into("<I", b, cen + 24, len(data) - 4); put("npz-short.npz", b)
PY
for d in "$T"/dmg/*; do
    "$GB" reduce -q --backend cpu --op sum "$d" >/dev/null 2>"$T/c.err"
    c="exit $? $(head -n 1 "$T/c.err")"
    "$GB" reduce -q --backend cuda --op sum "$d" >/dev/null 2>"$T/g.err"
    g="exit $? $(head -n 1 "$T/g.err")"
    check_eq "damaged single stream $(basename "$d"): the CPU's first line and status" "$c" "$g"
done
rm -rf "$T/dmg" "$T/d.npy"

# A stream of several batches, each read and copied over while the one
# before it is inflated; and one damaged in its last batch.
"$GB" gen --shape 268435456 --dist normal --seed 13 --no-compress -o "$T/l.npy"
if command -v pigz >/dev/null; then pigz -1 -c "$T/l.npy"; else gzip -1 -c "$T/l.npy"; fi >"$T/l.npy.gz"
rm -f "$T/l.npy"
same_with_gpu_inflate "1 GiB in batches" --op sum,min,argmax,sumsq "$T/l.npy.gz"
batches=$(sed -n 's/.*inflated on the GPU in \([0-9]*\) batch.*/\1/p' "$T/gv.err")
[ "${batches:-0}" -ge 3 ] && ok || fail "1 GiB in batches: ${batches:-no} batches: $(grep GPU "$T/gv.err")"
# By default the host's threads run the stream's start while the device
# starts, and the device goes on from where they paused.
for be in cuda auto; do
    for p in 16 2; do
        env -u GPUBATCH_HOST_INFLATE "$GB" reduce -v -p $p --backend $be --op sum,min,argmax,sumsq \
            "$T/l.npy.gz" 2>"$T/gv.err" >"$T/g.txt"
        grep -q "inflated on the host's threads while the GPU started" "$T/gv.err" &&
            grep -q "inflated on the GPU in" "$T/gv.err" && ok ||
            fail "1 GiB, $be -p $p: not begun on the host: $(grep -E 'GPU|host' "$T/gv.err")"
        "$GB" reduce --backend cpu --op sum,min,argmax,sumsq "$T/l.npy.gz" >"$T/c.txt"
        check_files_same "1 GiB begun on the host, $be -p $p" "$T/c.txt" "$T/g.txt"
    done
done
size=$(stat -c %s "$T/l.npy.gz")
printf '\377' | dd of="$T/l.npy.gz" bs=1 seek=$((size - 1000000)) conv=notrunc 2>/dev/null
same_message "a damaged byte in the last batch" "$T/l.npy.gz"
rm -f "$T/l.npy.gz"
unset GPUBATCH_HOST_INFLATE
# By default the host's 16 threads read a 100 MB stream before the device is
# open.
"$GB" reduce -v -p 16 --backend cuda "$T/s1.npy.gz" 2>"$T/gv.err" >/dev/null
grep -q "inflated on the GPU" "$T/gv.err" && fail "a 100 MB stream went to the GPU beside 16 threads" || ok

check_error "bad device" "no CUDA device 99" "$GB" reduce --backend cuda --device 99 "$f"
gzip -dc "$f" | tail -c +129 >"$T/big.raw"
# An absurd chunk is refused before any allocation when the host cannot hold
# it, else by the device's allocation.
check_error "absurd chunk" "out of device memory: a chunk buffer\|more than this machine's" sh -c \
    "cat '$T/big.raw' | '$GB' reduce --backend cuda --dtype float32 --chunk 1000G --streams 2 -"
summary
