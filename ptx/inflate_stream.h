/* inflate_stream.h - one deflate stream (a gzip member that is not BGZF)
 * decoded in segments at once, compiled both as CUDA (ptx/inflate.cu: one
 * GPU thread per segment) and as C (the host tests), from the decoder of
 * ptx/inflate_math.h.
 *
 * The compressed stream is cut at nominal bit offsets into segments. A
 * segment whose true start is not known begins at the first bit offset at
 * or after its nominal start where a findable block starts (ifs_block_ok: a
 * non-final dynamic block whose codes are valid and complete, or a non-final
 * stored block whose LEN and NLEN agree) and, should decoding from there
 * fail, at the next such offset. It decodes whole blocks into 16-bit
 * symbols: a byte, or a marker (IFS_MARKER + i) for byte i of the 32 KiB
 * window before the segment, which is not known yet. It stops at the first
 * block boundary at or past the next segment's nominal start where a
 * findable block follows, so that, on the true path, it ends exactly where
 * the next segment's search begins decoding. The caller then checks that
 * every segment began where the one before it ended, decodes again from the
 * true boundary where one did not, passes the windows along in order and
 * replaces the markers. */
#ifndef GPUBATCH_PTX_INFLATE_STREAM_H
#define GPUBATCH_PTX_INFLATE_STREAM_H

#include "inflate_math.h"

#define IFS_WINDOW 32768u   /* the farthest a deflate stream refers back */
#define IFS_MARKER 0x8000u  /* symbol IFS_MARKER + i: byte i of the unknown window */
#define IFS_NONE (~0ull)    /* no bit offset */

/* How a segment's decode ended. Every status but IFS_BAD and IFS_NOSTART
 * leaves end/nout at a block boundary. */
enum ifs_status {
    IFS_STOP = 0,    /* at a boundary past `stop` with a findable block next */
    IFS_FINAL = 1,   /* after the final block */
    IFS_FULL = 2,    /* the next block does not fit in the room left */
    IFS_INPUT = 3,   /* the input ends inside the next block */
    IFS_BAD = 4,     /* invalid data (from an exact start), or no start decoded */
    IFS_NOSTART = 5, /* no findable block between the nominal start and `search_end` */
};

/* One segment: the caller fills the "in" fields, the decoder the "out" ones. */
typedef struct {
    if_u64 start;      /* in: the nominal start; out: where decoding began */
    if_u64 search_end; /* in: a speculative start is searched for below this bit */
    if_u64 stop;       /* in: stop at the first findable boundary at or past this bit */
    if_u64 sym_off;    /* in: where its symbols go in the symbol buffer */
    if_u64 out_pos;    /* in (marker replacement): where its bytes go in the output */
    if_u64 end;        /* out: the bit after its last block */
    if_u32 cap;        /* in: room for symbols */
    if_u32 exact;      /* in: start is a known block boundary (no search) */
    if_u32 nout;       /* out: symbols written */
    if_u32 status;     /* out: an ifs_status */
} ifs_seg;

/* Reads the 57 or more bits at bit offset `bit` (zeros past len). */
IF_HD if_u64 ifs_peek(const if_u8 *in, if_u32 len, if_u64 bit)
{
    if_u32 byte = (if_u32)(bit >> 3);
    if_u64 w = byte <= len && len - byte >= 8u
                   ? if_load64(in, byte)
                   : (if_u64)if_load32(in, len, byte) | (if_u64)if_load32(in, len, byte + 4) << 32;
    return w >> (bit & 7u);
}

/* The cheap half of ifs_block_ok, which needs no tables: 2 where a
 * dynamic block's header passes (the code-length code complete), 1 where a
 * stored block's LEN and NLEN agree, else 0. Both tests are computed
 * whatever the block type, with no branch or table, since on the GPU 32
 * lanes run it side by side for 32 bit offsets. */
IF_HD int ifs_precheck(const if_u8 *in, if_u32 len, if_u64 bit)
{
    if (bit + 3 > (if_u64)len * 8u)
        return 0;
    if_u64 w = ifs_peek(in, len, bit);
    if_u32 head = (if_u32)(w & 7u);
    /* BFINAL 0, BTYPE 2: HLIT and HDIST in range, and the code-length code
     * complete: the sum of 2^(7 - length) over its HCLEN + 4 lengths (0 for
     * length 0) is 2^7 */
    if_u32 ncode = (if_u32)((w >> 13) & 15u) + 4u;
    if_u64 lens = ifs_peek(in, len, bit + 17) & ((1ull << (3u * ncode)) - 1u);
    if_u32 kraft = 0;
    for (if_u32 i = 0; i < 19; i++)
        kraft += (0x80u >> ((if_u32)(lens >> (3u * i)) & 7u)) & 0x7fu;
    int dynamic = head == 4u && ((w >> 3) & 31u) <= 29u && ((w >> 8) & 31u) <= 29u &&
                  kraft == 128u;
    /* BFINAL 0, BTYPE 0: LEN and NLEN, at the next byte boundary, agree */
    if_u64 at = (bit + 3u + 7u) & ~(if_u64)7u;
    if_u32 v = (if_u32)ifs_peek(in, len, at);
    int stored = head == 0u && at + 32u <= (if_u64)len * 8u && (v & 0xffffu) == (~v >> 16);
    return dynamic ? 2 : stored ? 1 : 0;
}

/* Whether a non-final dynamic block with valid, complete codes or a
 * non-final stored block whose LEN and NLEN agree starts at `bit` (the
 * block starts the host's io/inflate.c finds too); t is scratch. */
IF_HD int ifs_block_ok(const if_u8 *in, if_u32 len, if_u64 bit, if_tables *t)
{
    int pre = ifs_precheck(in, len, bit);
    if (pre != 2)
        return pre;
    if_bits b = {in, len, (if_u32)(bit >> 3), 0, 0};
    if_refill(&b);
    if_take(&b, (if_u32)(bit & 7u) + 3u);
    return if_dynamic_tables(&b, t) == IF_OK;
}

#ifdef __CUDACC__
/* On the GPU a warp runs a segment: its lanes test 32 bit offsets at once
 * for the start (each with tables of its own, in local memory, where the
 * cheap test passes), and lane 0 decodes (with the tables t, in shared
 * memory). */
#define IFS_LANE0 ((threadIdx.x & 31u) == 0u)
#define IFS_FROM_LANE0(v) __shfl_sync(0xffffffffu, (v), 0)

/* The first bit offset in [from, to) where ifs_block_ok holds, or IFS_NONE:
 * every lane of the warp calls it. */
__device__ __forceinline__ if_u64 ifs_find(const if_u8 *in, if_u32 len, if_u64 from, if_u64 to,
                                           if_tables *t)
{
    (void)t;
    if_tables mine;
    for (if_u64 base = from; base < to; base += 32u) {
        if_u64 bit = base + (threadIdx.x & 31u);
        int ok = bit < to && ifs_precheck(in, len, bit) && ifs_block_ok(in, len, bit, &mine);
        unsigned pass = __ballot_sync(0xffffffffu, ok);
        if (pass)
            return base + (unsigned)(__ffs(pass) - 1);
    }
    return IFS_NONE;
}
#else
#define IFS_LANE0 1
#define IFS_FROM_LANE0(v) (v)

/* The first bit offset in [from, to) where ifs_block_ok holds, or IFS_NONE:
 * one thread tests every offset, so the block type's three bits (a
 * non-final dynamic or stored block) are looked at before the rest. */
IF_HD if_u64 ifs_find(const if_u8 *in, if_u32 len, if_u64 from, if_u64 to, if_tables *t)
{
    for (if_u64 bit = from; bit < to; bit++) {
        if_u32 head = (if_u32)ifs_peek(in, len, bit) & 7u;
        if ((head == 4u || head == 0u) && ifs_precheck(in, len, bit) &&
            ifs_block_ok(in, len, bit, t))
            return bit;
    }
    return IFS_NONE;
}
#endif

/* Writes a match of len symbols from dist back at out[op..]: those before
 * the segment's first symbol become markers into the window. */
IF_HD void ifs_copy_match(if_u16 *out, if_u32 op, if_u32 dist, if_u32 len)
{
    if (dist <= op) {
        const if_u16 *src = out + op - dist;
        for (if_u32 i = 0; i < len; i++)
            out[op + i] = src[i];
        return;
    }
    for (if_u32 i = 0; i < len; i++) {
        if_u32 from = op + i + IFS_WINDOW - dist; /* in window coordinates */
        out[op + i] = from < IFS_WINDOW ? (if_u16)(IFS_MARKER + from) : out[from - IFS_WINDOW];
    }
}

/* Literals ifs_codes takes from one 56-bit refill: six codes of at most
 * IF_LIT_BITS bits, which leaves the 9 bits of every lookup within the 64
 * the refill loaded. */
#define IFS_GROUP 6u

/* The symbols of one Huffman block, up to its end-of-block code, with
 * markers for bytes before the segment. Where at least 8 input bytes and
 * IFS_GROUP symbols of room are left, a refill of whole bytes is followed by
 * up to IFS_GROUP literals of the primary table with no check between them;
 * anything else (a length, the end of the block, a longer code, the last
 * bytes of the input or of the room) is decoded one symbol at a time. */
IF_HD int ifs_codes(if_bits *b, const if_tables *t, if_u16 *out, if_u32 cap, if_u32 *opp)
{
    const if_u32 mask = (1u << IF_LIT_BITS) - 1u, literal_end = 256u << 4;
    if_u32 op = *opp;
    int rc = IF_OK;
    for (;;) {
        if (b->pos + 8u <= b->len && cap - op >= IFS_GROUP) {
            if_refill56(b);
            if_u32 e = t->lit[b->bits & mask];
            /* a primary entry below literal_end is a literal */
            if (e < literal_end) {
                if_u16 *o = out + op;
                if_u32 k = 0;
#ifdef __CUDACC__
#pragma unroll
#endif
                for (if_u32 i = 0; i < IFS_GROUP; i++) {
                    b->bits >>= e & 15u;
                    b->n -= e & 15u;
                    o[i] = (if_u16)(e >> 4);
                    k = i + 1u;
                    e = t->lit[b->bits & mask];
                    if (e >= literal_end)
                        break;
                }
                op += k;
                continue;
            }
        }
        if_refill(b);
        if_u32 sym = if_decode(b, t->lit, IF_LIT_BITS, t->lit_sorted, &t->lit_c);
        if (sym < 256) {
            if (op >= cap) {
                rc = IF_ERR_OVERFLOW;
                goto out;
            }
            out[op++] = (if_u16)sym;
            continue;
        }
        if (sym == 256)
            break;
        if_u32 len, dist;
        if ((rc = if_match(b, t, sym, &len, &dist)) != IF_OK)
            goto out;
        if (cap - op < len) {
            rc = IF_ERR_OVERFLOW;
            goto out;
        }
        ifs_copy_match(out, op, dist, len);
        op += len;
    }
out:
    *opp = op;
    return rc;
}

/* A stored block's bytes as symbols (after its 3 header bits). */
IF_HD int ifs_stored(if_bits *b, if_u16 *out, if_u32 cap, if_u32 *op)
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

/* Decodes whole blocks from bit `start` (see the file comment); *end and
 * *nout get the last block boundary reached. Returns an ifs_status. */
IF_HD int ifs_decode(const if_u8 *in, if_u32 len, if_u64 start, if_u64 stop, if_u16 *out,
                     if_u32 cap, if_tables *t, if_u64 *end, if_u32 *nout)
{
    if_bits b = {in, len, (if_u32)(start >> 3), 0, 0};
    if_refill(&b);
    if_take(&b, (if_u32)(start & 7u));
    if_u32 op = 0;
    for (;;) {
        if_u64 bit = (if_u64)b.pos * 8u - b.n;
        *end = bit;
        *nout = op;
        if (bit >= (if_u64)len * 8u)
            return IFS_INPUT;
        if (bit >= stop && ifs_block_ok(in, len, bit, t))
            return IFS_STOP;
        if_refill(&b);
        if_u32 last = if_take(&b, 1), type = if_take(&b, 2);
        int rc;
        if (type == 0) {
            rc = ifs_stored(&b, out, cap, &op);
        } else if (type == 1) {
            if_fixed_tables(t);
            rc = ifs_codes(&b, t, out, cap, &op);
        } else if (type == 2) {
            rc = if_dynamic_tables(&b, t);
            if (rc == IF_OK)
                rc = ifs_codes(&b, t, out, cap, &op);
        } else {
            rc = IF_ERR_BLOCK_TYPE;
        }
        if (if_overrun(&b) || rc == IF_ERR_TRUNCATED)
            return IFS_INPUT;
        if (rc == IF_ERR_OVERFLOW)
            return IFS_FULL;
        if (rc != IF_OK)
            return IFS_BAD;
        if (last) {
            *end = (if_u64)b.pos * 8u - b.n;
            *nout = op;
            return IFS_FINAL;
        }
    }
}

/* Bytes after a final block within which the input may end: its gzip
 * trailer, and slack. */
#define IFS_TAIL_BYTES 64u

/* Whether a final block that ends at bit `end` of in[0..len) is taken at
 * once where a speculative start decoded to it: the input ends within
 * IFS_TAIL_BYTES after it, or its gzip trailer is followed by another
 * member's magic. Any other is most likely false: bits that are not a
 * block boundary decode as complete codes until one of their "blocks"
 * happens to be final. */
IF_HD int ifs_final_trusted(const if_u8 *in, if_u64 len, if_u64 end)
{
    if_u64 after = (end + 7u) / 8u + 8u; /* the byte after the trailer */
    return end + IFS_TAIL_BYTES * 8u >= len * 8u ||
           (after + 2u <= len && in[after] == 0x1fu && in[after + 1u] == 0x8bu);
}

/* Decodes segment s: from its start when exact, else from the first
 * findable block at or after it, moving on to the next one wherever a
 * speculative start does not decode, or ends in a final block that
 * ifs_final_trusted does not take: such a start is taken only where no
 * later one decodes.
 * On the GPU every lane of a warp calls it, and the results are lane 0's. */
IF_HD void ifs_segment(const if_u8 *in, if_u32 len, ifs_seg *s, if_u16 *syms, if_tables *t)
{
    if_u64 start = s->start, end = start, early_final = IFS_NONE;
    if_u32 nout = 0;
    int st = IFS_NOSTART;
    for (;;) {
        int fallback = 0; /* decoding the early final start again: no other one decodes */
        if (!s->exact) {
            if_u64 at = ifs_find(in, len, start, s->search_end, t);
            if (at == IFS_NONE && early_final == IFS_NONE) {
                st = IFS_NOSTART;
                break;
            }
            fallback = at == IFS_NONE;
            start = fallback ? early_final : at;
        }
        if (IFS_LANE0)
            st = ifs_decode(in, len, start, s->stop, syms + s->sym_off, s->cap, t, &end, &nout);
        st = IFS_FROM_LANE0(st);
        nout = IFS_FROM_LANE0(nout);
        end = IFS_FROM_LANE0(end);
        if (s->exact || fallback)
            break;
        if (st == IFS_FINAL && !ifs_final_trusted(in, len, end)) {
            if (early_final == IFS_NONE)
                early_final = start;
        } else if (st != IFS_BAD && !(st == IFS_INPUT && nout == 0)) {
            break;
        }
        start++;
    }
    s->start = start;
    s->end = end;
    s->nout = nout;
    s->status = (if_u32)st;
}

/* The byte of symbol v, with the window before its segment (w: IFS_WINDOW
 * bytes, of which the first IFS_WINDOW - valid do not exist); *bad is set
 * for a marker into the part that does not exist. */
IF_HD if_u8 ifs_resolve(if_u32 v, const if_u8 *w, if_u32 valid, int *bad)
{
    if (v < 256u)
        return (if_u8)v;
    if_u32 i = v - IFS_MARKER;
    if (i < IFS_WINDOW - valid)
        *bad = 1;
    return w[i & (IFS_WINDOW - 1u)];
}

/* Entry p of the window after a segment of nout symbols sym, as a map of
 * the window before the segment: a byte (below 256), or IFS_MARKER + i for
 * byte i of the window before (which positions before the segment's first
 * symbol are). */
IF_HD if_u32 ifs_tail(const if_u16 *sym, if_u32 nout, if_u32 p)
{
    if_u32 back = IFS_WINDOW - p; /* symbols from the segment's end */
    return nout >= back ? sym[nout - back] : IFS_MARKER + p + nout;
}

/* A map entry v (a byte, or IFS_MARKER + i) of the window before `map`
 * (itself a map of an earlier window) as an entry of that earlier window. */
IF_HD if_u32 ifs_compose(if_u32 v, const if_u16 *map)
{
    return v < 256u ? v : map[v - IFS_MARKER];
}

/* A map entry v as a byte, from the window w it maps. No check: a marker
 * into bytes that do not exist is found where a segment's own symbols are
 * resolved (ifs_resolve), since every byte of a window is one of them. */
IF_HD if_u8 ifs_apply(if_u32 v, const if_u8 *w)
{
    return v < 256u ? (if_u8)v : w[(v - IFS_MARKER) & (IFS_WINDOW - 1u)];
}

/* The windows of a batch's n segments are passed along in groups of this
 * many: each group's last window as a map of the window before it (all
 * groups at once), then the windows before the groups (one after the
 * other), then the windows within each group (all groups at once). About
 * the square root of n / 2 balances the walks. */
IF_HD if_u32 ifs_group_size(if_u32 n)
{
    if_u32 g = 1;
    while (2u * g * g < n)
        g++;
    return g;
}

#endif
