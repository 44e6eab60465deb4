# gpubatch.fish - fish completion for gpubatch(1).
#
# Installed as share/fish/vendor_completions.d/gpubatch.fish. The candidates
# come from the bash completion, run by bash as a program (gpubatch.bash: one
# list of commands, options and values for every shell); file names from
# fish's own. `make install` writes the bash completion's installed path
# below; from the source tree it is the gpubatch.bash beside this file.

set -g __gpubatch_bash_completion (status dirname)/gpubatch.bash

# The candidates for the token under the cursor.
function __gpubatch_complete
    set -l cur (commandline -ct)
    set -l out (bash --norc --noprofile $__gpubatch_bash_completion (commandline -opc) "$cur" 2>/dev/null)
    if contains -- '<files>' $out
        __fish_complete_path "$cur"
    else
        string match -v -- '<nospace>' $out
    end
end

complete -c gpubatch -f -a '(__gpubatch_complete)'
