#!/usr/bin/env python3
"""corrupt_bgzf.py - writes blocked-gzip (BGZF) .npy.gz files whose selected
members are corrupt in one way each, for the deflate decoder's error paths
(a memory-checker run of the GPU decoder, the CPU backend's messages).

  corrupt_bgzf.py OUTDIR [MEMBERS]

Writes OUTDIR/valid.npy.gz and one OUTDIR/KIND.npy.gz per kind below: a
float32 array of shape (N, 3) (the first member holds the .npy header), cut
into MEMBERS members (default 64) of up to 65280 bytes, then the EOF block.
In each corrupt file members 1, MEMBERS / 2 and the last data member are
corrupt in the same way; the other members are the valid file's. Most
kinds decode the member's first 1000 bytes, then meet a bad final block.
Every member is checked with zlib (raw inflate into exactly ISIZE bytes, no
input left, CRC-32 equal), and must fail or pass as its kind says.
"""
import os
import random
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import bgzf  # noqa: E402  (tests/cli/bgzf.py: member framing)

MEMBER_DATA = 65280
PREFIX = 1000  # bytes decoded before a bad block


class Bits:
    """A deflate bit writer: fields least significant bit first, Huffman
    codes most significant bit first."""

    def __init__(self):
        self.acc = 0
        self.n = 0

    def put(self, v, k):
        self.acc |= (v & ((1 << k) - 1)) << self.n
        self.n += k

    def code(self, c, k):
        for i in range(k - 1, -1, -1):
            self.put(c >> i & 1, 1)

    def align(self):
        self.n = (self.n + 7) & ~7

    def bytes(self):
        return self.acc.to_bytes((self.n + 7) // 8, "little")


def canonical(lens):
    """Canonical Huffman codes (RFC 1951 3.2.2) for a list of code lengths."""
    count = [0] * 16
    for n in lens:
        count[n] += 1
    count[0] = 0
    nxt, code = [0] * 16, 0
    for n in range(1, 16):
        code = (code + count[n - 1]) << 1
        nxt[n] = code
    codes = []
    for n in lens:
        codes.append(nxt[n])
        nxt[n] += n > 0
    return codes


def fixed_lit(b, sym):
    """Writes literal/length symbol sym of the fixed code (RFC 1951 3.2.6)."""
    if sym < 144:
        b.code(0x30 + sym, 8)
    elif sym < 256:
        b.code(0x190 + sym - 144, 9)
    elif sym < 280:
        b.code(sym - 256, 7)
    else:
        b.code(0xC0 + sym - 280, 8)


CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
CL_LENS = [4] * 13 + [5] * 6  # a complete code-length code


def dynamic_head(b, lit_lens, dist_lens, nlen=None, cl_lens=CL_LENS, syms=None):
    """Writes a final dynamic block's header: the counts (nlen may differ
    from the lengths given), the code-length code, then each length as
    itself, or the code-length symbols syms ((symbol, extra) pairs)."""
    nlen = len(lit_lens) if nlen is None else nlen
    b.put(1, 1)
    b.put(2, 2)
    b.put((nlen - 257) & 31, 5)
    b.put(len(dist_lens) - 1, 5)
    b.put(15, 4)
    for s in CL_ORDER:
        b.put(cl_lens[s], 3)
    codes = canonical(cl_lens)
    for s, extra in syms if syms is not None else [(n, 0) for n in lit_lens + dist_lens]:
        b.code(codes[s], cl_lens[s])
        if s >= 16:
            b.put(extra, {16: 2, 17: 3, 18: 7}[s])


def lens_with(n, pairs):
    """n code lengths, zero but for the (symbol, length) pairs."""
    lens = [0] * n
    for s, k in pairs:
        lens[s] = k
    return lens


def bad_block(kind):
    """The bytes of a final block that is bad in the way kind says (None
    for the kinds that change the member otherwise), byte-aligned, with
    zero bytes after it so that the decoder meets the fault, not the end."""
    b = Bits()
    if kind == "block-type":
        b.put(1, 1)
        b.put(3, 2)
    elif kind == "stored-length":
        b.put(1, 1)
        b.put(0, 2)
        b.align()
        b.put(5, 16)
        b.put(5, 16)
    elif kind == "too-many-codes":
        dynamic_head(b, [8] * 287, [5] * 30)
    elif kind == "code-lengths-oversubscribed":
        dynamic_head(b, [8] * 257, [5], cl_lens=[1] * 19, syms=[])
    elif kind == "litlen-incomplete":
        dynamic_head(b, lens_with(257, [(97, 2), (98, 2), (256, 2)]), [1])
    elif kind == "dist-oversubscribed":
        dynamic_head(b, lens_with(257, [(97, 1), (256, 1)]), [1, 1, 1])
    elif kind == "repeat-first":
        dynamic_head(b, [8] * 257, [5], syms=[(16, 0)])
    elif kind == "no-end-of-block":
        dynamic_head(b, lens_with(257, [(97, 1), (98, 1)]), [1])
    elif kind == "bad-symbol":
        b.put(1, 1)
        b.put(1, 2)
        fixed_lit(b, 286)
    elif kind == "bad-distance-symbol":
        b.put(1, 1)
        b.put(1, 2)
        fixed_lit(b, 257)
        b.code(30, 5)
    elif kind == "distance-too-far":
        b.put(1, 1)
        b.put(1, 2)
        fixed_lit(b, 285)  # length 258
        b.code(29, 5)
        b.put(8191, 13)  # distance 32768
    else:
        return None
    return b.bytes() + bytes(32)


def sync_prefix(data):
    """data[:PREFIX] as non-final deflate blocks ending on a byte boundary."""
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    return co.compress(data[:PREFIX]) + co.flush(zlib.Z_SYNC_FLUSH)


def corrupt(kind, data, rng):
    """One member for data, corrupt as kind says: (body, crc, isize)."""
    crc, n = zlib.crc32(data), len(data)
    bad = bad_block(kind)
    if bad is not None:
        return sync_prefix(data) + bad, crc, n
    body = bgzf.deflate_raw(data, 1)
    if kind == "output-past-isize":
        return body, crc, n - 1
    if kind == "output-past-64k":
        more = data + bytes(rng.getrandbits(8) for _ in range(65537 - n))
        return bgzf.deflate_raw(more, 6), zlib.crc32(more[:65536]), 65536
    if kind == "output-short":
        return body, crc, n + 1
    if kind == "crc":
        return body, crc ^ 1, n
    if kind == "cut":
        return body[: len(body) - 3], crc, n
    if kind == "trailing":
        return body + b"\x00", crc, n
    assert kind == "valid", kind
    return body, crc, n


KINDS = {
    # kind: zlib's verdict on such a member (a message, or the host rule's part that fails)
    "valid": "ok",
    "block-type": "invalid block type",
    "stored-length": "invalid stored block lengths",
    "too-many-codes": "too many length or distance symbols",
    "code-lengths-oversubscribed": "invalid code lengths set",
    "litlen-incomplete": "invalid literal/lengths set",
    "dist-oversubscribed": "invalid distances set",
    "repeat-first": "invalid bit length repeat",
    "no-end-of-block": "invalid code -- missing end-of-block",
    "bad-symbol": "invalid literal/length code",
    "bad-distance-symbol": "invalid distance code",
    "distance-too-far": "invalid distance too far back",
    "output-past-isize": "more output",
    "output-past-64k": "more output",
    "output-short": "size",
    "crc": "crc",
    "cut": "input ended",
    "trailing": "trailing",
}


def verdict(body, crc, isize):
    """zlib under the host reader's rule: "ok" or why the member fails."""
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(body, isize or 1)
    except zlib.error as e:
        return str(e).split(": ", 1)[-1]
    if d.unconsumed_tail or (not d.eof and len(out) == (isize or 1)):
        return "more output"
    if not d.eof:
        return "input ended"
    if d.unused_data:
        return "trailing"
    if len(out) != isize:
        return "size"
    return "ok" if zlib.crc32(out) == crc else "crc"


def npy_payload(members, rng):
    """A .npy file of float32 rows (a, b, c) filling `members` members."""
    rows = members * MEMBER_DATA // 12 - 12
    head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 3), }" % rows
    head += " " * (127 - 10 - len(head)) + "\n"
    vals = [rng.gauss(0.0, 1.0) for _ in range(rows * 3)]
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + struct.pack(
        "<%df" % len(vals), *vals)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    outdir = sys.argv[1]
    members = int(sys.argv[2]) if len(sys.argv) == 3 else 64
    if members < 3:
        sys.exit("corrupt_bgzf.py: MEMBERS must be at least 3")
    os.makedirs(outdir, exist_ok=True)
    rng = random.Random(1951)
    payload = npy_payload(members, rng)
    pieces = [payload[i:i + MEMBER_DATA] for i in range(0, len(payload), MEMBER_DATA)]
    good = [bgzf.block(p) for p in pieces]
    targets = sorted({1, len(pieces) // 2, len(pieces) - 1})
    for kind, want in KINDS.items():
        out = list(good)
        for i in targets if kind != "valid" else range(len(pieces)):
            body, crc, isize = corrupt(kind, pieces[i], rng)
            got = verdict(body, crc, isize)
            if got != want:
                sys.exit("corrupt_bgzf.py: %s member %d: zlib says %r, expected %r" % (kind, i, got, want))
            out[i] = bgzf.member(body, crc, isize)
        with open(os.path.join(outdir, kind + ".npy.gz"), "wb") as f:
            f.write(b"".join(out) + bgzf.EOF_BLOCK)
    print("%s: %d files of %d members, members %s corrupt" % (
        outdir, len(KINDS), len(pieces) + 1, ",".join(map(str, targets))))


if __name__ == "__main__":
    main()
