#!/bin/sh
# test_axis_shard.sh - `reduce --shard I/N --axis` and `gpubatch merge` on
# the CPU backend: the merged result equals one run byte for byte (.npy and
# .npz files, text and JSON) for float and integer dtypes with NaN and Inf,
# op sets, --skipnan, --ddof, one and two axes, keepdims, Fortran order, 1xN
# and Nx1, runs longer than a tile, shard counts from 1 to more shards than
# tiles, plain and blocked gzip input; and shards of another run, damaged
# and doctored state files refused: one line naming the file, no output.
. "$(dirname "$0")/lib.sh"
need_numpy
BGZF="$top/tests/cli/bgzf.py"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count,var,std
R() { "$GB" reduce --backend cpu -q "$@"; }

# arrays: NAME DTYPE SHAPE ORDER (data: random with NaN, Inf and -0.0 in floats)
"$NP" - "$T" <<'END'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(52)
def put(name, dt, shape, order='C'):
    n = int(np.prod(shape))
    if np.dtype(dt).kind == 'f':
        a = (rng.integers(-1000, 1000, n) / 8).astype(dt)
        for v in (np.nan, np.inf, -np.inf, -0.0):
            a[rng.integers(0, n, max(1, n // 97))] = v
    else:
        info = np.iinfo(dt)  # within what exact 64-bit sums of squares hold
        a = rng.integers(max(info.min, -2**20), min(int(info.max), 2**20) + 1, n, dtype=dt)
    np.save(f"{d}/{name}.npy", np.asarray(a.reshape(shape), order=order))
put("f32", "float32", (200, 300))
put("f64", "float64", (7, 50, 40))
put("i32", "int32", (9, 3000))
put("u8", "uint8", (1000, 5))
put("row", "float32", (1, 40000))
put("col", "float64", (40000, 1))
put("wide", "float32", (5, 33000))
put("fort", "float64", (60, 500), 'F')
put("i64", "int64", (4, 6, 900))
END
$PY "$BGZF" 1 "$T/f32.npy" "$T/f32.npy.gz"

# same NAME FILE N OPTS...: one run's -o result and N shards' merge are the same bytes
same() {
    name=$1 file=$2 n=$3
    shift 3
    out=one.npz
    case $* in *--op\ *,* | *--op\ all*) ;; *--op\ *) out=one.npy ;; esac
    ext=${out#one}
    rm -f "$T"/st-* "$T/one$ext" "$T/m$ext"
    R "$@" "$file" -o "$T/one$ext" || fail "$name: one run"
    i=0
    while [ $i -lt "$n" ]; do
        R "$@" --shard $i/"$n" -o "$T/st-$i" "$file" || fail "$name: shard $i/$n"
        i=$((i + 1))
    done
    "$GB" merge -q $(ls "$T"/st-* | shuf) -o "$T/m$ext" || fail "$name: merge"
    check_files_same "$name" "$T/one$ext" "$T/m$ext"
}

same f32-axis0-5 "$T/f32.npy" 5 --axis 0 --op $ALL
same f32-axis1-3-skipnan "$T/f32.npy" 3 --axis 1 --op $ALL --skipnan
same f32-bgzf-4 "$T/f32.npy.gz" 4 --axis -1 --op sum,var,argmax --ddof 1
same f32-axis0-1 "$T/f32.npy" 1 --axis 0 --op mean
same f64-axes02-keep-7 "$T/f64.npy" 7 --axis 0,2 --keepdims --op $ALL
same f64-axis1-2 "$T/f64.npy" 2 --axis 1 --op sum,std --ddof 2
same i32-axis0-6 "$T/i32.npy" 6 --axis 0 --op $ALL
same i32-axis1-9 "$T/i32.npy" 9 --axis 1 --op sum,min,argmin,var
same u8-axis0-3 "$T/u8.npy" 3 --axis 0 --op $ALL
same row-axis1-8 "$T/row.npy" 8 --axis 1 --op $ALL
same col-axis0-5 "$T/col.npy" 5 --axis 0 --op sum,mean,argmax,var --skipnan
same wide-axis1-11 "$T/wide.npy" 11 --axis 1 --op $ALL
same fort-axis0-4 "$T/fort.npy" 4 --axis 0 --op $ALL
same fort-axis1-3 "$T/fort.npy" 3 --axis 1 --op sum,argmin
same i64-axes01-5 "$T/i64.npy" 5 --axis 0,1 --op sum,sumsq,min,max
same i64-axis2-keep-3 "$T/i64.npy" 3 --axis 2 --keepdims --op mean,count

# text and JSON as reduce prints them
rm -f "$T"/st-*
for i in 0 1 2; do R --axis 0 --op sum,max --shard $i/3 -o "$T/st-$i" "$T/u8.npy" || fail "u8 shard $i"; done
R --axis 0 --op sum,max "$T/u8.npy" >"$T/one.txt" 2>&1
"$GB" merge -q "$T"/st-* >"$T/m.txt" 2>&1
check_files_same "text" "$T/one.txt" "$T/m.txt"
R --axis 0 --op sum,max --json "$T/u8.npy" >"$T/one.json" 2>&1
"$GB" merge -q --json "$T"/st-* >"$T/m.json" 2>&1
check_files_same "json" "$T/one.json" "$T/m.json"

# refused: shards of another --axis, damaged and doctored states, -o onto a state
R --axis 1 --op sum,max --shard 1/3 -o "$T/other" "$T/u8.npy" || fail "other shard"
check_error "other axis" "st-0.*--axis differs" "$GB" merge "$T/st-0" "$T/other" "$T/st-2" -o "$T/x.npy"
[ ! -e "$T/x.npy" ] || fail "other axis: wrote x.npy"
size=$(wc -c <"$T/st-1")
for cut in 30 400 $((size / 2)) $((size - 12)); do
    head -c $cut "$T/st-1" >"$T/cut"
    check_error "truncated at $cut" "cut" "$GB" merge "$T/st-0" "$T/cut" "$T/st-2"
done
for k in 1 2 3 4 5 6; do
    at=$(shuf -i 0-$((size - 20)) -n 1)
    "$NP" -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[int(sys.argv[2])]^=4; open(sys.argv[3],'wb').write(b)" \
        "$T/st-1" "$at" "$T/bad"
    check_error "flipped byte $at" "bad" "$GB" merge "$T/st-0" "$T/bad" "$T/st-2"
done
# a hex digit changed where the block counts lie, the check line recomputed
"$NP" - "$T/st-1" "$T/doct" <<'END'
import sys, zlib
t = open(sys.argv[1]).read()
head, _, body = t.partition("state-bytes ")
lines = body.split("\n")
ln = lines[1]
lines[1] = ln[:16] + ("1" if ln[16] != "1" else "2") + ln[17:]
t = head + "state-bytes " + "\n".join(lines)
t = t[:t.rindex("\ncheck ") + 1]
open(sys.argv[2], "w").write(t + "check %08x\n" % zlib.crc32(t.encode()))
END
check_error "doctored" "doct: the state does not match shard 1/3" "$GB" merge "$T/st-0" "$T/doct" "$T/st-2"
check_error "onto a state" "st-2: is one of the state files" "$GB" merge -f "$T/st-0" "$T/st-1" "$T/st-2" -o "$T/st-2"
check_error "several ops to .npy" "npz" "$GB" merge "$T/st-0" "$T/st-1" "$T/st-2" -o "$T/x.npy"
summary
