#!/bin/sh
# deps.sh - installs what building gpubatch and running its tests use, on a
# Debian or Ubuntu machine (`make deps`, or `sh tests/deps.sh` where make
# itself is missing). As root it runs apt-get for the packages not installed
# yet, quietly (its output is shown only when it fails), waiting for another
# package manager that holds the dpkg lock (DEPS_LOCK_WAIT seconds, default
# 600) rather than failing; otherwise it prints the command that would. Every
# test tool is optional: a test whose tool is missing is skipped with a note
# (under CI=true, failed). With DEPS_SLURM=1 it adds a one-node Slurm
# (tests/cli/test_slurm.sh).
set -eu

# What each package is for.
packages="make gcc libc6-dev zlib1g-dev
libmpfr-dev
python3 python3-numpy
gzip pigz tabix zstd xz-utils bzip2 lz4
groff-base man-db
valgrind jq zsh fish git"
# make, gcc, libc6-dev, zlib1g-dev: the build. libmpfr-dev: the quadratic
# solver's accuracy tests (tests/unit/test_quadratic.c). python3: the
# independent references of the command-line tests; python3-numpy: .npz
# archives, transposes and float32 texts checked against numpy. gzip, pigz,
# tabix (bgzip): blocked gzip output read by other tools; zstd, xz-utils,
# bzip2, lz4: their output named as unsupported input. groff-base, man-db:
# the manual page rendered. valgrind: memcheck runs. jq: README's example.
# zsh, fish: their completions. git: `make dist`.
if [ "${DEPS_SLURM:-}" = 1 ]; then
    packages="$packages slurmctld slurmd slurm-client"
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: not a Debian-like system (no apt-get): install the equivalents of:" $packages
    exit 0
fi
missing=
for p in $packages; do
    dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing="$missing $p"
done
# The python3 that has numpy, as the tests look for one (tests/cli/lib.sh:
# numpy_python): the one on PATH, else the system's.
numpy_check() {
    for p in ${PYTHON:-} python3 /usr/bin/python3; do
        if "$p" -c 'import numpy' 2>/dev/null; then
            [ "$(command -v "$p")" = "$(command -v python3 || true)" ] ||
                echo "deps: python3 on PATH lacks numpy; the tests use $p"
            return 0
        fi
    done
    echo "deps: no python3 has numpy (python3-numpy): the tests that need it will be skipped"
    return 1
}
if [ -z "$missing" ]; then
    echo "deps: every build and test dependency is installed"
    numpy_check || exit 1
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "deps: not root, so not installing:$missing"
    echo "deps: run as root: apt-get install --no-install-recommends$missing"
    echo "deps: tests whose tools are missing are skipped with a note"
    exit 0
fi
# Whether a process holds one of apt's or dpkg's locks (an fcntl lock on the
# file, as /proc/locks lists it: MAJOR:MINOR:INODE, the numbers in hex).
lock_held() {
    for f in ${DEPS_LOCK_FILES:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock \
        /var/lib/apt/lists/lock /var/cache/apt/archives/lock}; do
        [ -e "$f" ] || continue
        set -- $(stat -c '%d %i' "$f") || continue
        id=$(printf '%02x:%02x:%s' $(($1 >> 8 & 0xfff)) $(($1 & 0xff | ($1 >> 12 & 0xfff00))) "$2")
        grep -q " $id " /proc/locks 2>/dev/null && return 0
    done
    return 1
}
# Waits, saying so once, while another apt or dpkg holds a lock.
wait_lock() {
    waited=0
    limit=${DEPS_LOCK_WAIT:-600}
    while lock_held; do
        [ "$waited" -gt 0 ] ||
            echo "deps: another package manager holds the dpkg lock; waiting for it (up to $limit s)"
        if [ "$waited" -ge "$limit" ]; then
            echo "deps: the dpkg lock is still held after $limit s; try again later" >&2
            exit 1
        fi
        sleep 2
        waited=$((waited + 2))
    done
}
# Runs apt-get quietly: its output only when it fails.
apt_quiet() {
    wait_lock
    if ! apt-get -q -o DPkg::Lock::Timeout="${DEPS_LOCK_WAIT:-600}" "$@" >"$log" 2>&1; then
        grep -v -e '^debconf: ' -e '^dpkg-preconfigure: ' "$log" | tail -n 20 >&2
        echo "deps: apt-get $1 failed" >&2
        exit 1
    fi
}
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
apt_quiet update
# shellcheck disable=SC2086
apt_quiet install -y --no-install-recommends $missing
numpy_check
echo "deps: done"
