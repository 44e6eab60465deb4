#!/bin/sh
# test_sniff.sh - input that is not an array gpubatch reads is named by its
# first bytes: zstd, xz, bzip2, lz4, lzip, compress (.Z) and 7-Zip data,
# zip archives whose members are not stored or deflated .npy arrays, empty
# files, empty standard input, gzip that decompresses to nothing, and text.
# Every command refuses each with one error line naming the file, status 1
# and no output file; --dtype still reads any bytes as raw elements.
. "$(dirname "$0")/lib.sh"
need_python
R() { "$GB" reduce --backend cpu -q "$@"; }
cd "$T" || exit 1

# A 4-element float64 .npy, the payload of every case.
"$PY" -c '
import struct, sys
h = "{\x27descr\x27: \x27<f8\x27, \x27fortran_order\x27: False, \x27shape\x27: (4,), }"
h += " " * ((64 - (11 + len(h)) % 64) % 64) + "\n"
sys.stdout.buffer.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() +
                        struct.pack("<4d", 1, 2, 3, 4))' >x.npy

# Each format's first bytes, written by hand (so that the test needs none of
# the tools), followed by some of the array.
magic() { # NAME OCTAL-ESCAPES
    printf "$2" >"$1"
    cat x.npy >>"$1"
}
magic zst.npy '\050\265\057\375\044\000'
magic xz.npy '\3757zXZ\000\000\004'
magic bz2.npy 'BZh91AY&SY'
magic lz4.npy '\004\042\115\030\144\100'
magic lz4legacy.npy '\002\041\114\030'
magic lz.npy 'LZIP\001'
magic Z.npy '\037\235\220'
magic 7z.npy '7z\274\257\047\034\000\004'

# expect FILE PATTERN: reduce, transpose and quadratic each refuse FILE
# with PATTERN after "gpubatch: error: FILE: ", and write nothing.
expect() {
    x_f=$1
    x_pat="^gpubatch: error: $1: $2"
    check_error "reduce $x_f" "$x_pat" R "$x_f"
    check_error "transpose $x_f" "$x_pat" "$GB" transpose --backend cpu -q "$x_f" -o out.npy
    check_error "quadratic $x_f" "$x_pat" "$GB" quadratic --backend cpu -q "$x_f" -o out.npy
    [ ! -e out.npy ] && ok || fail "$x_f: an output file was left"
    rm -f out.npy
}
expect zst.npy "zstd-compressed data: not supported; decompress with zstd -dc$"
expect xz.npy "xz-compressed data: not supported; decompress with xz -dc$"
expect bz2.npy "bzip2-compressed data: not supported; decompress with bzip2 -dc$"
expect lz4.npy "lz4-compressed data: not supported; decompress with lz4 -dc$"
expect lz4legacy.npy "lz4-compressed data (legacy format): not supported; decompress with lz4 -dc$"
expect lz.npy "lzip-compressed data: not supported; decompress with lzip -dc$"
expect Z.npy "compress (.Z) data: not supported; decompress with gzip -dc$"
expect 7z.npy "a 7-Zip archive: not supported; extract it with 7z x$"

# The same bytes on standard input, and inside gzip.
check_error "zstd on stdin" "^gpubatch: error: -: zstd-compressed data: not supported" \
    sh -c "\"$GB\" reduce --backend cpu -q - < zst.npy"
gzip -c xz.npy >xz.npy.gz
check_error "xz inside gzip" "^gpubatch: error: xz.npy.gz: xz-compressed data: not supported" R xz.npy.gz

# What the real tools write, where they are installed.
for t in "zstd zst" "xz xz" "bzip2 bz2" "lz4 lz4"; do
    set -- $t
    if command -v "$1" >/dev/null 2>&1; then
        "$1" -c x.npy >"real.$2" 2>/dev/null
        check_error "$1's output" "^gpubatch: error: real.$2: $1-compressed data: not supported; decompress with $1 -dc$" \
            R "real.$2"
    else
        echo "note: $1 is not installed: its own output not tried (magic bytes were)"
    fi
done

# Empty inputs: a file, /dev/null, standard input, gzip of nothing.
: >empty.npy
expect empty.npy "empty file (0 bytes): not an .npy file (give --dtype to read an empty raw array)$"
check_error "/dev/null" "^gpubatch: error: /dev/null: empty input (0 bytes): not an .npy file" R /dev/null
check_error "empty stdin" "^gpubatch: error: -: empty input (0 bytes): not an .npy file" \
    sh -c "\"$GB\" reduce --backend cpu -q - < /dev/null"
check_error "empty pipe" "^gpubatch: error: -: empty input (0 bytes): not an .npy file" \
    sh -c "true | \"$GB\" reduce --backend cpu -q -"
gzip -c </dev/null >empty.gz
check_error "gzip of nothing" "^gpubatch: error: empty.gz: compressed data that decompresses to nothing: not an .npy file$" \
    R empty.gz
check_eq "an empty raw array with --dtype" "count 0  /dev/null" "$(R --dtype float32 --op count /dev/null)"

# Text, and bytes of no known kind.
printf 'a,b\n1,2\n' >t.csv
expect t.csv "text, not an .npy file (give --dtype to read raw data)$"
printf '\001\002\003\004\005\006\007\010' >bin.dat
expect bin.dat "not an .npy file (give --dtype to read raw data)$"

# --dtype reads the bytes as they are, magic or not.
check_eq "--dtype reads zstd's bytes as raw" "count 4  zst.npy" \
    "$(head -c 32 zst.npy > zst4.raw; R --dtype float64 --op count zst4.raw | sed 's/zst4.raw/zst.npy/')"

# Zip archives gpubatch does not read: members of another compression
# method (named), and members that are not .npy arrays.
"$PY" - <<'END'
import zipfile
data = open("x.npy", "rb").read()
for name, method in (("bzip2", zipfile.ZIP_BZIP2), ("lzma", zipfile.ZIP_LZMA)):
    with zipfile.ZipFile(name + ".npz", "w", compression=method) as z:
        z.writestr("x.npy", data)
with zipfile.ZipFile("mixed.zip", "w") as z:
    z.writestr("x.npy", data)
    z.writestr("notes.txt", "not an array\n")
with zipfile.ZipFile("docs.zip", "w", compression=zipfile.ZIP_DEFLATED) as z:
    z.writestr("a.csv", "1,2,3\n")
END
check_error "bzip2 zip member" "^gpubatch: error: bzip2.npz: member x.npy: compression method 12 (bzip2) is not supported (only stored and deflate" \
    R bzip2.npz
check_error "LZMA zip member" "^gpubatch: error: lzma.npz: member x.npy: compression method 14 (LZMA) is not supported" \
    R lzma.npz
R --op count mixed.zip >mixed.out 2>mixed.err
check_eq "mixed zip: status" 1 $?
check_eq "mixed zip: the array" "count 4  mixed.zip:x" "$(cat mixed.out)"
check_eq "mixed zip: the text member" "gpubatch: error: mixed.zip:notes.txt: text, not an .npy file (give --dtype to read raw data)" \
    "$(cat mixed.err)"
check_error "zip of text" "^gpubatch: error: docs.zip:a.csv: text, not an .npy file" R docs.zip

summary
