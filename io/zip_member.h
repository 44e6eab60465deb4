/* zip_member.h - where a zip archive member's data lies, as the reader
 * (reader.h) opens it and npz.h finds it; apart so that the reader's
 * handle (source.h) needs nothing else of reader.h. */
#ifndef GPUBATCH_IO_ZIP_MEMBER_H
#define GPUBATCH_IO_ZIP_MEMBER_H

#include <stdint.h>

/* A zip archive member's data (.npz, see npz.h): a byte range of the file,
 * stored as it is or deflated (raw deflate, no gzip header), with the
 * CRC-32 and length its decoded bytes must have. */
typedef struct {
    uint64_t data_off;  /* file offset of the first data byte */
    uint64_t comp_size; /* bytes of data in the file */
    uint64_t size;      /* decoded bytes */
    uint32_t crc;       /* CRC-32 of the decoded bytes */
    int method;         /* IO_ZIP_STORED or IO_ZIP_DEFLATED */
} io_zip_member;

enum { IO_ZIP_STORED = 0, IO_ZIP_DEFLATED = 8 };

#endif
