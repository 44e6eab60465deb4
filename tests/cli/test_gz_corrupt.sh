#!/bin/sh
# test_gz_corrupt.sh - blocked-gzip inputs with corrupt members, one file per
# way a deflate member can be bad (tests/gpu/corrupt_bgzf.py): the CPU backend
# must end each run with one error line naming the file, status 1, and leave
# no output file behind; the valid file of the same set must go through.
. "$(dirname "$0")/lib.sh"
need_python

if ! "$PY" "$top/tests/gpu/corrupt_bgzf.py" "$T/in" 4 >"$T/gen.out" 2>&1; then
    fail "corrupt_bgzf.py: $(cat "$T/gen.out")"
    summary
    exit
fi
mkdir "$T/out"

"$GB" reduce --backend cpu -q "$T/in/valid.npy.gz" >"$T/valid.out" 2>"$T/valid.err"
check_eq "valid set: reduce status" 0 $?
grep -q "^sum .*valid.npy.gz" "$T/valid.out" && ok || fail "valid set: reduce printed [$(cat "$T/valid.out")]"
"$GB" quadratic --backend cpu -q "$T/in/valid.npy.gz" -o "$T/out/valid.npy.gz"
check_eq "valid set: quadratic status" 0 $?
[ -s "$T/out/valid.npy.gz" ] && ok || fail "valid set: quadratic wrote no output"
rm -f "$T/out/valid.npy.gz"

n=0
for f in "$T"/in/*.npy.gz; do
    name=${f##*/}
    [ "$name" = valid.npy.gz ] && continue
    n=$((n + 1))
    # the message's form after the file name may change (a member's offset)
    check_error "reduce $name" "^gpubatch: error: $f: " "$GB" reduce --backend cpu "$f"
    check_error "quadratic $name" "^gpubatch: error: $f: " \
        "$GB" quadratic --backend cpu -q "$f" -o "$T/out/$name"
    check_eq "quadratic $name leaves no file" "" "$(ls -A "$T/out")"
done
check_eq "corrupt kinds" 17 "$n"
summary
