#!/bin/sh
# sources.sh - prints what the kernel images are made from: the SHA-256 of
# each file `make ptx` reads (the kernels, the headers they and the packer
# include, the packer and the PTX version script), and of the Makefile lines
# that choose the modules, architectures and nvcc flags. `make ptx` writes
# this beside the images (ptx/images/SOURCES), and tests/cli/test_ptx.sh
# makes the images again only when it differs (or when asked).
set -eu
cd "$(dirname "$0")/.."
export LC_ALL=C
sha256sum ptx/*.cu ptx/*.h ptx/image.c ptx/lower_version.sh
settings=$(grep -E '^(NVCC_FLAGS|[A-Z_]*_ARCHS|LADDER_MODULES|PTX_DTYPES|REDUCE_[A-Z_]*KERNELS) :=' Makefile |
    sha256sum | cut -d' ' -f1)
echo "$settings  Makefile (the lines that set NVCC_FLAGS, *_ARCHS, LADDER_MODULES, PTX_DTYPES, REDUCE_*KERNELS)"
