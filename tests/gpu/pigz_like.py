"""pigz_like.py IN OUT [LEVEL] - one gzip member whose deflate stream is made
of 1 MiB pieces compressed on every core, each ended by a sync flush and
referring to nothing before it (as `pigz -i` writes), for machines without
pigz."""
import mmap
import multiprocessing
import struct
import sys
import zlib

PIECE = 1 << 20


def piece(args):
    path, off, level, last = args
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        data = m[off:off + PIECE]
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH), zlib.crc32(data), len(data)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    level = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    with open(src, "rb") as f:
        size = f.seek(0, 2)
    offs = list(range(0, size, PIECE)) or [0]
    jobs = [(src, o, level, i == len(offs) - 1) for i, o in enumerate(offs)]
    crc = 0
    with open(dst, "wb") as out, multiprocessing.Pool() as pool:
        out.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03")
        for comp, _, _ in pool.imap(piece, jobs, chunksize=4):
            out.write(comp)
        with open(src, "rb") as f:
            while True:
                b = f.read(1 << 24)
                if not b:
                    break
                crc = zlib.crc32(b, crc)
        out.write(struct.pack("<II", crc, size & 0xFFFFFFFF))


if __name__ == "__main__":
    main()
