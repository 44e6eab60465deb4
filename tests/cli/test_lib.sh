#!/bin/sh
# test_lib.sh - the command-line tests' own helpers (lib.sh): a missing test
# tool skips a script, or the part of it that needs the tool, with a note;
# under CI=true (where make deps installed every tool) it fails instead, so
# that no check is left out unseen; spread gives every item of a list in
# turn, or all of them with GPUBATCH_TEST_SOAK.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/s/cli"
# a script whose tool is missing, and one with a part that needs a tool
cat >"$T/s/cli/skips.sh" <<END
. "$top/tests/cli/lib.sh"
ok
need_tool gpubatch-no-such-tool no-such-package
ok
summary
END
cat >"$T/s/cli/part.sh" <<END
. "$top/tests/cli/lib.sh"
ok
missing "gpubatch-no-such-tool is not installed: its part not run"
summary
END
for s in skips part; do
    out=$(env -u CI sh "$T/s/cli/$s.sh" 2>&1)
    check_eq "$s: without CI, a note and no failure" "0|1 passed, 0 failed" \
        "$?|$(echo "$out" | tail -n 1)"
    echo "$out" | grep -q "^\(skip\|note\): .*gpubatch-no-such-tool" && ok || fail "$s: no note: [$out]"
    out=$(CI=true sh "$T/s/cli/$s.sh" 2>&1)
    check_eq "$s: under CI=true, a failure" "1|1 passed, 1 failed" "$?|$(echo "$out" | tail -n 1)"
    echo "$out" | grep -q "^FAIL: CI=true, and a test tool is missing: .*gpubatch-no-such-tool" && ok ||
        fail "$s: CI=true: [$out]"
done
check_eq "spread: one item a round, in turn" "1 3 7 16 1" \
    "$(for k in 0 1 2 3 4; do spread "1 3 7 16" $k; done | tr '\n' ' ' | sed 's/ $//')"
check_eq "spread: every item with GPUBATCH_TEST_SOAK" "1 3 7 16" "$(GPUBATCH_TEST_SOAK=1 spread "1 3 7 16" 2)"
check_eq "numpy_python: a python3 that has numpy, where one is installed" \
    "$(for p in python3 /usr/bin/python3; do "$p" -c 'import numpy' 2>/dev/null && { echo yes; break; }; done)" \
    "$(NP=$(numpy_python); [ -n "$NP" ] && "$NP" -c 'import numpy' && echo yes)"
summary
