# gpubatch.bash - bash completion for gpubatch(1).
#
# Installed as share/bash-completion/completions/gpubatch (loaded on demand
# by bash-completion), or sourced directly: `. cli/gpubatch.bash`. Works
# without bash-completion's helpers, and uses _filedir when they are there.

# Completes file names for the current word.
_gpubatch_files()
{
    if declare -F _filedir >/dev/null 2>&1; then
        _filedir
    else
        local IFS=$'\n'
        COMPREPLY=($(compgen -f -- "$1"))
        compopt -o filenames 2>/dev/null
    fi
}

# Completes words from a list, filtered by the current word's prefix.
_gpubatch_words()
{
    local IFS=$' \t\n'
    COMPREPLY=($(compgen -W "$1" -- "$2"))
}

# Completes a comma-separated --op list: the part after the last comma.
_gpubatch_ops()
{
    local cur=$1 ops="sum mean min max argmin argmax sumsq count var std"
    local head="" last=$cur
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        last=${cur##*,}
    fi
    local IFS=$' \t\n'
    COMPREPLY=($(compgen -P "$head" -W "$ops" -- "$last"))
    compopt -o nospace 2>/dev/null
}

# Completes the value of option $2 of command $1 for word $3; returns 1
# when $2 takes no value (the word is then an option or a file).
_gpubatch_value()
{
    local cmd=$1 prev=$2 cur=$3
    local dtypes_int="int8 int16 int32 int64 uint8 uint16 uint32 uint64"
    local dtypes_real="float32 float64 $dtypes_int float16 bfloat16 bool"
    local dtypes_all="$dtypes_real complex64 complex128"
    case $prev in
    --op)
        [[ $cmd == reduce ]] && _gpubatch_ops "$cur"
        return 0
        ;;
    --dtype)
        case $cmd in
        gen) _gpubatch_words "float32 float64 $dtypes_int complex64 complex128" "$cur" ;;
        transpose) _gpubatch_words "$dtypes_all" "$cur" ;;
        quadratic) _gpubatch_words "float32 float64 float16 bfloat16" "$cur" ;;
        *) _gpubatch_words "$dtypes_real" "$cur" ;;
        esac
        return 0
        ;;
    --layout)
        _gpubatch_words "rows planes" "$cur"
        return 0
        ;;
    --out-layout)
        _gpubatch_words "complex planes" "$cur"
        return 0
        ;;
    --backend)
        _gpubatch_words "auto cuda cpu" "$cur"
        return 0
        ;;
    --dist)
        _gpubatch_words "uniform normal" "$cur"
        return 0
        ;;
    -o | --output)
        [[ $cmd == gen || $cmd == quadratic || $cmd == transpose || $cmd == reduce || $cmd == merge ||
            $cmd == index ]] && _gpubatch_files "$cur"
        return 0
        ;;
    --index)
        _gpubatch_files "$cur"
        return 0
        ;;
    --shard | --axis | --ddof)
        return 0
        ;;
    --shape | --device | --threads | -p | --chunk | --streams | --low | --high | \
        --mean | --std | --seed | --quadratic | --sizes | --reps)
        return 0
        ;;
    esac
    return 1
}

# Completion function for gpubatch.
_gpubatch()
{
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="reduce quadratic transpose gen info bench merge index"
    COMPREPLY=()

    # --opt=value: bash splits at '=' (COMP_WORDBREAKS), or not; handle both.
    local pre=""
    if [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        cur=${cur#*=}
        pre=$prev=
    elif [[ $cur == = && $COMP_CWORD -ge 2 ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        cur=""
    elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi

    if ((COMP_CWORD == 1)); then
        _gpubatch_words "$commands -h --help --version" "$cur"
        return 0
    fi

    local cmd=${COMP_WORDS[1]} longs shorts
    case $cmd in
    reduce)
        longs="--op --skipnan --ddof --axis --keepdims --json --dtype --shape --backend --device
               --threads --chunk --streams --quiet --verbose --help --version --shard --output
               --force --index --no-index"
        shorts="-p -q -v -h -o -f"
        ;;
    quadratic)
        longs="--layout --out-layout --raw --dtype --shape --backend --device --threads --chunk
               --streams --quiet --verbose --help --version --output --stdout --force
               --compress --no-compress --shard --index --no-index"
        shorts="-p -q -v -h -o -c -f -1 -2 -3 -4 -5 -6 -7 -8 -9"
        ;;
    transpose)
        longs="--raw --shard --dtype --shape --backend --device --threads --chunk --streams
               --quiet --verbose --help --version --output --stdout --force --compress
               --no-compress --index --no-index"
        shorts="-p -q -v -h -o -c -f -1 -2 -3 -4 -5 -6 -7 -8 -9"
        ;;
    gen)
        longs="--shape --dtype --dist --low --high --mean --std --seed --quadratic
               --raw --threads --quiet --verbose --help --version --output --stdout --force
               --compress --no-compress"
        shorts="-p -q -v -h -o -c -f -1 -2 -3 -4 -5 -6 -7 -8 -9"
        ;;
    info)
        longs="--device --no-jit --verbose --json --help --version"
        shorts="-v -h"
        ;;
    bench)
        longs="--sizes --reps --seed --json --backend --device --threads --quiet
               --verbose --help --version"
        shorts="-p -q -v -h"
        ;;
    merge)
        longs="--json --ignore-time --output --stdout --force --compress --no-compress --quiet
               --verbose --help --version"
        shorts="-o -c -f -q -v -h -1 -2 -3 -4 -5 -6 -7 -8 -9"
        ;;
    index)
        longs="--output --force --threads --quiet --verbose --help --version"
        shorts="-o -f -p -q -v -h"
        ;;
    *)
        return 0
        ;;
    esac

    # The value of the option before the cursor.
    if _gpubatch_value "$cmd" "$prev" "$cur"; then
        [[ -n $pre && ${#COMPREPLY[@]} -gt 0 ]] && COMPREPLY=("${COMPREPLY[@]/#/$pre}")
        return 0
    fi

    # After "--" every word is a file name.
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            [[ $cmd == reduce || $cmd == quadratic || $cmd == transpose || $cmd == merge || $cmd == index ]] && _gpubatch_files "$cur"
            return 0
        fi
    done

    if [[ $cur == -* ]]; then
        _gpubatch_words "$longs $shorts" "$cur"
    elif [[ $cmd == reduce || $cmd == quadratic || $cmd == transpose || $cmd == merge || $cmd == index ]]; then
        _gpubatch_files "$cur"
    elif [[ $cmd == bench ]]; then
        _gpubatch_words "reduce transpose quadratic inflate all" "$cur"
    else
        _gpubatch_words "$longs" "$cur"
    fi
    return 0
} &&
    complete -F _gpubatch gpubatch

# Run as a program, `bash gpubatch.bash gpubatch WORD... CURRENT` (as the
# zsh and fish completions do, so that one list of commands, options and
# values serves every shell): prints the candidates for CURRENT, one a line;
# a line "<nospace>" first when none should be followed by a space, and
# "<files>" where the shell's own file-name completion should take over.
if [[ ${BASH_SOURCE[0]} == "$0" ]] && (($# >= 2)); then
    _gpubatch_nospace=0
    compopt() { [[ " $* " == *" nospace "* ]] && _gpubatch_nospace=1; return 0; }
    _gpubatch_files() { COMPREPLY=("<files>"); }
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _gpubatch gpubatch "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    ((_gpubatch_nospace)) && echo "<nospace>"
    ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
    exit 0
fi
