#!/bin/sh
# bench_member.sh [OUTDIR [BASE_SRC]] - one gzip member (not blocked) of
# data of three ratios, end to end: `reduce --op count` of int32 in 0..199
# (pigz -6, about 2.6 bytes to a compressed one), text log lines (pigz -6,
# about 20) and float32 (gzip -1, about 1.1), with --backend cpu, cuda and
# auto; `transpose` of a float32 matrix from the plain .npy and from
# `gzip -1` (the text: 8 MiB of lines repeated, far beyond deflate's
# window, so fast to make). Best of RACE_REPS (default 3) runs, BASE_SRC (another source
# tree) built and raced beside this one; sums and counts checked equal
# across backends and trees, the transposes' bytes against the plain
# file's. Sizes: I32 elements (default 2^28), TEXT bytes (default 512 MiB),
# F32 elements (default 2^27), SIDE of the square matrix (default 8192).
# PIGZ_BIN names pigz (default: the one on PATH; else tests/gpu/pigz_like.py;
# not PIGZ, which pigz reads as its options).
# PARTS (default "reduce transpose") picks the parts, TBE (default "cuda
# auto") the transpose's backends; INDEX=1 also races each reduce file with
# a seek index beside it against --no-index; PIPE=1 races each reduce file
# read from a pipe too (`cat FILE |`, tests/gpu/pipe_in.sh). FLOAT6=1 adds
# the float32 array as a pigz -6 member and as an .npz whose one member is
# deflated (tests/gpu/npz_deflated.py). RAPIDGZIP names a rapidgzip binary
# raced beside each gzip file (-P with every core, output to /dev/null).
set -u
out=${1:-gpu-member}
base_src=${2:-}
work_name=gpubatch-member
. "$(dirname "$0")/lib.sh"
I32=${I32:-268435456}
TEXT=${TEXT:-536870912}
F32=${F32:-134217728}
SIDE=${SIDE:-8192}
PIGZ_BIN=${PIGZ_BIN:-pigz}
PARTS=${PARTS:-reduce transpose}
TBE=${TBE:-cuda auto}
# part NAME: PARTS has it.
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) cores: $(nproc)"
# pz LEVEL IN OUT: one member of many blocks, as pigz writes it.
pz() {
    if command -v "$PIGZ_BIN" >/dev/null; then "$PIGZ_BIN" -"$1" -c "$2" >"$3"
    else python3 tests/gpu/pigz_like.py "$2" "$3" "$1"; fi
}
part reduce && (
    "$GB" gen --shape "$I32" --dtype int32 --low 0 --high 199 --seed 2 --no-compress -f -o "$work/i.npy"
    pz 6 "$work/i.npy" "$work/i.npy.gz"
    rm -f "$work/i.npy"
) &
part reduce && (
    awk 'BEGIN { s = 12345; t = 1700000000; u = 0;
        split("INFO [net] request served|INFO [net] request served|INFO [disk] flushed pages|DEBUG [cache] cache hit|INFO [net] connection opened|WARN [sched] queue long", ms, "|");
        for (;;) { s = (s * 69069 + 1) % 4294967296; r = int(s / 65536); if (r % 8 == 0) u++;
            if (u == 1000) { u = 0; t++ }
            printf "%d.%03d %s\n", t, u, ms[1 + int(r / 8) % 6]; } }' | head -c 8388608 >"$work/t8"
    : >"$work/text.u8"
    i=0
    while [ $((i * 8388608)) -lt "$TEXT" ]; do cat "$work/t8"; i=$((i + 1)); done | head -c "$TEXT" >"$work/text.u8"
    rm -f "$work/t8"
    pz 6 "$work/text.u8" "$work/text.u8.gz"
    rm -f "$work/text.u8"
) &
part reduce && (
    "$GB" gen --shape "$F32" --dist normal --seed 3 --no-compress -f -o "$work/f.npy"
    gzip -1 -c "$work/f.npy" >"$work/f.npy.gz"
    if [ -n "${FLOAT6:-}" ]; then
        pz 6 "$work/f.npy" "$work/f6.npy.gz"
        python3 tests/gpu/npz_deflated.py "$work/f.npy" "$work/f.npz" "$PIGZ_BIN"
    fi
    rm -f "$work/f.npy"
) &
part transpose && (
    "$GB" gen --shape "${SIDE}x$SIDE" --dist normal --seed 4 --no-compress -f -o "$work/m.npy"
    gzip -1 -c "$work/m.npy" >"$work/m.npy.gz"
) &
wait
ls -l "$work" | tee -a "$sum"
files="i.npy.gz text.u8.gz f.npy.gz"
[ -z "${FLOAT6:-}" ] || files="$files f6.npy.gz f.npz"
for f in $files; do
    part reduce || break
    dt=
    [ "$f" != text.u8.gz ] || dt="--dtype uint8"
    want=$("$GB" reduce -q --backend cpu --op sum,count $dt "$work/$f")
    for be in cuda auto; do
        check "$f $be" "$want" "$("$GB" reduce -q --backend $be --op sum,count $dt "$work/$f")"
        [ -z "$OLD" ] || other="baseline $be" check "$f baseline $be" "$want" \
            "$("$OLD" reduce -q --backend $be --op sum,count $dt "$work/$f")"
    done
    for b in "$GB" $OLD; do
        note "$b cuda -v: $($b reduce -v --backend cuda --op count $dt "$work/$f" 2>&1 >/dev/null |
            grep -i 'on the GPU in\|while the GPU\|in parallel\|in order' | cut -c1-400 | tr '\n' ' ')"
    done
    v=
    for be in cpu cuda auto; do
        for b in "$GB" $OLD; do v="$v $b,reduce,-q,--backend,$be,--op,count$(echo " $dt" | tr ' ' ',' | sed 's/,$//'),$work/$f"; done
    done
    case $f in *.gz) [ -z "${RAPIDGZIP:-}" ] || v="$v $RAPIDGZIP,-P,$(nproc),-d,-f,-o,/dev/null,$work/$f" ;; esac
    file=$f # race sets f
    race "reduce --op count $file" $v
    [ -n "${PIPE:-}" ] || continue
    for be in cuda auto; do
        check "$file through a pipe, $be" "$(echo "$want" | sed "s|$work/$file|-|")" \
            "$(sh tests/gpu/pipe_in.sh "$work/$file" "$GB" reduce -q --backend $be --op sum,count $dt -)"
    done
    v=
    for be in cpu cuda auto; do
        for b in "$GB" $OLD; do
            v="$v sh,tests/gpu/pipe_in.sh,$work/$file,$b,reduce,-q,--backend,$be,--op,count$(echo " $dt" | tr ' ' ',' | sed 's/,$//'),-"
        done
    done
    race "reduce --op count - <$file (through a pipe)" $v
done
# INDEX=1: each reduce file again with a seek index beside it (`gpubatch
# index`, timed) against --no-index, on every backend, this tree only.
for f in i.npy.gz text.u8.gz f.npy.gz; do
    part reduce && [ -n "${INDEX:-}" ] || break
    dt=
    [ "$f" != text.u8.gz ] || dt="--dtype uint8"
    s=$(date +%s.%N)
    "$GB" index -f "$work/$f"
    note "index of $f: $(stat -c %s "$work/$f.gzidx") bytes in $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s"
    v=
    for be in cpu cuda auto; do
        v="$v $GB,reduce,-q,--backend,$be,--op,count$(echo " $dt" | tr ' ' ',' | sed 's/,$//'),$work/$f"
        v="$v $GB,reduce,-q,--no-index,--backend,$be,--op,count$(echo " $dt" | tr ' ' ',' | sed 's/,$//'),$work/$f"
    done
    race "reduce --op count $f: with its index, and --no-index" $v
    rm -f "$work/$f.gzidx"
done
part transpose || TBE=
[ -z "$TBE" ] || "$GB" transpose --backend cpu -f -o "$work/t.npy" "$work/m.npy"
for be in $TBE; do
    for b in "$GB" $OLD; do
        $b transpose --backend $be -f -o "$work/t2.npy" "$work/m.npy.gz"
        other="$b $be" check "transpose m.npy.gz $b $be" "$(md5sum <"$work/t.npy")" "$(md5sum <"$work/t2.npy")"
    done
done
v=
for be in $TBE; do
    for b in "$GB" $OLD; do
        v="$v $b,transpose,--backend,$be,-f,-o,/dev/null,$work/m.npy $b,transpose,--backend,$be,-f,-o,/dev/null,$work/m.npy.gz"
    done
done
[ -z "$v" ] || race "transpose ${SIDE}x$SIDE float32: plain, gzip -1" $v
note "checks: $pass passed, $fail failed"
[ ! -s "$out/fail.txt" ] || head -20 "$out/fail.txt"
