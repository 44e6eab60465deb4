/* npz.h - zip archives of .npy members (.npz), as np.savez (stored members)
 * and np.savez_compressed (deflated members) write them.
 *
 * npz_open() reads the end of central directory record (searching back
 * over an archive comment), the zip64 end record through its locator, the
 * central directory (zip64 extra field 0x0001 for sizes and offsets over
 * 4 GiB) and each member's local header, where its data starts (the local
 * name and extra field may differ in length from the central ones). Every
 * field is untrusted: archives that span disks or have data before them,
 * encrypted members, methods other than stored (0) and deflate (8), stored
 * members whose sizes differ, members outside the file, overlapping each
 * other or the central directory, local headers that disagree with the
 * central directory, and empty, NUL-holding or duplicate names are refused
 * with a one-line reason naming the member. Nothing is allocated from a
 * size the archive claims beyond what the file holds.
 *
 * A member's bytes are read with io_reader_open_zip_member() (reader.h). */
#ifndef GPUBATCH_IO_NPZ_H
#define GPUBATCH_IO_NPZ_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define NPZ_MAX_CENTRAL ((uint64_t)256 << 20) /* largest central directory read */

typedef struct {
    char *name;         /* as stored: NUL-terminated, no NUL inside, not empty */
    char *key;          /* name without a trailing ".npy", as np.load shows it */
    io_zip_member data; /* where the member's data lies and how to check it */
    uint64_t header_off; /* file offset of its local header */
} npz_member;

typedef struct npz_archive npz_archive;

/* Nonzero when buf starts like a zip archive: a local header (PK\3\4) or,
 * for an archive with no members, the end record (PK\5\6). */
int npz_is_magic(const uint8_t *buf, size_t len);

/* Reads the directory of the zip archive at path. Returns 0, or a negative
 * io_error (IO_ERR_FORMAT for a malformed or unsupported archive) with a
 * one-line reason in *st (not naming the file: the caller prefixes it).
 * *out is NULL on failure. */
int npz_open(npz_archive **out, const char *path, io_status *st);

/* The same for an archive in memory (not copied; must outlive the handle).
 * For tests and fuzzing. */
int npz_open_mem(npz_archive **out, const void *data, size_t len, io_status *st);

/* Number of members. */
size_t npz_count(const npz_archive *a);

/* Member i (0 <= i < npz_count()), in archive (central directory) order. */
const npz_member *npz_member_at(const npz_archive *a, size_t i);

/* The member whose name or key is `name`, or NULL. */
const npz_member *npz_find(const npz_archive *a, const char *name);

/* Frees; accepts NULL. */
void npz_close(npz_archive *a);

/* Checks that the bytes of stored member m of the archive at path have the
 * directory's CRC-32, read on every core at once (a deflated member is
 * checked as it is inflated: 0). 0, or a negative io_error with the reason
 * in *st (IO_ERR_CRC: "stored data at byte N: incorrect data check"). */
int npz_check_stored(const char *path, const io_zip_member *m, io_status *st);

#endif
