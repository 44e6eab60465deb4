#!/bin/sh
# test_multi_gpu.sh - on a machine with two or more CUDA GPUs: `--device all`
# and device lists give exactly what the CPU backend gives (reduce's text,
# quadratic's and transpose's bytes) for any chunk size, stream count and
# device order; one device of the list alone gives the same too. The driver
# starts only the devices listed, and -v still names them as listed.
. "$(dirname "$0")/../cli/lib.sh"
ndev=$("$GB" info --no-jit 2>/dev/null | grep -c '^device [0-9]*:')
if [ "$ndev" -lt 2 ]; then
    echo "skip test_multi_gpu: $ndev CUDA device(s), two are needed"
    summary
    exit
fi
last=$((ndev - 1))
every=$(seq -s, 0 $last)
# `all` starts the devices the input pays for (one, for these inputs);
# "every" lists each device, so every one takes chunks
lists="$every all 1,0 $last,0"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count

for dt in float32 float64 int32 uint8 int64; do
    f="$T/r-$dt.npy.gz"
    "$GB" gen --dtype $dt --dist normal --shape 7000013 --seed 11 -o "$f"
    "$GB" reduce -q --backend cpu --op $ALL "$f" >"$T/cpu.txt"
    for d in $lists; do
        for opts in "--chunk 1M" "--chunk 128k --streams 3" ""; do
            "$GB" reduce -q --backend cuda --device $d $opts --op $ALL "$f" >"$T/gpu.txt" 2>"$T/gpu.err" ||
                fail "reduce $dt --device $d $opts: $(cat "$T/gpu.err")"
            check_files_same "reduce $dt --device $d $opts" "$T/cpu.txt" "$T/gpu.txt"
        done
    done
    "$GB" reduce -q --backend cpu --op sum,max --skipnan "$f" >"$T/cpu.txt"
    "$GB" reduce -q --backend cuda --device $every --chunk 1M --op sum,max --skipnan "$f" >"$T/gpu.txt"
    check_files_same "reduce $dt skipnan --device $every" "$T/cpu.txt" "$T/gpu.txt"
done

"$GB" gen --quadratic 3000017 --seed 3 -o "$T/q.npy.gz"
"$GB" quadratic -q --backend cpu "$T/q.npy.gz" -o "$T/qcpu.npy.gz"
"$GB" quadratic -q --backend cpu --out-layout planes "$T/q.npy.gz" -o "$T/qpcpu.npy.gz"
for d in $lists; do
    "$GB" quadratic -q --backend cuda --device $d --chunk 1M "$T/q.npy.gz" -o "$T/qgpu.npy.gz" -f
    check_files_same "quadratic --device $d" "$T/qcpu.npy.gz" "$T/qgpu.npy.gz"
    "$GB" quadratic -q --backend cuda --device $d --chunk 1M --out-layout planes "$T/q.npy.gz" \
        -o "$T/qpgpu.npy.gz" -f
    check_files_same "quadratic planes out --device $d" "$T/qpcpu.npy.gz" "$T/qpgpu.npy.gz"
done

for shape in 4096x64x64 1000x33x65 3x1000x1000 2x8191x8193; do
    "$GB" gen --shape $shape --seed 5 -o "$T/t.npy.gz" -f
    "$GB" transpose -q --backend cpu "$T/t.npy.gz" -o "$T/tcpu.npy.gz" -f
    for d in $lists; do
        "$GB" transpose -q --backend cuda --device $d --chunk 1M "$T/t.npy.gz" -o "$T/tgpu.npy.gz" -f
        check_files_same "transpose $shape --device $d" "$T/tcpu.npy.gz" "$T/tgpu.npy.gz"
    done
done
# The devices listed alone are started, and -v still names them as listed
# (where the environment lists no devices of its own, whose numbers differ);
# --device all on a small input starts the first device alone.
if [ -z "${CUDA_VISIBLE_DEVICES+set}" ]; then
    "$GB" reduce -v --backend cuda --device all "$T/r-float32.npy.gz" >/dev/null 2>"$T/gpu.err"
    grep -q "driver: --device all starts at most 1 device (CUDA_VISIBLE_DEVICES=0)" "$T/gpu.err" && ok ||
        fail "-v of --device all: $(grep driver: "$T/gpu.err")"
    check_eq "--device all, a small input: device 0 alone takes chunks" "device 0" \
        "$(sed -n 's/.*backend cuda: \(device [0-9]*\) (.*taking chunks.*/\1/p' "$T/gpu.err")"
    "$GB" quadratic -v --backend cuda --device $last,0 "$T/q.npy.gz" -o "$T/qgpu.npy.gz" -f \
        2>"$T/gpu.err"
    check_files_same "quadratic --device $last,0, narrowed" "$T/qcpu.npy.gz" "$T/qgpu.npy.gz"
    grep -q "CUDA_VISIBLE_DEVICES=$last,0)" "$T/gpu.err" && ok || fail "-v: not narrowed: $(cat "$T/gpu.err")"
    check_eq "-v names the devices as listed" "device $last|device 0" \
        "$(sed -n 's/.*backend cuda: \(device [0-9]*\), .*/\1/p' "$T/gpu.err" | tr '\n' '|' | sed 's/|$//')"
    CUDA_VISIBLE_DEVICES=$last,0 "$GB" quadratic -v --backend cuda --device 1 "$T/q.npy.gz" \
        -o "$T/qgpu.npy.gz" -f 2>"$T/gpu.err"
    check_files_same "quadratic, the user's list, --device 1" "$T/qcpu.npy.gz" "$T/qgpu.npy.gz"
    grep -q "CUDA_VISIBLE_DEVICES=0)" "$T/gpu.err" && ok || fail "-v: the user's list: $(cat "$T/gpu.err")"
    check_eq "-v names the device as the user's list numbers it" "device 1" \
        "$(sed -n 's/.*backend cuda: \(device [0-9]*\), .*/\1/p' "$T/gpu.err")"
    check_error "a device beyond the machine's" "no CUDA device $ndev (this machine has fewer than" \
        "$GB" reduce --backend cuda --device $ndev "$T/r-float32.npy.gz"
fi
summary
