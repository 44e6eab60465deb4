"""npz_deflated.py NPY NPZ [PIGZ] - writes NPZ, a zip archive of one
deflated member arr_0.npy holding the file NPY, as np.savez_compressed
writes it (level 6), but fast for gigabytes: the deflate stream comes from
`PIGZ -6 -z` (one stream, compressed on every core) where PIGZ runs, else
from zlib on one core. Members and archive under 4 GiB only (no zip64)."""
import os
import struct
import subprocess
import sys
import zlib


def deflated(path, pigz):
    """The raw deflate stream of the file at path, level 6."""
    try:
        z = subprocess.run([pigz, "-6", "-z", "-c", path], capture_output=True, check=True).stdout
        return z[2:-4]  # the zlib header and its Adler-32 off
    except (OSError, subprocess.CalledProcessError):
        with open(path, "rb") as f:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            return c.compress(f.read()) + c.flush()


def main():
    src, dst = sys.argv[1], sys.argv[2]
    pigz = sys.argv[3] if len(sys.argv) > 3 else "pigz"
    crc, size = 0, 0
    with open(src, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            crc = zlib.crc32(block, crc)
            size += len(block)
    raw = deflated(src, pigz)
    if size >= 1 << 32 or len(raw) >= 1 << 32:
        sys.exit("npz_deflated.py: 4 GiB and over need zip64, not written here")
    name = b"arr_0.npy"
    # version 2.0, no flags, deflate, DOS time and date 0 (1980-01-01 as 0x21)
    head = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(raw), size,
                       len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, crc,
                          len(raw), size, len(name), 0, 0, 0, 0, 0, 0) + name
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head)
        f.write(raw)
        at = f.tell()
        f.write(central)
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), at, 0))
    os.replace(tmp, dst)


if __name__ == "__main__":
    main()
