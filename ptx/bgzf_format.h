/* bgzf_format.h - the fixed bytes of blocked gzip (BGZF, as bgzip and
 * htslib write it), as macros alone, so that the device's encoder
 * (deflate_math.h, deflate.cu) and the host (io/bgzf.h: the reader, the
 * writer) compile one definition, as CUDA and as C.
 *
 * A block is one gzip member: the BGZF_HEADER_BYTES, BSIZE (the block's
 * size - 1, 16 bits little-endian), raw deflate data, then the CRC-32 and
 * ISIZE of its data. Readers take more general headers too (other extra
 * subfields beside BC: io_bgzf_block_size); these are the bytes we write. */
#ifndef GPUBATCH_PTX_BGZF_FORMAT_H
#define GPUBATCH_PTX_BGZF_FORMAT_H

/* The gzip magic, deflate, FEXTRA alone, MTIME 0, XFL 0, OS 255 (unknown),
 * XLEN 6, and the BC subfield's id and length: a block's header up to BSIZE. */
#define BGZF_HEADER_BYTES 0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0
#define BGZF_BSIZE_AT 16u    /* offset of BSIZE: the bytes above */
#define BGZF_HEADER_LEN 18u  /* the header with BSIZE: where the deflate data starts */
#define BGZF_TRAILER_LEN 8u  /* CRC-32 and ISIZE */
#define BGZF_BLOCK_MAX 65536u /* bytes of a block at most (BSIZE is 16 bits) */

/* The empty block that ends a BGZF stream: the header, BSIZE 27, an empty
 * final deflate block (fixed Huffman), CRC-32 0 and ISIZE 0. */
#define BGZF_EOF_BYTES BGZF_HEADER_BYTES, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define BGZF_EOF_LEN 28

#endif
