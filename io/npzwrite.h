/* npzwrite.h - the bytes around the members of an .npz archive that a
 * command writes: np.load reads it as np.savez's (stored members).
 *
 * Each member's data is streamed after its local header: its size and
 * CRC-32 are known only at the end, so the local header sets the
 * data-descriptor flag (bit 3) and the descriptor after the data holds
 * them. Every size field is zip64 (extra field 0x0001, a zip64 end record
 * and its locator), as np.savez writes its members, whatever their size;
 * a local header's offset goes there too where it does not fit 32 bits.
 * The time stamp is fixed (1980-01-01 00:00): the same data always gives
 * the same archive. */
#ifndef GPUBATCH_IO_NPZWRITE_H
#define GPUBATCH_IO_NPZWRITE_H

#include <stddef.h>
#include <stdint.h>

#define NPZW_MEMBER "arr_0.npy" /* np.savez's name for one array given by position */
#define NPZW_HEAD_MAX 128       /* room for npzw_head's bytes */
#define NPZW_TAIL_MAX 256       /* room for npzw_tail's bytes */

#define NPZW_NAME_MAX 32          /* the longest member name npzw_local takes */
#define NPZW_LOCAL_MAX (30 + NPZW_NAME_MAX + 20) /* room for npzw_local's bytes */
#define NPZW_DESC_MAX 24          /* room for npzw_descriptor's bytes */
/* room for npzw_directory's bytes of n members */
#define NPZW_DIR_MAX(n) ((size_t)(n) * (46 + NPZW_NAME_MAX + 28) + 56 + 20 + 22)

/* A member written: its name, size, CRC-32 and local header's offset. */
typedef struct {
    const char *name; /* "sum.npy" */
    uint64_t size;
    uint32_t crc;
    uint64_t at;
} npzw_entry;

/* Writes the local header of a member named name (at most NPZW_NAME_MAX
 * bytes) into buf (NPZW_LOCAL_MAX bytes); returns its length. */
size_t npzw_local(unsigned char *buf, const char *name);

/* Writes the data descriptor after a member's size bytes of data with
 * CRC-32 crc into buf (NPZW_DESC_MAX bytes); returns its length. */
size_t npzw_descriptor(unsigned char *buf, uint32_t crc, uint64_t size);

/* Writes the central directory of the n members written, which begins at
 * offset `central`, and the end records into buf (NPZW_DIR_MAX(n) bytes);
 * returns its length. */
size_t npzw_directory(unsigned char *buf, const npzw_entry *e, int n, uint64_t central);

/* npzw_local of the one member NPZW_MEMBER (NPZW_HEAD_MAX bytes). */
size_t npzw_head(unsigned char *buf);

/* What follows the one member's size bytes of data with CRC-32 crc: its
 * descriptor, the central directory and the end records, into buf
 * (NPZW_TAIL_MAX bytes); returns its length. */
size_t npzw_tail(unsigned char *buf, uint32_t crc, uint64_t size);

#endif
