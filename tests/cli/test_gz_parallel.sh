#!/bin/sh
# test_gz_parallel.sh - gzip that is not blocked, read from a file, goes
# through the parallel decoder of one stream: every writer's output (gzip
# -1/-9, pigz with and without -i, Python's gzip, zlib's strategies, several
# members, a deflated .npz member) gives the plain file's results; damaged
# files (bits flipped, bytes overwritten, cut) give exactly zlib's verdict
# (Python's zlib reading the same bytes in order: the status, and its reason
# in the message), and the same status and message read from a pipe, which
# the parallel decoder reads through its spool.
. "$(dirname "$0")/lib.sh"
need_python

"$GB" gen --shape 1000000 --dist normal --seed 11 --no-compress -o "$T/f.npy"
"$GB" gen --shape 300000 --dtype int32 --seed 12 --no-compress -o "$T/i.npy"
want_f=$("$GB" reduce --backend cpu --op sum,min,argmax,sumsq "$T/f.npy" | cut -d' ' -f1-2)
want_i=$("$GB" reduce --backend cpu --op sum,max,count "$T/i.npy" | cut -d' ' -f1-2)

# write NAME WRITER...: the float array through a writer into NAME.
gzip -1 -c "$T/f.npy" >"$T/g1.gz"
gzip -9 -c "$T/f.npy" >"$T/g9.gz"
gzip -6 -c "$T/i.npy" >"$T/gi.gz"
if command -v pigz >/dev/null; then
    pigz -p 2 -b 64 -c "$T/f.npy" >"$T/pz.gz"
    pigz -p 2 -i -b 32 -c "$T/f.npy" >"$T/pzi.gz"
fi
"$PY" - "$T" <<'PYEOF'
import gzip, sys, zlib
t = sys.argv[1]
data = open(t + "/f.npy", "rb").read()
with gzip.open(t + "/py.gz", "wb") as f:  # level 9, Python's default
    f.write(data)
for name, strategy in (("fixed", zlib.Z_FIXED), ("rle", zlib.Z_RLE), ("huff", zlib.Z_HUFFMAN_ONLY),
                       ("filtered", zlib.Z_FILTERED)):
    c = zlib.compressobj(6, zlib.DEFLATED, 31, 8, strategy)
    open("%s/%s.gz" % (t, name), "wb").write(c.compress(data) + c.flush())
# stored blocks only, and sync flushes every 7000 bytes
c = zlib.compressobj(0, zlib.DEFLATED, 31)
open(t + "/stored.gz", "wb").write(c.compress(data) + c.flush())
c = zlib.compressobj(1, zlib.DEFLATED, 31)
out = b"".join(c.compress(data[i:i + 7000]) + c.flush(zlib.Z_SYNC_FLUSH) for i in range(0, len(data), 7000))
open(t + "/sync.gz", "wb").write(out + c.flush())
# two members: the first ends inside the array
half = 1 << 20
open(t + "/two.gz", "wb").write(gzip.compress(data[:half], 1) + gzip.compress(data[half:], 6))
# many members of 0 to 200 KB, at every level
import random
r, at, out, n, starts = random.Random(5), 0, b"", 0, []
while at < len(data):
    size = r.choice((0, r.randrange(1, 3000), r.randrange(20000, 200000)))
    c = zlib.compressobj(r.randrange(10), zlib.DEFLATED, 31)
    starts.append(len(out))
    out += c.compress(data[at:at + size]) + c.flush()
    at, n = at + size, n + 1
open(t + "/many.gz", "wb").write(out)
# members, and those that start in the last 64 KiB (where one that does
# not follow from the member before it is read in order)
open(t + "/many.n", "w").write("%d %d\n" % (n, sum(s >= len(out) - 65536 for s in starts)))
PYEOF

for f in g1 g9 pz pzi py fixed rle huff filtered stored sync two many; do
    [ -f "$T/$f.gz" ] || continue
    got=$("$GB" reduce --backend cpu --op sum,min,argmax,sumsq "$T/$f.gz" | cut -d' ' -f1-2)
    check_eq "$f: results of the plain file" "$want_f" "$got"
    how=$("$GB" reduce -v --backend cpu --op count "$T/$f.gz" 2>&1 | grep -c 'in parallel')
    check_eq "$f: -v says it was read in parallel" 1 "$how"
    # from a pipe, fed slowly at times: the same results, in parallel too
    got=$({ head -c 100000 "$T/$f.gz"; sleep 0.2; tail -c +100001 "$T/$f.gz"; } |
        "$GB" reduce -v --backend cpu --op sum,min,argmax,sumsq - 2>"$T/pipe.err" | cut -d' ' -f1-2)
    check_eq "$f from a pipe: results of the plain file" "$want_f" "$got"
    check_eq "$f from a pipe: -v says it was read in parallel" 1 "$(grep -c 'in parallel' "$T/pipe.err")"
done
# Two members of raw floats from a pipe, then bytes that are not gzip: the
# file's results, and the file's status and message for those bytes.
tail -c +129 "$T/f.npy" | gzip -1 >"$T/twice.gz"
tail -c +129 "$T/f.npy" | gzip -9 >>"$T/twice.gz"
file_twice=$("$GB" reduce --backend cpu --dtype float32 --op sum,count "$T/twice.gz" 2>&1; echo "exit $?")
pipe_twice=$(cat "$T/twice.gz" | "$GB" reduce --backend cpu --dtype float32 --op sum,count - 2>&1; echo "exit $?")
check_eq "two members from a pipe: the file's results" \
    "$(echo "$file_twice" | sed "s|$T/twice.gz|NAME|")" "$(echo "$pipe_twice" | sed "s|  -$|  NAME|")"
check_eq "two members: twice the count" "count 2000000" "$(echo "$file_twice" | grep count | cut -d' ' -f1-2)"
printf 'trailing garbage' >>"$T/twice.gz"
file_twice=$("$GB" reduce --backend cpu --dtype float32 --op sum "$T/twice.gz" 2>&1; echo "exit $?")
pipe_twice=$(cat "$T/twice.gz" | "$GB" reduce --backend cpu --dtype float32 --op sum - 2>&1; echo "exit $?")
check_eq "two members and garbage from a pipe: the file's status and message" \
    "$(echo "$file_twice" | sed "s|$T/twice.gz|NAME|")" "$(echo "$pipe_twice" | sed "s|-:|NAME:|; s|  -$|  NAME|")"
# every member of many in parallel, each one's decoder going on into the
# next; only members in the last 64 KiB may be read in order (by zlib, or
# whole on the reading thread), where a chunk ended at a member's end (chunks
# are cut as the threads come free)
read -r n_many n_tail <"$T/many.n"
how=$("$GB" reduce -v --backend cpu --op count "$T/many.gz" 2>&1)
n_par=$(echo "$how" | sed -n 's/.*single deflate streams: \([0-9]*\),.*/\1/p')
n_seq=$(echo "$how" | sed -n 's/.*gzip members inflated in order: \([0-9]*\) (less than 64 KiB of compressed data).*/\1/p')
n_whole=$(echo "$how" | sed -n 's/.*decoded whole on the reading thread: \([0-9]*\).*/\1/p')
n_seq=$((${n_seq:-0} + ${n_whole:-0}))
ok="no: ${n_par:-none} in parallel, $n_seq in order, of $n_many ($n_tail in the last 64 KiB)"
[ "$((${n_par:-0} + n_seq))" -eq "$n_many" ] && [ "$n_seq" -le "$n_tail" ] && ok=yes
check_eq "many members: -v counts them all, in parallel but for the last 64 KiB's" yes "$ok"
got=$("$GB" reduce --backend cpu --op sum,max,count "$T/gi.gz" | cut -d' ' -f1-2)
check_eq "int32 gzip -6: results of the plain file" "$want_i" "$got"
# taskset to one core: the decoder works alone, in order
if command -v taskset >/dev/null; then
    got=$(taskset -c 0 "$GB" reduce --backend cpu --op sum,min,argmax,sumsq "$T/g9.gz" | cut -d' ' -f1-2)
    check_eq "one core: results of the plain file" "$want_f" "$got"
fi

# -p bounds the parallel decoder as every other thread of the run: the same
# results, decoded on at most that many threads (-v says how many).
for p in 1 2; do
    how=$("$GB" reduce -v -p $p --backend cpu --op sum,min,argmax,sumsq "$T/g9.gz" 2>&1)
    check_eq "-p $p: results of the plain file" "$want_f" "$(echo "$how" | grep -v '^gpubatch' | cut -d' ' -f1-2)"
    check_eq "-p $p: the decoder's threads" "each on $p threads" \
        "$(echo "$how" | sed -n 's/.*single deflate streams: 1, \(each on [0-9]* threads\).*/\1/p')"
done
# A member whose trailer says it compresses over 20 to 1 (log-like lines)
# costs more speculatively than 2 threads pay for: decoded in order from
# its first chunk, the first probe left out (-v: no chunk speculative).
"$PY" - "$T/lines" <<'PYEOF'
import random, sys
random.seed(7)
msgs = ["INFO [net] request served", "INFO [net] request served", "INFO [disk] flushed pages",
        "DEBUG [cache] cache hit", "INFO [net] connection opened", "WARN [sched] queue long"]
lines, n, t = [], 0, 1700000000000
while n < 24 << 20:  # as tests/bench/gzip_files.sh's text: about 21 to 1 at gzip -6
    r = random.randrange(48)
    t += r % 8 == 0
    line = "%d.%03d %s\n" % (t // 1000, t % 1000, msgs[r // 8])
    lines.append(line)
    n += len(line)
open(sys.argv[1], "w").write("".join(lines))
PYEOF
gzip -6 -c "$T/lines" >"$T/lines.gz"
how=$("$GB" reduce -v -p 2 --backend cpu --op count --dtype uint8 "$T/lines.gz" 2>&1)
check_eq "lines, -p 2: the count" "count $(wc -c <"$T/lines" | tr -d ' ')" \
    "$(echo "$how" | grep '^count' | cut -d' ' -f1-2)"
check_eq "lines, -p 2: in order, no chunk speculative" "0 of them speculatively" \
    "$(echo "$how" | sed -n 's/.*chunks, \([0-9]* of them speculatively\).*/\1/p')"
# Floats (mostly literals) with -p 6, where the parallel decoder may decode
# two speculative chunks at once on a thread (test_pinflate checks those
# pairs): the plain file's results, and -v counts the pairs.
"$GB" gen --shape 6000000 --dist normal --seed 13 --no-compress -o "$T/f24.npy"
gzip -1 -c "$T/f24.npy" >"$T/f24.gz"
how=$("$GB" reduce -v -p 6 --backend cpu --op sum,min,argmax,sumsq "$T/f24.gz" 2>&1)
check_eq "floats, -p 6: results of the plain file" \
    "$("$GB" reduce --backend cpu --op sum,min,argmax,sumsq "$T/f24.npy" | cut -d' ' -f1-2)" \
    "$(echo "$how" | grep -v '^gpubatch' | cut -d' ' -f1-2)"
check_eq "floats, -p 6: -v counts the chunks decoded two at once" 1 \
    "$(echo "$how" | grep -c 'speculatively, [0-9]* of those two at once on a thread')"
rm -f "$T/f24.npy" "$T/f24.gz"
"$GB" gen --shape 1000000 --seed 11 -o "$T/pb.npy.gz"
check_eq "-p 1: BGZF blocks on one thread" "on 1 threads" \
    "$("$GB" reduce -v -p 1 --backend cpu "$T/pb.npy.gz" 2>&1 | sed -n 's/.*BGZF blocks: [0-9]* \(on [0-9]* threads\).*/\1/p')"

# A deflated .npz member large enough for the parallel decoder.
NP=$(numpy_python)
if [ -n "$NP" ]; then
    "$NP" -c 'import numpy as np, sys; np.savez_compressed(sys.argv[2], f=np.load(sys.argv[1]))' \
        "$T/f.npy" "$T/z.npz"
    got=$("$GB" reduce --backend cpu --op sum,min,argmax,sumsq "$T/z.npz" | cut -d' ' -f1-2)
    check_eq ".npz member: results of the plain file" "$want_f" "$got"
    how=$("$GB" reduce -v --backend cpu --op count "$T/z.npz" 2>&1 | grep -c 'in parallel')
    check_eq ".npz member: -v says it was read in parallel" 1 "$how"
else
    missing "python3-numpy missing: the deflated .npz member not read"
fi

# One block of 300 MiB (fixed Huffman, matches of 258 zeros): the parallel
# decoder gives it up past 256 MiB and zlib reads it in order, in bounded
# memory, with the right data. Full runs only (it takes a few seconds).
if [ -z "${GPUBATCH_TEST_QUICK:-}" ]; then
    "$PY" - "$T/huge.gz" <<'PYEOF'
import struct, sys, zlib
out = bytearray()
acc = nbits = 0
def put(code, n):  # a Huffman code, most significant bit first
    global acc, nbits
    for i in range(n - 1, -1, -1):
        acc |= ((code >> i) & 1) << nbits
        nbits += 1
        if nbits == 8:
            out.append(acc)
            acc = nbits = 0
def match():                # length 258 (symbol 285), distance 1
    put(0xC5, 8)
    put(0, 5)
put(1, 1); put(0b10, 2)     # final block, fixed Huffman (BTYPE 01, low bit first)
put(0x30, 8)                # literal 0
n = (300 << 20) // 258
# eight matches are 104 bits, 13 bytes: from the ninth on, each eight
# writes the bytes of the eight before, so those bytes are repeated
for _ in range(16):
    match()
out += out[-13:] * ((n - 16) // 8)
for _ in range((n - 16) % 8):
    match()
put(0, 7)                   # end of block
if nbits:
    out.append(acc)
size = 1 + n * 258
open(sys.argv[1], "wb").write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(out) +
                              struct.pack("<II", zlib.crc32(bytes(size)), size & 0xFFFFFFFF))
PYEOF
    got=$("$GB" reduce -v --backend cpu --dtype uint8 --op sum,count "$T/huge.gz" 2>"$T/huge.err")
    check_eq "one 300 MiB block: results" "sum 0  $T/huge.gz
count 314572693  $T/huge.gz" "$got"
    check_eq "one 300 MiB block: read on in order" 1 "$(grep -c 'inflated in order: 1' "$T/huge.err")"
fi

# damage SRC N: N damaged copies of SRC, each read from the file and from a
# pipe: the same status and message (the name aside), and where the damage
# lies past the first 64 KiB (so that the .npy header decodes) and leaves
# the data's length as it was (else the .npy layer says so first), zlib's
# verdict on them.
damage() {
    src=$1
    n=$2
    size=$(wc -c <"$src")
    # every copy made, and zlib's verdict on each taken, in one process
    "$PY" - "$src" "$T/bad" "$n" >"$T/verdicts" <<'PYEOF'
import random, sys, zlib
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def lengths(g):  # each member's data length, read unchecked, while they decode
    out, rest = [], bytes(g)
    while rest[:2] == b"\x1f\x8b":
        body = 10 if not rest[3] & 8 else rest.index(0, 10) + 1  # past the name gzip stores
        raw = zlib.decompressobj(-15)
        try:
            out.append(len(raw.decompress(rest[body:])))
        except zlib.error:
            break
        if not raw.eof:
            break
        rest = raw.unused_data[8:]
    return out

def verdict(g):  # zlib's, member by member: "ok", or where and why it stops
    rest = bytes(g)
    while True:
        at, d = len(g) - len(rest), zlib.decompressobj(31)
        try:
            d.decompress(rest)
        except zlib.error as e:
            return "%d: %s" % (at, str(e).split(": ", 1)[1])
        if not d.eof:
            return "%d: unexpected end of compressed data" % at
        rest = d.unused_data
        if rest[:2] != b"\x1f\x8b":
            return "ok"

orig = open(src, "rb").read()
was = lengths(orig)
for seed in range(n):
    b = bytearray(orig)
    r = random.Random(seed)
    how = seed % 4
    at = len(b) - 8
    if how == 0:                       # one bit flipped past the header
        at = r.randrange(20, len(b) - 8)
        b[at] ^= 1 << r.randrange(8)
    elif how == 1:                     # a run of bytes overwritten
        at = r.randrange(20, len(b) - 100)
        for k in range(r.randrange(1, 40)):
            b[at + k] = r.randrange(256)
    elif how == 2:                     # cut
        at = r.randrange(20, len(b) - 1)
        b = b[:at]
    else:                              # trailer: CRC or length
        b[len(b) - 1 - r.randrange(8)] ^= 0x10
    open("%s-%d.gz" % (dst, seed), "wb").write(bytes(b))
    # a member of another length is the .npy layer's error, told before the trailer's
    now = lengths(b)
    print(verdict(b) if at >= 65536 and all(x == y for x, y in zip(was, now)) else "")
PYEOF
    i=0
    while [ $i -lt "$n" ]; do
        verdict=$(sed -n "$((i + 1))p" "$T/verdicts")
        mv "$T/bad-$i.gz" "$T/bad.gz"
        file_out=$({ "$GB" reduce --backend cpu --op sum "$T/bad.gz" 2>&1; echo "exit $?"; } |
            sed "s|$T/bad.gz|NAME|g")
        pipe_out=$({ cat "$T/bad.gz" | "$GB" reduce --backend cpu --op sum - 2>&1; echo "exit $?"; } |
            sed "s|^gpubatch: error: -:|gpubatch: error: NAME:|; s|  -$|  NAME|")
        check_eq "$(basename "$src") damage $i ($size bytes): file and pipe" "$pipe_out" "$file_out"
        case "$verdict" in
        "") ;;
        ok) check_eq "$(basename "$src") damage $i: zlib takes it" "exit 0" \
                "$(echo "$file_out" | tail -1)" ;;
        *) check_eq "$(basename "$src") damage $i: zlib's verdict" \
               "gpubatch: error: NAME: gzip member at byte $verdict
exit 1" "$file_out" ;;
        esac
        [ -n "$verdict" ] && judged=$((judged + 1))
        case "$file_out" in *"exit 1") refused=$((refused + 1)) ;; esac
        i=$((i + 1))
    done
}
# counts SOAK FULL QUICK: make soak's count of damaged copies, make test's,
# or the quick lists' (each copy is read twice, from the file and a pipe)
counts() {
    if [ -n "${GPUBATCH_TEST_SOAK:-}" ]; then echo "$1"; else pick "$2" "$3"; fi
}
refused=0
judged=0
damage "$T/g1.gz" "$(counts 40 20 8)"
damage "$T/g9.gz" "$(counts 20 10 4)"
damage "$T/fixed.gz" "$(counts 12 8 4)"
damage "$T/many.gz" "$(counts 30 16 6)"
# most damage is refused (a flipped bit can still decode, and then the CRC-32 refuses it)
check_eq "damaged files refused" 1 "$([ "$refused" -ge "$(counts 60 30 12)" ] && echo 1 || echo "$refused")"
check_eq "damaged files judged by zlib" 1 "$([ "$judged" -ge "$(counts 40 20 8)" ] && echo 1 || echo "$judged")"
summary
