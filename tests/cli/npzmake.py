#!/usr/bin/env python3
"""npzmake.py - .npz archives for tests/cli/test_npz.sh.

  npzmake.py arrays DIR SEED   random arrays of several dtypes and shapes (none
                               all zeros), each as DIR/KEY.npy, and together
                               as DIR/s.npz (np.savez: stored members),
                               DIR/z.npz (np.savez_compressed: deflated) and
                               DIR/z64.npz (zipfile with zip64 extra fields
                               and an archive comment); DIR/keys lists the
                               keys in archive order
  npzmake.py corrupt DIR       damaged archives, one per line of DIR/cases:
                               FILE PHRASE (a phrase of the expected error)
"""
import io
import os
import struct
import zlib
import sys
import zipfile

import numpy as np


def arrays(d, seed):
    """The test arrays: every reduce dtype, empty, one-element, 2-D, 3-D."""
    rng = np.random.default_rng(seed)
    out = {}
    ints = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
    for dt in ints:
        info = np.iinfo(dt)
        n = int(rng.integers(1, 3000))
        out["i_" + dt] = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    for dt in ["float32", "float64"]:
        a = (rng.standard_normal(12345) * 10.0 ** rng.integers(-30, 30, 12345)).astype(dt)
        a[::97] = -a[::97]
        out["f_" + dt] = a
    out["one"] = np.array([rng.standard_normal()], dtype="float64")
    out["empty"] = np.zeros(0, dtype="float32")
    out["m2"] = rng.standard_normal((61, 67)).astype("float32")
    out["m3"] = rng.integers(-9, 9, size=(3, 17, 5), dtype="int16")
    out["c64"] = (rng.standard_normal((9, 4)) + 1j * rng.standard_normal((9, 4))).astype("complex64")
    out["rows"] = rng.standard_normal((5000, 3))
    out["planes"] = rng.standard_normal((3, 777)).astype("float32")
    out["row1"] = rng.standard_normal((1, 3))
    out["rows0"] = np.zeros((0, 3), dtype="float32")
    for k, a in out.items():
        np.save(os.path.join(d, k + ".npy"), a)
    np.savez(os.path.join(d, "s.npz"), **out)
    np.savez_compressed(os.path.join(d, "z.npz"), **out)
    with zipfile.ZipFile(os.path.join(d, "z64.npz"), "w") as z:
        for i, (k, a) in enumerate(out.items()):
            info = zipfile.ZipInfo(k + ".npy")
            info.compress_type = zipfile.ZIP_DEFLATED if i % 2 else zipfile.ZIP_STORED
            buf = io.BytesIO()
            np.save(buf, a)
            with z.open(info, "w", force_zip64=True) as w:
                w.write(buf.getvalue())
        z.comment = b"made by npzmake.py"
    with open(os.path.join(d, "keys"), "w") as f:
        f.write("\n".join(out) + "\n")


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def corrupt(d):
    """One archive per kind of damage, with the phrase its error must hold."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6667, 3))  # (N, 3): quadratic and transpose read it
    buf = io.BytesIO()
    np.savez_compressed(buf, x=a)
    good = buf.getvalue()
    buf = io.BytesIO()
    np.savez(buf, x=a)
    stored = buf.getvalue()
    cen = good.rfind(b"PK\x01\x02")
    data_off = 30 + len("x.npy") + struct.unpack_from("<H", good, 28)[0]
    comp = struct.unpack_from("<I", good, cen + 20)[0]
    cases = []

    def put(name, data, phrase):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        cases.append((name, phrase))

    b = bytearray(good)
    b[cen + 16] ^= 0x40  # central CRC-32
    put("badcrc.npz", b, "incorrect data check")
    b = bytearray(good)
    struct.pack_into("<I", b, cen + 24, struct.unpack_from("<I", good, cen + 24)[0] + 8)
    put("badsize.npz", b, "incorrect length check")
    b = bytearray(good)
    for i in range(data_off + comp // 2, data_off + comp // 2 + 64):
        b[i] ^= 0xA5
    put("baddata.npz", b, "deflated data at byte")
    b = bytearray(good)
    struct.pack_into("<I", b, cen + 20, comp - 50)  # the data range ends early
    put("cutdata.npz", b, "unexpected end of compressed data")
    put("truncated.npz", good[: len(good) // 2], "not a zip archive")
    b = bytearray(good)
    struct.pack_into("<I", b, cen + 42, 7)
    put("badoffset.npz", b, "no local header at byte 7")
    b = bytearray(good)
    struct.pack_into("<I", b, cen + 42, 1 << 30)
    put("faroffset.npz", b, "lies outside the archive")
    b = bytearray(good)
    struct.pack_into("<H", b, cen + 8, 1)
    put("encrypted.npz", b, "member x.npy is encrypted")
    b = bytearray(good)
    struct.pack_into("<H", b, cen + 10, 12)
    struct.pack_into("<H", b, 8, 12)
    put("bzip2.npz", b, "compression method 12 (bzip2) is not supported")
    with zipfile.ZipFile(os.path.join(d, "dup.npz"), "w") as z:
        z.writestr("x.npy", npy_bytes(a[:5]))
        z.writestr("x", npy_bytes(a[:6]))
    cases.append(("dup.npz", "two members are named x"))
    b = bytearray(stored)
    b[-22 + 16] ^= 1  # the central directory's offset
    put("badcd.npz", b, "the central directory is not where")
    put("notzip.npz", npy_bytes(a), "not a zip archive")
    with zipfile.ZipFile(os.path.join(d, "notnpy.npz"), "w") as z:
        z.writestr("x.npy", b"hello, not an array")
    cases.append(("notnpy.npz", "not an .npy file"))
    sdata = 30 + len("x.npy") + struct.unpack_from("<H", stored, 28)[0]
    scen = stored.rfind(b"PK\x01\x02")
    ssize = struct.unpack_from("<I", stored, scen + 20)[0]

    def stored_crc(b):  # the member's CRC-32 made right again in both headers
        crc = zlib.crc32(bytes(b[sdata:sdata + ssize]))
        struct.pack_into("<I", b, 14, crc)
        struct.pack_into("<I", b, scen + 16, crc)

    b = bytearray(stored)
    b[sdata + 12] ^= 0x20  # 'descr'
    stored_crc(b)
    put("badheader.npz", b, "'Descr'")
    b = bytearray(stored)
    b[sdata + ssize // 2] ^= 0x10  # a data byte, the CRC-32 left as it was
    put("storedcrc.npz", b, "stored data at byte %d: incorrect data check" % sdata)
    with open(os.path.join(d, "cases"), "w") as f:
        for name, phrase in cases:
            f.write("%s %s\n" % (name, phrase))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "arrays":
        arrays(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    elif len(sys.argv) == 3 and sys.argv[1] == "corrupt":
        corrupt(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
