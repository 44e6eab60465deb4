# race.sh - sourced by the GPU scripts: whole-process timings.
# race NAME VAR... : runs each variant (its words joined by commas; leading
# NAME=VALUE words go to the environment) three times in turn, page cache
# warm, and notes each one's best wall time. Needs note(), $work (scratch),
# $top (the tree, left out of names) and $out (stderr of the runs goes to
# $out/e2e.err).
race() {
    name=$1
    shift
    note "$name"
    for v in "$@"; do echo 9999 >"$work/best.$(echo "$v" | md5sum | cut -c1-8)"; done
    for i in 1 2 3; do
        for v in "$@"; do
            f="$work/best.$(echo "$v" | md5sum | cut -c1-8)"
            s=$(date +%s.%N)
            env $(echo "$v" | tr ',' ' ') >/dev/null 2>>"$out/e2e.err"
            e=$(date +%s.%N)
            awk -v a="$s" -v b="$e" -v f="$(cat "$f")" 'BEGIN { d = b - a; printf "%.3f\n", d < f ? d : f }' >"$f.new"
            mv "$f.new" "$f"
        done
    done
    for v in "$@"; do
        note "  $(echo "$v" | tr ',' ' ' | sed "s|$work/||g; s|$top/||g; s|^\./||"): $(cat "$work/best.$(echo "$v" | md5sum | cut -c1-8)") s"
    done
}
