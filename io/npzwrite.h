/* npzwrite.h - the bytes around the one member of an .npz archive that a
 * command writes: np.load reads it as np.savez's (a stored member).
 *
 * The member's data is streamed between the two: its size and CRC-32 are
 * known only at the end, so its local header sets the data-descriptor flag
 * (bit 3) and the descriptor after the data holds them. Every size field is
 * zip64 (extra field 0x0001, a zip64 end record and its locator), as
 * np.savez writes its members, whatever their size; the time stamp is fixed (1980-01-01 00:00): the same data always gives the same
 * archive. */
#ifndef GPUBATCH_IO_NPZWRITE_H
#define GPUBATCH_IO_NPZWRITE_H

#include <stddef.h>
#include <stdint.h>

#define NPZW_MEMBER "arr_0.npy" /* np.savez's name for one array given by position */
#define NPZW_HEAD_MAX 128       /* room for npzw_head's bytes */
#define NPZW_TAIL_MAX 256       /* room for npzw_tail's bytes */

/* Writes the local header of the member into buf (NPZW_HEAD_MAX bytes);
 * returns its length. */
size_t npzw_head(unsigned char *buf);

/* Writes what follows the member's size bytes of data with CRC-32 crc (the
 * data descriptor, the central directory and the end records) into buf
 * (NPZW_TAIL_MAX bytes); returns its length. */
size_t npzw_tail(unsigned char *buf, uint32_t crc, uint64_t size);

/* One member of an archive built whole in memory. */
typedef struct {
    const char *name; /* "sum.npy" */
    const void *data; /* the member's bytes (an .npy file) */
    size_t size;
} npzw_member;

/* The bytes of a whole archive of n stored members (zip records as
 * np.savez writes them, time stamps fixed) into a new buffer *out (freed by
 * the caller) of *len bytes. 0, or -1 when out of memory or when the
 * archive would reach 4 GiB (it has no zip64 fields). */
int npzw_archive(const npzw_member *m, int n, unsigned char **out, size_t *len);

#endif
