#!/bin/sh
# test_npz_out.sh - outputs named .npz: transpose, quadratic (rows and
# planes, which write parts side by side), gen and merge write a zip archive
# of one stored member, arr_0.npy, that Python's zipfile checks (CRC-32,
# sizes) and np.load reads; the member holds the bytes the same command
# writes to an .npy file, the same bytes every run; raw input gets its .npy
# header. What cannot be an .npz archive is a usage error, and data without
# an .npy header (merged raw parts) an error: one line, no output file.
. "$(dirname "$0")/lib.sh"
need_python
need_numpy
cd "$T" || exit 1

# member ARCHIVE NPY: "same" when ARCHIVE is one stored member arr_0.npy,
# its CRC-32 right, holding NPY's bytes, and np.load reads it as NPY.
member() {
    $NP - "$1" "$2" <<'END' 2>&1
import sys, zipfile, numpy as np
z = zipfile.ZipFile(sys.argv[1])
info = z.infolist()
want = open(sys.argv[2], "rb").read()
bad = z.testzip()
names = [i.filename for i in info]
methods = [i.compress_type for i in info]
if names != ["arr_0.npy"] or methods != [zipfile.ZIP_STORED] or bad is not None:
    print("archive:", names, methods, bad)
elif z.read("arr_0.npy") != want:
    print("member bytes differ from the .npy file")
else:
    a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
    print("same" if a.files == ["arr_0"] and np.array_equal(a["arr_0"], b, equal_nan=True)
          and a["arr_0"].dtype == b.dtype else "np.load differs")
END
}

# gen: every generator's .npy, stored in the archive; the same bytes twice.
"$GB" gen --shape 300,7 --seed 3 --no-compress -o g.npy
"$GB" gen --shape 300,7 --seed 3 -o g.npz
check_eq "gen: one stored .npy member" same "$(member g.npz g.npy)"
"$GB" gen --shape 300,7 --seed 3 -o g2.npz
check_files_same "gen: the same archive every run" g.npz g2.npz
"$GB" gen --quadratic 5000 --seed 4 --no-compress -o q.npy
"$GB" gen --quadratic 5000 --seed 4 -o q.npz
check_eq "gen --quadratic: one stored member" same "$(member q.npz q.npy)"
"$GB" gen --shape 0,3 -o e.npz && "$GB" gen --shape 0,3 --no-compress -o e.npy
check_eq "gen: an empty array" same "$(member e.npz e.npy)"

# transpose: a batch, a matrix staged whole, raw input, the stand-in GPU.
"$GB" gen --shape 20,30,40 --dtype int16 --seed 5 --no-compress -o b.npy
"$GB" transpose --backend cpu b.npy -o bt.npy
"$GB" transpose --backend cpu b.npy -o bt.npz
check_eq "transpose of a batch" same "$(member bt.npz bt.npy)"
"$GB" gen --shape 700,500 --dtype float64 --seed 6 --no-compress -o m.npy
"$GB" transpose --backend cpu m.npy -o mt.npy
"$GB" transpose --backend cpu --chunk 256k m.npy -o mt.npz
check_eq "transpose of a staged matrix" same "$(member mt.npz mt.npy)"
"$GB" transpose --backend cpu --threads 3 --chunk 64k m.npy -o mt2.npz
check_files_same "transpose: the same archive at any chunk size and threads" mt.npz mt2.npz
tail -c +129 m.npy >m.raw
"$GB" transpose --backend cpu --dtype float64 --shape 700x500 m.raw -o mr.npz
check_eq "transpose of raw input: the member gets an .npy header" same "$(member mr.npz mt.npy)"
"$GB" transpose --backend cpu m.npy --compress -o - | "$GB" transpose --backend cpu - -o mtt.npz
check_eq "transpose of gzip from a pipe" same "$(member mtt.npz m.npy)"
FAKE="$top/${BUILD:-build}/tests/libfakecuda.so"
if [ -f "$FAKE" ]; then
    # the stand-in runs no kernel: its output is compared with its own .npy
    GPUBATCH_LIBCUDA=$FAKE "$GB" transpose --backend cuda --chunk 256k b.npy -o btc.npy
    GPUBATCH_LIBCUDA=$FAKE "$GB" transpose --backend cuda --chunk 256k b.npy -o btc.npz
    check_eq "transpose on the stand-in GPU" same "$(member btc.npz btc.npy)"
fi

# quadratic: rows and the four planes written side by side.
"$GB" quadratic --backend cpu q.npy -o r.npy
"$GB" quadratic --backend cpu --chunk 64k q.npz -o r.npz
check_eq "quadratic: complex roots" same "$(member r.npz r.npy)"
"$GB" quadratic --backend cpu --out-layout planes q.npy -o p.npy
"$GB" quadratic --backend cpu --out-layout planes --chunk 64k q.npy -o p.npz
check_eq "quadratic: the planes, written in parts" same "$(member p.npz p.npy)"
"$GB" gen --quadratic 5000 --seed 4 -o q.npy.gz
"$GB" quadratic --backend cpu --out-layout planes q.npy.gz -o pg.npz
check_files_same "quadratic of gzip input: the same archive" p.npz pg.npz

# merge: parts (plain, or blocked gzip inflated) joined into one archive.
"$GB" transpose --backend cpu --shard 0/2 b.npy -o b0.part
"$GB" transpose --backend cpu --shard 1/2 b.npy -o b1.part
"$GB" merge b1.part b0.part -o bm.npz
check_files_same "merge of plain parts: the archive of one run" bt.npz bm.npz
"$GB" transpose --backend cpu --shard 0/2 b.npy -o b0.part.gz
"$GB" transpose --backend cpu --shard 1/2 b.npy -o b1.part.gz
"$GB" merge b0.part.gz b1.part.gz -o bmg.npz
check_files_same "merge of blocked gzip parts: the archive of one run" bt.npz bmg.npz

# Reading an archive back: reduce of the member equals reduce of the .npy.
check_eq "reduce reads the archive" "$("$GB" reduce --backend cpu mt.npy | sed 's/  .*//')" \
    "$("$GB" reduce --backend cpu mt.npz | sed 's/  .*//')"

# What cannot be an .npz archive: usage errors, no file.
usage() {
    check_name=$1
    shift
    "$@" >/dev/null 2>"$T/use.err"
    st=$?
    if [ $st -eq 2 ] && [ ! -e bad.npz ] && [ ! -e bad.npz.gz ] &&
        grep -q "^gpubatch [a-z]*: .*npz" "$T/use.err"; then ok; else
        fail "$check_name: status $st: $(cat "$T/use.err")"
    fi
}
usage "a level" "$GB" transpose b.npy -3 -o bad.npz
usage "--compress" "$GB" gen --shape 5 --compress -o bad.npz
usage ".npz.gz" "$GB" quadratic q.npy -o bad.npz.gz
usage "--raw (transpose)" "$GB" transpose --raw b.npy -o bad.npz
usage "--raw (quadratic)" "$GB" quadratic --raw q.npy -o bad.npz
usage "--raw (gen)" "$GB" gen --shape 5 --raw -o bad.npz
usage "--shard" "$GB" transpose --shard 0/2 b.npy -o bad.npz
tail -c +129 b.npy >b.raw
"$GB" transpose --backend cpu --dtype int16 --shape 20x30x40 --shard 0/2 b.raw -o r0.part
"$GB" transpose --backend cpu --dtype int16 --shape 20x30x40 --shard 1/2 b.raw -o r1.part
check_error "merged raw parts: no .npy header" "bad.npz: the data has no .npy header" \
    "$GB" merge r0.part r1.part -o bad.npz
check_eq "merged raw parts: no file" "" "$(ls -A | grep -e 'bad' -e '^\.')"
check_error "an input is never overwritten" "mt.npz" "$GB" transpose mt.npz -f -o mt.npz
check_eq "the input is intact" same "$(member mt.npz mt.npy)"
summary
