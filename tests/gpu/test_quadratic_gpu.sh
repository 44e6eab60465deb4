#!/bin/sh
# test_quadratic_gpu.sh - on a machine with a CUDA GPU: `quadratic --backend
# cuda` writes exactly the bytes the CPU backend writes, for both types, odd
# sizes, the generator's hard mixture, degenerate rows and chunk sizes; and
# so do (3, N) coefficient planes in and (4, N) root planes out (the
# qdk_strided kernel), against each other and against the CPU; and rows
# of one deflate stream inflated on the device.
. "$(dirname "$0")/../cli/lib.sh"
QREF="$top/tests/cli/quadref.py"
for dt in float32 float64; do
    for n in 1 31 33 65537 1000003; do
        f="$T/q-$dt-$n.npy"
        "$GB" gen --quadratic $n --dtype $dt --seed $n --no-compress -o "$f"
        "$GB" quadratic -q --backend cpu --no-compress "$f" -o "$T/cpu.npy"
        "$GB" quadratic -q --backend cuda --no-compress "$f" -o "$T/gpu.npy"
        check_files_same "$dt n=$n gpu bytes" "$T/cpu.npy" "$T/gpu.npy"
        rm -f "$T/cpu.npy" "$T/gpu.npy"
    done
    "$GB" quadratic -q --backend cuda --chunk 128k --streams 3 "$T/q-$dt-1000003.npy" -o "$T/g1.npy.gz"
    "$GB" quadratic -q --backend cpu "$T/q-$dt-1000003.npy" -o "$T/c1.npy.gz"
    check_files_same "$dt small chunks" "$T/c1.npy.gz" "$T/g1.npy.gz"
    rm -f "$T/g1.npy.gz" "$T/c1.npy.gz"
done
# Planes in, root planes out, both: the CPU's bytes, and the same roots as
# rows in (tails of every size around the 256-row tile included).
for dt in float32 float64; do
    for n in 2 255 257 65537 1000003; do
        f="$T/q-$dt-$n.npy"
        [ -e "$f" ] || "$GB" gen --quadratic $n --dtype $dt --seed $n --no-compress -o "$f"
        $PY "$QREF" planes "$f" "$T/p.npy"
        "$GB" quadratic -q --backend cpu --no-compress "$f" -o "$T/rows.npy"
        for args in "$T/p.npy" "--out-layout planes $f" "--out-layout planes $T/p.npy" \
            "--out-layout planes --chunk 128k --streams 3 $T/p.npy"; do
            "$GB" quadratic -q --backend cpu --no-compress $args -o "$T/cpu.npy"
            "$GB" quadratic -q --backend cuda --no-compress $args -o "$T/gpu.npy"
            check_files_same "$dt n=$n $args gpu bytes" "$T/cpu.npy" "$T/gpu.npy"
            rm -f "$T/cpu.npy" "$T/gpu.npy"
        done
        "$GB" quadratic -q --backend cuda --no-compress "$T/p.npy" -o "$T/gpu.npy"
        check_files_same "$dt n=$n planes in, rows' roots" "$T/rows.npy" "$T/gpu.npy"
        rm -f "$T/gpu.npy" "$T/rows.npy" "$T/p.npy"
    done
done
# float16 and bfloat16 coefficients (every bit pattern among them; random
# bits of a big-endian copy too): the CPU's bytes, and the roots of the
# same values as float32, rows and planes.
NP=$(numpy_python)
if [ -n "$NP" ]; then
    $NP -c "
import numpy as n
b = n.random.default_rng(1).integers(0, 65536, (1000003, 3), dtype=n.uint16)
b[:65536, 0] = n.arange(65536)
h = b.view(n.float16)
n.save('$T/h.npy', h); n.save('$T/h32.npy', h.astype(n.float32)); n.save('$T/hbe.npy', h.astype('>f2'))
n.save('$T/hp.npy', n.ascontiguousarray(h.T)); n.save('$T/bf.npy', b.view('V2'))
n.save('$T/bf32.npy', (b.astype(n.uint32) << 16).view(n.float32))"
    "$GB" quadratic -q --backend cpu --no-compress "$T/h32.npy" -o "$T/r32.npy"
    "$GB" quadratic -q --backend cpu --no-compress "$T/bf32.npy" -o "$T/rb32.npy"
    $PY "$top/tests/cli/bgzf.py" 3 "$T/hbe.npy" "$T/hbe.bgzf" # big-endian: inflated on the host
    for args in "$T/h.npy" "$T/hbe.npy" "$T/hbe.bgzf" "$T/hp.npy" "--chunk 128k --streams 3 $T/h.npy" \
        "--out-layout planes $T/h.npy" "$T/bf.npy"; do
        "$GB" quadratic -q --backend cpu --no-compress $args -o "$T/cpu.npy"
        "$GB" quadratic -q --backend cuda --no-compress $args -o "$T/gpu.npy"
        check_files_same "half $args gpu bytes" "$T/cpu.npy" "$T/gpu.npy"
        case "$args" in
        *planes*) ;;
        *bf.npy) check_files_same "bfloat16 as float32" "$T/rb32.npy" "$T/gpu.npy" ;;
        *) check_files_same "$args as float32" "$T/r32.npy" "$T/gpu.npy" ;;
        esac
        rm -f "$T/cpu.npy" "$T/gpu.npy"
    done
else
    echo "note: python3-numpy missing: float16 quadratic cases skipped"
fi
$PY "$QREF" rows float32 "$T/deg.npy" 1,-3,2 1,0,1 1,2,1 0,2,-4 0,0,5 0,0,0 1,0,-4 2,4,0 nan,1,1 inf,1,1 \
    1e-30,1e30,1e-30 1e30,1,1e30 3e-45,1,1
"$GB" quadratic -q --backend cpu --raw --no-compress "$T/deg.npy" -o "$T/dc.bin"
"$GB" quadratic -q --backend cuda --raw --no-compress "$T/deg.npy" -o "$T/dg.bin"
check_files_same "degenerate rows" "$T/dc.bin" "$T/dg.bin"
"$GB" quadratic -q --backend cpu --raw --no-compress --out-layout planes "$T/deg.npy" -o "$T/dcp.bin"
"$GB" quadratic -q --backend cuda --raw --no-compress --out-layout planes "$T/deg.npy" -o "$T/dgp.bin"
check_files_same "degenerate rows, root planes" "$T/dcp.bin" "$T/dgp.bin"

# One deflate stream of rows inflated on the device (whatever its size:
# GPUBATCH_HOST_INFLATE=0): the CPU's bytes, plain and blocked gzip out;
# damaged: the CPU's message, status and no output.
"$GB" gen --quadratic 5000011 --seed 7 --no-compress -o "$T/qs.npy"
gzip -1 -c "$T/qs.npy" >"$T/qs.npy.gz"
"$GB" quadratic -q --backend cpu --no-compress "$T/qs.npy.gz" -o "$T/qs-cpu.npy"
"$GB" quadratic -q --backend cpu "$T/qs.npy.gz" -o "$T/qs-cpu.npy.gz"
for b in cuda auto; do
    GPUBATCH_HOST_INFLATE=0 "$GB" quadratic -v --backend $b --no-compress "$T/qs.npy.gz" \
        -o "$T/qs-gpu.npy" 2>"$T/qv.err"
    grep -q "inflated on the GPU" "$T/qv.err" && ok || fail "$b: rows not inflated on the GPU: $(tail -3 "$T/qv.err")"
    check_files_same "$b: one stream in, plain out" "$T/qs-cpu.npy" "$T/qs-gpu.npy"
    GPUBATCH_HOST_INFLATE=0 "$GB" quadratic -q --backend $b "$T/qs.npy.gz" -o "$T/qs-gpu.npy.gz"
    check_files_same "$b: one stream in, blocked gzip out" "$T/qs-cpu.npy.gz" "$T/qs-gpu.npy.gz"
    rm -f "$T/qs-gpu.npy" "$T/qs-gpu.npy.gz"
done
size=$(stat -c %s "$T/qs.npy.gz")
cp "$T/qs.npy.gz" "$T/qbad.npy.gz"
printf '\377' | dd of="$T/qbad.npy.gz" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
head -c $((size - 4)) "$T/qs.npy.gz" >"$T/qcut.npy.gz"
for f in qbad qcut; do
    "$GB" quadratic -q --backend cpu "$T/$f.npy.gz" -o "$T/o-cpu.npy" >/dev/null 2>"$T/c.err"
    echo "exit $?" >>"$T/c.err"
    GPUBATCH_HOST_INFLATE=0 "$GB" quadratic -q --backend cuda "$T/$f.npy.gz" -o "$T/o-gpu.npy" \
        >/dev/null 2>"$T/g.err"
    echo "exit $?" >>"$T/g.err"
    sed -i 's/o-gpu/o-cpu/' "$T/g.err"
    check_files_same "$f: the CPU's message" "$T/c.err" "$T/g.err"
    [ ! -e "$T/o-gpu.npy" ] && ok || fail "$f: a partial output was left"
done
summary
