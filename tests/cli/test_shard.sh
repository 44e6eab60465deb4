#!/bin/sh
# test_shard.sh - `--shard I/N` and `gpubatch merge` on the CPU backend: the
# merged result equals one run over the whole input bit for bit (reduce text
# and JSON, quadratic output files byte for byte), for every dtype, op set,
# NaN policy, size around tile and block boundaries, shard count (more
# shards than tiles too), input framing, and states given in any order; and
# every error case.
. "$(dirname "$0")/lib.sh"
need_python
REF="$top/tests/cli/npyref.py"
BGZF="$top/tests/cli/bgzf.py"
ALL=sum,mean,min,max,argmin,argmax,sumsq,count
R() { "$GB" reduce --backend cpu -q "$@"; }
E() { "$GB" reduce --backend cpu "$@"; }

# shard_reduce N FILE OPTS...: writes N states st-I and prints the merged
# text and JSON (states given in random order) into $T/m.txt and $T/m.json.
shard_reduce() {
    n=$1
    file=$2
    shift 2
    rm -f "$T"/st-*
    i=0
    while [ $i -lt $n ]; do
        R "$@" --shard $i/$n -o "$T/st-$i" "$file" 2>>"$T/shard.err" || fail "shard $i/$n of $file $*"
        i=$((i + 1))
    done
    ls "$T"/st-* | shuf >"$T/order"
    "$GB" merge $(cat "$T/order") >"$T/m.txt" 2>"$T/m.err"
    echo "status $?" >>"$T/m.txt"
    cat "$T/m.err" >>"$T/m.txt"
    "$GB" merge --json $(cat "$T/order") >"$T/m.json" 2>&1
}

# single_reduce FILE OPTS...: the same outputs from one run.
single_reduce() {
    file=$1
    shift
    R "$@" "$file" >"$T/s.txt" 2>"$T/s.err"
    echo "status $?" >>"$T/s.txt"
    cat "$T/s.err" >>"$T/s.txt"
    R "$@" --json "$file" >"$T/s.json" 2>&1
}

# Every dtype, size and shard count; floats with NaN, Inf, subnormals. The
# shard counts are spread over the rounds (make soak: every one each round).
round=0
specs=$(pick "float32:adversarial float64:adversarial float32:random int8:ints-extreme \
    int64:ints-extreme uint64:ints-extreme uint16:random int32:random" \
    "float32:adversarial float64:adversarial int8:ints-extreme uint64:ints-extreme")
sizes=$(pick "1 16383 16385 81927 200001" "1 16385 81927 200001")
# every file written by one process (the reference's start costs more than a file)
for spec in $specs; do
    for n in $sizes; do echo "- write ${spec%%:*} $n ${spec#*:} $n $T/${spec%%:*}-${spec#*:}-$n.npy"; done
done | $PY "$REF" batch | grep -v '^- 0 $' | sed 's/^/npyref.py write: /' >&2
for spec in $specs; do
    dt=${spec%%:*}
    kind=${spec#*:}
    for n in $sizes; do
        f="$T/$dt-$kind-$n.npy"
        for skip in "" --skipnan; do
            case $dt in float*) ;; *) [ -n "$skip" ] && continue ;; esac
            single_reduce "$f" --op $ALL $skip
            round=$((round + 1))
            for shards in $(spread "$(pick "1 3 7 16" "3 7")" $round); do
                shard_reduce $shards "$f" --op $ALL $skip
                check_files_same "$dt n=$n $skip $shards shards (text)" "$T/s.txt" "$T/m.txt"
                check_files_same "$dt n=$n $skip $shards shards (json)" "$T/s.json" "$T/m.json"
            done
        done
    done
done

# Framings: blocked gzip with random block sizes (read from any offset by
# walking the block headers), raw data with --dtype, plain and compressed.
f="$T/frame.npy"
$PY "$REF" write float64 150000 adversarial 11 "$f"
$PY "$BGZF" 1 "$f" "$T/frame.npy.gz"
tail -c +129 "$f" >"$T/frame.raw"
$PY "$BGZF" 2 "$T/frame.raw" "$T/frame.raw.gz"
for shards in $(pick "1 2 5 9 40" "2 40"); do
    single_reduce "$T/frame.npy" --op $ALL
    for g in "$T/frame.npy.gz"; do
        shard_reduce $shards "$g" --op $ALL
        sed "s|frame.npy.gz|frame.npy|" "$T/m.txt" >"$T/m2.txt"
        check_files_same "blocked gzip .npy, $shards shards" "$T/s.txt" "$T/m2.txt"
    done
    single_reduce "$T/frame.raw" --op $ALL --dtype float64
    for g in "$T/frame.raw" "$T/frame.raw.gz"; do
        shard_reduce $shards "$g" --op $ALL --dtype float64
        sed "s|$g|$T/frame.raw|" "$T/m.txt" >"$T/m2.txt"
        check_files_same "raw ${g##*.}, $shards shards" "$T/s.txt" "$T/m2.txt"
    done
done
single_reduce "$T/frame.npy" --op sum,max --chunk 128k
shard_reduce 3 "$T/frame.npy" --op sum,max --chunk 256k --threads 1
check_files_same "chunk and thread counts" "$T/s.txt" "$T/m.txt"

# Empty and all-NaN arrays: merge says what reduce says, with its status.
$PY "$REF" write float32 0 random 1 "$T/empty.npy"
for ops in sum,count sum,mean min; do
    single_reduce "$T/empty.npy" --op $ops
    shard_reduce 4 "$T/empty.npy" --op $ops
    check_files_same "empty array, $ops" "$T/s.txt" "$T/m.txt"
done
$PY -c "import sys; sys.stdout.buffer.write(b'\x00\x00\xc0\x7f' * 40000)" >"$T/nan.raw"
single_reduce "$T/nan.raw" --dtype float32 --skipnan --op count,mean
shard_reduce 3 "$T/nan.raw" --dtype float32 --skipnan --op count,mean
check_files_same "all NaN with --skipnan" "$T/s.txt" "$T/m.txt"
grep -q "every element is NaN" "$T/m.txt" && ok || fail "all-NaN merge message"

# Quadratic parts: the merged file equals one run's output byte for byte,
# each written as its name says (blocked gzip for .gz, else plain); parts of
# blocked gzip merged under a plain name give the run's bytes inflated. The
# shard counts are spread over the rounds (make soak: every one each round).
round=0
for dt in float32 float64; do
    for rows in $(pick "0 1 2040 4071 4072 4073 30001" "0 1 4072 4073"); do
        "$GB" gen --quadratic $rows --dtype $dt --seed $rows -f -o "$T/q.npy.gz" 2>/dev/null
        for m in $(pick "gz plain level6 raw-gz raw" "gz level6 raw"); do
            case $m in
            gz) mode= sfx=.gz ;;
            plain) mode= sfx= ;;
            level6) mode=-6 sfx=.gz ;;
            raw-gz) mode=--raw sfx=.gz ;;
            raw) mode=--raw sfx= ;;
            esac
            "$GB" quadratic --backend cpu $mode -f -o "$T/q1.out$sfx" "$T/q.npy.gz"
            [ -n "$sfx" ] && gzip -dc "$T/q1.out$sfx" >"$T/q1.dec"
            round=$((round + 1))
            for shards in $(spread "$(pick "1 2 5 9" "2 5")" $round); do
                rm -f "$T"/qp-*
                i=0
                while [ $i -lt $shards ]; do
                    "$GB" quadratic --backend cpu $mode --shard $i/$shards -o "$T/qp-$i$sfx" \
                        "$T/q.npy.gz" || fail "quadratic shard $i/$shards"
                    i=$((i + 1))
                done
                ls "$T"/qp-* | shuf | xargs "$GB" merge -f -o "$T/qm.out$sfx"
                check_files_same "quadratic $dt rows=$rows $m $shards shards" "$T/q1.out$sfx" "$T/qm.out$sfx"
                if [ -n "$sfx" ]; then
                    ls "$T"/qp-* | shuf | xargs "$GB" merge -f -o "$T/qm.plain"
                    check_files_same "quadratic $dt rows=$rows $m $shards shards merged plain" \
                        "$T/q1.dec" "$T/qm.plain"
                fi
            done
        done
    done
done
gzip -dc "$T/q.npy.gz" >"$T/q.npy"
"$GB" quadratic --backend cpu -f -o "$T/q1.out.gz" "$T/q.npy"
gzip -dc "$T/q1.out.gz" >"$T/q1.dec"
for i in 0 1 2; do "$GB" quadratic --backend cpu --shard $i/3 -o "$T/qq-$i.gz" "$T/q.npy"; done
"$GB" merge --compress -c "$T/qq-2.gz" "$T/qq-0.gz" "$T/qq-1.gz" >"$T/qm.out"
check_files_same "quadratic from plain .npy to stdout, --compress" "$T/q1.out.gz" "$T/qm.out"
gzip -t "$T/qm.out" && ok || fail "merged output is valid gzip"
"$GB" merge -c "$T/qq-2.gz" "$T/qq-0.gz" "$T/qq-1.gz" >"$T/qm.out"
check_files_same "quadratic from plain .npy to stdout, plain" "$T/q1.dec" "$T/qm.out"
"$GB" merge "$T/qq-2.gz" "$T/qq-0.gz" "$T/qq-1.gz" -o "$T/qm.npy" --compress >/dev/null 2>&1
check_files_same "merge --compress under a plain name" "$T/q1.out.gz" "$T/qm.npy"
"$GB" merge -c -3 "$T/qq-2.gz" "$T/qq-0.gz" "$T/qq-1.gz" | gzip -dc >"$T/qm.out"
check_files_same "merge -3 of level-1 parts recompresses them" "$T/q1.dec" "$T/qm.out"
for bad in "-3 -o $T/qm3.npy" "-c -o $T/qm3.npy.gz" "--no-compress -2" "--compress --no-compress"; do
    "$GB" merge $bad "$T/qq-2.gz" "$T/qq-0.gz" "$T/qq-1.gz" >/dev/null 2>&1
    check_eq "usage: merge $bad" 2 $?
done
[ -e "$T/qm3.npy" ] || [ -e "$T/qm3.npy.gz" ] && fail "a refused merge left an output" || ok

# Errors of reduce --shard: one line, status 1, no state file left behind.
f="$T/float32-$(pick random adversarial)-81927.npy" # written above
cat "$f" | check_error "stdin" "only a regular file" E --shard 0/2 -o "$T/e.st" -
gzip -c "$f" >"$T/single.gz"
check_error "single-member gzip" "not blocked" E --shard 0/2 -o "$T/e.st" "$T/single.gz"
head -c 100000 "$f" >"$T/trunc.npy"
check_error "truncated .npy" "truncated" E --shard 0/2 -o "$T/e.st" "$T/trunc.npy"
cat "$f" "$f" >"$T/long.npy"
check_error "more data than the header" "more than" E --shard 1/2 -o "$T/e.st" "$T/long.npy"
head -c 100001 "$T/frame.raw" >"$T/odd.raw"
check_error "raw size not whole elements" "not a multiple" E --dtype float64 --shard 0/2 -o "$T/e.st" "$T/odd.raw"
[ -e "$T/e.st" ] && fail "a state file was left after errors" || ok
R --shard 0/2 -o "$T/e.st" "$f"
check_error "existing state" "already exists" E --shard 0/2 -o "$T/e.st" "$f"
R --shard 0/2 -f -o "$T/e.st" "$f" && ok || fail "-f overwrites a state"
check_error "state over the input" "overwrite an input" E --shard 0/2 -f -o "$f" "$f"
for bad in "--shard 2/2 -o x" "--shard 1/0 -o x" "--shard a/3 -o x" "--shard 1/3" "-o x" \
    "--shard 0/2 -o x $f $f"; do
    "$GB" reduce $bad "$f" >/dev/null 2>&1
    check_eq "usage: reduce $bad" 2 $?
done
"$GB" quadratic --shard 0/2 "$T/q.npy" >/dev/null 2>&1
check_eq "usage: quadratic --shard without -o" 2 $?

# Errors of merge: missing, duplicate and mismatched shards, bad files.
for i in 0 1 2; do R --op sum,min --shard $i/3 -o "$T/a-$i" "$f"; done
check_error "missing shard" "shard 1/3 is missing" "$GB" merge "$T/a-0" "$T/a-2"
check_error "duplicate shard" "given twice" "$GB" merge "$T/a-0" "$T/a-1" "$T/a-1" "$T/a-2"
R --op sum --shard 1/3 -f -o "$T/b-1" "$f"
check_error "other ops" "operations differs" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
R --op sum,min --skipnan --shard 1/3 -f -o "$T/b-1" "$f"
check_error "other NaN policy" "skipnan differs" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
R --op sum,min --shard 1/4 -f -o "$T/b-1" "$f"
check_error "other shard count" "number of shards differs" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
R --op sum,min --shard 1/3 -f -o "$T/b-1" "$T/float32-$(pick random adversarial)-200001.npy"
check_error "other input" "differs" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
check_error "not a state" "not a gpubatch state" "$GB" merge "$T/a-0" "$f" "$T/a-2"
check_error "missing file" "No such file" "$GB" merge "$T/a-0" "$T/nope" "$T/a-2"
head -n 12 "$T/a-1" >"$T/b-1"
check_error "truncated state" "line 13" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
sed 's/^tiles .*/tiles 1 3/' "$T/a-1" >"$T/b-1"
check_error "subtrees outside the tile range" "bad sum-tree subtree" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
sed -e 's/^shard-elements .*/shard-elements 5/' -e 's/^count .*/count 5/' "$T/a-1" >"$T/b-1"
$PY "$top/tests/cli/shardfile.py" reseal "$T/b-1"
check_error "wrong element count" "does not match shard 1/3" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
sed 's/^sum-tree 1$/sum-tree 2/' "$T/a-1" >"$T/b-1"
check_error "bad subtree" "sum-tree" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
sed 's/^gpubatch reduce-state 4$/gpubatch reduce-state 9/' "$T/a-1" >"$T/b-1"
check_error "future version" "unsupported version" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
sed 's/$/\r/' "$T/a-1" >"$T/b-1"
check_error "CRLF line ends" "b-1: its lines end in CR LF, not LF" "$GB" merge "$T/a-0" "$T/b-1" "$T/a-2"
# Format 2 (no input-time line) is still read, and merges with format 3.
$PY - "$T/a-1" "$T/b-1" <<'PY'
import sys, zlib
b = open(sys.argv[1], "rb").read().replace(b"reduce-state 4\n", b"reduce-state 2\n", 1)
lines = [l for l in b.split(b"\n") if not l.startswith((b"input-time ", b"ddof ", b"var-tree "))]
b = b"\n".join(lines)
i = b.rindex(b"check ")
open(sys.argv[2], "wb").write(b[:i] + b"check %08x\n" % zlib.crc32(b[:i]))
PY
check_eq "format 2 state merges" "$("$GB" merge "$T/a-0" "$T/a-1" "$T/a-2" | sed 's/a-1/b-1/')" \
    "$("$GB" merge "$T/a-0" "$T/b-1" "$T/a-2" 2>&1)"

# An input rewritten in place between shard runs (same size, the sampled
# pieces unchanged) is refused by its modification time, for states and
# parts; a copy made with its time kept merges; --ignore-time merges copies
# the user knows to be the same.
cat >"$T/rw.py" <<'PY'
import struct, sys
n = 1 << 20
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
h += " " * (117 - len(h)) + "\n"
x = [1.0] * n
if sys.argv[2] == "1":
    x[3000] = x[-3000] = 1e6
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()
                              + struct.pack("<%df" % n, *x))
PY
$PY - "$T/rw.npy" 0 <"$T/rw.py"
R --op sum --shard 0/2 -o "$T/rw-0" "$T/rw.npy"
cp -p "$T/rw.npy" "$T/rw-copy.npy"
R --op sum --shard 1/2 -o "$T/rw-1c" "$T/rw-copy.npy"
check_eq "a copy with its time kept merges" "sum 1048576  $T/rw.npy" \
    "$("$GB" merge "$T/rw-0" "$T/rw-1c" 2>&1)"
"$GB" quadratic --backend cpu --shard 0/2 -o "$T/rwq-0" "$T/q.npy"
cp "$T/q.npy" "$T/q-orig.npy"
sleep 0.01
$PY - "$T/rw.npy" 1 <"$T/rw.py"
R --op sum --shard 1/2 -o "$T/rw-1" "$T/rw.npy"
check_error "state of a rewritten input" \
    "rw-1: its input was modified at .* UTC, .*rw-0's at .* UTC: the input changed between the shard runs" \
    "$GB" merge "$T/rw-0" "$T/rw-1"
check_eq "--ignore-time merges it" "sum 2048575  $T/rw.npy" \
    "$("$GB" merge --ignore-time "$T/rw-0" "$T/rw-1" 2>&1)"
cp "$T/q-orig.npy" "$T/q.npy" # the same bytes, a new time
"$GB" quadratic --backend cpu --shard 1/2 -o "$T/rwq-1" "$T/q.npy"
check_error "part of a rewritten input" "rwq-1: its input was modified at .*the input changed" \
    "$GB" merge -o "$T/rwq.npy" "$T/rwq-0" "$T/rwq-1"
"$GB" merge --ignore-time -o "$T/rwq.npy" "$T/rwq-0" "$T/rwq-1"
"$GB" quadratic --backend cpu -o "$T/rwq-want.npy" "$T/q.npy"
check_files_same "--ignore-time merges parts" "$T/rwq-want.npy" "$T/rwq.npy"
"$GB" merge >/dev/null 2>&1
check_eq "usage: merge without files" 2 $?
"$GB" merge -o "$T/x" "$T/a-0" "$T/a-1" "$T/a-2" >/dev/null 2>&1
check_eq "usage: merge -o with states" 2 $?
for i in 0 1 2; do "$GB" quadratic --backend cpu --shard $i/3 -o "$T/p-$i.gz" "$T/q.npy"; done
check_error "state and part mixed" "kind of file differs" "$GB" merge -o "$T/x" "$T/p-0.gz" "$T/a-1" "$T/p-2.gz"
check_error "missing part" "shard 2/3 is missing" "$GB" merge -o "$T/x" "$T/p-0.gz" "$T/p-1.gz"
head -c -10 "$T/p-1.gz" >"$T/p-1b"
check_error "truncated part" "truncated part" "$GB" merge -o "$T/x" "$T/p-0.gz" "$T/p-1b" "$T/p-2.gz"
{ cat "$T/p-1.gz"; printf 'appended'; } >"$T/p-1b"
check_error "part with bytes appended" "p-1b: 8 bytes follow its 'part-end' line: bytes were appended" \
    "$GB" merge -o "$T/x" "$T/p-0.gz" "$T/p-1b" "$T/p-2.gz"
"$GB" quadratic --backend cpu -3 --shard 1/3 -o "$T/p-1c.gz" "$T/q.npy"
check_error "other level" "compression level differs" "$GB" merge -o "$T/x" "$T/p-0.gz" "$T/p-1c.gz" "$T/p-2.gz"
"$GB" quadratic --backend cpu --no-compress --shard 1/3 -o "$T/p-1d" "$T/q.npy"
sed '/^level 0$/s//level 1/' "$T/p-1d" >"$T/p-1e"
$PY "$top/tests/cli/shardfile.py" reseal "$T/p-1e"
check_error "plain part said to be compressed" "end-of-file block" "$GB" merge -o "$T/x" "$T/p-0.gz" "$T/p-1e" "$T/p-2.gz"
[ -e "$T/x" ] && fail "merge left an output after errors" || ok
check_error "merge over a part" "overwrite an input" "$GB" merge -f -o "$T/p-0.gz" "$T/p-0.gz" "$T/p-1.gz" "$T/p-2.gz"
# Damaged state and part files: every one is refused with status 1 or
# merged (a change to a value only); none crashes.
$PY - "$T" "$(pick 60 20)" <<'PY'
import random, sys
t = sys.argv[1]
rng = random.Random(5)
for kind, src in (("st", t + "/a-1"), ("pt", t + "/p-1.gz")):
    data = open(src, "rb").read()
    for k in range(int(sys.argv[2])):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(len(b)) if kind == "st" else rng.randrange(min(len(b), 300))
            if op < 0.4:
                b[pos] = rng.choice(b"0123456789abcdef -\\n\x00\xff")
            elif op < 0.7:
                del b[pos:pos + rng.randint(1, 40)]
            else:
                b[pos:pos] = bytes(rng.choice(b"019 \n") for _ in range(rng.randint(1, 25)))
        open("%s/mut-%s-%d" % (t, kind, k), "wb").write(bytes(b))
PY
for m in "$T"/mut-st-*; do
    "$GB" merge "$T/a-0" "$m" "$T/a-2" >/dev/null 2>&1
    st=$?
    if [ $st -le 1 ]; then ok; else fail "damaged state $m: status $st"; fi
done
for m in "$T"/mut-pt-*; do
    for out in mut.out.gz mut.out; do # the blocks copied, or inflated
        "$GB" merge -f -o "$T/$out" "$T/p-0.gz" "$m" "$T/p-2.gz" >/dev/null 2>&1
        st=$?
        if [ $st -le 1 ]; then ok; else fail "damaged part $m into $out: status $st"; fi
    done
done
# var and std (state format 4: ddof and the variance tree): shards merged
# have one run's bits, a format 3 state is still read, a --ddof mismatch and
# a damaged variance line are refused.
"$(numpy_python)" -c "import numpy as np; np.save('$T/var.npy', (1e6 + np.random.default_rng(3).standard_normal(100000)).astype(np.float32))"
for i in 0 1 2; do R --shard $i/3 --op sum,var,std --ddof 1 -o "$T/var-$i" "$T/var.npy"; done
check_eq "var and std shards merged" "$(R --op sum,var,std --ddof 1 "$T/var.npy" | sed 's/  .*//')" \
    "$("$GB" merge "$T/var-0" "$T/var-1" "$T/var-2" | sed 's/  .*//')"
R --shard 1/3 --op sum,var,std --ddof 0 -o "$T/var-d0" "$T/var.npy"
check_error "ddof mismatch" "(--ddof differs)" "$GB" merge "$T/var-0" "$T/var-d0" "$T/var-2"
sed 's/^1 2 32768 /1 2 32768x /' "$T/var-1" >"$T/var-bad"
check_error "damaged var-tree" "bad var-tree subtree" "$GB" merge "$T/var-0" "$T/var-bad" "$T/var-2"
R --shard 0/2 --op sum,min -o "$T/f4-0" "$T/var.npy"
R --shard 1/2 --op sum,min -o "$T/f4-1" "$T/var.npy"
sed -e '1s/ 4$/ 3/' "$T/f4-1" | grep -v '^ddof \|^var-tree ' >"$T/f3-1"
$PY "$top/tests/cli/shardfile.py" reseal "$T/f3-1"
check_eq "a format 3 state is still read" "$(R --op sum,min "$T/var.npy" | sed 's/  .*//')" \
    "$("$GB" merge "$T/f4-0" "$T/f3-1" 2>&1 | sed 's/  .*//')"
# NaN sums are written as one quiet NaN (their sign and payload are the
# backend's), and the states still merge to one run's result
"$(numpy_python)" -c "import numpy as np; a = np.random.default_rng(4).standard_normal(300000).astype(np.float32); a[::7919] = np.nan; a[1::7919] = -np.float32(np.nan); np.save('$T/nans.npy', a)"
for i in 0 1 2; do R --shard $i/3 --op sum,std,min -o "$T/nan-$i" "$T/nans.npy"; done
if grep -q " nan$" "$T/nan-0" && ! grep -qi -- "-nan\|fff8000000000000" "$T/nan-0" "$T/nan-1" "$T/nan-2"; then
    ok
else
    fail "a state's NaNs are not one quiet NaN: $(grep -i " -*nan$" "$T/nan-0" | head -2)"
fi
check_eq "NaN shards merged" "$(R --op sum,std,min "$T/nans.npy" | sed 's/  .*//')" \
    "$("$GB" merge "$T/nan-0" "$T/nan-1" "$T/nan-2" | sed 's/  .*//')"
summary
