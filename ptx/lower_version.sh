#!/bin/sh
# lower_version.sh FILE.ptx... - sets each PTX file's .version to the lowest
# PTX ISA version, 7.0 at the least (CUDA 11.0, driver R450), that ptxas
# assembles for every GPU the file claims (sm_NN for each NN of PTX_TARGETS
# at or above the file's own .target) into the same machine code as the
# version nvcc wrote, so the results stay bit for bit those of nvcc's PTX.
# A comment line above .version records the version kept, the ptxas and the
# targets, and, when it is above 7.0, why: ptxas's first error at the version
# below. The driver loads the file only if it knows that version, so the
# lowest one runs on the oldest drivers. A file no version assembles, or
# whose machine code a lower version changes, is an error.
# It also leaves beside each file MODULE.compute_NN.ptx the native code
# MODULE.sm_MM.cubin for each MM of SASS_ARCHS at or above NN (unless the
# module has a compute_KK.ptx with NN < KK <= MM, whose cubin that is):
# ptxas's output for the version kept, that is for the file as written
# (ptxas ignores the comment line added).
# Environment: PTXAS (default ptxas), PTX_TARGETS ("75 80 86 ...", required),
# SASS_ARCHS (some of PTX_TARGETS; default none).
set -eu
PTXAS=${PTXAS:-ptxas}
: "${PTX_TARGETS:?PTX_TARGETS lists the compute capabilities to assemble for}"
SASS_ARCHS=${SASS_ARCHS:-}
floor=7.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ptxas_release=$("$PTXAS" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')

# version_number X.Y: X.Y as one comparable integer.
version_number() { echo "$1" | awk -F. '{ print $1 * 100 + $2 }'; }

# assembles FILE TARGETS DIR: ptxas turns FILE into DIR/sm_NN.cubin for
# each NN of TARGETS; on failure prints the target and ptxas's first error
# (without the file name).
assembles() {
    mkdir -p "$3"
    for t in $2; do
        if ! "$PTXAS" -arch="sm_$t" -o "$3/sm_$t.cubin" "$1" >"$tmp/log" 2>&1; then
            echo "sm_$t: $(grep -m1 'error' "$tmp/log" | sed -e 's/^ptxas [^,]*, //' -e 's/  */ /g')"
            return 1
        fi
    done
}

for f in "$@"; do
    declared=$(sed -n 's/^\.version \([0-9.]*\).*/\1/p' "$f")
    target=$(sed -n 's/^\.target sm_\([0-9]*\).*/\1/p' "$f")
    if [ -z "$declared" ] || [ -z "$target" ]; then
        echo "lower_version.sh: $f has no .version or .target line" >&2
        exit 1
    fi
    targets=
    for t in $PTX_TARGETS; do
        [ "$t" -ge "$target" ] && targets="$targets $t"
    done
    targets=${targets# }
    lo=$(version_number "$floor")
    hi=$(version_number "$declared")
    kept=
    why=
    failure="nvcc wrote $declared"
    for v in $("$PTXAS" --list-version); do
        n=$(version_number "$v")
        [ "$n" -ge "$lo" ] && [ "$n" -le "$hi" ] || continue
        sed -e '/^\/\/ PTX ISA /d' -e "s/^\.version .*/.version $v/" "$f" >"$tmp/try.ptx"
        if failure=$(assembles "$tmp/try.ptx" "$targets" "$tmp/lowered"); then
            kept=$v
            break
        fi
        why="; $v fails for $failure"
    done
    if [ -z "$kept" ]; then
        echo "lower_version.sh: $f: no PTX ISA version from $floor to $declared assembles: $failure" >&2
        exit 1
    fi
    if [ "$kept" != "$declared" ]; then
        assembles "$f" "$targets" "$tmp/declared" >/dev/null
        for t in $targets; do
            if ! cmp -s "$tmp/declared/sm_$t.cubin" "$tmp/lowered/sm_$t.cubin"; then
                echo "lower_version.sh: $f: PTX ISA $kept gives other machine code for sm_$t than $declared" >&2
                exit 1
            fi
        done
    fi
    for a in $SASS_ARCHS; do
        [ "$a" -ge "$target" ] || continue
        case " $targets " in
        *" $a "*) ;;
        *)
            echo "lower_version.sh: $f: sm_$a is not among the targets ($targets)" >&2
            exit 1
            ;;
        esac
        own=1
        for g in "${f%.compute_*}".compute_*.ptx; do
            k=${g##*.compute_}
            k=${k%.ptx}
            [ "$k" -gt "$target" ] && [ "$k" -le "$a" ] && own=
        done
        [ -z "$own" ] || cp "$tmp/lowered/sm_$a.cubin" "${f%.compute_*}.sm_$a.cubin"
    done
    targets_sm=$(echo "$targets" | sed 's/\([0-9][0-9]*\)/sm_\1/g')
    awk -v note="// PTX ISA $kept (at least $floor): ptxas $ptxas_release assembles it for $targets_sm, into the machine code of .version $declared$why" \
        '/^\.version / { print note } { print }' "$tmp/try.ptx" >"$f.tmp"
    mv "$f.tmp" "$f"
    echo "  ISA     $f: $kept${why:+ (}${why#; }${why:+)}"
done
