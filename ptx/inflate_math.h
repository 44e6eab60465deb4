/* inflate_math.h - the deflate decoder (RFC 1951) for blocked gzip members,
 * compiled both as CUDA (ptx/inflate.cu: one GPU thread per member, its
 * tables in shared memory) and as C (the host tests and fuzzing), so both
 * accept and reject exactly the same members and write the same bytes.
 *
 * It decodes one raw deflate stream into a buffer of known size (the
 * member's ISIZE, at most 64 KiB in a BGZF block) and refuses what zlib's
 * inflate refuses: a reserved block type, stored lengths that disagree,
 * more than 286 literal/length or 30 distance codes, an over-subscribed or
 * incomplete Huffman code (one code of one bit excepted for literal/length
 * and distance codes, as zlib allows; a distance code may also be empty), a
 * code-length repeat with nothing to repeat or past the end, a missing
 * end-of-block code, symbols 286/287 and distance symbols 30/31, a distance
 * beyond the data so far (members are independent: no dictionary), output
 * past the buffer, input that ends inside the stream, and bytes left over
 * after the final block. CRC-32 is checked separately (if_crc32_*).
 *
 * Huffman decoding: a code of at most IF_LIT_BITS (literal/length) or
 * IF_DIST_BITS (distance) bits is found with one lookup in a primary table
 * of (symbol << 4 | length) entries indexed by the next bits; longer codes
 * (IF_LONG_CODE in the table: length 0, and above every literal's entry)
 * are decoded canonically, one bit at a time, from the count of codes of
 * each length. */
#ifndef GPUBATCH_PTX_INFLATE_MATH_H
#define GPUBATCH_PTX_INFLATE_MATH_H

#ifdef __CUDACC__
#define IF_HD __device__ __forceinline__
typedef unsigned char if_u8;
typedef unsigned short if_u16;
typedef unsigned int if_u32;
typedef unsigned long long if_u64;
#else
#include <stdint.h>
#include <string.h>
#define IF_HD static inline
typedef uint8_t if_u8;
typedef uint16_t if_u16;
typedef uint32_t if_u32;
typedef uint64_t if_u64;
#endif

#ifndef IF_LIT_BITS
#define IF_LIT_BITS 9   /* primary literal/length table: 2^9 entries */
#endif
#ifndef IF_DIST_BITS
#define IF_DIST_BITS 6  /* primary distance table: 2^6 entries */
#endif
#define IF_MAX_BITS 15  /* longest code the format allows */
#define IF_LONG_CODE 0xfff0u /* primary entry of bits that begin a longer code */
#define IF_MAX_OUT 65536u /* largest member output (BGZF) */
#define IF_IN_PAD 8u    /* readable bytes the GPU's loads need past a member */
#ifndef IF_GPU_THREADS
#define IF_GPU_THREADS 4 /* members (threads) per block of the inflate kernel */
#endif

/* Results: 0, or why the stream was refused. */
enum if_status {
    IF_OK = 0,
    IF_ERR_BLOCK_TYPE = 1,   /* reserved block type 3 */
    IF_ERR_STORED_LEN = 2,   /* stored block LEN != ~NLEN */
    IF_ERR_TOO_MANY = 3,     /* HLIT > 286 or HDIST > 30 */
    IF_ERR_CODE_SET = 4,     /* over-subscribed or incomplete code */
    IF_ERR_REPEAT = 5,       /* code-length repeat with no previous, or too long */
    IF_ERR_NO_EOB = 6,       /* end-of-block code has no length */
    IF_ERR_BAD_SYMBOL = 7,   /* undefined code, or symbol 286/287, distance 30/31 */
    IF_ERR_FAR = 8,          /* distance beyond the data so far */
    IF_ERR_OVERFLOW = 9,     /* output past the buffer */
    IF_ERR_TRUNCATED = 10,   /* input ends inside the stream */
    IF_ERR_TRAILING = 11,    /* bytes after the final block */
    IF_ERR_SIZE = 12,        /* output shorter than the buffer (ISIZE) */
    IF_ERR_CRC = 13,         /* CRC-32 mismatch */
};

/* One member of a chunk of blocked gzip as the device inflates it: its
 * deflate data at in_off (in_len bytes) of the chunk's compressed bytes, its
 * output at out_off of the chunk's decoded buffer (isize bytes), and the
 * CRC-32 its trailer holds. file_off (where the member starts in its file)
 * is for messages only. */
typedef struct {
    if_u64 file_off;
    if_u32 in_off, in_len;
    if_u32 out_off, isize;
    if_u32 crc, unused;
} if_member;

#define IF_NO_MEMBER 0xffffffffu /* "no bad member" in the kernels' report */

/* Canonical code of one alphabet: per code length, the number of codes,
 * the first code (MSB first) and where its symbols start in `sorted`. */
typedef struct {
    if_u16 count[IF_MAX_BITS + 1];
    if_u16 first[IF_MAX_BITS + 1];
    if_u16 index[IF_MAX_BITS + 1];
    if_u16 next[IF_MAX_BITS + 1]; /* the next code to hand out (while building) */
} if_canon;

/* The decoder's tables for one stream (2368 bytes); the GPU keeps one per
 * thread in shared memory. Contents on entry do not matter. */
typedef struct {
    if_u16 lit[1u << IF_LIT_BITS];
    if_u16 dist[1u << IF_DIST_BITS];
    if_u16 lit_sorted[288];
    if_u16 dist_sorted[32];
    if_canon lit_c, dist_c;
    if_u8 lens[320]; /* code lengths of the current dynamic block */
} if_tables;

/* Bit reader: bits come out least significant first. `pos` counts bytes
 * taken into `bits`; the bits consumed are 8 * pos - n. */
typedef struct {
    const if_u8 *in;
    if_u32 len;
    if_u32 pos;
    if_u64 bits;
    if_u32 n;
} if_bits;

/* Whether the host stores words little-endian, as deflate's bit order reads
 * them: then its loads copy whole words rather than assemble bytes. */
#if !defined(__CUDACC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define IF_HOST_LE 1
#else
#define IF_HOST_LE 0
#endif

/* Four input bytes at in[pos..pos+3] as a little-endian word; bytes at or
 * past len read as zero. The GPU reads two aligned words and shifts (the
 * caller keeps IF_IN_PAD readable bytes after the member); the host copies
 * a word, or reads bytes near the end. */
IF_HD if_u32 if_load32(const if_u8 *in, if_u32 len, if_u32 pos)
{
    if (pos >= len)
        return 0;
#ifdef __CUDACC__
    const if_u8 *p = in + pos;
    const if_u32 *w = (const if_u32 *)((unsigned long long)p & ~3ull);
    if_u32 sh = (if_u32)((unsigned long long)p & 3u) * 8u;
    if_u32 v = __funnelshift_r(__ldg(w), __ldg(w + 1), sh);
#else
    if_u32 v = 0;
    if (IF_HOST_LE && len - pos >= 4)
        __builtin_memcpy(&v, in + pos, 4);
    else
        for (if_u32 k = 0; k < 4 && pos + k < len; k++)
            v |= (if_u32)in[pos + k] << (8 * k);
#endif
    if (len - pos < 4)
        v &= (1u << (8 * (len - pos))) - 1u;
    return v;
}

/* Makes sure at least 32 bits are buffered (zeros past the input). */
IF_HD void if_refill(if_bits *b)
{
    if (b->n < 32) {
        b->bits |= (if_u64)if_load32(b->in, b->len, b->pos) << b->n;
        b->pos += 4;
        b->n += 32;
    }
}

/* The 8 input bytes at in[pos..pos+7] as a little-endian word; the caller
 * checked pos + 8 <= len. The GPU reads three aligned words (up to 3 bytes
 * past the 8, within IF_IN_PAD). */
IF_HD if_u64 if_load64(const if_u8 *in, if_u32 pos)
{
#ifdef __CUDACC__
    const if_u8 *p = in + pos;
    const if_u32 *w = (const if_u32 *)((unsigned long long)p & ~3ull);
    if_u32 sh = (if_u32)((unsigned long long)p & 3u) * 8u;
    if_u32 w0 = __ldg(w), w1 = __ldg(w + 1), w2 = __ldg(w + 2);
    return (if_u64)__funnelshift_r(w0, w1, sh) | (if_u64)__funnelshift_r(w1, w2, sh) << 32;
#else
    if_u64 v = 0;
    if (IF_HOST_LE)
        __builtin_memcpy(&v, in + pos, 8);
    else
        for (if_u32 k = 0; k < 8; k++)
            v |= (if_u64)in[pos + k] << (8 * k);
    return v;
#endif
}

/* Fills the buffer to at least 56 bits from whole bytes, with no branch;
 * the caller checked pos + 8 <= len. The buffer's bits above n are then the
 * input's next bits rather than zeros, which the other refills keep true:
 * they OR in the same bits. */
IF_HD void if_refill56(if_bits *b)
{
    b->bits |= if_load64(b->in, b->pos) << b->n;
    b->pos += (63u - b->n) >> 3;
    b->n |= 56u;
}

/* Takes k (<= 32) bits; the caller refilled enough. */
IF_HD if_u32 if_take(if_bits *b, if_u32 k)
{
    if_u32 v = (if_u32)(b->bits & ((1ull << k) - 1ull));
    b->bits >>= k;
    b->n -= k;
    return v;
}

/* Nonzero when more bits were consumed than the input holds. */
IF_HD int if_overrun(const if_bits *b)
{
    return (if_u64)b->pos * 8u - b->n > (if_u64)b->len * 8u;
}

/* Reverses the low k bits of v. */
IF_HD if_u32 if_reverse(if_u32 v, if_u32 k)
{
#ifdef __CUDACC__
    return __brev(v) >> (32u - k);
#else
    if_u32 r = 0;
    for (if_u32 i = 0; i < k; i++, v >>= 1)
        r = r << 1 | (v & 1u);
    return r;
#endif
}

/* Builds the canonical code and the primary table (2^bits entries) of the
 * n code lengths in lens. allow_single: one code of one bit (or, with
 * allow_empty, no code at all) is accepted, as zlib does for literal/length
 * and distance codes. Returns IF_OK or IF_ERR_CODE_SET. */
IF_HD int if_build(const if_u8 *lens, if_u32 n, if_u16 *table, if_u32 bits, if_u16 *sorted,
                   if_canon *c, int allow_single, int allow_empty)
{
    for (if_u32 l = 0; l <= IF_MAX_BITS; l++)
        c->count[l] = 0;
    for (if_u32 s = 0; s < n; s++)
        c->count[lens[s]]++;
    c->count[0] = 0;
    int left = 1, max = 0;
    if_u32 code = 0, index = 0;
    for (if_u32 l = 1; l <= IF_MAX_BITS; l++) {
        left = (left << 1) - c->count[l];
        if (left < 0)
            return IF_ERR_CODE_SET; /* over-subscribed */
        if (c->count[l])
            max = (int)l;
        c->first[l] = (if_u16)code;
        c->index[l] = (if_u16)index;
        code = (code + c->count[l]) << 1;
        index += c->count[l];
    }
    if (left > 0 && !(allow_single && max == 1) && !(allow_empty && max == 0))
        return IF_ERR_CODE_SET; /* incomplete */
    for (if_u32 i = 0; i < (1u << bits); i++)
        table[i] = (if_u16)IF_LONG_CODE;
    for (if_u32 l = 0; l <= IF_MAX_BITS; l++)
        c->next[l] = c->first[l];
    for (if_u32 s = 0; s < n; s++) {
        if_u32 l = lens[s];
        if (l == 0)
            continue;
        if_u32 cd = c->next[l]++;
        sorted[c->index[l] + (cd - c->first[l])] = (if_u16)s;
        if (l <= bits) {
            if_u16 e = (if_u16)(s << 4 | l);
            for (if_u32 i = if_reverse(cd, l); i < (1u << bits); i += 1u << l)
                table[i] = e;
        }
    }
    return IF_OK;
}

/* Decodes one symbol: a primary-table hit, or the canonical walk over the
 * lengths past the table. At least 15 bits must be buffered. Returns the
 * symbol, or 0xffff for a code the set does not define. */
IF_HD if_u32 if_decode(if_bits *b, const if_u16 *table, if_u32 bits, const if_u16 *sorted,
                       const if_canon *c)
{
    if_u32 e = table[b->bits & ((1u << bits) - 1u)];
    if (e & 15u) {
        if_take(b, e & 15u);
        return e >> 4;
    }
    if_u32 code = if_reverse((if_u32)b->bits & ((1u << bits) - 1u), bits);
    for (if_u32 l = bits + 1; l <= IF_MAX_BITS; l++) {
        code = code << 1 | (if_u32)((b->bits >> (l - 1)) & 1u);
        if_u32 k = code - c->first[l];
        if (k < c->count[l]) {
            if_take(b, l);
            return sorted[c->index[l] + k];
        }
    }
    return 0xffffu;
}

/* The i-th code-length code length's symbol (RFC 1951 3.2.7 order 16, 17,
 * 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15), from 5-bit
 * fields of two constants so that no table sits in GPU local memory. */
IF_HD if_u32 if_length_order(if_u32 i)
{
    const if_u64 lo = 16ull | 17ull << 5 | 18ull << 10 | 0ull << 15 | 8ull << 20 | 7ull << 25 |
                      9ull << 30 | 6ull << 35 | 10ull << 40 | 5ull << 45 | 11ull << 50 |
                      4ull << 55;
    const if_u64 hi = 12ull | 3ull << 5 | 13ull << 10 | 2ull << 15 | 14ull << 20 | 1ull << 25 |
                      15ull << 30;
    return (if_u32)((i < 12 ? lo >> (5 * i) : hi >> (5 * (i - 12))) & 31u);
}

/* Reads a dynamic block's header into the literal/length and distance
 * tables (the code-length code is decoded through t->lit first). */
IF_HD int if_dynamic_tables(if_bits *b, if_tables *t)
{
    if_refill(b);
    if_u32 nlen = if_take(b, 5) + 257, ndist = if_take(b, 5) + 1, ncode = if_take(b, 4) + 4;
    if (nlen > 286 || ndist > 30)
        return IF_ERR_TOO_MANY;
    for (if_u32 i = 0; i < 19; i++) {
        if_refill(b);
        t->lens[if_length_order(i)] = (if_u8)(i < ncode ? if_take(b, 3) : 0);
    }
    int rc = if_build(t->lens, 19, t->lit, 7, t->lit_sorted, &t->lit_c, 0, 0);
    if (rc)
        return rc;
    for (if_u32 i = 0; i < nlen + ndist;) {
        if_refill(b);
        if_u32 sym = if_decode(b, t->lit, 7, t->lit_sorted, &t->lit_c);
        if (sym == 0xffffu)
            return IF_ERR_CODE_SET;
        if (sym < 16) {
            t->lens[i++] = (if_u8)sym;
            continue;
        }
        if_u32 rep, val = 0;
        if (sym == 16) {
            if (i == 0)
                return IF_ERR_REPEAT;
            val = t->lens[i - 1];
            rep = 3 + if_take(b, 2);
        } else if (sym == 17) {
            rep = 3 + if_take(b, 3);
        } else {
            rep = 11 + if_take(b, 7);
        }
        if (i + rep > nlen + ndist)
            return IF_ERR_REPEAT;
        while (rep--)
            t->lens[i++] = (if_u8)val;
    }
    if (if_overrun(b))
        return IF_ERR_TRUNCATED;
    if (t->lens[256] == 0)
        return IF_ERR_NO_EOB;
    rc = if_build(t->lens, nlen, t->lit, IF_LIT_BITS, t->lit_sorted, &t->lit_c, 1, 0);
    if (rc)
        return rc;
    return if_build(t->lens + nlen, ndist, t->dist, IF_DIST_BITS, t->dist_sorted, &t->dist_c, 1, 1);
}

/* The tables of a fixed-Huffman block (RFC 1951 3.2.6). */
IF_HD void if_fixed_tables(if_tables *t)
{
    for (if_u32 s = 0; s < 288; s++)
        t->lens[s] = (if_u8)(s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8);
    for (if_u32 s = 0; s < 32; s++)
        t->lens[288 + s] = 5;
    if_build(t->lens, 288, t->lit, IF_LIT_BITS, t->lit_sorted, &t->lit_c, 0, 0);
    if_build(t->lens + 288, 32, t->dist, IF_DIST_BITS, t->dist_sorted, &t->dist_c, 0, 0);
}

/* Reads a stored block's LEN and NLEN (after its 3 header bits) and finds
 * its bytes: *start and *len in the input, with room_left the output room;
 * the reader is placed after them. IF_OK or why the block is refused. */
IF_HD int if_stored_span(if_bits *b, if_u32 room_left, if_u32 *startp, if_u32 *lenp)
{
    if_take(b, b->n & 7u); /* to a byte boundary */
    if_refill(b);
    if_u32 len = if_take(b, 16), nlen = if_take(b, 16);
    if (len != (~nlen & 0xffffu))
        return if_overrun(b) ? IF_ERR_TRUNCATED : IF_ERR_STORED_LEN;
    /* n is a multiple of 8 here: the whole bytes still buffered come first */
    if_u32 start = b->pos - b->n / 8u;
    if (start > b->len || b->len - start < len)
        return IF_ERR_TRUNCATED;
    if (room_left < len)
        return IF_ERR_OVERFLOW;
    b->pos = start + len;
    b->bits = 0;
    b->n = 0;
    *startp = start;
    *lenp = len;
    return IF_OK;
}

/* Copies a stored block's bytes. */
IF_HD int if_stored(if_bits *b, if_u8 *out, if_u32 cap, if_u32 *op)
{
    if_u32 start, len;
    int rc = if_stored_span(b, cap - *op, &start, &len);
    if (rc != IF_OK)
        return rc;
    for (if_u32 i = 0; i < len; i++)
        out[*op + i] = b->in[start + i];
    *op += len;
    return IF_OK;
}

/* Copies a match of len bytes from dist bytes back to out[op..]. On the GPU
 * the source was just written to global memory, so each load waits on the
 * memory system: the bytes of a group of 8 (or of the period, when dist is
 * below 8) are all loaded before any is stored. */
IF_HD void if_copy_match(if_u8 *out, if_u32 op, if_u32 dist, if_u32 len)
{
    const if_u8 *src = out + op - dist;
    if_u8 *dst = out + op;
    if_u32 i = 0;
    if (dist >= 8) {
        for (; i + 8 <= len; i += 8) {
            if_u8 b0 = src[i], b1 = src[i + 1], b2 = src[i + 2], b3 = src[i + 3];
            if_u8 b4 = src[i + 4], b5 = src[i + 5], b6 = src[i + 6], b7 = src[i + 7];
            dst[i] = b0, dst[i + 1] = b1, dst[i + 2] = b2, dst[i + 3] = b3;
            dst[i + 4] = b4, dst[i + 5] = b5, dst[i + 6] = b6, dst[i + 7] = b7;
        }
        for (; i < len; i++)
            dst[i] = src[i];
        return;
    }
    /* a period of dist bytes, repeated */
    if_u64 pat = 0;
    for (if_u32 k = 0; k < dist; k++)
        pat |= (if_u64)src[k] << (8 * k);
    for (if_u32 k = 0; i < len; i++) {
        dst[i] = (if_u8)(pat >> (8 * k));
        k = k + 1 == dist ? 0 : k + 1;
    }
}

/* The length (*lenp) and distance (*distp) of a match whose length symbol
 * sym (above 256) was just decoded: its extra bits, its distance code and
 * that code's extra bits. IF_OK or IF_ERR_BAD_SYMBOL. */
IF_HD int if_match(if_bits *b, const if_tables *t, if_u32 sym, if_u32 *lenp, if_u32 *distp)
{
    if (sym > 285)
        return IF_ERR_BAD_SYMBOL;
    if (sym < 265) {
        *lenp = sym - 254;
    } else if (sym < 285) {
        if_u32 extra = (sym - 261) >> 2;
        *lenp = ((4u + ((sym - 265) & 3u)) << extra) + 3u + if_take(b, extra);
    } else {
        *lenp = 258;
    }
    if_refill(b);
    if_u32 ds = if_decode(b, t->dist, IF_DIST_BITS, t->dist_sorted, &t->dist_c);
    if (ds > 29)
        return IF_ERR_BAD_SYMBOL;
    *distp = ds + 1;
    if (ds >= 4) {
        if_u32 extra = (ds >> 1) - 1;
        if_refill(b);
        *distp = ((2u | (ds & 1u)) << extra) + 1u + if_take(b, extra);
    }
    return IF_OK;
}

/* Decodes the symbols of one Huffman block up to its end-of-block code. */
IF_HD int if_codes(if_bits *b, const if_tables *t, if_u8 *out, if_u32 cap, if_u32 *opp)
{
    if_u32 op = *opp;
    for (;;) {
        if_refill(b);
        /* Literals found in the primary table: up to three from one refill
         * (32 bits hold three codes of at most IF_LIT_BITS bits). */
        if_u32 e = t->lit[b->bits & ((1u << IF_LIT_BITS) - 1u)];
        if ((e & 15u) && e < (256u << 4)) {
            int k = 0;
            do {
                b->bits >>= e & 15u; /* consumed first, as if_decode does */
                b->n -= e & 15u;
                if (op >= cap) {
                    *opp = op;
                    return IF_ERR_OVERFLOW;
                }
                out[op++] = (if_u8)(e >> 4);
                e = t->lit[b->bits & ((1u << IF_LIT_BITS) - 1u)];
            } while (++k < 3 && (e & 15u) && e < (256u << 4));
            continue;
        }
        if_u32 sym = if_decode(b, t->lit, IF_LIT_BITS, t->lit_sorted, &t->lit_c);
        if (sym < 256) {
            if (op >= cap) {
                *opp = op;
                return IF_ERR_OVERFLOW;
            }
            out[op++] = (if_u8)sym;
            continue;
        }
        if (sym == 256)
            break;
        if_u32 len, dist;
        int rc = if_match(b, t, sym, &len, &dist);
        if (rc != IF_OK) {
            *opp = op;
            return rc;
        }
        if (dist > op) {
            *opp = op;
            return IF_ERR_FAR;
        }
        if (cap - op < len) {
            *opp = op;
            return IF_ERR_OVERFLOW;
        }
        if_copy_match(out, op, dist, len);
        op += len;
    }
    *opp = op;
    return IF_OK;
}

/* Inflates the raw deflate stream in[0..in_len) into out, which must come
 * out exactly `size` bytes long (the member's ISIZE, at most IF_MAX_OUT).
 * Returns IF_OK or an if_status. */
IF_HD int if_inflate(const if_u8 *in, if_u32 in_len, if_u8 *out, if_u32 size, if_tables *t)
{
    if_bits b = {in, in_len, 0, 0, 0};
    if_u32 op = 0;
    int last = 0, rc = IF_OK;
    while (!last) {
        if_refill(&b);
        last = (int)if_take(&b, 1);
        if_u32 type = if_take(&b, 2);
        if (type == 0) {
            rc = if_stored(&b, out, size, &op);
        } else if (type == 1) {
            if_fixed_tables(t);
            rc = if_codes(&b, t, out, size, &op);
        } else if (type == 2) {
            rc = if_dynamic_tables(&b, t);
            if (!rc)
                rc = if_codes(&b, t, out, size, &op);
        } else {
            rc = IF_ERR_BLOCK_TYPE;
        }
        if (if_overrun(&b))
            return IF_ERR_TRUNCATED;
        if (rc)
            return rc;
    }
    if ((if_u64)b.pos * 8u - b.n + 7u < (if_u64)in_len * 8u)
        return IF_ERR_TRAILING;
    return op == size ? IF_OK : IF_ERR_SIZE;
}

/* CRC-32 (the gzip polynomial, reflected: 0xedb88320). if_crc32_table fills
 * the 256-entry byte table; if_crc32_raw runs the register over bytes with
 * no initial or final inversion. */
IF_HD void if_crc32_table(if_u32 *table, if_u32 i)
{
    if_u32 c = i;
    for (int k = 0; k < 8; k++)
        c = c & 1u ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
}

IF_HD if_u32 if_crc32_raw(const if_u32 *table, if_u32 crc, const if_u8 *p, if_u32 n)
{
    for (if_u32 i = 0; i < n; i++)
        crc = table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return crc;
}

/* a * b mod the CRC polynomial, in the reflected bit order (bit 31 is x^0). */
IF_HD if_u32 if_crc32_mul(if_u32 a, if_u32 b)
{
    if_u32 p = 0;
    for (int k = 0; k < 32; k++) {
        if (a & 0x80000000u)
            p ^= b;
        a <<= 1;
        b = b & 1u ? (b >> 1) ^ 0xedb88320u : b >> 1;
    }
    return p;
}

/* x^(8 * bytes) mod the CRC polynomial, reflected: multiplying a CRC
 * register by it appends `bytes` zero bytes. */
IF_HD if_u32 if_crc32_xpow(if_u32 bytes)
{
    if_u32 r = 0x80000000u, sq = 0x00800000u; /* x^0 and x^8 */
    while (bytes) {
        if (bytes & 1u)
            r = if_crc32_mul(r, sq);
        sq = if_crc32_mul(sq, sq);
        bytes >>= 1;
    }
    return r;
}

/* The CRC-32 of data split into consecutive parts, computed part by part:
 * if_crc32_part gives one part's term, its raw register run from 0 over the
 * part and multiplied by x^(8 * bytes after the part); if_crc32_finish
 * turns the xor of every part's terms into the CRC-32 of all `total` bytes
 * (the initial all-ones register enters once, times x^(8 * total)). Any
 * split works, empty parts included (their term is 0). */
IF_HD if_u32 if_crc32_part(const if_u32 *table, const if_u8 *data, if_u32 start, if_u32 end,
                           if_u32 xpow_after)
{
    return start < end ? if_crc32_mul(if_crc32_raw(table, 0u, data + start, end - start),
                                      xpow_after)
                       : 0u;
}

IF_HD if_u32 if_crc32_finish(if_u32 terms, if_u32 total)
{
    return ~(terms ^ if_crc32_mul(0xffffffffu, if_crc32_xpow(total)));
}

#endif
