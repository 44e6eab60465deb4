#!/bin/sh
# test_includes.sh - the include lines of cli/, runtime/, io/ and ptx/ keep
# the layering of docs/architecture.md: each names a file (a bare name in
# its own folder, else a path from the top), none reaches a layer above its
# own, and no two modules include each other, directly or around a loop.
. "$(dirname "$0")/lib.sh"
need_python
for c in resolve layers cycles; do
    check_eq "includes $c" "" "$("$PY" "$top/tests/cli/includes.py" "$c" "$top")"
done

# The check itself finds a loop, a layer crossed and a name of no file.
mkdir -p "$T/tree/io" "$T/tree/runtime" "$T/tree/cli" "$T/tree/ptx"
printf '#include "b.h"\n' >"$T/tree/io/a.h"
printf '#include "a.h"\n' >"$T/tree/io/b.c"
: >"$T/tree/io/b.h"
printf '#include "runtime/r.h"\n#include "nothing.h"\n' >"$T/tree/io/c.c"
: >"$T/tree/runtime/r.h"
check_eq "a loop found" "include loop: io/a -> io/b -> io/a" \
    "$("$PY" "$top/tests/cli/includes.py" cycles "$T/tree")"
check_eq "a layer above found" "io/c.c:1: includes runtime/r.h, of a layer above" \
    "$("$PY" "$top/tests/cli/includes.py" layers "$T/tree")"
check_eq "a name of no file found" \
    'io/c.c:2: "nothing.h" names no file of its folder or path from the top' \
    "$("$PY" "$top/tests/cli/includes.py" resolve "$T/tree")"
summary
