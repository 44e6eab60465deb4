#!/bin/sh
# test_driver_versions.sh - the drivers gpubatch runs on, through the stand-in
# driver (tests/cli/fakecuda.c) reporting CUDA 11.0, 11.4, 12.0, 12.2, 12.8
# and 13.0: how each one's entry points are found (by versioned symbol names
# before CUDA 11.3, where there is no cuGetProcAddress; cuGetProcAddress up to
# 11.8; cuGetProcAddress_v2 from 12.0), that each loads every embedded module
# (through the JIT from the PTX before CUDA 13.0, which the native code of
# ptxas 13 needs; as native code from 13.0 on) and runs a reduction's
# kernels; `info` shows the PTX ISA version of each embedded PTX; and the errors for a driver older than CUDA 11.0 and for a
# driver that refuses the PTX (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
. "$(dirname "$0")/lib.sh"
use_fake_driver
REP="$T/launches"
"$GB" gen --shape 100000 --seed 3 -o "$T/a.npy.gz"
"$GB" reduce --backend cpu "$T/a.npy.gz" >"$T/cpu.txt"
# The tables of the images: module kind arch isa abi size stored.
for f in "$top"/ptx/images/*.img; do sed -n '2,/^$/p' "$f"; done | sed '/^$/d' >"$T/table"
n_modules=$(awk '$2 == "ptx" { print $1 }' "$T/table" | sort -u | wc -l)

for row in "11000 11.0 versioned symbols" "11040 11.4 cuGetProcAddress" \
    "12000 12.0 cuGetProcAddress_v2" "12020 12.2 cuGetProcAddress_v2" \
    "12080 12.8 cuGetProcAddress_v2" "13000 13.0 cuGetProcAddress_v2"; do
    set -- $row
    version=$1
    shown=$2
    shift 2
    source=$*
    export FAKECUDA_DRIVER_VERSION=$version
    "$GB" info -v >"$T/info" 2>&1
    check_eq "CUDA $shown: info exit status" "0" "$?"
    check_eq "CUDA $shown: driver line" "driver: CUDA $shown (entry points: $source), 1 device" \
        "$(sed -n 2p "$T/info")"
    check_eq "CUDA $shown: modules loaded" "$n_modules" "$(grep -c ' loaded in ' "$T/info")"
    if [ "$version" -ge 13000 ]; then how="sm_90 native code"; else how="compute_75 PTX (JIT)"; fi
    check_eq "CUDA $shown: modules loaded as $how" "$n_modules" "$(grep -c " $how loaded in " "$T/info")"
    "$GB" info >"$T/info.short" 2>&1
    check_eq "CUDA $shown: info without -v, the device's kernels in its line" \
        "; kernels: $n_modules $how, loaded in" \
        "$(sed -n 's/^device 0: Fake GPU, .*\(; kernels: .*, loaded in\) [0-9.]* ms$/\1/p' "$T/info.short")"
    rm -f "$REP"
    if FAKECUDA_REPORT="$REP" "$GB" reduce --backend cuda "$T/a.npy.gz" >"$T/o" 2>"$T/e" &&
        grep -q "^device 0 launches [1-9]" "$REP"; then ok; else
        fail "CUDA $shown: reduce on the stand-in GPU: $(cat "$T/e" "$REP" 2>/dev/null)"
    fi
done
unset FAKECUDA_DRIVER_VERSION

# info lists each embedded PTX with the PTX ISA version its .version declares.
"$GB" info -v --no-jit >"$T/info"
make -s -C "$top" ptx-unpack BUILD="$T/build" PTX_WORK="$T/unpacked" >/dev/null 2>&1
awk '$2 == "ptx" { print $1, $3 }' "$T/table" >"$T/ptx_list"
while read -r module arch; do
    isa=$(sed -n 's/^\.version //p' "$T/unpacked/$module.compute_$arch.ptx")
    grep -q "^  $module *compute_$arch  PTX ISA $isa: CUDA [0-9.]* (driver R[0-9]*) or newer  " "$T/info" &&
        ok || fail "info does not show $module compute_$arch with PTX ISA [$isa]: $(grep " $module " "$T/info")"
done <"$T/ptx_list"
if grep -q "^\.version 7\.0$" "$T"/unpacked/*.ptx; then
    grep -q "PTX ISA 7\.0: CUDA 11\.0 (driver R450) or newer" "$T/info" && ok ||
        fail "PTX ISA 7.0 is not shown as loading from CUDA 11.0, driver R450"
fi

# The tables are in aligned columns: every PTX line has its "compute_" and
# its "bytes" in the same columns, and so has every line of native code its
# "sm_" and "bytes", every module of a device its variant.
cols=$(awk '/^embedded PTX:/ { t = "ptx"; next } /^embedded native code:/ { t = "sass"; next }
    /^cpu backend/ { t = "" }
    t == "ptx" { print t, index($0, "compute_"), index($0, " bytes") }
    t == "sass" { print t, index($0, " sm_"), index($0, " bytes") }' "$T/info" | sort -u | awk '{ print $1 }' | tr '\n' ' ')
check_eq "info: columns aligned" "ptx sass " "$cols"
"$GB" info -v >"$T/info" 2>&1
check_eq "info: device modules aligned" 1 \
    "$(sed -n 's/^    \([a-z0-9_]* *\)sm_90 native code loaded in.*/\1/p' "$T/info" | awk '{ print length($0) }' | sort -u | wc -l)"

# Without -v, one line a device: twelve lines for eight devices.
FAKECUDA_DEVICES=8 "$GB" info >"$T/info8" 2>&1
check_eq "info, eight devices: exit status" 0 "$?"
check_eq "info, eight devices: twelve lines, one a device" "12 8" \
    "$(wc -l <"$T/info8") $(grep -c '^device [0-7]: Fake GPU, .*; kernels: [0-9]* sm_90 native code, loaded in' "$T/info8")"

# --json: the same report as one object, for scripts.
"$GB" info --json >"$T/info.json" 2>"$T/info.err"
check_eq "info --json: exit status" 0 $?
check_eq "info --json: one line" 1 "$(wc -l <"$T/info.json")"
if "$PY" -c '' 2>/dev/null; then
"$PY" - "$T/info.json" "$T/ptx_list" "$n_modules" <<'END' >"$T/json.chk" 2>&1
import json, sys
j = json.load(open(sys.argv[1]))
ptx = set(tuple(l.split()) for l in open(sys.argv[2]))
n = int(sys.argv[3])
bad = []
d = j["driver"]
if not (d["usable"] is True and d["cuda"] == "13.0" and d["cuda_version"] == 13000 and d["device_count"] == 1):
    bad.append("driver %r" % d)
if len(j["devices"]) != 1 or j["devices"][0]["name"] != "Fake GPU" or j["devices"][0]["compute_capability"] != "9.0":
    bad.append("devices %r" % [(x.get("name"), x.get("compute_capability")) for x in j["devices"]])
mods = j["devices"][0]["modules"]
if len(mods) != n or any(m["state"] != "loaded" or m["variant"] != "sm_90 native code" or m["error"] is not None
                         or not isinstance(m["load_ms"], float) for m in mods):
    bad.append("modules %r" % mods[:2])
if set((p["module"], p["arch"].replace("compute_", "")) for p in j["ptx"]) != ptx:
    bad.append("ptx list")
if len(j["native"]) != n or any("sm_90" not in x["archs"] or x["bytes"] <= 0 for x in j["native"]):
    bad.append("native %r" % j["native"][:1])
if not (j["cpu"]["available"] is True and j["cpu"]["cores"] >= 1 and j["version"]):
    bad.append("cpu %r" % j["cpu"])
print("bad:", bad)
END
check_eq "info --json: contents" "bad: []" "$(cat "$T/json.chk")"
GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1 "$GB" info --json --no-jit >"$T/info.json"
check_eq "info --json without a driver" "False [] True" "$("$PY" -c '
import json, sys; j = json.load(open(sys.argv[1])); print(j["driver"]["usable"], j["devices"], "no NVIDIA driver" in j["driver"]["error"])' "$T/info.json" 2>&1)"
"$GB" info --json --no-jit >"$T/info.json"
check_eq "info --json --no-jit: modules not loaded" "not loaded" "$("$PY" -c '
import json, sys; print(" ".join(sorted(set(m["state"] for m in json.load(open(sys.argv[1]))["devices"][0]["modules"]))))' "$T/info.json" 2>&1)"
else
    missing "no python3: the JSON of info --json not parsed"
fi

# Older than CUDA 11.0: a clear error naming the version needed; auto uses the CPU.
export FAKECUDA_DRIVER_VERSION=10020
too_old="the NVIDIA driver (CUDA 10\.2) is too old: gpubatch needs CUDA 11\.0 (driver R450) or newer"
check_error "CUDA 10.2, --backend cuda" "$too_old" "$GB" reduce --backend cuda "$T/a.npy.gz"
"$GB" reduce "$T/a.npy.gz" >"$T/auto.txt" 2>"$T/auto.err"
check_eq "CUDA 10.2, auto: exit status" "0" "$?"
check_files_same "CUDA 10.2, auto: the CPU's result" "$T/cpu.txt" "$T/auto.txt"
grep -q "warning: $too_old.*; using the CPU backend" "$T/auto.err" && ok ||
    fail "CUDA 10.2, auto: warning [$(cat "$T/auto.err")]"
"$GB" info >"$T/info" 2>&1
grep -q "^driver: not usable: $too_old" "$T/info" && ok || fail "CUDA 10.2, info: $(sed -n 2p "$T/info")"

# A driver that refuses the PTX anyway: the module, its ISA version, the
# driver it needs and the driver's own error.
export FAKECUDA_DRIVER_VERSION=11000 FAKECUDA_NEWEST_PTX_ISA=6.5
isa=$(sed -n 's/^\.version //p' "$T/unpacked/reduce_f32_moments.compute_75.ptx")
check_error "PTX refused" \
    "a.npy.gz: the NVIDIA driver (CUDA 11\.0) cannot load module [a-z0-9_]*: its PTX ISA $isa needs CUDA [0-9.]* (driver R[0-9]*) or newer, and the driver says CUDA_ERROR_UNSUPPORTED_PTX_VERSION" \
    "$GB" reduce --backend cuda "$T/a.npy.gz"
"$GB" info -v >"$T/info" 2>&1
check_eq "PTX refused: info exit status" "1" "$?"
check_eq "PTX refused: every module fails in info" "$n_modules" "$(grep -c ' FAILED: .*cannot load module' "$T/info")"
"$GB" info >"$T/info" 2>&1
check_eq "PTX refused: info without -v, exit status" "1" "$?"
grep -q "^device 0: .*; kernels: $n_modules FAILED (first: [a-z0-9_]*: .*cannot load module .*PTX_VERSION .*)\$" "$T/info" &&
    ok || fail "PTX refused: info without -v: $(grep '^device 0' "$T/info")"
summary
