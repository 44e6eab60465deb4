#!/bin/sh
# test_quadratic_planes.sh - `gpubatch quadratic` with (3, N) coefficient
# planes in and (4, N) root planes out, on the CPU backend: planes give the
# bytes rows give (numpy transposes the coefficients), from .npy, Fortran
# order, raw with --layout, plain, gzip (also through a seek index), blocked
# gzip with small blocks; root planes match the complex output and numpy's
# view of it, and the exact reference; identical bytes for any chunk size
# and thread count; the (3, 3) rule; and the bad inputs (one error line,
# exit 1, no output).
. "$(dirname "$0")/lib.sh"
need_python
QREF="$top/tests/cli/quadref.py"
Q() { "$GB" quadratic --backend cpu -q "$@"; }
need_numpy

# bgzf IN OUT STEP: IN as blocked gzip with STEP data bytes a block, written
# here independently of gpubatch's writer.
bgzf() {
    $NP - "$@" <<'END'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
step = int(sys.argv[3])
def block(chunk):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    d = c.compress(chunk) + c.flush()
    head = b"\x1f\x8b\x08\x04\0\0\0\0\0\xff" + struct.pack("<H", 6) + b"BC" + struct.pack("<HH", 2, len(d) + 25)
    return head + d + struct.pack("<II", zlib.crc32(chunk), len(chunk))
with open(sys.argv[2], "wb") as f:
    for i in range(0, len(data), step):
        f.write(block(data[i:i + step]))
    f.write(block(b""))
END
}

# Planes against rows, every size class: empty, one, two, three (the (3, 3)
# case, with --layout planes), a tile-sized tail, a large prime.
for dt in float32 float64; do
    for n in $(pick "0 1 2 3 257 100003" "0 1 3 100003"); do
        "$GB" gen --quadratic $n --dtype $dt --seed $((n + 7)) --no-compress -f -o "$T/q.npy"
        $NP - "$T" <<'END'
import numpy as np, sys
t = sys.argv[1]
a = np.load(t + "/q.npy")
np.save(t + "/p.npy", np.ascontiguousarray(a.T))
np.save(t + "/f.npy", np.asfortranarray(a))
np.save(t + "/ft.npy", np.asfortranarray(a.T))
a.T.tofile(t + "/p.raw")
END
        Q --no-compress -f "$T/q.npy" -o "$T/rows.npy"
        lp=""
        [ $n -eq 3 ] && lp="--layout planes"
        Q --no-compress $lp "$T/p.npy" -o "$T/r1.npy" &&
            check_files_same "$dt n=$n (3, N) planes" "$T/rows.npy" "$T/r1.npy" || fail "$dt n=$n planes"
        Q --no-compress "$T/f.npy" -o "$T/r2.npy" &&
            check_files_same "$dt n=$n Fortran (N, 3)" "$T/rows.npy" "$T/r2.npy" || fail "$dt n=$n fortran"
        Q --no-compress $lp "$T/ft.npy" -o "$T/r3.npy" &&
            check_files_same "$dt n=$n Fortran (3, N)" "$T/rows.npy" "$T/r3.npy" || fail "$dt n=$n fortran T"
        Q --no-compress --dtype $dt --layout planes "$T/p.raw" -o "$T/r4.npy" &&
            check_files_same "$dt n=$n raw --layout planes" "$T/rows.npy" "$T/r4.npy" || fail "$dt n=$n raw"
        Q --no-compress --dtype $dt --shape 3x$n $lp "$T/p.raw" -o "$T/r5.npy" &&
            check_files_same "$dt n=$n raw --shape 3xN" "$T/rows.npy" "$T/r5.npy" || fail "$dt n=$n raw shape"
        rm -f "$T"/r?.npy
    done
done

# (3, 3) is rows unless --layout planes says otherwise.
$PY "$QREF" rows float64 "$T/m.npy" 1,-3,2 1,0,-4 2,4,0
Q --raw --no-compress "$T/m.npy" -c | od -An -v -tf8 -w32 | tr -s ' ' | sed 's/^ //' >"$T/m.txt"
printf '1 0 2 0\n-2 0 2 0\n-2 0 0 0\n' >"$T/m.want"
check_files_same "(3, 3) read as rows" "$T/m.want" "$T/m.txt"
Q --raw --no-compress --layout planes "$T/m.npy" -c | od -An -v -tf8 -w32 | tr -s ' ' | sed 's/^ //' >"$T/m.txt"
# planes a = (1, -3, 2), b = (1, 0, -4), c = (2, 4, 0): x^2+x+2, -3x^2+4, 2x^2-4x
$NP -c "
import numpy as n
r = n.roots
for a, b, c in ((1, 1, 2), (-3, 0, 4), (2, -4, 0)):
    x = sorted(r([a, b, c]), key=lambda z: (z.real, -z.imag))
    print(' '.join('%r %r' % (float(v.real) + 0, float(v.imag) + 0) for v in x))
" | sed 's/-0 /0 /g' >"$T/m.np"
$NP - "$T/m.txt" "$T/m.np" <<'END' && ok || fail "(3, 3) with --layout planes against numpy.roots"
import sys
got = [[float(v) for v in l.split()] for l in open(sys.argv[1])]
want = [[float(v) for v in l.split()] for l in open(sys.argv[2])]
assert len(got) == len(want) == 3, (got, want)
for g, w in zip(got, want):
    assert all(abs(x - y) <= 1e-9 * max(1, abs(y)) for x, y in zip(g, w)), (g, w)
END

# Large planes, compressed every way, file on disk.
for dt in float32 float64; do
    "$GB" gen --quadratic 200003 --dtype $dt --seed 3 --no-compress -f -o "$T/q.npy"
    $NP -c "import numpy as n; a = n.load('$T/q.npy'); n.save('$T/p.npy', n.ascontiguousarray(a.T))"
    Q -f "$T/q.npy" -o "$T/rows.npy.gz"
    gzip -c "$T/p.npy" >"$T/p.npy.gz"
    bgzf "$T/p.npy" "$T/p.bgzf.gz" 1000
    bgzf "$T/p.npy" "$T/p.bgzf2.gz" 65280
    for f in p.npy p.npy.gz p.bgzf.gz p.bgzf2.gz; do
        Q "$T/$f" -o "$T/r.npy.gz"
        check_files_same "$dt planes from $f" "$T/rows.npy.gz" "$T/r.npy.gz"
        rm -f "$T/r.npy.gz"
    done
    # with a seek index beside the member, the readers of planes b and c start
    # at its access points
    "$GB" index -q "$T/p.npy.gz"
    "$GB" quadratic --backend cpu -v "$T/p.npy.gz" -o "$T/r.npy.gz" 2>"$T/e"
    check_files_same "$dt planes through a seek index" "$T/rows.npy.gz" "$T/r.npy.gz"
    grep -q "seek index" "$T/e" && ok || fail "$dt planes: the seek index was not used: $(cat "$T/e")"
    rm -f "$T/r.npy.gz" "$T/p.npy.gz.gzidx"
    for opts in "--chunk 128k" "--chunk 1M -p 1" "--streams 2 -p 3" "--chunk 384k --streams 7"; do
        Q $opts "$T/p.bgzf.gz" --compress -c >"$T/alt.npy.gz"
        check_files_same "$dt planes with $opts" "$T/rows.npy.gz" "$T/alt.npy.gz"
    done

    # Root planes: the complex roots rearranged, bit for bit (numpy), within
    # 3 ulps of the exact roots, identical for any chunk size and thread count.
    Q -f --out-layout planes "$T/p.npy.gz" -o "$T/s.npy.gz"
    gzip -t "$T/s.npy.gz" && ok || fail "$dt root planes are not valid gzip"
    gzip -dc "$T/s.npy.gz" >"$T/s.npy"
    gzip -dc "$T/rows.npy.gz" >"$T/rows.npy"
    $NP - "$T" $dt <<'END' && ok || fail "$dt root planes against the complex roots"
import numpy as np, sys
t, dt = sys.argv[1], sys.argv[2]
s, r = np.load(t + "/s.npy"), np.load(t + "/rows.npy")
assert s.dtype == np.dtype(dt) and s.shape == (4, r.shape[0]), (s.dtype, s.shape)
want = np.stack([r[:, 0].real, r[:, 1].real, r[:, 0].imag, r[:, 1].imag])
u = np.uint32 if dt == "float32" else np.uint64
assert (s.view(u) == want.view(u)).all()
END
    if $PY "$QREF" check "$T/p.npy" "$T/s.npy.gz" 1500 >"$T/chk" 2>&1; then ok; else
        fail "$dt root planes against the exact reference: $(tail -3 "$T/chk")"
    fi
    for opts in "--chunk 128k -p 1" "--chunk 1M -p 3 --streams 3" "-9 --chunk 256k"; do
        Q --out-layout planes --compress $opts "$T/p.npy" -c >"$T/alt.npy.gz"
        case $opts in -9*) gzip -dc "$T/alt.npy.gz" | cmp -s - "$T/s.npy" && ok || fail "$dt -9 root planes" ;;
        *) check_files_same "$dt root planes with $opts" "$T/s.npy.gz" "$T/alt.npy.gz" ;;
        esac
    done
    Q -f --out-layout planes "$T/q.npy" --no-compress -o "$T/s2.npy"
    check_files_same "$dt root planes from rows, uncompressed" "$T/s.npy" "$T/s2.npy"
    Q --out-layout planes --raw --no-compress "$T/q.npy" -c >"$T/s.raw"
    tail -c +129 "$T/s.npy" | cmp -s - "$T/s.raw" && ok || fail "$dt raw root planes"
    # Rows on a pipe of unknown length, raw root planes out.
    tail -c +129 "$T/q.npy" | Q --dtype $dt --out-layout planes --raw --no-compress - -c >"$T/s2.raw"
    check_files_same "$dt raw root planes from a pipe" "$T/s.raw" "$T/s2.raw"
    ls -a "$T" | grep -q '^\.gpubatch-part' && fail "a part file was left behind" || ok
done

# Root planes through stdout in a pipe: the parts go to $TMPDIR.
mkdir "$T/tmp"
TMPDIR="$T/tmp" Q --out-layout planes "$T/p.npy" --compress -c | gzip -dc | cmp -s - "$T/s.npy" && ok ||
    fail "root planes on stdout"
TMPDIR="$T/tmp" Q --out-layout planes "$T/p.npy" -c | cmp -s - "$T/s.npy" && ok ||
    fail "plain root planes on stdout"
[ -z "$(ls -A "$T/tmp")" ] && ok || fail "parts left in TMPDIR"

# Errors: one line, exit 1, no output file.
gzip -c "$T/p.npy" | Q - -c >/dev/null 2>"$T/e" && fail "planes on stdin accepted" || ok
check_error "planes on stdin" "give the file's name" sh -c "cat '$T/p.npy' | '$GB' quadratic --backend cpu - -o '$T/o1.npy'"
[ -e "$T/o1.npy" ] && fail "planes on stdin left an output" || ok
$NP -c "import numpy as n; n.save('$T/i.npy', n.zeros((3, 10), n.int32)); n.save('$T/two.npy', n.zeros((2, 10))); n.save('$T/four.npy', n.zeros((10, 4))); n.save('$T/three.npy', n.zeros((3, 3, 3)))"
check_error "integer planes" "must be float16, bfloat16, float32 or float64, not int32" Q "$T/i.npy" -o "$T/o2.npy"
check_error "(2, N)" "expected an (N, 3) array of rows (a, b, c) or a (3, N) array of planes, not (2, 10)" Q "$T/two.npy" -o "$T/o2.npy"
check_error "(N, 4)" "not (10, 4)" Q "$T/four.npy" -o "$T/o2.npy"
check_error "3-D" "expected an (N, 3) array" Q "$T/three.npy" -o "$T/o2.npy"
check_error "--layout against the shape" "--layout planes contradicts the shape (200003, 3)" Q --layout planes "$T/q.npy" -o "$T/o2.npy"
head -c 1000000 "$T/p.npy" >"$T/trunc.npy"
check_error "truncated planes" "trunc.npy: truncated: expected 4800072 bytes of data, the input has 999872" \
    Q "$T/trunc.npy" -o "$T/o2.npy"
gzip -c "$T/trunc.npy" >"$T/trunc.npy.gz"
check_error "truncated gzip before plane b" "trunc.npy.gz: truncated: the input ends before plane b" \
    Q "$T/trunc.npy.gz" -o "$T/o2.npy"
head -c 4000000 "$T/p.npy" >"$T/trunc2.npy"
check_error "truncated last plane" "trunc2.npy: truncated: expected 4800072 bytes of data, the input has 3999872" \
    Q "$T/trunc2.npy" -o "$T/o2.npy"
gzip -c "$T/trunc2.npy" >"$T/trunc2.npy.gz"
check_error "truncated gzip planes" "trunc2.npy.gz: plane c: truncated" Q "$T/trunc2.npy.gz" -o "$T/o2.npy"
head -c 1000000 "$T/p.bgzf.gz" >"$T/trunc.bgzf.gz"
check_error "truncated BGZF planes" "trunc.bgzf.gz: .*unexpected end" Q "$T/trunc.bgzf.gz" -o "$T/o2.npy"
cat "$T/p.npy" "$T/p.npy" >"$T/long.npy"
check_error "planes followed by more data" "plane c: the input holds more than" Q "$T/long.npy" -o "$T/o2.npy"
gzip -c "$T/p.raw" >"$T/p.raw.gz"
check_error "raw planes of unknown size" "give --shape 3xN" Q --dtype float64 --layout planes "$T/p.raw.gz" -o "$T/o2.npy"
check_error "raw --shape against --layout" "--layout rows contradicts the shape (3, 7)" Q --dtype float64 --shape 3x7 --layout rows "$T/p.raw" -o "$T/o2.npy"
[ -e "$T/o2.npy" ] && fail "a bad input left an output" || ok
ls -a "$T" | grep -q '^\.o2' && fail "a temporary file was left behind" || ok
"$GB" quadratic --layout diagonal "$T/p.npy" >/dev/null 2>&1
check_eq "bad --layout is a usage error" 2 $?
"$GB" quadratic --out-layout rows "$T/p.npy" >/dev/null 2>&1
check_eq "bad --out-layout is a usage error" 2 $?
summary
