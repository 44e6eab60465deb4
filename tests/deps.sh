#!/bin/sh
# deps.sh - installs what building gpubatch and running its tests use, on a
# Debian or Ubuntu machine (`make deps`, or `sh tests/deps.sh` where make
# itself is missing). As root it runs apt-get for the packages not installed
# yet; otherwise it prints the command that would. Every test tool is
# optional: a test whose tool is missing is skipped with a note, never
# failed. With DEPS_SLURM=1 it adds a one-node Slurm (tests/cli/test_slurm.sh).
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
if [ -z "$missing" ]; then
    echo "deps: every build and test dependency is installed"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "deps: not root, so not installing:$missing"
    echo "deps: run as root: apt-get install --no-install-recommends$missing"
    echo "deps: tests whose tools are missing are skipped with a note"
    exit 0
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
