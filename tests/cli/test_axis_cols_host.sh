#!/bin/sh
# test_axis_cols_host.sh - the many-column bodies of the axis kernels
# (ptx/axis.cu: block_cols, and block_cols_vec's variants) built for the
# host by the C++ compiler (tests/gpu/axis_cols_host.cpp; g++ evaluates a
# call's arguments in another order than nvcc), float32 and float64: every
# variant gives block_cols's bits on random chunks with NaN, infinities,
# signed zeros and subnormals. Without a C++ compiler the check is skipped,
# and says so.
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
CXX=${CXX:-c++}
if ! command -v "$CXX" >/dev/null 2>&1; then
    echo "note: no C++ compiler ($CXX): the host build of the axis kernels' bodies is not checked"
    summary
    exit
fi
for d in f32 f64; do
    if "$CXX" -std=c++17 -O1 -ffp-contract=off -I. -DGB_DT_$d -x c++ -o "$T/cols_$d" \
        tests/gpu/axis_cols_host.cpp >"$T/build_$d.log" 2>&1; then ok; else
        fail "axis_cols_host.cpp ($d) does not build: $(head -3 "$T/build_$d.log")"
        continue
    fi
    if "$T/cols_$d" >"$T/out_$d" 2>&1; then ok; else
        fail "$d: a many-column body's bits differ: $(head -3 "$T/out_$d")"
    fi
done
summary
