#!/bin/sh
# test_docs.sh - the manual page (gpubatch.1) and the bash completion
# (cli/gpubatch.bash) agree with what the program says in --help, the page
# renders without warnings, every example of README.md and of the page's
# EXAMPLES runs and prints what it shows, docs/plot.py draws bench --json,
# `make install`/`uninstall` put and remove the binary, page and completion,
# and `make dist` makes a tarball that builds without nvcc. Checks that need groff, man, bash or a git checkout are
# skipped, with a note, where those are missing.
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
MAN="$top/gpubatch.1"
COMP="$top/cli/gpubatch.bash"
# Sub-makes below are separate builds: no jobserver or variables of a caller.
unset MAKEFLAGS MFLAGS MAKELEVEL

# in_list WORD LIST: WORD is one of the whitespace-separated LIST (no
# subshell: it runs a thousand times).
in_list() {
    for in_list_w in $2; do
        [ "$in_list_w" != "$1" ] || return 0
    done
    return 1
}

# check_subset WHAT A B: every word of A is in B (one check per word).
check_subset() {
    what=$1
    set -f
    for w in $2; do
        if in_list "$w" "$3"; then ok; else fail "$what: $w"; fi
    done
    set +f
}

# Long options (--name) in text on stdin.
longs_of() { grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }

# Short options (-x) in option columns on stdin ("-p, --threads N", "-q, -v, -h", "-1 .. -9").
shorts_of() { grep -oE '(^|[ ,])-[A-Za-z0-9]([ ,]|$)' | tr -d ' ,' | sort -u; }

# Roff text to plain text: minus signs, font changes, spacing escapes.
roff_text() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f([A-Z][A-Z]//g' -e 's/\\|//g' -e 's/\\~/ /g' -e 's/\\&//g'; }

# The roff lines of the man page's ".SS CMD" subsection.
man_section() {
    awk -v c="$1" '/^\.S[HS]( |$)/ { on = ($0 == ".SS " c || $0 == ".SS \"" c "\""); next } on' "$MAN"
}

# The option tags (the line after each .TP) of a roff fragment on stdin, as text.
man_tags() { awk '/^\.TP/ { if ((getline t) > 0) print t }' | sed -e 's/^\.[A-Z][A-Z]* //' -e 's/"//g' | roff_text; }

# The option column of a command's --help lines that start with a short option.
help_short_column() { grep -E '^ +-[^- ]' | sed -E 's/^ +//; s/  .*//'; }

# --- the man page against --help ---------------------------------------------
if [ -f "$MAN" ]; then ok; else fail "gpubatch.1 is missing"; fi
commands=$("$GB" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\)  .*/\1/p')
if [ -n "$commands" ]; then ok; else fail "no commands parsed from gpubatch --help"; fi
for s in NAME SYNOPSIS DESCRIPTION COMMANDS '"INPUT FORMATS"' OUTPUT '"NUMERIC GUARANTEES"' \
    '"EXIT STATUS"' ENVIRONMENT FILES EXAMPLES '"SEE ALSO"'; do
    if grep -qxF ".SH $s" "$MAN"; then ok; else fail "man page has no section .SH $s"; fi
done
th_version=$(sed -n 's/^\.TH .*"gpubatch \([^"]*\)".*/\1/p' "$MAN")
check_eq "man page version (.TH) is the program's" "$("$GB" --version | sed -n '1s/^gpubatch //p')" "$th_version"
# The top-level options (--help, --version) are described.
check_subset "gpubatch --help option missing from gpubatch.1" \
    "$("$GB" --help | longs_of)" "$(roff_text <"$MAN" | longs_of)"

for cmd in $commands; do
    man_section "$cmd" >"$T/sec.roff"
    if [ -s "$T/sec.roff" ]; then ok; else
        fail "gpubatch.1 has no '.SS $cmd' section under COMMANDS"
        continue
    fi
    if grep -qxF ".SY \"gpubatch $cmd\"" "$MAN"; then ok; else fail "SYNOPSIS has no 'gpubatch $cmd'"; fi
    "$GB" "$cmd" --help >"$T/help.txt" 2>&1
    check_eq "gpubatch $cmd --help exit status" 0 $?
    help_longs=$(longs_of <"$T/help.txt")
    man_longs=$(roff_text <"$T/sec.roff" | longs_of)
    check_subset "'gpubatch $cmd --help' lists an option that gpubatch.1 ($cmd) lacks" "$help_longs" "$man_longs"
    check_subset "gpubatch.1 ($cmd) names an option that 'gpubatch $cmd --help' lacks" "$man_longs" "$help_longs"
    help_shorts=$(help_short_column <"$T/help.txt" | shorts_of)
    man_shorts=$(man_tags <"$T/sec.roff" | shorts_of)
    check_subset "'gpubatch $cmd --help' lists a short option that gpubatch.1 ($cmd) lacks" "$help_shorts" "$man_shorts"
    check_subset "gpubatch.1 ($cmd) describes a short option that 'gpubatch $cmd --help' lacks" "$man_shorts" "$help_shorts"
    # The synopsis names only real options.
    syn=$(awk -v c=".SY \"gpubatch $cmd\"" '$0 == c { on = 1; next } /^\.YS/ { on = 0 } on' "$MAN" | roff_text | longs_of)
    check_subset "SYNOPSIS of $cmd names an option that 'gpubatch $cmd --help' lacks" "$syn" "$help_longs"
done

# Every variable the program reads is in ENVIRONMENT.
env_vars=$(cat runtime/*.c runtime/gzip/*.c runtime/tools/*.c io/*.c io/gzip/*.c cli/*.c | grep -o 'getenv("[A-Za-z_0-9]*")' | sed 's/getenv("\(.*\)")/\1/' | sort -u)
env_sec=$(awk '/^\.SH/ { on = ($0 == ".SH ENVIRONMENT"); next } on' "$MAN")
for v in $env_vars CUDA_VISIBLE_DEVICES CUDA_CACHE_PATH CUDA_CACHE_DISABLE CUDA_CACHE_MAXSIZE; do
    if printf '%s\n' "$env_sec" | grep -qx "\.B $v"; then ok; else fail "ENVIRONMENT does not describe $v"; fi
done

# The backend is opaque above the runtime: its fields live in a runtime-private
# header that no file of cli/ or io/ includes (docs/architecture.md).
if grep -q '^struct backend {' runtime/backend_state.h 2>/dev/null &&
    ! grep -q '^typedef struct backend {\|^struct backend {' runtime/backend.h; then ok
else fail "struct backend is defined outside runtime/backend_state.h"; fi
check_eq "no file above the runtime includes runtime/backend_state.h" "" \
    "$(grep -l 'backend_state\.h' cli/*.c cli/*.h io/*.c io/*.h 2>/dev/null)"

# --- rendering ---------------------------------------------------------------
if command -v groff >/dev/null 2>&1; then
    out=$(groff -man -ww -z "$MAN" 2>&1)
    check_eq "groff -man -ww -z gpubatch.1 is silent" "" "$out"
    for w in 65 80; do
        out=$(groff -man -ww -z -Tutf8 -rLL=${w}n "$MAN" 2>&1)
        check_eq "groff -man -ww -Tutf8 at $w columns is silent" "" "$out"
    done
else
    missing "no groff: rendering of gpubatch.1 not checked"
fi
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
    MANWIDTH=80 MANPAGER=cat PAGER=cat man -l "$MAN" >"$T/man.txt" 2>"$T/man.err"
    check_eq "man -l gpubatch.1 exit status" 0 $?
    check_eq "man -l gpubatch.1 warnings" "" "$(cat "$T/man.err")"
    if grep -q 'gpubatch.*reproducible' "$T/man.txt" && grep -q '^EXAMPLES' "$T/man.txt"; then ok; else
        fail "man -l gpubatch.1 output lacks NAME/EXAMPLES: $(head -c 200 "$T/man.txt")"
    fi
else
    missing "no man/groff: 'man ./gpubatch.1' not checked"
fi

# --- every example of README.md and gpubatch.1 runs --------------------------
# tests/cli/docex.py cuts the examples into steps (see it for the rules); each
# runs with sh -e in a scratch directory per document, in document order,
# with `gpubatch` (and the set-up command's ./gpubatch) being this build, and
# must exit 0 and print what the document shows. Stand-ins: `producer` (any
# program writing an array), a few data files the manual's examples name, and
# `sbatch`, which runs each task of a job array here, one after another
# (tests/cli/test_slurm.sh runs such arrays on a real Slurm).
have_gpu=0
"$GB" info 2>/dev/null | grep -q '^device 0:' && have_gpu=1
if "$PY" -c 'import sys' 2>/dev/null; then
    mkdir -p "$T/bin"
    ln -s "$GB" "$T/bin/gpubatch"
    printf '%s\n' '#!/bin/sh' 'exec gpubatch gen --shape 100000 --seed 5 --no-compress -c' >"$T/bin/producer"
    cat >"$T/bin/sbatch" <<'EOF'
#!/bin/sh
# A stand-in for sbatch: the tasks of --array=A-B (or the script's
# #SBATCH --array=A-B) run here in turn, with SLURM_ARRAY_TASK_ID and
# SLURM_ARRAY_TASK_COUNT set; any task failing fails the job.
array= wrap= script=
while [ $# -gt 0 ]; do
    case $1 in
    --array=*) array=${1#--array=} ;;
    --wrap) wrap=$2; shift ;;
    --wrap=*) wrap=${1#--wrap=} ;;
    -*) ;;
    *) script=$1 ;;
    esac
    shift
done
[ -n "$array" ] || array=$(sed -n 's/^#SBATCH --array=//p' "$script")
lo=${array%-*} hi=${array#*-}
i=$lo
while [ "$i" -le "$hi" ]; do
    export SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1))
    if [ -n "$wrap" ]; then sh -c "$wrap" || exit 1; else sh "$script" || exit 1; fi
    i=$((i + 1))
done
EOF
    chmod +x "$T/bin/producer" "$T/bin/sbatch"
    # run_examples DOC DIR: the examples of DOC, run in DIR.
    run_examples() {
        doc=$1 dir=$2
        rm -rf "$T/steps"
        "$PY" "$top/tests/cli/docex.py" "$top/$doc" "$T/steps"
        check_eq "docex.py $doc exit status" 0 $?
        for d in "$T"/steps/*/; do
            [ -f "$d/kind" ] || continue
            kind=$(cat "$d/kind") where=$(cat "$d/where")
            case $kind in
            bad) fail "$doc: $(cat "$d/cmd.sh")"; continue ;;
            setup-test) check_eq "$doc: the second set-up command" "make deps test" "$(cat "$d/cmd.sh")"; continue ;;
            gpu) [ $have_gpu = 1 ] || { echo "note: no GPU: not run: $where"; continue; } ;;
            esac
            if grep -q 'jq ' "$d/cmd.sh" && ! command -v jq >/dev/null 2>&1; then
                missing "no jq: not run: $where"
                continue
            fi
            (cd "$dir" && PATH="$T/bin:$PATH" sh -e "$d/cmd.sh" >"$d/out" 2>"$d/err")
            check_eq "$where: exit status ($(tail -n 3 "$d/err"))" 0 $?
            [ -f "$d/expect" ] || continue
            if [ -f "$d/more" ]; then
                head -n "$(wc -l <"$d/expect")" "$d/out" >"$d/out.head"
                check_files_same "$where: the output shown" "$d/expect" "$d/out.head"
            else
                check_files_same "$where: the output shown" "$d/expect" "$d/out"
            fi
        done
    }
    mkdir "$T/readme"
    ln -s "$GB" "$T/readme/gpubatch"
    run_examples README.md "$T/readme"
    for f in demo.npy.gz roots.npy.gz mt.npy.gz state-3 measurements.bin; do
        if [ -s "$T/readme/$f" ]; then ok; else fail "the README examples did not write $f"; fi
    done
    M="$T/man"
    mkdir -p "$M/run42"
    "$GB" gen --shape 1000x3 --dtype float64 --raw --no-compress -o "$M/measurements.bin" &&
        "$GB" gen --shape 200000 -o "$M/big.npy.gz" &&
        "$GB" gen --shape 10000 --seed 1 -o "$M/run42/r1.npy.gz" &&
        "$GB" gen --shape 10000 --seed 2 -o "$M/run42/r2.npy.gz" &&
        "$GB" gen --shape 10000 --seed 3 -o "$M/run42/r3.npy.gz"
    check_eq "the manual's example data made" 0 $?
    run_examples gpubatch.1 "$M"
    for f in coef.npy.gz roots.npy.gz state-15 results/part-0.json; do
        if [ -s "$M/$f" ]; then ok; else fail "the manual's examples did not write $f"; fi
    done
else
    missing "no python3: the examples of README.md and gpubatch.1 not run"
fi

# --- the plot script ---------------------------------------------------------
# docs/plot.py turns bench --json into an SVG: one line per variant, one point
# per size, the machine named; and refuses JSON that has no row to draw.
if "$PY" -c 'import xml.etree.ElementTree' 2>/dev/null; then
    "$GB" bench --backend cpu --json --reps 1 --sizes quadratic:1k,quadratic:4k,quadratic:16k quadratic \
        >"$T/bench.json" 2>/dev/null
    check_eq "bench --backend cpu --json exit status" 0 $?
    "$PY" docs/plot.py --op quadratic --y speedup --note "test" -o "$T/plot.svg" "$T/bench.json" 2>"$T/plot.err"
    check_eq "plot.py exit status ($(cat "$T/plot.err"))" 0 $?
    cat >"$T/svgcheck.py" <<'EOF'
import json, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
rows = [r for r in json.load(open(sys.argv[2]))["rows"] if r["op"] == "quadratic" and r["status"] == "ok"]
want = {(r["variant"], r["threads"]) for r in rows}
lines = root.findall(ns + "polyline")
npts = sorted({len(p.get("points").split()) for p in lines})
text = " ".join(t.text or "" for t in root.iter(ns + "text"))
print(root.tag == ns + "svg", len(lines) == len(want), npts, all(v in text for v, _ in want), "CPU backend" in text)
EOF
    check_eq "plot.py SVG: root, one line per variant, 3 points each, legend, machine" \
        "True True [3] True True" "$("$PY" "$T/svgcheck.py" "$T/plot.svg" "$T/bench.json" 2>&1)"
    printf '{"backend": "cpu", "rows": []}\n' >"$T/empty.json"
    "$PY" docs/plot.py --op quadratic -o "$T/empty.svg" "$T/empty.json" 2>"$T/plot.err"
    check_eq "plot.py with no rows: exit status" 1 $?
    if grep -q 'no measured quadratic rows' "$T/plot.err"; then ok; else fail "plot.py with no rows: message [$(cat "$T/plot.err")]"; fi
    # The committed figures are what docs/plots.sh draws from docs/data.
    PYTHON=$PY sh docs/plots.sh "$T/img" >"$T/plots.log" 2>&1
    check_eq "docs/plots.sh exit status ($(tail -n 3 "$T/plots.log"))" 0 $?
    for f in docs/img/*.svg; do
        check_files_same "$f drawn again by docs/plots.sh" "$f" "$T/img/${f##*/}"
    done
else
    missing "no python3: docs/plot.py not checked"
fi

# --- the links between the documents -------------------------------------------
# Every relative link of README.md, BENCHMARKS.md, SECURITY.md and docs/*.md
# names a file that exists, and a #fragment names a heading of that file (as
# GitHub makes anchors: lower case, punctuation dropped, spaces to hyphens).
cat >"$T/links.py" <<'PYEOF'
import os, re, sys
def anchors(path):
    out = set()
    for ln in open(path, encoding="utf-8"):
        m = re.match(r"^#+\s+(.*)", ln)
        if m:
            t = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower().replace("`", ""))
            out.add(t.replace(" ", "-"))
    return out
bad = 0
for doc in sys.argv[1:]:
    text = open(doc, encoding="utf-8").read()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
        if not os.path.exists(full):
            print("%s: link to a missing file: %s" % (doc, target)); bad += 1
        elif frag and full.endswith(".md") and frag not in anchors(full):
            print("%s: link to a missing heading: %s" % (doc, target)); bad += 1
print("bad links:", bad)
PYEOF
if "$PY" -c 'import re' 2>/dev/null; then
    check_eq "relative links and anchors" "bad links: 0" "$("$PY" "$T/links.py" README.md BENCHMARKS.md SECURITY.md docs/*.md 2>&1 | tail -n 5)"
fi

# --- bash completion ---------------------------------------------------------
if [ -f "$COMP" ]; then ok; else fail "cli/gpubatch.bash is missing"; fi
if command -v bash >/dev/null 2>&1 && [ -f "$COMP" ]; then
    cat >"$T/comp.bash" <<'EOF'
# comp.bash COMPLETION WORD...: the candidates for the last WORD, one a line.
. "$1" || exit 3
shift
fn=$(complete -p gpubatch 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
[ -n "$fn" ] || { echo "no completion function registered for gpubatch" >&2; exit 3; }
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$fn" gpubatch "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
for w in "${COMPREPLY[@]}"; do printf '%s\n' "$w"; done
EOF
    # complete WORD...: candidates on one line.
    complete_words() { bash --norc --noprofile "$T/comp.bash" "$COMP" "$@" | tr '\n' ' ' | sed 's/ $//'; }
    got=$(complete_words gpubatch "")
    check_subset "completion does not offer command" "$commands" "$got"
    offered=$(printf '%s\n' $got | grep -v '^-')
    check_subset "completion offers a command that gpubatch --help lacks" "$offered" "$commands"
    for cmd in $commands; do
        "$GB" "$cmd" --help >"$T/help.txt" 2>&1
        got=$(complete_words gpubatch "$cmd" -)
        check_subset "completion of 'gpubatch $cmd -' lacks" \
            "$(longs_of <"$T/help.txt") $(help_short_column <"$T/help.txt" | shorts_of)" "$got"
        # Whatever it offers, the command accepts.
        pre=""
        grep -q -- '--backend' "$T/help.txt" && pre="--backend cpu"
        [ "$cmd" = bench ] && pre="$pre --reps 1 --sizes 8" # options that run it: small
        set -f
        for o in $got; do
            "$GB" "$cmd" $pre "$o" </dev/null >/dev/null 2>"$T/acc.err"
            if grep -q -e 'unrecognized option' -e 'invalid option' "$T/acc.err"; then
                fail "completion offers '$o', which 'gpubatch $cmd' rejects"
            else ok; fi
        done
        set +f
    done
    # --dtype values: what each command accepts (reduce and gen: every type they name).
    real="float32 float64 int8 int16 int32 int64 uint8 uint16 uint32 uint64"
    check_subset "reduce --dtype completion lacks" "$real float16 bfloat16 bool" \
        "$(complete_words gpubatch reduce --dtype "")"
    check_subset "gen --dtype completion lacks" "$real complex64 complex128" "$(complete_words gpubatch gen --dtype "")"
    for cmd in $commands; do
        "$GB" "$cmd" --help 2>/dev/null | grep -q -- '--dtype' || continue
        got=$(complete_words gpubatch "$cmd" --dtype "")
        if [ -n "$got" ]; then ok; else fail "no --dtype completion for $cmd"; fi
        for d in $got; do
            case $cmd in
            reduce) head -c 16 /dev/zero | "$GB" reduce --backend cpu -q --dtype "$d" >/dev/null 2>&1 ;;
            quadratic) head -c 48 /dev/zero | "$GB" quadratic --backend cpu -q --dtype "$d" --raw --no-compress -c >/dev/null 2>&1 ;;
            gen) "$GB" gen --shape 2 --dtype "$d" --raw --no-compress -c >/dev/null 2>&1 ;;
            *) "$GB" "$cmd" --dtype "$d" --help >/dev/null 2>&1 ;;
            esac
            check_eq "$cmd accepts completed --dtype $d" 0 $?
        done
    done
    if in_list quadratic "$commands"; then
        for opt in --layout --out-layout; do
            got=$(complete_words gpubatch quadratic $opt "")
            case $opt in --layout) want="rows planes" ;; *) want="complex planes" ;; esac
            check_eq "quadratic $opt completion" "$want" "$(echo $got)"
            head -c 48 /dev/zero >"$T/zeros48"
            for v in $got; do
                "$GB" quadratic --backend cpu -q $opt $v --dtype float64 --raw --no-compress -c "$T/zeros48" >/dev/null 2>&1
                check_eq "quadratic accepts completed $opt $v" 0 $?
            done
        done
    fi
    got=$(complete_words gpubatch reduce --backend "")
    check_eq "reduce --backend completion" "auto cuda cpu" "$(echo $got)"
    for b in $got; do
        head -c 8 /dev/zero | "$GB" reduce -q --dtype float64 --backend "$b" >/dev/null 2>&1
        [ $? -ne 2 ] && ok || fail "completed --backend $b is a usage error"
    done
    got=$(complete_words gpubatch gen --dist "")
    check_eq "gen --dist completion" "uniform normal" "$(echo $got)"
    for d in $got; do
        "$GB" gen --shape 2 --dist "$d" --no-compress -c >/dev/null 2>&1
        check_eq "gen accepts completed --dist $d" 0 $?
    done
    ops="sum mean min max argmin argmax sumsq count var std"
    got=$(complete_words gpubatch reduce --op "")
    check_eq "reduce --op completion" "$ops" "$(echo $got)"
    for o in $got; do
        head -c 8 /dev/zero | "$GB" reduce --backend cpu -q --dtype float64 --op "$o" >/dev/null 2>&1
        check_eq "reduce accepts completed --op $o" 0 $?
    done
    check_eq "reduce --op list completion" "sum,mean sum,min sum,max" "$(complete_words gpubatch reduce --op sum,m)"
    check_eq "reduce --op=LIST completion" "--op=sum,argmin --op=sum,argmax" \
        "$(complete_words gpubatch reduce --op=sum,a)"
    check_eq "reduce --op = LIST completion (split at =)" "min,sum min,sumsq" \
        "$(complete_words gpubatch reduce --op = min,su)"
    mkdir -p "$T/files"
    : >"$T/files/data.npy"
    for cmd in $commands; do
        case $cmd in
        reduce | quadratic) check_eq "$cmd completes input file names" "$T/files/data.npy" \
            "$(complete_words gpubatch "$cmd" "$T/files/da")" ;;
        esac
        if "$GB" "$cmd" --help 2>/dev/null | grep -q -- '--output'; then
            check_eq "$cmd -o completes file names" "$T/files/data.npy" \
                "$(complete_words gpubatch "$cmd" -o "$T/files/da")"
        fi
    done
    check_eq "no completion for a --shape value" "" "$(complete_words gpubatch gen --shape "")"
else
    missing "no bash: completion not checked"
fi

# --- zsh and fish completion: the bash completion's candidates -----------------
# Each command line: the candidates of zsh's and fish's completions must be
# bash's (files: the shell's own file-name completion, here of $T/files/da).
comp_lines="gpubatch|
gpubatch|re
gpubatch|reduce|--
gpubatch|reduce|--dtype|
gpubatch|quadratic|--layout|
gpubatch|info|--
gpubatch|merge|-
gpubatch|reduce|--op|sum,m
gpubatch|reduce|--backend=c
gpubatch|transpose|--shape|
gpubatch|reduce|$T/files/da
gpubatch|gen|-o|$T/files/da"
# bash_candidates LINE: what the bash completion run as a program prints.
bash_candidates() {
    bash --norc --noprofile -c 'IFS="|" read -ra w <<<"${1}x"; w[-1]=${w[-1]%x}; bash --norc --noprofile "$2" "${w[@]}"' \
        bash "$1" "$COMP" | grep -v '^<nospace>$' |
        sed "s|^<files>\$|$T/files/data.npy|" | sort | tr '\n' ' '
}
if command -v bash >/dev/null 2>&1 && command -v zsh >/dev/null 2>&1; then
    [ -f "$top/cli/gpubatch.zsh" ] && ok || fail "cli/gpubatch.zsh is missing"
    # zsh's compadd and _files stand in for the completion system.
    echo "$comp_lines" | while IFS= read -r line; do
        got=$(cd "$T" && zsh -f -c '
            compadd() { while [[ $1 == -* && $1 != -a ]]; do [[ $1 == -S ]] && shift; shift; done
                        [[ $1 == -a ]] && print -l -- ${(P)2}; }
            _files() { print -l -- '"$T"'/files/da*(N); }
            words=("${(@s:|:)1}"); CURRENT=$#words; PREFIX=${words[CURRENT]}
            source "$2"' zsh "$line" "$top/cli/gpubatch.zsh" | sort | tr '\n' ' ')
        check_eq "zsh completion of [$line]" "$(bash_candidates "$line")" "$got"
    done
else
    missing "zsh is not installed: its completion not checked (Debian: apt-get install zsh)"
fi
if command -v bash >/dev/null 2>&1 && command -v fish >/dev/null 2>&1; then
    [ -f "$top/cli/gpubatch.fish" ] && ok || fail "cli/gpubatch.fish is missing"
    echo "$comp_lines" | while IFS= read -r line; do
        cmdline=$(echo "$line" | tr '|' ' ')
        got=$(cd "$T" && fish --no-config -c 'source $argv[1]; complete -C"$argv[2]"' \
            "$top/cli/gpubatch.fish" "$cmdline" | cut -f1 | sort | tr '\n' ' ')
        check_eq "fish completion of [$line]" "$(bash_candidates "$line")" "$got"
    done
else
    missing "fish is not installed: its completion not checked (Debian: apt-get install fish)"
fi

# --- make install / uninstall ------------------------------------------------
stage="$T/stage"
installed="usr/bin/gpubatch usr/share/man/man1/gpubatch.1 usr/share/bash-completion/completions/gpubatch
    usr/share/zsh/site-functions/_gpubatch usr/share/fish/vendor_completions.d/gpubatch.fish"
for f in README.md BENCHMARKS.md SECURITY.md LICENSE docs/*.md docs/img/*.svg; do
    installed="$installed usr/share/doc/gpubatch/$f"
done
make -s install DESTDIR="$stage" PREFIX=/usr >"$T/install.log" 2>&1
st=$?
check_eq "make install exit status ($(tail -3 "$T/install.log"))" 0 $st
for f in $installed; do
    if [ -f "$stage/$f" ]; then ok; else fail "make install did not install /$f"; fi
done
if [ -x "$stage/usr/bin/gpubatch" ] && "$stage/usr/bin/gpubatch" --version >/dev/null; then ok; else
    fail "installed binary does not run"
fi
check_files_same "installed man page" "$MAN" "$stage/usr/share/man/man1/gpubatch.1"
check_files_same "installed completion" "$COMP" "$stage/usr/share/bash-completion/completions/gpubatch"
for f in usr/share/zsh/site-functions/_gpubatch usr/share/fish/vendor_completions.d/gpubatch.fish; do
    grep -q "^local script=/usr/share/bash-completion/completions/gpubatch\$\|^set -g __gpubatch_bash_completion /usr/share/bash-completion/completions/gpubatch\$" \
        "$stage/$f" && ok || fail "installed /$f: its bash completion path is not set in its one line"
done
if [ -f "$T/links.py" ] && "$PY" -c '' 2>/dev/null; then
    check_eq "relative links of the installed documents" "bad links: 0" "$(cd "$stage/usr/share/doc/gpubatch" &&
        "$PY" "$T/links.py" README.md BENCHMARKS.md docs/*.md 2>&1 | tail -n 5)"
fi
make -s uninstall DESTDIR="$stage" PREFIX=/usr >"$T/uninstall.log" 2>&1
st=$?
check_eq "make uninstall exit status ($(tail -3 "$T/uninstall.log"))" 0 $st
for f in $installed; do
    if [ -e "$stage/$f" ]; then fail "make uninstall left /$f"; else ok; fi
done
if [ -e "$stage/usr/share/doc/gpubatch" ]; then fail "make uninstall left /usr/share/doc/gpubatch"; else ok; fi
check_eq "make uninstall removes every directory install made" "" "$(ls -A "$T" | grep -x stage)"
# Directories that were there before stay, with what else they hold; the
# binary of install-strip has no symbol table.
mkdir -p "$stage/usr/share/man/man1" "$stage/usr/bin"
: >"$stage/usr/share/man/man1/other.1"
make -s install-strip DESTDIR="$stage" PREFIX=/usr >"$T/install.log" 2>&1
check_eq "make install-strip exit status ($(tail -3 "$T/install.log"))" 0 $?
if [ -x "$stage/usr/bin/gpubatch" ] && "$stage/usr/bin/gpubatch" --version >/dev/null; then ok; else
    fail "the binary of install-strip does not run"
fi
if "$PY" -c '' 2>/dev/null; then
"$PY" -c '
import sys
def sections(p):
    import struct
    b = open(p, "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    strtab_off, = struct.unpack_from("<Q", b, shoff + shstrndx * shentsize + 0x18)
    names = []
    for i in range(shnum):
        n, = struct.unpack_from("<I", b, shoff + i * shentsize)
        names.append(b[strtab_off + n:b.index(b"\0", strtab_off + n)].decode())
    return names
print(".symtab" in sections(sys.argv[1]), ".symtab" in sections(sys.argv[2]))
' "$GB" "$stage/usr/bin/gpubatch" >"$T/symtab" 2>&1
check_eq "install-strip strips the binary (symbol table: built, installed)" "True False" "$(cat "$T/symtab")"
else
    missing "no python3: the symbol tables of install-strip not read"
fi
make -s uninstall DESTDIR="$stage" PREFIX=/usr >"$T/uninstall.log" 2>&1
check_eq "make uninstall after install-strip" 0 $?
check_eq "uninstall keeps directories that were there" "other.1" "$(ls "$stage/usr/share/man/man1" 2>&1)"
check_eq "uninstall keeps an empty directory that was there" "" "$(ls -A "$stage/usr/bin" 2>&1)"
check_eq "uninstall removes the directories it made" "man" "$(ls "$stage/usr/share" 2>&1)"
rm -rf "$stage"
for t in install install-strip uninstall dist; do
    if make -s help | grep -q "^$t: "; then ok; else fail "make help does not list $t"; fi
done

# --- make dist ---------------------------------------------------------------
# (packaging, not memory safety: left to the plain run when the list is short)
if [ -n "${GPUBATCH_TEST_QUICK:-}" ]; then
    echo "note: GPUBATCH_TEST_QUICK: make dist not checked"
elif command -v git >/dev/null 2>&1 &&
    [ "$(cd "$(git rev-parse --show-toplevel 2>/dev/null || echo /nonexistent)" 2>/dev/null && pwd -P)" = "$(pwd -P)" ]; then
    V=$(sed -n 's/^VERSION *:*= *//p' Makefile)
    tgz="gpubatch-$V.tar.gz"
    [ -e "$tgz" ] && mv "$tgz" "$T/saved.tar.gz"
    make -s dist >"$T/dist.log" 2>&1
    st=$?
    check_eq "make dist exit status ($(tail -3 "$T/dist.log"))" 0 $st
    if [ -f "$tgz" ]; then
        mv "$tgz" "$T/$tgz"
        ok
    else
        fail "make dist made no $tgz"
    fi
    [ -e "$T/saved.tar.gz" ] && mv "$T/saved.tar.gz" "$tgz"
    if [ -f "$T/$tgz" ]; then
        tar tzf "$T/$tgz" | sort >"$T/dist.list"
        git ls-files | sed "s,^,gpubatch-$V/," | sort >"$T/git.list"
        check_files_same "dist holds exactly the files git tracks" "$T/git.list" "$T/dist.list"
        for f in Makefile gpubatch.1 cli/gpubatch.bash tests/cli/test_docs.sh; do
            if grep -qxF "gpubatch-$V/$f" "$T/dist.list"; then ok; else fail "dist lacks $f (not committed?)"; fi
        done
        n_img=$(grep -c "^gpubatch-$V/ptx/images/.*\.img$" "$T/dist.list")
        if [ "$n_img" -gt 0 ]; then ok; else fail "dist holds no kernel images"; fi
        # Build it in an empty directory with no nvcc anywhere on PATH, at
        # -O0: what is checked is that the tarball's files make the program,
        # which an unoptimized build shows in half the compiler's time.
        nonvcc=""
        oldifs=$IFS
        IFS=:
        for d in $PATH; do
            case $d in */cuda*/bin | */cuda*/bin/) continue ;; esac
            [ -x "$d/nvcc" ] && continue
            nonvcc="${nonvcc:+$nonvcc:}$d"
        done
        IFS=$oldifs
        check_eq "nvcc hidden from PATH" "" "$(PATH=$nonvcc command -v nvcc)"
        mkdir "$T/distbuild"
        tar xzf "$T/$tgz" -C "$T/distbuild"
        src="$T/distbuild/gpubatch-$V"
        jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
        (cd "$src" && PATH=$nonvcc make -j"$jobs" BUILD=build CFLAGS=-O0 >"$T/distmake.log" 2>&1)
        st=$?
        check_eq "make in the unpacked dist without nvcc ($(tail -3 "$T/distmake.log"))" 0 $st
        check_eq "dist-built binary runs" "$("$GB" --version | head -1)" "$("$src/gpubatch" --version 2>&1 | head -1)"
        "$GB" info -v --no-jit 2>/dev/null | sed -n '/^embedded PTX:/,/^cpu backend/p' >"$T/emb.ours"
        "$src/gpubatch" info -v --no-jit 2>/dev/null | sed -n '/^embedded PTX:/,/^cpu backend/p' >"$T/emb.dist"
        check_files_same "dist-built binary embeds what ours does" "$T/emb.ours" "$T/emb.dist"
    fi
else
    echo "note: not a git checkout: make dist not checked"
fi

summary
