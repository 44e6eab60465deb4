#!/bin/sh
# test_gpu_links.sh - the GPU scripts' own programs link against the objects
# tests/gpu/run.sh names: bench_reduce.cu (built by nvcc, on a GPU node
# only) and init_time.c. Every symbol one of those objects needs that some
# object of the build defines must be defined by an object of the list (a
# module that grew a call into another module needs that one listed too),
# and init_time.c, which the C compiler builds, compiles with run.sh's flags
# and links here.
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
need_tool nm binutils
B=${BUILD:-build}
# every object of the build with the symbols it defines, "SYMBOL OBJECT" a line
find "$B/runtime" "$B/io" -name '*.o' | while read -r o; do
    nm --defined-only "$o" | awk -v o="$o" 'NF == 3 && $2 ~ /[TDBRCW]/ { print $3, o }'
done | sort -u -k1,1 >"$T/defs"
nm --defined-only "$B/ptx_table.o" | awk -v o="$B/ptx_table.o" 'NF == 3 { print $3, o }' >>"$T/defs"

# closed NAME OBJECTS...: no object of the build is missing from OBJECTS
# for a symbol that they need.
closed() {
    check_name="$1: the objects tests/gpu/run.sh links"
    shift
    nm -u "$@" | awk 'NF == 2 && $1 == "U" { print $2 }' | sort -u >"$T/need"
    nm --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u >"$T/have"
    missing=$(comm -23 "$T/need" "$T/have" | while read -r s; do
        awk -v s="$s" '$1 == s { print s " (" $2 ")"; exit }' "$T/defs"
    done | tr '\n' ' ')
    if [ -z "$missing" ]; then ok; else fail "$check_name: undefined $missing"; fi
}

# the object list of run.sh's objs= line, with BUILD for build/
objs=$(sed -n 's/^objs="\(.*\)"$/\1/p' tests/gpu/run.sh | sed "s|build/|$B/|g")
check_eq "run.sh names bench_reduce's objects" 1 "$([ -n "$objs" ] && echo 1)"
# shellcheck disable=SC2086
closed bench_reduce $objs

# init_time: its compile line's objects, and the program itself
line=$(sed -n '/-o "\$work\/init_time"/,/-pthread/p' tests/gpu/run.sh | tr '\\\n' '  ')
iobjs=$(echo "$line" | tr ' ' '\n' | grep '^build/.*\.o$' | sed "s|build/|$B/|g" | tr '\n' ' ')
check_eq "run.sh names init_time's objects" 1 "$([ -n "$iobjs" ] && echo 1)"
flags=$(echo "$line" | sed 's/^ *cc //; s/ -o .*//') # run.sh's, before its -o
# shellcheck disable=SC2086
${CC:-cc} $flags -c -o "$T/init_time.o" tests/gpu/init_time.c 2>"$T/cc.err"
check_eq "init_time.c compiles with run.sh's flags" "" "$(grep -E 'error|warning' "$T/cc.err" | head -2)"
# shellcheck disable=SC2086
closed init_time "$T/init_time.o" $iobjs
check_name="init_time links"
# shellcheck disable=SC2086
# (a sanitized build's objects link with its SAN_FLAGS, which make passes down)
if ${CC:-cc} ${SAN_FLAGS:-} -o "$T/init_time" "$T/init_time.o" $iobjs -l:libz.a -ldl -pthread 2>"$T/link.err"; then
    ok
else
    fail "$check_name: $(head -3 "$T/link.err")"
fi
summary
