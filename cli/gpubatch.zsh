#compdef gpubatch
# gpubatch.zsh - zsh completion for gpubatch(1).
#
# Installed as share/zsh/site-functions/_gpubatch. The candidates come from
# the bash completion, run by bash as a program (gpubatch.bash: one list of
# commands, options and values for every shell); file names from zsh's own
# _files. `make install` writes the bash completion's installed path below;
# from the source tree it is the gpubatch.bash beside this file.

local script=${GPUBATCH_BASH_COMPLETION:-${${(%):-%x}:A:h}/gpubatch.bash}
local -a out
out=("${(@f)$(bash --norc --noprofile "$script" "${(@)words[1,CURRENT-1]}" "$PREFIX" 2>/dev/null)}")
out=(${out:#})
local -a nospace
if [[ ${out[1]} == '<nospace>' ]]; then
    nospace=(-S '')
    shift out
fi
if (( ${out[(I)<files>]} )); then
    _files
elif (( $#out )); then
    compadd -Q "${nospace[@]}" -a out
else
    return 1
fi
