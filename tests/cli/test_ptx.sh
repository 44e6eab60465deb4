#!/bin/sh
# test_ptx.sh - the committed images (ptx/images/*.img) are what `make ptx`
# makes from ptx/*.cu now: where nvcc is available, ptx/images/SOURCES (what
# `make ptx` recorded the images were made from) must be what ptx/sources.sh
# prints for the sources now, and when it is not, or when
# GPUBATCH_TEST_PTX=1 asks, the images are made again (minutes) and
# compared; the check is skipped, and says so, otherwise; `make ptx-unpack`
# gives back each module's PTX, which declares the PTX ISA version make ptx
# chose (7.0 or newer), and its native code for sm_75, 80, 86, 89, 90, 100
# and 120 (cuobjdump reads one module's, where it is installed); the binary
# embeds every entry and needs only glibc. With nvcc, the GPU scripts'
# programs that include the shared ptx/ headers compile too.
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
SASS="75 80 86 89 90 100 120"
U="$T/unpacked"
if make -s ptx-unpack BUILD="$T/build" PTX_WORK="$U" >"$T/unpack.log" 2>&1; then ok; else
    fail "make ptx-unpack failed: $(tail -3 "$T/unpack.log")"
fi
NVCC=${NVCC:-nvcc}
if command -v "$NVCC" >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
    made=$(sed -n 's/^\/\/ Cuda compilation tools, \(release [^,]*\).*/\1/p' "$U/reduce_f32_moments.compute_75.ptx")
    have=$("$NVCC" --version | sed -n 's/.*\(release [^,]*\).*/\1/p')
    if [ "$made" != "$have" ]; then
        echo "note: committed images made by nvcc $made, this nvcc is $have: staleness not checked"
    elif [ -n "${GPUBATCH_TEST_QUICK:-}" ]; then
        # the sanitizer run (make san): the images do not depend on its build
        echo "note: quick run: staleness checked by the plain run, not again here"
    elif [ "${GPUBATCH_TEST_PTX:-}" != 1 ] && sh ptx/sources.sh | cmp -s - ptx/images/SOURCES; then
        ok
        echo "note: ptx/ sources are those the images were made from (ptx/images/SOURCES): not made again (GPUBATCH_TEST_PTX=1 makes them)"
    elif make -s ptx NVCC="$NVCC" BUILD="$T/build" PTX_OUT="$T/images" >"$T/ptx.log" 2>&1; then
        for f in ptx/images/*.img ptx/images/SOURCES; do
            check_files_same "committed $f is up to date (make ptx, and commit ptx/images)" "$f" "$T/images/${f##*/}"
        done
        for f in "$T"/images/*.img; do
            [ -f "ptx/images/${f##*/}" ] && ok || fail "make ptx makes ${f##*/}, which is not committed"
        done
    else
        fail "make ptx failed: $(tail -3 "$T/ptx.log")"
    fi
    # the GPU scripts' programs that compile the shared headers for the host
    # and the device at once (the images compile them for the device alone);
    # a program that compiled before from the same bytes (its own, every
    # source of ptx/, header of runtime/, io/ and tests/gpu/, the nvcc) is not
    # compiled again: its digest is kept in $BUILD/tests/cu-ok
    if [ -z "${GPUBATCH_TEST_QUICK:-}" ]; then
        seen="$top/${BUILD:-build}/tests/cu-ok"
        mkdir -p "$seen"
        for f in $(grep -l '#include "ptx/' tests/gpu/*.cu); do
            sum=$({ "$NVCC" --version; cat "$f" ptx/*.h ptx/*.cu runtime/*.h runtime/gzip/*.h \
                io/*.h io/gzip/*.h tests/gpu/*.h; } | cksum | tr ' ' -)
            if [ -f "$seen/${f##*/}.$sum" ]; then
                ok
            elif "$NVCC" -std=c++17 -I. -arch=sm_90 -c -o "$T/cu.o" "$f" >"$T/cu.log" 2>&1; then
                ok
                rm -f "$seen/${f##*/}".*
                : >"$seen/${f##*/}.$sum"
            else
                fail "$f does not compile: $(grep -m1 error "$T/cu.log")"
            fi
        done
    fi
else
    echo "note: no nvcc: committed images not compared with their sources"
fi
# Each module declares PTX ISA 7.0 or newer (CUDA 11.0, driver R450), the
# version make ptx recorded above its .version line, and has native code for
# each GPU of SASS.
n_modules=0
for f in "$U"/*.ptx; do
    n_modules=$((n_modules + 1))
    declared=$(sed -n 's/^\.version \([0-9.]*\)$/\1/p' "$f")
    recorded=$(sed -n 's/^\/\/ PTX ISA \([0-9.]*\) (at least 7\.0): ptxas .* assembles it for sm_75 .*/\1/p' "$f")
    if [ -n "$declared" ] && [ "$declared" = "$recorded" ] &&
        [ "$(echo "$declared" | awk -F. '{ print ($1 * 100 + $2 >= 700) }')" = 1 ]; then ok; else
        fail "${f##*/} declares PTX ISA [$declared], make ptx recorded [$recorded]"
    fi
    m=${f##*/}
    m=${m%%.*}
    have=$(ls "$U/$m".sm_*.cubin 2>/dev/null | sed 's/.*\.sm_\([0-9]*\)\.cubin$/\1/' | sort -n | tr '\n' ' ')
    check_eq "$m: native code" "$SASS " "$have"
done
check_eq "modules in the images" "$n_modules" "$(ls "$U"/*.ptx | wc -l)"
if command -v cuobjdump >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/cuobjdump ]; then
    cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
    for a in $SASS; do
        "$cuobjdump" -sass "$U/transpose.sm_$a.cubin" 2>&1 | grep -q "code for sm_$a\$" && ok ||
            fail "cuobjdump finds no sm_$a code in transpose.sm_$a.cubin"
    done
fi
"$GB" info -v --no-jit >"$T/info"
check_eq "every PTX is embedded" "$n_modules" \
    "$(sed -n '/^embedded PTX:/,/^embedded native code:/p' "$T/info" | grep -c ' compute_75 ')"
sass_list=$(echo " $SASS" | sed 's/ / sm_/g')
check_eq "every cubin is embedded" "$n_modules" \
    "$(sed -n '/^embedded native code:/,/^cpu backend/p' "$T/info" | grep -c "^  [a-z0-9_]* *$sass_list: CUDA 13\.0 (driver R580) or newer  *[0-9]* bytes$")"
needed=$(readelf -d "$GB" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
case $needed in
*libz* | *libcuda* | *libstdc* | *libgcc_s*) fail "unexpected dynamic dependency: $needed" ;;
*) ok ;;
esac
summary
