/* stream_plan.c - segments of one deflate stream: the plan and its checks
 * (see stream_plan.h). */
#include "stream_plan.h"

#include "inflate.h"

#define SP_MAX_ROUNDS 64 /* more rounds than this: the data is not worth it */
#define SP_REDO_PIECES 8 /* a segment decoded again is cut into this many pieces at most */
#define SP_PIECE_MIN 1024u /* bits of a piece at the least */

/* Segment i of the plan, nominally from bit `from` for `bits` bits (the
 * last one stops where the batch does). */
static void sp_segment(stream_plan *p, int i, uint64_t from, uint64_t bits, uint32_t cap,
                       int last_one)
{
    ifs_seg *s = &p->segs[i];
    s->start = from;
    s->search_end = from + bits;
    s->stop = last_one ? p->stop : from + bits;
    s->sym_off = p->sym_used;
    s->out_pos = 0;
    s->end = from;
    s->cap = cap;
    s->exact = 0;
    s->nout = 0;
    s->status = IFS_NOSTART;
    p->sym_used += cap;
    p->todo[p->ntodo++] = i;
}

/* Cuts the batch into segments (see stream_plan.h). */
void stream_plan_init(stream_plan *p, ifs_seg *segs, int *todo, int max, size_t len, uint64_t start,
                      int exact, uint64_t stop, uint64_t step, uint32_t cap, uint64_t sym_cap)
{
    p->segs = segs;
    p->todo = todo;
    p->max = max;
    p->good = 0;
    p->final = 0;
    p->rounds = 0;
    p->ntodo = 0;
    p->sym_used = 0;
    p->sym_cap = sym_cap;
    p->end = start;
    p->stop = stop;
    p->begin = exact ? start : IFS_NONE;
    p->nout = 0;
    p->pieced = 0;
    p->why = 0;
    p->piece = step / SP_REDO_PIECES > SP_PIECE_MIN ? step / SP_REDO_PIECES : SP_PIECE_MIN;
    if (cap > sym_cap)
        cap = (uint32_t)sym_cap; /* a segment's room lies within the buffer */
    uint64_t until = stop != IFS_NONE && stop < (uint64_t)len * 8 ? stop : (uint64_t)len * 8;
    uint64_t bits = until > start ? until - start : 1;
    /* a quarter of the segments' room is kept for the rest of full ones */
    uint64_t n = (bits + step - 1) / step, room = cap ? sym_cap / cap * 3 / 4 : 1;
    if (room < 1)
        room = 1;
    if (n > (uint64_t)max / 2)
        n = (uint64_t)max / 2 > 0 ? (uint64_t)max / 2 : 1;
    if (n > room)
        n = room;
    step = (bits + n - 1) / n;
    p->n = (int)n;
    for (int i = 0; i < p->n; i++)
        sp_segment(p, i, start + (uint64_t)i * step, step, cap, i == p->n - 1);
    p->segs[0].exact = exact;
}

/* Room per compressed byte for a ratio (see stream_plan.h). */
uint32_t stream_plan_room(double ratio)
{
    double room = ratio * 1.1;
    if (!(room > STREAM_PLAN_ROOM_MIN)) /* NaN too */
        return STREAM_PLAN_ROOM_MIN;
    return room >= STREAM_PLAN_ROOM_MAX ? STREAM_PLAN_ROOM_MAX : (uint32_t)room + 1;
}

/* A batch's compressed bytes for a room (see stream_plan.h). */
size_t stream_plan_span(uint64_t sym_cap, uint32_t room, size_t least, size_t most)
{
    uint64_t span = sym_cap / 4 * 3 / (room ? room : 1);
    return span < least ? least : span > most ? most : (size_t)span;
}

/* Where a batch's plan stops (see stream_plan.h). */
uint64_t stream_plan_batch_stop(uint64_t base, size_t len, uint64_t end, size_t margin)
{
    return base + len < end && margin && len >= 2 * margin ? (uint64_t)(len - margin) * 8
                                                           : IFS_NONE;
}

/* Says where a plan whose start was searched for must begin (see
 * stream_plan.h). */
void stream_plan_begin_at(stream_plan *p, uint64_t bit)
{
    p->begin = bit;
}

/* Room for the rest of segment `done`, which filled its room: its own
 * room, or more where the ratio it decoded at says the rest needs more (a
 * tenth more than that), so that text, many bytes to a compressed one,
 * takes one more round rather than one per room's worth. */
static uint64_t sp_rest_room(const ifs_seg *done)
{
    uint64_t bits = done->end > done->start ? done->end - done->start : 0;
    uint64_t rest = done->search_end > done->end ? done->search_end - done->end : 0;
    double want = bits ? (double)done->nout * (double)rest / (double)bits * 1.1 : 0;
    return want > done->cap ? (want < (double)UINT32_MAX ? (uint64_t)want : UINT32_MAX) : done->cap;
}

/* Puts a new segment after good segment i for the rest of its part (i
 * filled its room), with the room sp_rest_room asks for as far as the
 * pool has it; 0, or -1 when there is no room for one. */
static int sp_split(stream_plan *p, int i)
{
    if (p->n >= p->max || p->sym_used >= p->sym_cap)
        return -1;
    ifs_seg done = p->segs[i];
    for (int k = p->n; k > i + 1; k--)
        p->segs[k] = p->segs[k - 1];
    p->n++;
    uint64_t left = p->sym_cap - p->sym_used, want = sp_rest_room(&done);
    uint32_t cap = (uint32_t)(left < want ? left : want);
    uint64_t bits = done.search_end - done.end;
    sp_segment(p, i + 1, done.end, bits, cap, done.stop == IFS_NONE);
    p->segs[i + 1].exact = 1;
    p->segs[i + 1].stop = done.stop;
    p->segs[i + 1].search_end = done.search_end;
    return 0;
}

/* Lists segment i, which did not begin where the one before it ended (at
 * bit `want`), to be decoded again from there. A round lasts as long as
 * its longest segment, so the part [want, stop) is cut into pieces: the
 * first decoded from want, the others searching for their first block as
 * a plan's segments do, each with its share of i's room; a piece that
 * begins wrong is cut again in the next round. Returns the number of
 * segments i became. */
static int sp_redo(stream_plan *p, int i, uint64_t want)
{
    ifs_seg *s = &p->segs[i];
    uint64_t bits = s->stop != IFS_NONE && s->stop > want ? s->stop - want : 0;
    int k = (int)(bits / p->piece < SP_REDO_PIECES ? bits / p->piece : SP_REDO_PIECES);
    if (k > p->max - p->n + 1)
        k = p->max - p->n + 1;
    if (k < 2 || s->cap < (uint32_t)k) {
        s->start = want;
        s->exact = 1;
        p->todo[p->ntodo++] = i;
        return 1;
    }
    ifs_seg whole = *s;
    p->pieced++;
    for (int m = p->n - 1; m > i; m--)
        p->segs[m + k - 1] = p->segs[m];
    p->n += k - 1;
    uint64_t len = (bits + (uint64_t)k - 1) / (uint64_t)k;
    uint32_t room = whole.cap / (uint32_t)k;
    for (int j = 0; j < k; j++) {
        ifs_seg *q = &p->segs[i + j];
        uint64_t from = want + (uint64_t)j * len;
        *q = whole;
        q->start = q->end = from;
        q->stop = j == k - 1 ? whole.stop : from + len;
        q->search_end = q->stop;
        q->sym_off = whole.sym_off + (uint64_t)j * room;
        q->cap = j == k - 1 ? whole.cap - (uint32_t)j * room : room;
        q->exact = j == 0;
        q->nout = 0;
        q->status = IFS_NOSTART;
        p->todo[p->ntodo++] = i + j;
    }
    return k;
}

/* Where segment i filled its room after some blocks: a new segment after
 * it for the rest of its part (sp_split), and i then stops where that one
 * begins. 1 when split, 0 when i is not such a segment, -1 when there is no
 * room for another. */
static int sp_split_full(stream_plan *p, int i)
{
    if (p->segs[i].status != IFS_FULL || p->segs[i].nout == 0)
        return 0;
    if (sp_split(p, i) < 0)
        return -1;
    p->segs[i].status = IFS_STOP;
    return 1;
}

/* Gives segment i (whose first block did not fit) more room, from what is
 * left of the symbol buffer, and lists it again; -1 when there is none. */
static int sp_grow(stream_plan *p, int i)
{
    ifs_seg *s = &p->segs[i];
    uint64_t left = p->sym_cap - p->sym_used, want = (uint64_t)s->cap * 8;
    uint32_t cap = (uint32_t)(left < want ? left : want);
    if (cap <= s->cap)
        return -1;
    s->sym_off = p->sym_used;
    s->cap = cap;
    s->exact = 1;
    p->sym_used += cap;
    p->todo[p->ntodo++] = i;
    return 0;
}

/* Sets each good segment's place in the batch's output, and the totals. */
static int sp_finish(stream_plan *p, int n, int final)
{
    uint64_t pos = 0;
    for (int i = 0; i < n; i++) {
        p->segs[i].out_pos = pos;
        pos += p->segs[i].nout;
    }
    p->n = n;
    p->good = n;
    p->final = final;
    p->nout = pos;
    p->end = p->segs[n - 1].end;
    return STREAM_PLAN_DONE;
}

/* Gives up for reason `why` (stream_plan_why). */
static int sp_give_up(stream_plan *p, int why)
{
    p->why = why;
    return STREAM_PLAN_GIVE_UP;
}

/* Checks the chain after a round (see stream_plan.h). Segments past the
 * first one not yet good are checked too, against the ends their
 * predecessors reached so far, so that one round decodes again every
 * segment that did not begin where the one before it ended. */
int stream_plan_check(stream_plan *p, const uint8_t *in, size_t len, int last)
{
    p->ntodo = 0;
    if (++p->rounds > SP_MAX_ROUNDS)
        return sp_give_up(p, STREAM_PLAN_UNSOUND);
    int trusted = 1; /* the end of the segment before can be compared with */
    for (int i = p->good; i < p->n; i++) {
        ifs_seg *s = &p->segs[i];
        int frontier = i == p->good;
        if (i > 0 && !trusted) {
            /* a full one goes on at once, as if it began right: the remainders of every
               full segment are decoded in one round, not one round each */
            int split = sp_split_full(p, i) == 1;
            trusted = !split && s->status == IFS_STOP;
            i += split;
            continue;
        }
        if (i > 0 || p->begin != IFS_NONE) {
            uint64_t want = i > 0 ? p->segs[i - 1].end : p->begin;
            int begun_right = s->status != IFS_NOSTART &&
                              (s->start == want || inflate_same_start(in, len, want, s->start));
            if (!begun_right && s->stop != IFS_NONE && want >= s->stop) {
                /* its part lies inside the block before: empty, and it
                 * stops where that one did (a findable block follows) */
                s->start = s->end = want;
                s->nout = 0;
                s->status = IFS_STOP;
                begun_right = 1;
            }
            if (!begun_right) {
                if (s->exact && s->start == want)
                    return sp_give_up(p, STREAM_PLAN_UNSOUND); /* decoded from there already */
                i += sp_redo(p, i, want) - 1;
                trusted = 0;
                continue;
            }
        }
        if (!frontier) {
            if (sp_split_full(p, i) == 1) {
                i++;
                trusted = 0;
                continue;
            }
            trusted = s->status == IFS_STOP;
            continue;
        }
        switch (s->status) {
        case IFS_STOP:
            if (i == p->n - 1) /* the batch's own stop, or none: then it cannot stop */
                return p->stop == IFS_NONE ? sp_give_up(p, STREAM_PLAN_UNSOUND)
                                           : sp_finish(p, i + 1, 0);
            p->good = i + 1;
            break;
        case IFS_FINAL:
            return sp_finish(p, i + 1, 1);
        case IFS_FULL:
            if (s->nout == 0)
                return sp_grow(p, i) < 0 ? sp_give_up(p, STREAM_PLAN_NO_ROOM) : STREAM_PLAN_ROUND;
            if (sp_split_full(p, i) != 1)
                return sp_give_up(p, STREAM_PLAN_NO_ROOM);
            p->good = i + 1;
            i++; /* its remainder, listed for the next round */
            trusted = 0;
            break;
        case IFS_INPUT:
            /* the batch ends inside the next block: it goes to the next batch */
            if (last) /* cut data */
                return sp_give_up(p, STREAM_PLAN_UNSOUND);
            if (i == 0 && s->nout == 0) /* a block longer than the batch */
                return sp_give_up(p, STREAM_PLAN_LONG_BLOCK);
            return sp_finish(p, s->nout ? i + 1 : i, 0);
        default:
            return sp_give_up(p, STREAM_PLAN_UNSOUND); /* invalid from a true boundary */
        }
    }
    return p->ntodo ? STREAM_PLAN_ROUND : sp_give_up(p, STREAM_PLAN_UNSOUND);
}
