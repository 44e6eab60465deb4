#!/bin/sh
# bench_gzip.sh [OUTDIR [BASE_SRC]] - gzip that is not blocked, end to end:
# `reduce --op sum` of one float32 array (ELEMS elements, default 2^29 =
# 2 GiB) written as one `gzip -1` member, as one `gzip -9` member, as pigz -9
# output (one member of many blocks), as `np.savez_compressed` (when python3
# has numpy) and as BGZF
# (`gpubatch gen -1`), with --backend auto, cuda and cpu, best of 3, each
# gzip file beside one `gzip -dc` of it; results checked equal
# across backends and against the uncompressed file. BASE_SRC (another
# source tree) is built and raced beside this one, best of BASE_REPS
# (default 3; 1 for a tree that reads single members on one thread). Needs gzip, and pigz or
# python3 (tests/gpu/pigz_like.py writes the same kind of member). KINDS
# (default "g1 g9 p9 z b1": gzip -1, gzip -9, pigz -9, .npz, BGZF) picks the files;
# DC_REPS (default 1; 0: none) the runs of `gzip -dc`. Full
# logs go to OUTDIR; a short table is printed last.
set -u
out=${1:-gpu-gzip}
base_src=${2:-}
work_name=gpubatch-gzip
. "$(dirname "$0")/lib.sh"
ELEMS=${ELEMS:-536870912}
KINDS=${KINDS:-g1 g9 p9 z b1}
# want KIND: KINDS has it.
want() { case " $KINDS " in *" $1 "*) return 0 ;; esac; return 1; }
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) cores: $(nproc)"
x="$work/x.npy"
[ -s "$x" ] || "$GB" gen --shape "$ELEMS" --dist normal --seed 5 --no-compress -f -o "$x"
! want g1 || [ -s "$work/g1.npy.gz" ] || gzip -1 -c "$x" >"$work/g1.npy.gz" &
! want g9 || [ -s "$work/g9.npy.gz" ] || gzip -9 -c "$x" >"$work/g9.npy.gz" &
if ! want p9 || [ -s "$work/p9.npy.gz" ]; then :
elif command -v pigz >/dev/null; then
    pigz -9 -c -p "$(($(nproc) - 2))" "$x" >"$work/p9.npy.gz"
else
    python3 tests/gpu/pigz_like.py "$x" "$work/p9.npy.gz" 9
fi
if want z && python3 -c 'import numpy' 2>/dev/null; then
    [ -s "$work/z.npz" ] || python3 -c 'import numpy as np, sys; np.savez_compressed(sys.argv[2], x=np.load(sys.argv[1], mmap_mode="r"))' \
        "$x" "$work/z.npz" &
fi
! want b1 || [ -s "$work/b1.npy.gz" ] || "$GB" gen --shape "$ELEMS" --dist normal --seed 5 -1 -f -o "$work/b1.npy.gz"
wait
ls -l "$work" | tee -a "$sum"
want=$("$GB" reduce --backend cpu --op sum "$x" | cut -d' ' -f2)
[ ! -s "$work/z.npz" ] || ln -sf z.npz "$work/z.npy.gz" # the same loop: a name it knows
for k in $KINDS; do
    [ -s "$work/$k.npy.gz" ] || continue
    for be in auto cuda cpu; do
        got=$("$GB" reduce --backend $be --op sum "$work/$k.npy.gz" | cut -d' ' -f2)
        check "$k $be" "$want" "$got"
    done
    "$GB" reduce -v --backend cpu --op sum "$work/$k.npy.gz" 2>&1 | grep -E 'inflated|GB/s' | tee -a "$sum"
    [ "$k" = z ] || [ "${DC_REPS:-1}" = 0 ] ||
        RACE_REPS=${DC_REPS:-1} race "$k.npy.gz: gzip -dc" "gzip,-dc,$work/$k.npy.gz"
    race "$k.npy.gz: reduce --op sum, this tree" "$GB,reduce,--backend,auto,--op,sum,$work/$k.npy.gz" \
        "$GB,reduce,--backend,cuda,--op,sum,$work/$k.npy.gz" "$GB,reduce,--backend,cpu,--op,sum,$work/$k.npy.gz"
    if [ -n "$OLD" ] && [ "$k" != z ]; then
        RACE_REPS=${BASE_REPS:-3} race "$k.npy.gz: reduce --op sum, base" "$OLD,reduce,--backend,auto,--op,sum,$work/$k.npy.gz" \
            "$OLD,reduce,--backend,cuda,--op,sum,$work/$k.npy.gz" "$OLD,reduce,--backend,cpu,--op,sum,$work/$k.npy.gz"
    fi
done
if [ -s "$work/g1.npy.gz" ] && command -v taskset >/dev/null; then
    note "g1.npy.gz: reduce --backend cpu --op count on N cores (taskset), one run each"
    for n in 1 2 4 8 16; do
        [ "$n" -le "$(nproc)" ] || continue
        s=$(date +%s.%N)
        taskset -c 0-$((n - 1)) "$GB" reduce -v --backend cpu --op count "$work/g1.npy.gz" >/dev/null 2>"$work/cores.err"
        e=$(date +%s.%N)
        note "  $n cores: $(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", b - a }') s; $(grep -o 'waited [0-9.]* s for input' "$work/cores.err")"
    done
fi
note "checks: $pass passed, $fail failed"
[ ! -s "$out/fail.txt" ] || cat "$out/fail.txt"
