#!/bin/sh
# test_valgrind.sh - representative command lines under valgrind memcheck:
# gen, reduce and quadratic; plain, gzip, BGZF and .npz input; plain, gzip
# and BGZF output; stdin and stdout; error paths. Any memcheck error,
# definite or indirect leak fails the test; every command must also keep its
# normal exit status. Skipped (with the reason) without valgrind, or for a
# binary built with AddressSanitizer, which valgrind cannot run.
. "$(dirname "$0")/lib.sh"
VG_STATUS=99

need_tool valgrind valgrind
if grep -q __asan_init "$GB" 2>/dev/null; then
    echo "skip: $GB is built with AddressSanitizer"
    summary
    exit
fi
need_python
# The driver is not what this checks (and is not valgrind-clean): CPU only.
export GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1

# vg WHAT STATUS CMD...: runs CMD under memcheck (stdin from $T/in when it
# exists); expects exit STATUS and a clean report.
vg() {
    what=$1
    want=$2
    shift 2
    in=/dev/null
    [ -f "$T/in" ] && in="$T/in"
    valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --error-exitcode=$VG_STATUS \
        --log-file="$T/vg.log" "$@" <"$in" >"$T/vg.out" 2>"$T/vg.err"
    st=$?
    if [ -s "$T/vg.log" ] || [ "$st" -eq $VG_STATUS ]; then
        fail "$what: memcheck: $(head -c 1500 "$T/vg.log")"
    elif [ "$st" -ne "$want" ]; then
        fail "$what: exit status $st, expected $want: $(head -c 300 "$T/vg.err")"
    else
        ok
    fi
}

# Inputs made without valgrind.
"$GB" gen --shape 300000 --dist normal --seed 3 -o "$T/a.npy.gz"
"$GB" gen --shape 300000 --dist normal --seed 3 --no-compress -o "$T/a.npy"
gzip -dc "$T/a.npy.gz" | gzip -1 >"$T/single.npy.gz"
"$GB" gen --quadratic 20000 --dtype float64 -o "$T/q.npy.gz"
head -c 1000 "$T/a.npy.gz" >"$T/cut.npy.gz"
gzip -dc "$T/q.npy.gz" >"$T/q.npy"
"$PY" -m zipfile -c "$T/z.npz" "$T/a.npy" "$T/q.npy" # deflated members a and q
"$PY" -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[b.rfind(b"PK\1\2") + 16] ^= 1
open(sys.argv[2], "wb").write(b)' "$T/z.npz" "$T/badcrc.npz"

vg "gen BGZF, 2 threads" 0 "$GB" gen --shape 200000x3 -p 2 -o "$T/g.npy.gz"
vg "gen raw, level 9" 0 "$GB" gen --shape 70000 --dtype int16 --raw -9 -o "$T/g.bin.gz"
vg "gen --quadratic to stdout" 0 "$GB" gen --quadratic 5000 --no-compress -c
vg "reduce .npy, every op" 0 "$GB" reduce --op sum,mean,min,max,argmin,argmax,sumsq,count \
    "$T/a.npy"
vg "reduce BGZF, small chunks" 0 "$GB" reduce --chunk 128k --streams 3 -p 2 --op sum,max \
    "$T/a.npy.gz"
vg "reduce single-member gzip, --json --skipnan" 0 "$GB" reduce --json --skipnan \
    --op mean,count "$T/single.npy.gz"
vg "reduce raw --dtype --shape" 0 "$GB" reduce -q --dtype int16 --shape 70000 --op sum \
    "$T/g.bin.gz"
cp "$T/a.npy.gz" "$T/in"
vg "reduce from stdin" 0 "$GB" reduce -q --op sum -
rm -f "$T/in"
vg "reduce several files" 0 "$GB" reduce -q --op count "$T/a.npy" "$T/a.npy.gz" "$T/single.npy.gz"
vg "quadratic BGZF in and out" 0 "$GB" quadratic -q --chunk 128k "$T/q.npy.gz" -o "$T/r.npy.gz"
vg "quadratic raw roots to stdout" 0 "$GB" quadratic -q --raw --no-compress -c "$T/q.npy.gz"
vg "reduce every array of an .npz" 0 "$GB" reduce -q --op sum,max "$T/z.npz"
vg "quadratic of an .npz member" 0 "$GB" quadratic -q "$T/z.npz:q" -o "$T/r3.npy.gz"
vg "an .npz member with a bad CRC" 1 "$GB" reduce -q "$T/badcrc.npz"
# The shard paths: states, parts of quadratic and transpose, and merge.
"$GB" gen --shape 6x50x70 --dtype int32 -o "$T/b.npy.gz"
vg "reduce --shard" 0 "$GB" reduce -q --shard 1/2 --op sum,min -o "$T/s1.state" "$T/a.npy.gz"
"$GB" reduce -q --shard 0/2 --op sum,min -o "$T/s0.state" "$T/a.npy.gz"
vg "merge states" 0 "$GB" merge "$T/s1.state" "$T/s0.state"
vg "quadratic --shard" 0 "$GB" quadratic -q --shard 0/2 "$T/q.npy.gz" -o "$T/q0.part"
"$GB" quadratic -q --shard 1/2 "$T/q.npy.gz" -o "$T/q1.part"
vg "merge parts" 0 "$GB" merge -o "$T/qm.npy.gz" "$T/q0.part" "$T/q1.part"
vg "transpose --shard" 0 "$GB" transpose -q --shard 1/2 "$T/b.npy.gz" -o "$T/t1.part"
vg "merge a lone part" 1 "$GB" merge -o "$T/tm.npy.gz" "$T/t1.part"
vg "missing input" 1 "$GB" reduce -q "$T/nonexistent.npy"
vg "truncated gzip" 1 "$GB" reduce -q "$T/cut.npy.gz"
vg "one good file, one bad" 1 "$GB" reduce -q "$T/a.npy" "$T/cut.npy.gz"
vg "quadratic on a truncated input" 1 "$GB" quadratic -q "$T/cut.npy.gz" -o "$T/r2.npy.gz"
vg "existing output without -f" 1 "$GB" gen --shape 10 -o "$T/a.npy"
vg "usage error" 2 "$GB" reduce --op nonsense "$T/a.npy"
vg "help" 0 "$GB" quadratic --help
vg "info without a driver" 0 "$GB" info
summary
