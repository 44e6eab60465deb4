/* inflate_stream_host.h - one deflate stream decoded the GPU's way on the
 * host: the plan of io/stream_plan.c, each round's segments decoded by
 * ptx/inflate_stream.h compiled for the host, then the windows passed along
 * and the markers replaced as the kernels do. Header only, for
 * tests/unit/test_inflate_stream.c and tests/fuzz/fuzz_inflate_stream.c. */
#ifndef GPUBATCH_TESTS_INFLATE_STREAM_HOST_H
#define GPUBATCH_TESTS_INFLATE_STREAM_HOST_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/stream_plan.h"
#include "ptx/inflate_stream.h"

/* The windows and the markers, as the GPU replaces them: each segment's
 * window is the 32 KiB before it, from the window before the batch and the
 * segments before it. Writes the batch's bytes to dst; -1 for a marker
 * into bytes that do not exist. */
static int ish_replace(const sp_plan *p, const uint16_t *syms, uint8_t *window, uint32_t *valid,
                       uint8_t *dst)
{
    int bad = 0;
    for (int i = 0; i < p->n; i++) {
        const ifs_seg *s = &p->segs[i];
        for (uint32_t k = 0; k < s->nout; k++)
            dst[s->out_pos + k] = ifs_resolve(syms[s->sym_off + k], window, *valid, &bad);
        /* the next window: the last IFS_WINDOW bytes of window + output */
        uint8_t next[IFS_WINDOW];
        for (uint32_t q = 0; q < IFS_WINDOW; q++) {
            int64_t from = (int64_t)s->nout - IFS_WINDOW + q;
            next[q] = from >= 0 ? dst[s->out_pos + (uint64_t)from] : window[IFS_WINDOW + from];
        }
        memcpy(window, next, IFS_WINDOW);
        *valid = *valid + s->nout > IFS_WINDOW ? IFS_WINDOW : *valid + s->nout;
    }
    return bad ? -1 : 0;
}

typedef struct {
    uint64_t step;    /* segment length in bits */
    uint32_t cap;     /* room per segment in symbols */
    size_t batch;     /* compressed bytes per batch (0: the whole stream) */
    int gave_up;      /* out: batches the plan gave up */
} ish_opts;

/* batches decoded again, given more room, and segments decoded again in pieces */
static int ish_redone, ish_roomier, ish_batches, ish_pieced;

/* Decodes the stream in[0..len) the GPU's way into out (room out_cap), in
 * batches of o->batch compressed bytes; returns its length, or -1 where
 * the plan gave up or the stream is cut. */
static long ish_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap, ish_opts *o)
{
    enum { MAX_SEGS = 4096 };
    static ifs_seg segs[MAX_SEGS];
    static int todo[MAX_SEGS];
    static if_tables t;
    static uint8_t window[IFS_WINDOW];
    uint32_t valid = 0;
    uint64_t bit = 0, total = 0;
    for (;;) {
        size_t first = (size_t)(bit / 8);
        size_t blen = o->batch && len - first > o->batch ? (size_t)(bit / 8 - first) + o->batch
                                                         : len - first;
        int last = first + blen == len;
        const uint8_t *bin = in + first;
        uint64_t bstart = bit - (uint64_t)first * 8;
        uint64_t nseg = (blen * 8 - bstart + o->step - 1) / o->step + 1;
        uint64_t sym_cap = (nseg * 2 + 8) * o->cap + (4u << 20);
        uint16_t *syms = malloc(sym_cap * sizeof *syms);
        if (!syms)
            abort();
        sp_plan p;
        sp_init(&p, segs, todo, MAX_SEGS, blen, bstart, o->step, o->cap, sym_cap);
        int r;
        for (;;) {
            for (int k = 0; k < p.ntodo; k++)
                ifs_segment(bin, (if_u32)blen, &p.segs[p.todo[k]], syms, &t);
            r = sp_check(&p, bin, blen, last);
            if (r != SP_ROUND)
                break;
        }
        ish_batches++;
        ish_redone += p.rounds > 1;
        ish_pieced += p.pieced;
        ish_roomier += p.sym_used > (uint64_t)p.n * o->cap;
        if (r == SP_GIVE_UP || total + p.nout > out_cap) {
            free(syms);
            o->gave_up++;
            return -1;
        }
        int bad = ish_replace(&p, syms, window, &valid, out + total);
        free(syms);
        if (bad) {
            o->gave_up++;
            return -1;
        }
        total += p.nout;
        bit = (uint64_t)first * 8 + p.end;
        if (p.final)
            return (long)total;
        if (last)
            return -1;
    }
}

#endif
