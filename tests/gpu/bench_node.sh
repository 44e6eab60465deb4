#!/bin/sh
# bench_node.sh [OUTDIR [BASE]] - on a node with several GPUs: what a run
# pays to start the driver as the devices it can see grow, whether contexts
# made on threads of their own overlap, and `reduce --op sum` of a tiny
# file and of one, four and 32 blocked-gzip files of 2 GiB (the 32 are the
# same 8 files named four times) by device 0, `--device all` (the devices
# the input pays for), every device listed,
# auto and cpu, each row's results checked equal to cpu's. Then the same
# tiny and 2 GiB runs as 1, 2 and 4 processes at once, one GPU each, with
# each process's own driver start. BASE: another source tree, built and
# raced beside this one. RACE_REPS sets the runs per variant (default 3),
# ELEMS the float32 elements of each file (default 2^29); SETS the file
# sets raced (default "one four many"); STUDY=0 leaves out the driver's
# start and the processes at once; FEED=0 the host's feed ceilings
# (tests/gpu/bench_feed.cu).
set -u
out=${1:-node-results}
base_src=${2:-}
work_name=gpubatch-node
. "$(dirname "$0")/lib.sh"
ndev=$($GB info --no-jit 2>/dev/null | grep -c '^device [0-9]*:')
note "devices: $ndev; cores: $(nproc); $(nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader | sort | uniq -c | tr -s ' ')"
last=$((ndev - 1))
all_list=$(seq -s, 0 $last)

# The driver's start as the devices it sees grow, and the contexts made one
# after another or on a thread each (best of 3 of each).
cc -std=c11 -O2 -I. -o "$work/init_time" tests/gpu/init_time.c build/runtime/gpu.o build/runtime/cu.o \
    build/runtime/ptx_blobs.o build/ptx_table.o build/io/status.o build/io/clock.o -l:libz.a -ldl -pthread
[ "${STUDY:-1}" = 0 ] || note "driver start (best of 3, ms): visible devices, cuInit, contexts serial, contexts on threads"
k=1
[ "${STUDY:-1}" = 0 ] && k=$((ndev + 1))
while [ $k -le "$ndev" ]; do
    vis=$(seq -s, 0 $((k - 1)))
    for mode in serial threads; do
        for i in 1 2 3; do
            sleep 0.5
            CUDA_VISIBLE_DEVICES=$vis "$work/init_time" $k $mode
        done >"$work/init-$k-$mode.txt"
    done
    note "  $k: $(awk '/driver_init_ms/ {if (!m || $2 < m) m = $2} END {print m}' "$work/init-$k-serial.txt") / $(awk '/context_ms/ {if (!m || $2 < m) m = $2} END {print m}' "$work/init-$k-serial.txt") / $(awk '/context_ms/ {if (!m || $2 < m) m = $2} END {print m}' "$work/init-$k-threads.txt")"
    cat "$work/init-$k-serial.txt" "$work/init-$k-threads.txt" >>"$out/init.txt"
    k=$((k * 2))
    [ $k -gt "$ndev" ] && [ $((k / 2)) -lt "$ndev" ] && k=$ndev
done

# check_same NAME ARGS...: the sum of every backend and device choice in ARGS equals cpu's.
check_same() {
    name=$1
    shift
    ref=$($GB reduce -q --backend cpu --op sum "$@")
    for v in "--backend cuda" "--backend cuda --device all" "--backend auto" "--backend auto --device all"; do
        check "$name $v" "$ref" "$($GB reduce -q $v --op sum "$@" 2>&1)"
    done
}

$GB gen --shape 1000 --dist normal --seed 3 --no-compress -f -o "$work/tiny.npy"
check_same "tiny" "$work/tiny.npy"
t="$work/tiny.npy"
o=""
[ -n "$OLD" ] && o="$OLD,reduce,--op,sum,--backend,cuda,--device,all,$t"
RACE_REPS=5 race "tiny .npy (1000 float32)" \
    "$GB,reduce,--op,sum,--backend,cuda,$t" \
    "CUDA_VISIBLE_DEVICES=0,GPUBATCH_NARROW_DEVICES=0,$GB,reduce,--op,sum,--backend,cuda,$t" \
    "GPUBATCH_NARROW_DEVICES=0,$GB,reduce,--op,sum,--backend,cuda,$t" \
    "$GB,reduce,--op,sum,--backend,cuda,--device,all,$t" \
    "$GB,reduce,--op,sum,--backend,auto,--device,all,$t" $o

$GB gen --shape "${ELEMS:-536870912}" --dist normal --seed 5 -1 -f -o "$work/f0.npy.gz"
for i in 1 2 3 4 5 6 7; do cp "$work/f0.npy.gz" "$work/f$i.npy.gz"; done
cat "$work"/f*.npy.gz >/dev/null
one="$work/f0.npy.gz"
four="$work/f0.npy.gz,$work/f1.npy.gz,$work/f2.npy.gz,$work/f3.npy.gz"
eight="$work/f0.npy.gz $work/f1.npy.gz $work/f2.npy.gz $work/f3.npy.gz $work/f4.npy.gz $work/f5.npy.gz $work/f6.npy.gz $work/f7.npy.gz"
many=$(echo $eight $eight $eight $eight | tr ' ' ',')
check_same "one 2 GiB BGZF" "$one"
check_same "four 2 GiB BGZF" $(echo "$four" | tr ',' ' ')

# procs.sh N SIZE: N processes at once, process i on device i, each over
# its own file (f$i) or the tiny one.
cat >"$work/procs.sh" <<EOS
#!/bin/sh
i=0
while [ \$i -lt \$1 ]; do
    f="$work/f\$i.npy.gz"
    [ "\$2" = tiny ] && f="$work/tiny.npy"
    "\${GB:-$top/gpubatch}" reduce -v --op sum --backend cuda --device \$i "\$f" >/dev/null 2>"$work/proc-\$1-\$2-\$i.err" &
    i=\$((i + 1))
done
wait
EOS

# every.sh ARGS: reduce --op sum on every device listed (race splits its
# variants at commas, which a device list holds).
printf '#!/bin/sh\nexec "%s" reduce --op sum --backend cuda --device %s "$@"\n' "$top/gpubatch" "$all_list" \
    >"$work/every.sh"
for set in ${SETS:-one four many}; do
    eval "files=\$$set"
    variants="$GB,reduce,--op,sum,--backend,cuda,$files $GB,reduce,--op,sum,--backend,cuda,--device,all,$files sh,$work/every.sh,$files $GB,reduce,--op,sum,--backend,auto,$files $GB,reduce,--op,sum,--backend,auto,--device,all,$files"
    [ $set = many ] || variants="$variants $GB,reduce,--op,sum,--backend,cpu,$files"
    [ $set = four ] && variants="$variants sh,$work/procs.sh,$ndev,big"
    [ -n "$OLD" ] && variants="$variants $OLD,reduce,--op,sum,--backend,cuda,--device,all,$files $OLD,reduce,--op,sum,--backend,auto,$files"
    RACE_SED="s|\(f[0-9].npy.gz \)*f[0-9].npy.gz$|$set file(s)|" race "reduce --op sum, $set 2 GiB BGZF file(s)" $variants
done
case " ${SETS:-many} " in *" many "*)
RACE_SED="s|\\(f[0-9].npy.gz \\)*f[0-9].npy.gz$|32 files|" RACE_REPS=1 race "reduce --op sum, 32 2 GiB BGZF files on the CPU" "$GB,reduce,--op,sum,--backend,cpu,$many"
for v in "" "--device all" "--device $all_list"; do
    $GB reduce -v --op sum --backend cuda $v $(echo "$many" | tr ',' ' ') 2>&1 >/dev/null |
        grep -E "ready|first device|taking chunks|done [0-9.]* s after" | sed "s/^/  32 files, cuda $v: /" | tee -a "$sum"
done ;;
esac

# Processes at once, one GPU each: the whole and each one's driver start.
[ "${STUDY:-1}" = 0 ] || note "processes at once, one device each: wall s; each one's driver-and-context ms"
for size in tiny big; do
    [ "${STUDY:-1}" = 0 ] && break
    for n in 1 2 4; do
        [ $n -gt "$ndev" ] && continue
        best=9999
        for i in 1 2 3; do
            sleep 0.5
            s=$(date +%s.%N)
            sh "$work/procs.sh" $n $size
            e=$(date +%s.%N)
            best=$(awk -v a="$s" -v b="$e" -v f="$best" 'BEGIN { d = b - a; printf "%.3f", d < f ? d : f }')
            starts=$(cat "$work"/proc-$n-$size-*.err | sed -n 's/.*(driver and context \([0-9]*\) ms.*/\1/p' | tr '\n' ' ')
            echo "$size $n run $i: starts $starts" >>"$out/procs.txt"
        done
        note "  $n x $size: $best s; last run's starts: $starts"
    done
done

if [ "${FEED:-1}" != 0 ] && command -v nvcc >/dev/null 2>&1; then
    nvcc -O2 -std=c++17 -o "$work/bench_feed" tests/gpu/bench_feed.cu >>"$out/build.log" 2>&1 &&
        "$work/bench_feed" "$work/f0.npy.gz" >"$out/feed.txt" 2>&1
    grep -E "threads: |memcpy|alone|device\(s\): " "$out/feed.txt" | tee -a "$sum"
fi
note "checks: $pass passed, $fail failed"
