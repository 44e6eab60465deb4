#!/bin/sh
# bench_devices.sh [OUTDIR] - how `reduce` and `quadratic` scale over 1, 2, 4
# ... GPUs of one machine (--device 0, 0,1, ...): whole-process seconds and
# GB/s of data for an uncompressed .npy in the page cache and for blocked
# gzip (BGZF), each beside the one-device run, the results checked equal
# across device counts, and -v's timeline of a BGZF run on each count.
# ELEMS sets the float32 element count (default 2^30, 4 GiB); QROWS the
# quadratic rows (default 2^27).
set -u
out=${1:-devices-results}
mkdir -p "$out"
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
GB=./gpubatch
work=${GPUBATCH_WORK:-/tmp/gpubatch-gpu}
mkdir -p "$work"
ELEMS=${ELEMS:-1073741824}
QROWS=${QROWS:-134217728}
ndev=$($GB info --no-jit 2>/dev/null | grep -c '^device [0-9]*:')
cores=$(nproc)

# Wall-clock seconds of a command (stdout to the file $res).
secs() {
    t0=$(date +%s.%N)
    "$@" >"$res" 2>>"$out/devices.err"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}

$GB gen --shape "$ELEMS" --dist normal --seed 1 --no-compress -o "$work/dev.npy" -f
$GB gen --shape "$ELEMS" --dist normal --seed 1 -1 -o "$work/dev.npy.gz" -f
$GB gen --quadratic "$QROWS" --seed 2 -1 -o "$work/devq.npy.gz" -f
bytes=$(stat -c %s "$work/dev.npy")
qbytes=$((QROWS * 12))
cat "$work/dev.npy" >/dev/null
echo "devices: $ndev; $cores cores; reduce of $ELEMS float32 ($bytes bytes), quadratic of $QROWS float32 rows"
echo "devices  input               seconds     GB/s   vs 1 device  same result"
list=0
n=1
while [ $n -le "$ndev" ]; do
    for kind in raw gz quad; do
        res="$work/res-$kind-$n"
        case $kind in
        raw) t=$(secs $GB reduce -q --backend cuda --device $list --op sum,max "$work/dev.npy"); b=$bytes; label=".npy (page cache)" ;;
        gz) t=$(secs $GB reduce -q --backend cuda --device $list --op sum,max "$work/dev.npy.gz"); b=$bytes; label=".npy.gz (BGZF)" ;;
        quad) t=$(secs sh -c "$GB quadratic -q --backend cuda --device $list -1 '$work/devq.npy.gz' -o - | md5sum"); b=$qbytes; label="quadratic gz->gz" ;;
        esac
        [ $n -eq 1 ] && eval "t1_$kind=$t"
        eval "base=\$t1_$kind"
        same=yes
        cmp -s "$work/res-$kind-1" "$res" || same=NO
        rate=$(awk -v b="$b" -v t="$t" 'BEGIN { printf "%.2f", b / t / 1e9 }')
        speedup=$(awk -v a="$base" -v t="$t" 'BEGIN { printf "%.2f", a / t }')
        printf '%-8s %-18s %8s %8s %11sx  %s\n' "$n" "$label" "$t" "$rate" "$speedup" "$same"
    done
    # where the BGZF run's time goes (-v's timeline) on this many devices
    $GB reduce -v --backend cuda --device $list --op sum,max "$work/dev.npy.gz" 2>&1 >/dev/null |
        grep -E "process started|main thread waited" | sed "s/^/  $n device(s): /"
    case $n in 1) n=2 ;; 2) n=4 ;; *) n=$((n * 2)) ;; esac
    list=$(seq -s, 0 $((n - 1)))
done
