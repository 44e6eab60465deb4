#!/bin/sh
# test_ptx.sh - the committed PTX is what `make ptx` makes from ptx/*.cu now
# (when nvcc is available; the check is skipped, and says so, without it),
# each module declares the PTX ISA version make ptx chose (7.0 or newer), and
# the binary embeds every committed PTX file and needs only glibc.
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
NVCC=${NVCC:-nvcc}
if command -v "$NVCC" >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
    made=$(sed -n 's/^\/\/ Cuda compilation tools, \(release [^,]*\).*/\1/p' ptx/reduce_f32_moments.compute_75.ptx)
    have=$("$NVCC" --version | sed -n 's/.*\(release [^,]*\).*/\1/p')
    if [ "$made" != "$have" ]; then
        echo "note: committed PTX made by nvcc $made, this nvcc is $have: staleness not checked"
    elif make -s ptx NVCC="$NVCC" PTX_OUT="$T/ptx" >"$T/ptx.log" 2>&1; then
        for f in ptx/*.ptx; do
            check_files_same "committed $f is up to date" "$f" "$T/ptx/${f#ptx/}"
        done
        for f in "$T"/ptx/*.ptx; do
            [ -f "ptx/${f##*/}" ] && ok || fail "make ptx makes ${f##*/}, which is not committed"
        done
    else
        fail "make ptx failed: $(tail -3 "$T/ptx.log")"
    fi
else
    echo "note: no nvcc: committed PTX not compared with its sources"
fi
# Each committed module declares PTX ISA 7.0 or newer (CUDA 11.0, driver
# R450), the version make ptx recorded above its .version line.
for f in ptx/*.ptx; do
    declared=$(sed -n 's/^\.version \([0-9.]*\)$/\1/p' "$f")
    recorded=$(sed -n 's/^\/\/ PTX ISA \([0-9.]*\) (at least 7\.0): ptxas .* assembles it for sm_75 .*/\1/p' "$f")
    if [ -n "$declared" ] && [ "$declared" = "$recorded" ] &&
        [ "$(echo "$declared" | awk -F. '{ print ($1 * 100 + $2 >= 700) }')" = 1 ]; then ok; else
        fail "$f declares PTX ISA [$declared], make ptx recorded [$recorded]"
    fi
done
n_files=$(ls ptx/*.ptx | wc -l)
n_embedded=$("$GB" info --no-jit | grep -c 'compute_')
check_eq "every PTX file is embedded" "$n_files" "$n_embedded"
needed=$(readelf -d "$GB" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
case $needed in
*libz* | *libcuda* | *libstdc* | *libgcc_s*) fail "unexpected dynamic dependency: $needed" ;;
*) ok ;;
esac
summary
