#!/usr/bin/env python3
"""bgzf.py - writes a file as blocked gzip (BGZF) with blocks of random sizes
(empty blocks included), independently of gpubatch's writer, so that shard
tests see block boundaries anywhere.

  bgzf.py SEED IN OUT

As a module: member() frames a raw deflate body, block() compresses and
frames data, EOF_BLOCK ends a file.
"""
import random
import struct
import sys
import zlib

EOF_BLOCK = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")


def member(body, crc, isize):
    """One BGZF block around a raw deflate body, with the trailer's CRC-32
    and ISIZE as given (any, to write corrupt members)."""
    size = 18 + len(body) + 8
    head = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff\x06\x00BC\x02\x00" + struct.pack("<H", size - 1)
    return head + body + struct.pack("<II", crc & 0xffffffff, isize & 0xffffffff)


def deflate_raw(data, level=6):
    """data as a raw deflate stream."""
    co = zlib.compressobj(level, zlib.DEFLATED, -15)
    return co.compress(data) + co.flush()


def block(data):
    """One BGZF block: gzip member with the BC extra field giving its size."""
    return member(deflate_raw(data), zlib.crc32(data), len(data))


def main():
    rng = random.Random(int(sys.argv[1]))
    data = open(sys.argv[2], "rb").read()
    out = []
    pos = 0
    while pos < len(data):
        if rng.random() < 0.05:
            out.append(block(b""))
        n = rng.choice([1, 7, 4096, 30000, 65280, rng.randint(1, 65280)])
        out.append(block(data[pos:pos + n]))
        pos += n
    out.append(EOF_BLOCK)
    open(sys.argv[3], "wb").write(b"".join(out))


if __name__ == "__main__":
    main()
