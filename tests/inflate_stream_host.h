/* inflate_stream_host.h - one deflate stream decoded the GPU's way on the
 * host: the plan of io/gzip/stream_plan.c, each round's segments decoded by
 * ptx/inflate_stream.h compiled for the host, then the windows passed along
 * and the markers replaced as the kernels do. Header only, for
 * tests/unit/test_inflate_stream.c and tests/fuzz/fuzz_inflate_stream.c. */
#ifndef GPUBATCH_TESTS_INFLATE_STREAM_HOST_H
#define GPUBATCH_TESTS_INFLATE_STREAM_HOST_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/gzip/stream_plan.h"
#include "ptx/inflate_stream.h"

/* The windows and the markers, as the GPU's kernels pass and replace them
 * (ptx/inflate.cu): in groups of ifs_group_size(n) segments, each group's
 * last window as a map of the window before it, then the windows before
 * the groups in order, then the windows within each group; each segment's
 * symbols resolved from the window before it. Writes the batch's bytes to
 * dst and the window after it to window; -1 for a marker into bytes that
 * do not exist. */
static int ish_replace(const stream_plan *p, const uint16_t *syms, uint8_t *window, uint32_t *valid,
                       uint8_t *dst)
{
    uint32_t n = (uint32_t)p->n, group = ifs_group_size(n), ngroups = (n + group - 1) / group;
    uint8_t *wins = malloc(((size_t)n + 1) * IFS_WINDOW);
    uint16_t *maps = malloc((size_t)ngroups * IFS_WINDOW * sizeof *maps);
    uint16_t *next = malloc(IFS_WINDOW * sizeof *next);
    if (!wins || !maps || !next)
        abort();
    memcpy(wins, window, IFS_WINDOW);
    for (uint32_t g = 0; g + 1 < ngroups; g++) {
        uint16_t *map = maps + (size_t)g * IFS_WINDOW;
        for (uint32_t i = g * group; i < (g + 1) * group; i++) {
            const ifs_seg *s = &p->segs[i];
            for (uint32_t q = 0; q < IFS_WINDOW; q++) {
                if_u32 v = ifs_tail(syms + s->sym_off, s->nout, q);
                next[q] = (uint16_t)(i > g * group ? ifs_compose(v, map) : v);
            }
            memcpy(map, next, IFS_WINDOW * sizeof *next);
        }
    }
    for (uint32_t g = 1; g < ngroups; g++)
        for (uint32_t q = 0; q < IFS_WINDOW; q++)
            wins[(size_t)g * group * IFS_WINDOW + q] =
                ifs_apply(maps[(size_t)(g - 1) * IFS_WINDOW + q],
                          wins + (size_t)(g - 1) * group * IFS_WINDOW);
    for (uint32_t i = 0; i < n; i++) {
        if ((i + 1) % group == 0 && i + 1 < n)
            continue; /* the window before the next group: done above */
        const ifs_seg *s = &p->segs[i];
        for (uint32_t q = 0; q < IFS_WINDOW; q++)
            wins[(size_t)(i + 1) * IFS_WINDOW + q] =
                ifs_apply(ifs_tail(syms + s->sym_off, s->nout, q), wins + (size_t)i * IFS_WINDOW);
    }
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ifs_seg *s = &p->segs[i];
        uint64_t before = *valid + s->out_pos;
        uint32_t v = before > IFS_WINDOW ? IFS_WINDOW : (uint32_t)before;
        for (uint32_t k = 0; k < s->nout; k++)
            dst[s->out_pos + k] =
                ifs_resolve(syms[s->sym_off + k], wins + (size_t)i * IFS_WINDOW, v, &bad);
    }
    memcpy(window, wins + (size_t)n * IFS_WINDOW, IFS_WINDOW);
    *valid = *valid + p->nout > IFS_WINDOW ? IFS_WINDOW : *valid + (uint32_t)p->nout;
    free(wins);
    free(maps);
    free(next);
    return bad ? -1 : 0;
}

typedef struct {
    uint64_t step;    /* segment length in bits */
    uint32_t cap;     /* room per segment in symbols */
    size_t batch;     /* compressed bytes per batch (0: the whole stream) */
    int gave_up;      /* out: batches the plan gave up */
    size_t margin; /* stream_plan_batch_stop's margin (0: each batch starts where the one before
                      ended) */
} ish_opts;

/* batches decoded again, given more room, segments decoded again in
 * pieces, batches whose first block was searched for (read ahead), and
 * those read ahead but decoded again from where the batch before ended
 * (it ended before their search began, or they could not go on from it) */
static int ish_redone, ish_roomier, ish_batches, ish_pieced, ish_ahead, ish_ahead_missed;
static int ish_max_rounds; /* the most rounds one batch took */

/* Decodes the stream in[0..len) the GPU's way into out (room out_cap), in
 * batches of o->batch compressed bytes, as runtime/gzip/gzstream.c does: a
 * batch that stops o->margin bytes before its end (stream_plan_batch_stop) has the
 * next one searched for from there; where that one cannot go on from
 * where this one ended, it is decoded again from there. Returns the
 * stream's length, or -1 where the plan gave up or the stream is cut. */
static inline long ish_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap, ish_opts *o)
{
    enum { MAX_SEGS = 4096 };
    static ifs_seg segs[MAX_SEGS];
    static int todo[MAX_SEGS];
    static if_tables t;
    static uint8_t window[IFS_WINDOW];
    uint32_t valid = 0;
    uint64_t bit = 0, total = 0, ahead = IFS_NONE; /* ahead: the byte the next search begins at */
    for (;;) {
        int searched = ahead != IFS_NONE && ahead <= bit / 8;
        ish_ahead_missed += ahead != IFS_NONE && !searched;
        size_t first = searched ? (size_t)ahead : (size_t)(bit / 8);
        ahead = IFS_NONE;
        size_t blen = o->batch && len - first > o->batch ? o->batch : len - first;
        int last = first + blen == len;
        const uint8_t *bin = in + first;
        uint64_t begin = bit - (uint64_t)first * 8;
        uint64_t stop = stream_plan_batch_stop(first, blen, len, o->margin);
        uint64_t nseg = (blen * 8 - (searched ? 0 : begin) + o->step - 1) / o->step + 1;
        uint64_t sym_cap = (nseg * 2 + 8) * o->cap + (4u << 20);
        uint16_t *syms = malloc(sym_cap * sizeof *syms);
        if (!syms)
            abort();
        stream_plan p;
        stream_plan_init(&p, segs, todo, MAX_SEGS, blen, searched ? 0 : begin, !searched, stop,
                         o->step, o->cap, sym_cap);
        if (searched)
            stream_plan_begin_at(&p, begin);
        int r;
        for (;;) {
            for (int k = 0; k < p.ntodo; k++)
                ifs_segment(bin, (if_u32)blen, &p.segs[p.todo[k]], syms, &t);
            r = stream_plan_check(&p, bin, blen, last);
            if (r != STREAM_PLAN_ROUND)
                break;
        }
        ish_batches++;
        ish_max_rounds = p.rounds > ish_max_rounds ? p.rounds : ish_max_rounds;
        ish_ahead += searched;
        ish_redone += p.rounds > 1;
        ish_pieced += p.pieced;
        ish_roomier += p.sym_used > (uint64_t)p.n * o->cap;
        if (searched && (r == STREAM_PLAN_GIVE_UP || (!p.final && first * 8 + p.end <= bit))) {
            free(syms); /* decoded again from where the batch before ended */
            ish_ahead_missed++;
            continue;
        }
        if (r == STREAM_PLAN_GIVE_UP || total + p.nout > out_cap) {
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
        if (stop != IFS_NONE)
            ahead = first + stop / 8;
    }
}

#endif
