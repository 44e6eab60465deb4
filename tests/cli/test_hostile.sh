#!/bin/sh
# test_hostile.sh - sizes that come from untrusted input: .npy headers and
# --shape values that claim 2^60 elements, dims whose product overflows,
# negative, empty and absurd dims, huge header lengths. Each must end with
# one error line (or a usage error), no output file, and no attempt to
# allocate what the input claims: every run here is limited to 1 GiB of
# address space beyond what the default buffers need.
. "$(dirname "$0")/lib.sh"
need_python
LIMIT_KB=2000000

# hdr FILE DESCR SHAPE [VERSION] [DATA_BYTES]: an .npy header with a
# (possibly lying) shape text, followed by DATA_BYTES zero bytes.
hdr() {
    $PY - "$@" <<'END'
import struct, sys
path, descr, shape = sys.argv[1:4]
ver = int(sys.argv[4]) if len(sys.argv) > 4 else 1
data = int(sys.argv[5]) if len(sys.argv) > 5 else 16
d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
pre = 10 if ver == 1 else 12
d += ' ' * ((64 - (pre + len(d) + 1) % 64) % 64) + '\n'
ln = struct.pack('<H', len(d)) if ver == 1 else struct.pack('<I', len(d))
open(path, 'wb').write(b'\x93NUMPY' + bytes([ver, 0]) + ln + d.encode() + bytes(data))
END
}

# limited CMD...: runs CMD with a cap on its address space (not under
# AddressSanitizer, whose shadow memory needs terabytes of it).
limited() {
    if grep -q __asan_init "$GB" 2>/dev/null; then
        "$@"
    else
        (ulimit -v $LIMIT_KB && "$@")
    fi
}

# Header claims: 2^60 elements, an overflowing product, sizes past 2^63.
hdr "$T/e60.npy" '<f4' '(1152921504606846976,)'
check_error "npy claiming 2^60 elements" "truncated: expected 4611686018427387904 bytes" \
    limited "$GB" reduce --backend cpu "$T/e60.npy"
gzip -c "$T/e60.npy" >"$T/e60.npy.gz"
check_error "gzip npy claiming 2^60 elements" "truncated" limited "$GB" reduce --backend cpu "$T/e60.npy.gz"
hdr "$T/e60x3.npy" '<f8' '(1152921504606846976, 3)'
check_error "quadratic on 2^60 rows" "data size overflows" \
    limited "$GB" quadratic --backend cpu "$T/e60x3.npy" -o "$T/roots.npy.gz"
[ -e "$T/roots.npy.gz" ] && fail "quadratic on 2^60 rows left an output" || ok
# bad_header WHAT DESCR SHAPE PATTERN: a header the parser must refuse.
bad_header() {
    hdr "$T/bad.npy" "$2" "$3"
    check_error "$1" "$4" limited "$GB" reduce --backend cpu "$T/bad.npy"
}
bad_header "dims whose product overflows" '<f4' '(4294967296, 4294967296, 2)' "element count overflows"
bad_header "byte size overflows" '<f8' '(4611686018427387904,)' "data size overflows"
bad_header "2^63 bytes" '|u1' '(9223372036854775808,)' "data size overflows"
bad_header "2^64-1 bytes" '|u1' '(18446744073709551615,)' "data size overflows"
bad_header "dim beyond 64 bits" '<f4' '(18446744073709551616,)' "npy header"
bad_header "negative dim" '<f4' '(-4,)' "npy header"
bad_header "negative second dim" '<f4' '(4, -1)' "npy header"
hdr "$T/empty.npy" '<f4' '(4294967296, 4294967296, 0)' 1 0
check_eq "empty axis after huge ones" "count 0" \
    "$(limited "$GB" reduce --backend cpu --op count "$T/empty.npy" | sed 's/  .*//')"

# Header lengths: v2/v3 lengths up to 4 GiB are refused before any read.
printf '\223NUMPY\002\000\377\377\377\377' >"$T/hlen.npy"
check_error "4 GiB header length" "over the 1048576-byte limit" \
    limited "$GB" reduce --backend cpu "$T/hlen.npy"
printf '\223NUMPY\003\000\000\000\020\000' >"$T/hlen2.npy"
check_error "header length just over the limit" "over the" limited "$GB" reduce --backend cpu "$T/hlen2.npy"
printf '\223NUMPY\001\000\377\377{' >"$T/hshort.npy"
check_error "header cut short" "truncated .npy header" limited "$GB" reduce --backend cpu "$T/hshort.npy"

# --shape from the command line: the same limits, as usage or input errors.
printf 'abcdefgh' >"$T/raw.bin"
check_error "--shape 2^60" "truncated: expected 4611686018427387904 bytes of data, the input has 8" \
    limited "$GB" reduce --backend cpu --dtype float32 --shape 1152921504606846976 "$T/raw.bin"
check_error "--shape product overflows" "shape is too large" \
    "$GB" reduce --backend cpu --dtype float32 --shape 4294967296x4294967296x2 "$T/raw.bin"
check_error "--shape bytes past 2^63" "shape is too large" \
    "$GB" reduce --backend cpu --dtype uint8 --shape 9223372036854775808 "$T/raw.bin"
: >"$T/none.bin"
check_eq "--shape with an empty axis" "count 0" \
    "$("$GB" reduce --backend cpu --dtype float32 --shape 4294967296x4294967296x0 --op count "$T/none.bin" | sed 's/  .*//')"
for bad in -5 5x-1 99999999999999999999 5x 'x5' '' 1x2x3x4x5x6x7x8x9x1x2x3x4x5x6x7x8x9x1x2x3x4x5x6x7x8x9x1x2x3x4x5x6; do
    "$GB" reduce --backend cpu --dtype float32 --shape "$bad" "$T/raw.bin" >"$T/o" 2>"$T/e"
    check_eq "--shape '$bad' is a usage error" "2 bad --shape" "$? $(sed -n '1s/.*: \(bad --shape\).*/\1/p' "$T/e")"
done
check_error "quadratic --shape 2^60x3" "shape is too large" \
    limited "$GB" quadratic --backend cpu --dtype float32 --shape 1152921504606846976x3 "$T/raw.bin" \
    -o "$T/r2.npy.gz"
[ -e "$T/r2.npy.gz" ] && fail "quadratic --shape 2^60x3 left an output" || ok
check_error "quadratic --shape 2^58x3" "truncated" \
    limited "$GB" quadratic --backend cpu --dtype float32 --shape 288230376151711744x3 "$T/raw.bin" \
    -o "$T/r2.npy.gz"
[ -e "$T/r2.npy.gz" ] && fail "quadratic --shape 2^58x3 left an output" || ok
"$GB" gen --shape 1152921504606846976x2 -o "$T/g.npy" >"$T/o" 2>"$T/e"
check_eq "gen --shape 2^61 elements" "2 shape too large" "$? $(sed -n '1s/.*: //p' "$T/e")"
[ -e "$T/g.npy" ] && fail "gen left an output" || ok
"$GB" gen --quadratic 18446744073709551615 -o "$T/g.npy" >"$T/o" 2>"$T/e"
check_eq "gen --quadratic 2^64-1" "2" "$?"

# Absurd --chunk: beyond 1 TiB a usage error; beyond memory a clear error.
"$GB" gen --shape 1000 --no-compress -o "$T/a.npy"
for bad in 0 2000G 18446744073709551615 17179869184G -1 64X; do
    "$GB" reduce --backend cpu --chunk "$bad" "$T/a.npy" >"$T/o" 2>"$T/e"
    check_eq "--chunk $bad is a usage error" "2" "$?"
done
check_error "--chunk 1000G on the CPU backend" "lower --chunk or --streams" \
    "$GB" reduce --backend cpu --chunk 1000G "$T/a.npy"
"$GB" gen --quadratic 100 --no-compress -o "$T/q.npy"
check_error "quadratic --chunk 1000G" "lower --chunk or --streams" \
    "$GB" quadratic --backend cpu --chunk 1000G "$T/q.npy" -o "$T/r3.npy"
[ -e "$T/r3.npy" ] && fail "quadratic --chunk 1000G left an output" || ok
summary
