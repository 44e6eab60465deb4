#!/usr/bin/env python3
"""tpref.py - the reference for `gpubatch transpose`, computed with numpy.

  tpref.py make DTYPE SHAPE ORDER SEED FILE   random-byte array (.npy), ORDER C or F
  tpref.py check IN OUT                       OUT (.npy, .npy.gz) == IN with its last
                                              two axes swapped, in C order, byte for byte
  tpref.py check-raw IN OUT                   the same for raw OUT (no header)
  tpref.py batch     one command a line on stdin, "ID make|check ARGS..."; prints
                     "ID STATUS TEXT" for each (one process for many)
Random bytes make every bit pattern appear: NaN payloads, infinities, subnormals.
DTYPE is a numpy dtype: "float16", "bool", "V2" (bfloat16's bytes), ">f4" (big-endian
input, whose output is little-endian), ...
"""
import gzip
import sys

import numpy as np


def load(path):
    """Loads an .npy file, gzip-compressed or not."""
    with open(path, "rb") as f:
        compressed = f.read(2) == b"\x1f\x8b"
    with (gzip.open if compressed else open)(path, "rb") as f:
        return np.load(f)


def expected(path):
    """The transpose of the input's last two axes, as a C-order array of
    little-endian elements (big-endian ones byte-swapped, bit for bit)."""
    a = load(path)
    t = np.ascontiguousarray(np.swapaxes(a, -1, -2))
    if t.dtype.byteorder == ">":
        t = t.byteswap().view(t.dtype.newbyteorder("<"))
    return t


def main(argv):
    cmd = argv[1]
    if cmd == "batch":
        import pybatch
        return pybatch.run(main, argv[0])
    if cmd == "make":
        dtype, shape, order, seed, out = argv[2:7]
        dims = tuple(int(d) for d in shape.split("x"))
        dt = np.dtype(dtype)
        n = int(np.prod(dims, dtype=np.int64))
        raw = np.random.default_rng(int(seed)).integers(0, 256, n * dt.itemsize, dtype=np.uint8)
        a = raw.view(dt).reshape(dims)
        np.save(out, np.asfortranarray(a) if order == "F" else a)
        return 0
    want = expected(argv[2])
    if cmd == "check":
        got = load(argv[3])
        if got.dtype != want.dtype or got.shape != want.shape:
            print(f"got {got.dtype} {got.shape}, want {want.dtype} {want.shape}")
            return 1
        if np.isfortran(got) and got.ndim > 1 and min(got.shape) > 1:
            print("output is in Fortran order")
            return 1
        got_bytes = np.ascontiguousarray(got).tobytes()
    else:
        with open(argv[3], "rb") as f:
            got_bytes = f.read()
    if got_bytes != want.tobytes():
        print(f"bytes differ ({len(got_bytes)} vs {want.nbytes})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
