#!/usr/bin/env python3
"""shardfile.py - rewrites the checks of a gpubatch state or part file after
an edit, as a forger would, so that tests reach the checks behind them.

  shardfile.py reseal FILE

A state ends with "check CRC" (CRC-32 of the text before it); a part's header
has that line before its "data" line, and the part ends with "part-end CRC"
(CRC-32 of the bytes between the header and that line).
"""
import sys
import zlib


def reseal(path):
    """Recomputes every check line of the file at path in place."""
    b = open(path, "rb").read()
    if b.startswith(b"gpubatch reduce-state"):
        i = b.rindex(b"check ")
        b = b[:i] + b"check %08x\n" % zlib.crc32(b[:i])
    else:
        d = b.index(b"\ndata\n")
        i = b.rindex(b"\ncheck ", 0, d + 1) + 1
        head = b[:i] + b"check %08x\n" % zlib.crc32(b[:i]) + b"data\n"
        data = b[d + 6:len(b) - 18]
        b = head + data + b"part-end %08x\n" % zlib.crc32(data)
    open(path, "wb").write(b)


if __name__ == "__main__":
    if sys.argv[1] == "reseal":
        reseal(sys.argv[2])
