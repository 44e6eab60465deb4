#!/bin/sh
# test_dtypes.sh - float16, bfloat16, bool and big-endian data on the CPU
# backend, in files numpy writes: reduce against numpy's values (every
# float16 bit pattern, bools of any byte), big-endian input printing and
# writing exactly what the little-endian input does (npy, gzip, raw,
# shards), quadratic of float16/bfloat16 coefficients giving the float32
# roots of the same values, and the errors. tests/cli/test_reduce.sh and
# test_transpose.sh cover these types against their own references.
. "$(dirname "$0")/lib.sh"
NP=$(numpy_python)
if [ -z "$NP" ]; then
    fail "python3-numpy is needed for the dtype tests"
    summary
    exit
fi
ALL=sum,mean,min,max,argmin,argmax,sumsq,count
R() { "$GB" reduce --backend cpu -q "$@"; }
Q() { "$GB" quadratic --backend cpu -q --no-compress "$@"; }
# values VALUES... : the text of reduce's lines without the file names
values() { sed 's/  .*//'; }

# Every finite float16 bit pattern, shuffled: the sum is exactly 0 (each
# partial sum of float16 values this size is exact in double), min/max the
# extremes, argmin/argmax where numpy finds them; with the NaNs and
# infinities too, skipnan counts what numpy's isnan leaves.
$NP - "$T" <<'END'
import sys, numpy as np
t = sys.argv[1]
rng = np.random.default_rng(5)
bits = rng.permutation(np.arange(65536, dtype=np.uint16))
a = bits.view(np.float16)
np.save(t + "/all16.npy", a)
fin = a[np.isfinite(a)]
np.save(t + "/fin16.npy", fin)
np.save(t + "/sub16.npy", np.arange(1, 1024, dtype=np.uint16).view(np.float16))
with open(t + "/fin16.want", "w") as f:
    f.write("sum 0\nmin -6.55e+04\nmax 6.55e+04\nargmin %d\nargmax %d\ncount %d\n"
            % (np.argmin(fin), np.argmax(fin), fin.size))
with open(t + "/all16.want", "w") as f:
    f.write("count %d\n" % np.count_nonzero(~np.isnan(a)))
s = sum(int(b) for b in range(1, 1024))  # subnormals: k * 2^-24
with open(t + "/sub16.want", "w") as f:
    f.write("sum %r\nmin 6e-08\nmax 6.1e-05\n" % (s * 2.0 ** -24))
END
R --op sum,min,max,argmin,argmax,count "$T/fin16.npy" | values >"$T/fin16.got"
check_files_same "every finite float16" "$T/fin16.want" "$T/fin16.got"
R --op count --skipnan "$T/all16.npy" | values >"$T/all16.got"
check_files_same "every float16, NaN skipped" "$T/all16.want" "$T/all16.got"
R --op sum,min,max "$T/sub16.npy" | values >"$T/sub16.got"
check_files_same "float16 subnormals, exactly" "$T/sub16.want" "$T/sub16.got"
check_eq "every float16: NaN propagates" "sum nan
min nan
argmax $($NP -c "import numpy as n; a=n.load('$T/all16.npy'); print(n.flatnonzero(n.isnan(a))[0])")" \
    "$(R --op sum,min,argmax "$T/all16.npy" | values)"

# float16 against numpy's own arithmetic on random data: the sum to 1e-12,
# extrema and their indices exactly (no zeros, whose sign numpy ignores).
$NP - "$T" <<'END'
import json, sys, numpy as np
t = sys.argv[1]
rng = np.random.default_rng(7)
for name, n in (("r1", 1), ("r2", 2), ("r3", 16385), ("r4", 100003)):
    a = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 14, n)).astype(np.float16)
    a[a == 0] = 1
    np.save("%s/%s.npy" % (t, name), a)
    d = a.astype(np.float64)
    json.dump({"sum": float(np.sum(d)), "sumsq": float(np.sum(d * d)), "min": float(a.min()),
               "max": float(a.max()), "argmin": int(a.argmin()), "argmax": int(a.argmax()),
               "count": n}, open("%s/%s.want" % (t, name), "w"))
END
for name in r1 r2 r3 r4; do
    R --json --op sum,sumsq,min,max,argmin,argmax,count "$T/$name.npy" >"$T/$name.json"
    if $NP - "$T/$name.want" "$T/$name.json" <<'END'; then ok; else fail "float16 $name against numpy"; fi
import json, sys, numpy as np
w, g = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in ("sum", "sumsq"):
    assert abs(g[k] - w[k]) <= 1e-12 * abs(w[k]), (k, g[k], w[k])
for k in ("min", "max"):
    assert float(np.float16(g[k])) == w[k], (k, g[k], w[k])
for k in ("argmin", "argmax", "count"):
    assert g[k] == w[k], (k, g[k], w[k])
END
done

# bool: any nonzero byte is true, as numpy reads it.
$NP - "$T" <<'END'
import sys, numpy as np
t = sys.argv[1]
rng = np.random.default_rng(3)
raw = rng.choice(np.array([0, 0, 1, 2, 128, 255], dtype=np.uint8), 70001)
raw[:5] = [2, 0, 0, 1, 0]
a = raw.view(np.bool_)
np.save(t + "/b.npy", a)
raw.tofile(t + "/b.raw")
with open(t + "/b.want", "w") as f:
    f.write("sum %d\nmean %r\nmin false\nmax true\nargmin %d\nargmax %d\nsumsq %d\ncount %d\n"
            % (a.sum(), float(a.mean()), a.argmin(), a.argmax(), a.sum(), a.size))
np.save(t + "/true.npy", np.ones(9, np.bool_))
END
R --op $ALL "$T/b.npy" | values >"$T/b.got"
check_files_same "bool against numpy" "$T/b.want" "$T/b.got"
R --op $ALL --dtype bool "$T/b.raw" | values >"$T/braw.got"
check_files_same "raw bool" "$T/b.want" "$T/braw.got"
check_eq "all true" "min true
max true
argmin 0" "$(R --op min,max,argmin "$T/true.npy" | values)"
check_eq "bool json" '{"file": "'"$T"'/true.npy", "dtype": "bool", "shape": [9], "sum": 9, "min": true}' \
    "$(R --json --op sum,min "$T/true.npy")"

# Big-endian files numpy writes print what the same values little-endian
# do, for every type, through gzip and raw input too, and in shards.
$NP - "$T" <<'END'
import sys, numpy as np
t = sys.argv[1]
rng = np.random.default_rng(11)
n = 50021
for code in ("f2", "f4", "f8", "i2", "i4", "i8", "u2", "u4", "u8", "V2"):
    raw = rng.integers(0, 256, n * int(code[1]), dtype=np.uint8)
    if code == "V2":  # bfloat16 bytes; '|V2' is numpy's own spelling, any order
        a = raw.view("V2")
        np.save("%s/le-%s.npy" % (t, code), a)
        big = a.view(">u2").astype("<u2").view("V2")  # the same values, bytes reversed
        with open("%s/be-%s.npy" % (t, code), "wb") as f:
            np.lib.format.write_array_header_1_0(f, {"descr": ">V2", "fortran_order": False,
                                                     "shape": (n,)})
            f.write(big.tobytes())
        continue
    a = raw.view("<" + code)
    np.save("%s/le-%s.npy" % (t, code), a)
    np.save("%s/be-%s.npy" % (t, code), a.astype(">" + code))
    a.astype(">" + code).tofile("%s/be-%s.raw" % (t, code))
END
for code in f2 f4 f8 i2 i4 i8 u2 u4 u8 V2; do
    case $code in f* | V2) skip=--skipnan ;; *) skip= ;; esac
    R --op $ALL $skip "$T/le-$code.npy" | values >"$T/le.txt"
    R --op $ALL $skip "$T/be-$code.npy" | values >"$T/be.txt"
    check_files_same ">$code npy" "$T/le.txt" "$T/be.txt"
    gzip -c "$T/be-$code.npy" >"$T/be.gz"
    R --op $ALL $skip --chunk 128k "$T/be.gz" | values >"$T/begz.txt"
    check_files_same ">$code gzip" "$T/le.txt" "$T/begz.txt"
    if [ -f "$T/be-$code.raw" ]; then
        R --op $ALL $skip --dtype ">$code" "$T/be-$code.raw" | values >"$T/beraw.txt"
        check_files_same ">$code raw" "$T/le.txt" "$T/beraw.txt"
    fi
done
R --op $ALL --skipnan "$T/le-f2.npy" >"$T/one.txt"
parts=""
for i in 0 1 2; do
    R --op $ALL --skipnan --shard $i/3 -o "$T/st$i" "$T/be-f2.npy" && ok || fail "float16 shard $i/3"
    parts="$parts $T/st$i"
done
"$GB" merge -q $parts | values >"$T/merged.txt"
values <"$T/one.txt" >"$T/one.v"
check_files_same "big-endian float16 shards merged" "$T/one.v" "$T/merged.txt"
R --op $ALL --dtype float16 --shape 50021 "$T/be-f2.raw" >/dev/null && ok || fail "raw float16"
check_error "--dtype >f4 on a little-endian .npy" "says big-endian" R --dtype ">f4" "$T/le-f4.npy"
"$GB" reduce --dtype ">f3" "$T/be-f4.raw" >/dev/null 2>&1
check_eq "unknown big-endian dtype is a usage error" 2 $?
check_error "complex data, big-endian" "reduce does not support complex64" R --dtype ">c8" "$T/be-f8.raw"

# Big-endian transpose output is little-endian: what the little-endian
# input gives, byte for byte (tests/cli/test_transpose.sh checks values).
$NP -c "import numpy as n; a=n.arange(3*5*7, dtype='<f8').reshape(3,5,7); n.save('$T/tle.npy', a); n.save('$T/tbe.npy', a.astype('>f8')); n.save('$T/tbef.npy', n.asfortranarray(a[0].astype('>f8')))"
"$GB" transpose --backend cpu -q --no-compress "$T/tle.npy" -o "$T/tle.out"
"$GB" transpose --backend cpu -q --no-compress "$T/tbe.npy" -o "$T/tbe.out"
check_files_same "big-endian transpose" "$T/tle.out" "$T/tbe.out"
"$GB" transpose --backend cpu -q --no-compress "$T/tbef.npy" -o "$T/tbef.out"
check_eq "big-endian Fortran transpose (a copy)" "<f8 True" \
    "$($NP -c "import numpy as n; a=n.load('$T/tbef.out'); print(a.dtype.str, bool((a == n.load('$T/tbef.npy').T).all()))")"

# quadratic: float16 and bfloat16 coefficients give the roots of the same
# values as float32 (the conversion is exact), rows or planes, any byte order.
$NP - "$T" <<'END'
import sys, numpy as np
t = sys.argv[1]
rng = np.random.default_rng(13)
n = 20011
bits = rng.integers(0, 65536, (n, 3), dtype=np.uint16)
bits[:4] = np.array([[0x3c00, 0xc200, 0x4000], [0, 0x3c00, 0xbc00], [0, 0, 0], [0x7e00, 0, 0]])
h = bits.view(np.float16)
np.save(t + "/qh.npy", h)
np.save(t + "/qh32.npy", h.astype(np.float32))
np.save(t + "/qhbe.npy", h.astype(">f2"))
np.save(t + "/qhp.npy", np.ascontiguousarray(h.T))
h.tofile(t + "/qh.raw")
np.save(t + "/qb.npy", bits.view("V2"))
np.save(t + "/qb32.npy", (bits.astype(np.uint32) << 16).view(np.float32))
END
Q "$T/qh32.npy" -o "$T/r32.npy"
for f in qh qhbe; do
    Q "$T/$f.npy" -o "$T/r-$f.npy"
    check_files_same "quadratic $f as float32" "$T/r32.npy" "$T/r-$f.npy"
done
Q --dtype float16 --shape 20011x3 "$T/qh.raw" -o "$T/r-raw.npy"
check_files_same "quadratic raw float16" "$T/r32.npy" "$T/r-raw.npy"
Q --chunk 128k -p 3 "$T/qh.npy" -o "$T/r-chunk.npy"
check_files_same "quadratic float16 small chunks" "$T/r32.npy" "$T/r-chunk.npy"
Q --out-layout planes "$T/qh32.npy" -o "$T/p32.npy"
Q --out-layout planes "$T/qhp.npy" -o "$T/p16.npy"
check_files_same "quadratic float16 planes in and out" "$T/p32.npy" "$T/p16.npy"
Q "$T/qb32.npy" -o "$T/rb32.npy"
Q "$T/qb.npy" -o "$T/rb.npy"
check_files_same "quadratic bfloat16 as float32" "$T/rb32.npy" "$T/rb.npy"
check_eq "float16 roots are complex64" "(20011, 2) complex64" \
    "$($NP -c "import numpy as n; a=n.load('$T/r-qh.npy'); print(a.shape, a.dtype)")"
"$GB" quadratic --backend cpu -q --no-compress --shard 1/2 "$T/qh.npy" -o "$T/qs1" &&
    "$GB" quadratic --backend cpu -q --no-compress --shard 0/2 "$T/qh.npy" -o "$T/qs0" &&
    "$GB" merge -q "$T/qs0" "$T/qs1" -o "$T/qsm.npy" && ok || fail "quadratic float16 shards"
check_files_same "quadratic float16 shards merged" "$T/r32.npy" "$T/qsm.npy"
$NP -c "import numpy as n; n.save('$T/qbool.npy', n.ones((2, 3), bool))"
check_error "bool coefficients" "must be float16, bfloat16, float32 or float64, not bool" \
    Q "$T/qbool.npy" -o "$T/qe.npy"
[ -e "$T/qe.npy" ] && fail "bool coefficients left an output" || ok

"$GB" gen --dtype float16 --shape 4 -o "$T/g.npy" 2>/dev/null
check_eq "gen refuses float16" 2 $?
summary
