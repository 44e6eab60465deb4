/* cubin.h - what the build tool (ptx/image.c) and the stand-in driver
 * (tests/cli/fakecuda.c) read from a cubin's ELF header. A header-only
 * helper: the runtime itself hands cubins to the driver unread. */
#ifndef GPUBATCH_PTX_CUBIN_H
#define GPUBATCH_PTX_CUBIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The sm number (90 for sm_90) of a 64-bit little-endian CUDA ELF of len
 * bytes, or -1 for anything else. It sits in bits 8-15 of e_flags from ELF
 * ABI version 8 (e_ident[8]; OS/ABI 0x41, ptxas 13) on, in bits 0-7 before
 * (OS/ABI 0x33). */
static inline int cubin_sm(const unsigned char *elf, size_t len)
{
    if (len < 64 || memcmp(elf, "\177ELF", 4) || elf[4] != 2 || elf[5] != 1 ||
        (elf[18] | elf[19] << 8) != 190)
        return -1;
    uint32_t flags = (uint32_t)elf[48] | (uint32_t)elf[49] << 8;
    return (int)(elf[8] >= 8 ? flags >> 8 & 0xff : flags & 0xff);
}

/* The ELF ABI version of a cubin cubin_sm() accepts. */
static inline int cubin_abi(const unsigned char *elf)
{
    return elf[8];
}

#endif
