/* pinflate.c - one deflate stream inflated on several threads (see
 * pinflate.h).
 *
 * Chunks form a list in stream order. One lock guards the list and every
 * chunk's state; the heavy work (reading, decoding, replacing markers,
 * CRC-32) runs unlocked on a chunk that only its worker touches meanwhile.
 * The acceptance walk (advance) runs under the lock after each change. */
#include "pinflate.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "bgzf.h"
#include "copy_share.h"
#include "gzip_header.h"
#include "inflate.h"
#include "io/crc.h"
#include "io/hugemem.h"
#include "io/status.h"
#include "ptx/inflate_stream.h"

#define NONE UINT64_MAX
#define FIRST_CHUNK ((uint64_t)256 << 10)  /* compressed bytes per chunk before a ratio is known */
#define MIN_CHUNK ((uint64_t)64 << 10)
#define MAX_CHUNK ((uint64_t)16 << 20)
/* Decoded bytes a chunk aims at, per decoding thread, within [1, 4] MiB: on
 * a few cores small chunks keep the working set (faulted in fresh) small;
 * on many, larger ones keep the threads' per-chunk work (markers, the
 * window search) a small share. A stream that speculates on every chunk it
 * cannot decode in order aims at the most on any number of threads. */
#define TARGET_OUT_PER_THREAD ((uint64_t)512 << 10)
#define TARGET_OUT_MIN ((uint64_t)1 << 20)
#define TARGET_OUT_MAX ((uint64_t)4 << 20)
#define OUT_LIMIT ((uint64_t)16 << 20)     /* a chunk stops at the first boundary past this at most */
#define OVERSHOOT ((size_t)256 << 10)      /* bytes read past a chunk's range at first, at most */
#define OVERSHOOT_MIN ((size_t)16 << 10)   /* and at least */
#define GROW_MAX ((size_t)256 << 20)       /* the most one chunk's output may take */
#define MEMBER_ENDS 64                     /* gzip member ends one chunk may hold */
#define PROBE_EVERY 64                     /* in order: one speculative chunk per this many */
#define PROBE_SYMS ((size_t)256 << 10)     /* symbols a probe on few threads decodes at first */
#define PROBE_MARKERS (-200)               /* guess_symbols: a probe's markers go on being copied */
#define SAME_REACH 512                     /* bits of empty fixed blocks a start may lie past */
/* The most threads on which a chunk's bytes may be decoded as two halves
 * at once (inflate_job.halves): a 128 MiB float32 gzip -6 member on two
 * cores, 0.185 s against 0.221 s (median of 15); 512 MiB of it on four
 * threads of a 16-core node, 0.46-0.58 s against 0.53-0.60 s; on all 16
 * no faster, the 2 GiB gzip -1 member's reduce 0.65 s against 0.59 s. */
#define HALVES_THREADS INFLATE_HALVES_THREADS
/* Speculative chunks are decoded two at once on a thread (decode_spec_pair)
 * where the stream so far took PAIR_BITS compressed bits a byte or more
 * (data of mostly literals), as their table lookups then overlap, on more
 * threads than HALVES_THREADS (on fewer, a chunk's own halves do as well):
 * two 128 MiB float32 members on one core of a 16-core node 1.32-1.35x
 * faster as a pair from gzip -1, 1.38-1.54x from gzip -6; int32 and text,
 * whose matches break the pairs up, 0.64x. Inside the parallel decoder on
 * 16 threads the pairs' bytes took 4-6% less CPU time than single chunks'. */
#define PAIR_BITS INFLATE_PAIR_BITS
#define COST_ONE 256                       /* an in-order chunk's cost, in the plan's units */
#define COST_MAX (16 * COST_ONE)           /* the most one speculative chunk's cost counts */
#define SPARES_PER_THREAD 3                /* freed buffers kept for reuse, and 6 more */
#define SPARE_MAX ((size_t)64 << 20)       /* the largest buffer kept */

enum ch_state {
    CH_WAIT,     /* to be decoded */
    CH_RUN,      /* a worker decodes it */
    CH_DECODED,  /* decoded, waiting for acceptance */
    CH_ACCEPTED, /* in the stream; markers and CRC-32 to do */
    CH_RESOLVE,  /* a worker replaces its markers */
    CH_READY,    /* bytes ready to hand out */
    CH_FAILED,   /* the stream cannot go on here */
};

/* A block boundary inside a chunk: its source bit and the chunk's bytes
 * before it. */
typedef struct {
    uint64_t bit;
    size_t out;
} chunk_mark;

/* A piece of the stream. Bits are counted from the source's start. */
typedef struct chunk {
    struct chunk *next;
    enum ch_state state;
    int known;         /* decoded from `start` with `window` */
    int dropped;       /* no longer in the list: freed by its worker */
    int probe;         /* a measure of the plan's on few threads (small_probe) */
    int probe_cut;     /* it stopped at PROBE_SYMS, its markers still copied */
    uint64_t ns;       /* thread CPU time its decodes and its markers' resolve took */
    uint64_t wall_ns;  /* and wall time */
    int cold;          /* pages were faulted in meanwhile: ns is no measure of bytes */
    int spare;         /* speculative, to take a core the order leaves idle (mixing) */
    int timed;         /* speculative and accepted: ns is sampled once resolved */
    uint64_t from, to; /* where its start is searched; it ends at the first boundary >= to */
    uint64_t start, end;
    int status;        /* INFLATE_STOP or INFLATE_END when decoded, else the failure */
    int blocks;        /* deflate blocks it decoded */
    uint8_t *buf;      /* the allocation holding out */
    uint8_t *out;      /* decoded bytes: out[0..nsym) once markers are replaced
                          (in sym's own memory where the chunk is all symbols) */
    size_t nout, cap;
    uint16_t *sym;     /* the first nsym symbols, decoded with markers */
    size_t nsym, sym_cap;
    uint32_t crc;      /* CRC-32 of its bytes after its last member end */
    int crc_on_read;   /* crc is computed as pinflate_read hands the bytes out */
    inflate_member_end ends[MEMBER_ENDS]; /* gzip members that end inside it (pinflate_members) */
    size_t nends;
    size_t ends_taken;                /* of them handed out */
    uint32_t seg_crc[MEMBER_ENDS];    /* CRC-32 of the bytes up to each end, from the one before */
    size_t taken;      /* bytes handed out */
    /* with pinflate_on_boundary: every block boundary inside it, in order */
    chunk_mark *marks;
    size_t nmarks, marks_cap, marks_taken;
    int marks_lost;     /* a mark did not fit in memory */
    uint64_t mark_base; /* the running decode's: its span's first bit */
    size_t mark_off;    /* and its output's offset in the chunk */
    size_t wvalid;
    uint8_t window[INFLATE_WINDOW]; /* the stream's bytes before it (the last wvalid exist) */
} chunk;

struct pinflate {
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    pthread_t *threads;
    int nthreads, quit;
    int busy;             /* tasks running */
    uint64_t fixed_chunk; /* compressed bytes per chunk, 0: from the ratio */
    /* the stream */
    int active;
    int fd;
    const uint8_t *mem;
    spool *spool;        /* a pipe's, or NULL */
    uint64_t src_len;    /* SPOOL_UNKNOWN for a spool (src_size) */
    chunk *head, *tail; /* in stream order, head handed out first */
    size_t nchunks;
    uint64_t next_from;  /* where the next chunk's range starts */
    uint64_t pos;        /* where the accepted part ends */
    chunk *accepted;     /* the last accepted chunk */
    int ended;           /* the final block is accepted */
    int failed;          /* a chunk failed: no new ones */
    uint64_t end_bit;
    /* written under the lock; atomic, as the decoding threads size their
       chunks' room and spans from them without it (a stale value only
       moves a limit) and the counts may be read while threads run */
    _Atomic uint64_t in_done, out_done; /* compressed bits and bytes accepted: the ratio */
    _Atomic uint64_t blocks_done;       /* blocks accepted: their mean compressed size */
    _Atomic uint64_t n_accepted, n_redone; /* chunks, over every stream */
    uint64_t n_cut;                /* blocks begun and dropped for want of room, likewise */
    uint64_t n_spec;               /* of them decoded speculatively */
    uint64_t n_prefault;           /* buffers prefault_spare made, likewise */
    uint64_t n_paired;             /* chunks decoded two at once on a thread, likewise */
    /* the plan: the cost of a speculative chunk against an in-order one
       (COST_ONE), a running mean over the stream's speculative chunks */
    enum pinflate_plan plan, plan_next;
    double ratio_next;   /* pinflate_ratio_hint's, for the stream begun next */
    _Atomic unsigned spec_cost; /* before any sample, a hint's cost (in order) or 0 */
    _Atomic int spec_samples;   /* (atomic: read as in_done is) */
    uint64_t order_ps;   /* picoseconds per byte of in-order chunks, a running mean
                            over those decoded with no pages faulted in, or 0 */
    uint64_t known_run;  /* chunks created in order since the last speculative one */
    int prefaulted;      /* output buffers faulted in ahead this stream (prefault_spare) */
    uint8_t win[INFLATE_WINDOW];    /* the window at pos */
    size_t win_valid;
    /* handed out */
    uint32_t crc;
    uint64_t len;
    uint64_t out_pos;    /* source bit where the handed-out data ends */
    chunk *stopped;
    uint8_t out_win[INFLATE_WINDOW]; /* the last out_wlen bytes handed out end it */
    size_t out_wlen;
    const atomic_int *pause; /* pinflate_pause_on's flag, or NULL */
    int members;             /* decode on across gzip members (the stream's pinflate_members) */
    int members_next;        /* pinflate_members: for the streams begun next */
    int member_end;          /* pinflate_read stopped at a member's end, more decoded after it */
    uint64_t member_end_bit; /* then: where that member's final block ends */
    uint64_t next_member;    /* and where the next member's first block starts */
    int paused;              /* pinflate_read paused at out_pos */
    void (*on_boundary)(void *ctx, uint64_t bit, uint64_t len); /* pinflate_on_boundary */
    void *boundary_ctx;
    int marks_lost;      /* a chunk's block boundaries did not fit in memory */
    chunk *free_chunks;  /* freed chunks, kept for chunk_new */
    int nfree_chunks;
    /* freed output buffers, reused so that their pages are not faulted in anew */
    struct spare { void *ptr; size_t bytes; } *spare;
    int nspare, spares; /* held, room for */
    copy_share copy; /* pinflate_read's copy out, shared with idle workers (copy_out) */
};

/* Keeps a freed buffer of `bytes` for reuse (where all spares are held,
 * in place of the smallest, when larger), or frees it (lock held). */
static void spare_put(pinflate *p, void *ptr, size_t bytes)
{
    if (!ptr || bytes > SPARE_MAX) {
        free(ptr);
        return;
    }
    int at = p->nspare;
    if (at == p->spares) { /* full: the smallest goes, if smaller than this one */
        at = 0;
        for (int i = 1; i < p->nspare; i++)
            at = p->spare[i].bytes < p->spare[at].bytes ? i : at;
        if (p->spare[at].bytes >= bytes) {
            free(ptr);
            return;
        }
        free(p->spare[at].ptr);
    } else {
        p->nspare++;
    }
    p->spare[at].ptr = ptr;
    p->spare[at].bytes = bytes;
}

/* spare_put without the lock held. */
static void spare_give(pinflate *p, void *ptr, size_t bytes)
{
    if (!ptr)
        return;
    pthread_mutex_lock(&p->lock);
    spare_put(p, ptr, bytes);
    pthread_mutex_unlock(&p->lock);
}

/* Frees a chunk, its buffers kept as spares and the chunk itself kept for
 * chunk_new, so that its 32 KiB window's pages are not faulted in anew for
 * every chunk (lock held). */
static void chunk_free(pinflate *p, chunk *c)
{
    if (!c)
        return;
    spare_put(p, c->buf, c->cap);
    spare_put(p, c->sym, c->sym_cap * 2);
    free(c->marks);
    c->marks = NULL;
    if (p->nfree_chunks < p->nthreads + 4) {
        c->next = p->free_chunks;
        p->free_chunks = c;
        p->nfree_chunks++;
    } else {
        free(c);
    }
}

/* A zeroed chunk: one chunk_free kept, else a new one; NULL out of memory
 * (lock held). */
static chunk *chunk_new(pinflate *p)
{
    chunk *c = p->free_chunks;
    if (!c)
        return calloc(1, sizeof *c);
    p->free_chunks = c->next;
    p->nfree_chunks--;
    memset(c, 0, sizeof *c);
    return c;
}

/* The source's size in bytes: SPOOL_UNKNOWN for a pipe whose end has not
 * been read yet. */
static uint64_t src_size(const pinflate *p)
{
    return p->spool ? spool_size(p->spool) : p->src_len;
}

/* Whether the source has a byte at offset off (a pipe: read as far). */
static int src_has(const pinflate *p, uint64_t off)
{
    return p->spool ? spool_has(p->spool, off) : off < p->src_len;
}

/* A pipe's bytes [off, off + *len) into a new buffer (*owned): short at
 * its end, or where a read failed (the reader meets that failure itself
 * when it reads on from there). */
static const uint8_t *read_spool(const pinflate *p, uint64_t off, size_t *len, uint8_t *b)
{
    ssize_t k = spool_pread(p->spool, b, *len, off);
    *len = k > 0 ? (size_t)k : 0;
    return b;
}

/* Compressed bytes [off, off + len) of the source, clipped to its end: a
 * pointer into memory, or read into b (room for *len bytes; a file with
 * pread on the calling thread, not io_pread, which fans out: the workers
 * already do). */
static const uint8_t *read_into(const pinflate *p, uint64_t off, size_t *len, uint8_t *b)
{
    if (p->spool)
        return read_spool(p, off, len, b);
    if (off > p->src_len)
        off = p->src_len;
    if (*len > p->src_len - off)
        *len = (size_t)(p->src_len - off);
    if (p->fd < 0)
        return p->mem + off;
    size_t got = 0;
    while (got < *len) {
        ssize_t k = pread(p->fd, b + got, *len - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    *len = got; /* a read error or a shrunk file ends the span early */
    return b;
}

/* read_into a new buffer (*owned, NULL for memory), or NULL out of memory. */
static const uint8_t *read_span(const pinflate *p, uint64_t off, size_t *len, uint8_t **owned)
{
    *owned = p->fd >= 0 || p->spool ? malloc(*len ? *len : 1) : NULL;
    if (!*owned && (p->fd >= 0 || p->spool))
        return NULL;
    return read_into(p, off, len, *owned);
}

/* Makes room for `need` output elements of `size` bytes in *buf (*cap
 * elements now). Refuses past GROW_MAX bytes: a block that decodes to more
 * (no encoder we know writes one) is left to zlib, whose memory is bounded. */
static int grow(void **buf, size_t *cap, size_t need, size_t size)
{
    size_t c = *cap ? *cap : 1 << 16;
    while (c < need)
        c *= 2;
    if (c * size > GROW_MAX)
        return -1;
    if (*buf && c == *cap)
        return 0;
    void *n = hugemem_alloc(c * size);
    if (!n)
        return -1;
    if (*buf) {
        memcpy(n, *buf, *cap * size);
        free(*buf);
    }
    *buf = n;
    *cap = c;
    return 0;
}

/* Room for `need` elements of `size` bytes in *buf (*cap elements): where
 * *buf is NULL, the smallest spare that holds them and is not over four
 * times as large (a span does not take a chunk's buffer), else grow's. */
static int room(pinflate *p, void **buf, size_t *cap, size_t need, size_t size)
{
    int best = -1;
    if (*buf)
        return grow(buf, cap, need, size);
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nspare; i++)
        if (p->spare[i].bytes >= need * size && p->spare[i].bytes / 4 <= need * size &&
            (best < 0 || p->spare[i].bytes < p->spare[best].bytes))
            best = i;
    if (best >= 0) {
        *buf = p->spare[best].ptr;
        *cap = p->spare[best].bytes / size;
        p->spare[best] = p->spare[--p->nspare];
    }
    pthread_mutex_unlock(&p->lock);
    return best >= 0 ? 0 : grow(buf, cap, need, size);
}

/* Whether p's threads at the plan's measured cost of a speculative chunk
 * beat one thread in order by a quarter (lock held, or a stale read). */
static int spec_pays(const pinflate *p)
{
    return (uint64_t)p->nthreads * COST_ONE * 4 > (uint64_t)p->spec_cost * 5;
}

/* Decoded bytes a chunk aims at with p's threads (TARGET_OUT_PER_THREAD);
 * TARGET_OUT_MAX where every chunk that cannot be decoded in order is
 * decoded speculatively by measure (data near noise): there each chunk's
 * own work, the search for its first block and its first window held as
 * symbols, costs more than the larger buffers (on 2 cores, a 128 MiB
 * float32 `gzip -6` member in 0.181 s against 0.204 s; int32 and text,
 * decoded in order or mixed, keep the small chunks, which are faster for
 * them). */
static uint64_t target_out(const pinflate *p)
{
    if (p->plan == PINFLATE_AUTO && p->nthreads >= 2 && p->spec_samples && spec_pays(p))
        return TARGET_OUT_MAX;
    uint64_t t = TARGET_OUT_PER_THREAD * (uint64_t)p->nthreads;
    return t < TARGET_OUT_MIN ? TARGET_OUT_MIN : t > TARGET_OUT_MAX ? TARGET_OUT_MAX : t;
}

/* The output past which a chunk's decode stops at the next block boundary:
 * half as much again as its target, or the blocks' mean output, at most
 * OUT_LIMIT. A chunk whose compressed range decodes to far more (the
 * stream's first, sized before the ratio is known; one of long blocks) is
 * cut short, the rest of its range decoded in order after it, so that the
 * chunks in flight hold little memory: fresh pages are dear. Read without
 * the lock: a stale mean only moves the limit. */
static size_t out_limit(const pinflate *p)
{
    uint64_t t = target_out(p) * 3 / 2, blocks = p->blocks_done;
    if (blocks && p->out_done / blocks > t)
        t = p->out_done / blocks;
    return (size_t)(t < OUT_LIMIT ? t : OUT_LIMIT);
}

/* A compressed span for decoding from bit `from` to past bit `to`, which
 * can be widened (span_widen) when a block runs past its end. */
typedef struct {
    pinflate *p;
    uint64_t off;
    const uint8_t *data;
    size_t len;
    uint8_t *owned; /* a spare buffer of `cap` bytes holding data, or NULL (memory) */
    size_t cap;
} span;

/* Reads the span's bytes [off, off + len): a file's or a pipe's into a
 * buffer kept for reuse, memory's as a pointer into it; 0, or -1 out of
 * memory. */
static int span_read(span *s, size_t len)
{
    const pinflate *p = s->p;
    uint8_t *b = NULL;
    size_t cap = 0;
    if ((p->fd >= 0 || p->spool) && room(s->p, (void **)&b, &cap, len ? len : 1, 1) < 0)
        return -1;
    const uint8_t *d = read_into(p, s->off, &len, b);
    spare_give(s->p, s->owned, s->cap);
    s->data = d;
    s->len = len;
    s->owned = b;
    s->cap = cap;
    return 0;
}

/* Bytes read past a chunk's range at first, for the block it ends in: one
 * and a half mean blocks, within [OVERSHOOT_MIN, OVERSHOOT] (OVERSHOOT
 * before a block is seen); a longer block widens the span. */
static size_t overshoot(const pinflate *p)
{
    uint64_t blocks = p->blocks_done;
    if (!blocks)
        return OVERSHOOT;
    uint64_t b = p->in_done / 8 / blocks * 3 / 2;
    return b < OVERSHOOT_MIN ? OVERSHOOT_MIN : b > OVERSHOOT ? OVERSHOOT : (size_t)b;
}

/* Reads the span from the byte holding `from` to overshoot() past `to`. */
static int span_open(span *s, pinflate *p, uint64_t from, uint64_t to)
{
    *s = (span){.p = p, .off = from / 8};
    return span_read(s, (size_t)(to / 8 - s->off) + overshoot(p));
}

/* Doubles the span's length; 0, or -1 when it already reaches the end or
 * GROW_MAX bytes (a block that long is left to zlib). */
static int span_widen(span *s)
{
    size_t len = s->len * 2, was = s->len;
    if (s->off + s->len >= src_size(s->p) || len > GROW_MAX || span_read(s, len) < 0)
        return -1;
    return s->len > was ? 0 : -1;
}

/* Gives the span's buffer back for reuse. */
static void span_close(span *s)
{
    spare_give(s->p, s->owned, s->cap);
    s->owned = NULL;
}

/* The output limit for a decode with room for cap elements that has
 * written out_len: the chunk's limit, lowered to stop at the boundary past
 * which a block of one and a quarter times the stream's mean no longer
 * fits, rather than decode much of a long block in vain (the decoder drops
 * a block that does not fit: the next chunk decodes it again). At least one
 * more block. Read without the lock, as out_limit. */
static size_t fit_limit(const pinflate *p, size_t limit, size_t cap, size_t out_len)
{
    uint64_t blocks = p->blocks_done, mean = blocks ? p->out_done / blocks : 0;
    uint64_t need = mean + mean / 4;
    if (need < cap && cap - need < limit)
        limit = (size_t)(cap - need);
    return limit > out_len ? limit : out_len + 1;
}

#define BYTES_AGAIN 200 /* bytes_settle: the decode goes on */

/* Points byte decode j (its out inside c->buf at out_off) at span s and at
 * the room c's buffer has left, its output limit `limit` fitted to it. */
static void bytes_setup(const pinflate *p, chunk *c, const span *s, inflate_job *j, size_t out_off,
                        size_t limit)
{
    j->in = s->data;
    j->in_len = s->len;
    j->out = c->buf + out_off;
    j->out_cap = c->cap - out_off;
    j->out_limit = fit_limit(p, limit, j->out_cap, j->out_len);
}

/* Takes byte decode j's result r: where the next block does not fit, the
 * chunk stops there (INFLATE_STOP) once j has half its output limit, else
 * c's buffer grows; a span that ends inside a block widens. BYTES_AGAIN
 * where j goes on, else the inflate result. */
static int bytes_settle(pinflate *p, chunk *c, span *s, inflate_job *j, size_t limit, int r)
{
    j->out_limit = limit;
    c->blocks += j->blocks;
    if (r == INFLATE_NEED_OUTPUT)
        __atomic_fetch_add(&p->n_cut, 1, __ATOMIC_RELAXED);
    if (r == INFLATE_NEED_OUTPUT && j->out_len >= j->out_limit / 2)
        return INFLATE_STOP; /* the chunk ends: the rest of its range comes after it */
    if (r == INFLATE_NEED_OUTPUT)
        return grow((void **)&c->buf, &c->cap, c->cap + 1, 1) < 0 ? INFLATE_ERROR : BYTES_AGAIN;
    if (r == INFLATE_NEED_INPUT && span_widen(s) == 0)
        return BYTES_AGAIN;
    return r;
}

/* Decodes bytes with j (its out inside c->buf at out_off) until it stops at
 * a boundary (bytes_settle). Returns the inflate result. */
static int run_bytes(pinflate *p, chunk *c, span *s, inflate_job *j, size_t out_off)
{
    const size_t limit = j->out_limit;
    j->halves = p->nthreads <= HALVES_THREADS;
    for (;;) {
        bytes_setup(p, c, s, j, out_off, limit);
        int r = bytes_settle(p, c, s, j, limit, inflate_decode_bytes(j));
        if (r != BYTES_AGAIN)
            return r;
    }
}

/* The header of a member this decoder takes (see pinflate.h). */
size_t pinflate_header(const uint8_t *p, size_t n)
{
    return !gzip_header_magic(p, n) || bgzf_block_size(p, n) ? 0 : gzip_header_size(p, n);
}

/* Lets job j go on across gzip members where the stream is a member's
 * (pinflate_members), their ends into chunk c's room left. */
static void members_on(const pinflate *p, inflate_job *j, chunk *c)
{
    if (!p->members)
        return;
    j->member_header = pinflate_header;
    j->ends = c->ends + c->nends;
    j->ends_cap = MEMBER_ENDS - c->nends;
}

/* inflate_job.on_block of a chunk's decode: keeps the boundary in the
 * chunk's marks, in source bits and chunk bytes. */
static void mark_block(void *ctx, uint64_t bit, size_t out_len)
{
    chunk *c = ctx;
    if (c->nmarks == c->marks_cap) {
        size_t cap = c->marks_cap ? 2 * c->marks_cap : 64;
        chunk_mark *m = realloc(c->marks, cap * sizeof *m);
        if (!m) {
            c->marks_lost = 1; /* told by pinflate_read */
            return;
        }
        c->marks = m;
        c->marks_cap = cap;
    }
    c->marks[c->nmarks++] = (chunk_mark){bit + c->mark_base, out_len + c->mark_off};
}

/* Has job j, decoding chunk c's bytes from c's output offset out_off with
 * its bits counted from `base`, keep every block boundary it passes in c's
 * marks, where p reports boundaries (pinflate_on_boundary). */
static void marks_on(const pinflate *p, inflate_job *j, chunk *c, uint64_t base, size_t out_off)
{
    if (!p->on_boundary || p->members)
        return;
    c->mark_base = base;
    c->mark_off = out_off;
    j->on_block = mark_block;
    j->block_ctx = c;
}

/* Takes the member ends job j met (its output at c's out + out_off, its
 * bits from the span's base) into c's, in c's output and source bits. */
static void members_found(chunk *c, const inflate_job *j, size_t out_off, uint64_t base)
{
    for (size_t k = 0; k < j->nends; k++) {
        inflate_member_end *e = &c->ends[c->nends++];
        e->end_bit += base;
        e->next_bit += base;
        e->out += out_off;
    }
}

/* The history a decode going on at output index `at` of chunk c may reach:
 * `most`, or less after the start of a member. */
static size_t history_at(const chunk *c, size_t at, size_t most)
{
    if (!c->nends)
        return most;
    size_t since = at - c->ends[c->nends - 1].out;
    return since < most ? since : most;
}

/* The room to give a chunk's decoded bytes: out_limit and a block's worth
 * past it, one size for every chunk of the stream, so that a spare buffer
 * fits any of them and seldom grows (each growth copies it into fresh
 * pages). Pages never written cost nothing, so it is not sized from the
 * chunk's compressed bytes: text's long blocks outgrew that guess. Read
 * without the lock. */
static size_t out_room(const pinflate *p)
{
    return out_limit(p) + OVERSHOOT;
}

/* A thread's CPU time, the wall clock and the thread's page faults at one
 * moment. */
typedef struct {
    uint64_t ns, wall_ns;
    long faults; /* -1 where unknown */
} task_clock;

/* The calling thread's task_clock now. */
static task_clock task_clock_now(void)
{
    task_clock t = {.ns = 0, .wall_ns = 0, .faults = -1};
    struct timespec ts, ws;
    struct rusage u;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 &&
        clock_gettime(CLOCK_MONOTONIC, &ws) == 0 && getrusage(RUSAGE_THREAD, &u) == 0) {
        t.ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        t.wall_ns = (uint64_t)ws.tv_sec * 1000000000u + (uint64_t)ws.tv_nsec;
        t.faults = u.ru_minflt + u.ru_majflt;
    }
    return t;
}

/* The calling thread's CPU time and the wall time since t0 (0 where the
 * clocks are unknown); returns 1 where a page was faulted in meanwhile
 * (fresh pages cost more than the decode on some VMs: a first chunk would
 * measure the kernel) or the clocks are unknown, else 0. */
static int task_clock_since(task_clock t0, uint64_t *ns, uint64_t *wall_ns)
{
    task_clock t = task_clock_now();
    *ns = *wall_ns = 0;
    if (t0.faults >= 0 && t.faults >= 0 && t.ns >= t0.ns && t.wall_ns >= t0.wall_ns) {
        *ns = t.ns - t0.ns;
        *wall_ns = t.wall_ns - t0.wall_ns;
    }
    return t0.faults < 0 || t.faults != t0.faults;
}

/* Adds the time since t0 (task_clock_since) to chunk c's, which turns cold
 * where that says so. */
static void task_clock_add(chunk *c, task_clock t0)
{
    uint64_t ns, wall_ns;
    c->cold |= task_clock_since(t0, &ns, &wall_ns);
    c->ns += ns;
    c->wall_ns += wall_ns;
}

/* task_clock_add for chunks a and b decoded at once: the time shared by
 * their output, so that each measures the pair's time per byte. */
static void task_clock_split(chunk *a, chunk *b, task_clock t0)
{
    uint64_t ns, wall_ns, total = (uint64_t)a->nout + b->nout;
    int cold = task_clock_since(t0, &ns, &wall_ns);
    uint64_t ns_b = total ? ns * b->nout / total : ns / 2;
    uint64_t wall_b = total ? wall_ns * b->nout / total : wall_ns / 2;
    a->cold |= cold;
    b->cold |= cold;
    a->ns += ns - ns_b;
    a->wall_ns += wall_ns - wall_b;
    b->ns += ns_b;
    b->wall_ns += wall_b;
}

/* Decodes chunk c from its known start with its window into bytes. */
static void decode_known(pinflate *p, chunk *c)
{
    span s;
    c->status = INFLATE_ERROR;
    if (span_open(&s, p, c->start, c->to) < 0)
        return;
    size_t est = out_room(p);
    c->cap = 0;
    if (room(p, (void **)&c->buf, &c->cap, INFLATE_WINDOW + est, 1) < 0)
        goto out;
    memcpy(c->buf + INFLATE_WINDOW - c->wvalid, c->window + INFLATE_WINDOW - c->wvalid, c->wvalid);
    uint64_t base = s.off * 8;
    /* At least one block, even where the range is already passed. */
    uint64_t stop = c->to > c->start ? c->to : c->start + 1;
    inflate_job j = {.bit = c->start - base, .stop_bit = stop - base, .out_limit = out_limit(p),
                 .history = c->wvalid};
    c->blocks = 0;
    c->nmarks = 0;
    members_on(p, &j, c);
    marks_on(p, &j, c, base, 0);
    c->status = run_bytes(p, c, &s, &j, INFLATE_WINDOW);
    c->out = c->buf + INFLATE_WINDOW;
    c->nout = j.out_len;
    c->end = j.bit + base;
    members_found(c, &j, 0, base);
out:
    span_close(&s);
}

/* The cost, against an in-order chunk, of a speculative one that decoded
 * `out` bytes from `bits` compressed bits, `sym` of them held as symbols,
 * estimated where it was not timed: 1 + r (0.35 f + 0.1) at r bytes out per
 * byte in, f of them symbols. Symbols cost more the more the data
 * compress, as in-order bytes then cost less (on two cores, whole chunks
 * of all symbols: about 1.5 at 2.5 to 1, 3 at 20; floats, a few symbols
 * at 1.08 to 1, 1.15); the estimate errs high, so that a stream whose
 * speculation does not pay is not taken for one that does (mixing text on
 * two cores, which it rules out, measured slower). At most COST_MAX. */
static unsigned spec_cost(uint64_t out, uint64_t sym, uint64_t bits)
{
    if (!out || !bits)
        return COST_ONE;
    uint64_t extra = COST_ONE * 8 * (35 * (sym < out ? sym : out) + 10 * out) / (100 * bits);
    return extra < COST_MAX - COST_ONE ? COST_ONE + (unsigned)extra : COST_MAX;
}

/* Whether the n symbols at s hold a marker. */
static int has_marker(const uint16_t *s, size_t n)
{
    unsigned any = 0;
    for (size_t i = 0; i < n; i++)
        any |= s[i];
    return (any & INFLATE_MARKER) != 0;
}

/* A speculative chunk's decode in progress (decode_spec): its span, where
 * the search for a start goes on, the start tried (bit, relative to the
 * span's first bit, base) and the one to fall back on, and, once the start's
 * symbols no longer hold markers, the bytes' decode that takes over
 * (bytes). */
typedef struct {
    chunk *c;
    span s;
    uint64_t base, from, bit, early_final;
    int fallback;
    inflate_job bytes;
} spec_try;

#define GUESS_BYTES (-300) /* guess_symbols: the bytes' decode is due */

/* Decodes chunk c speculatively from the block start t->bit of its span:
 * symbols with markers until the window is no longer needed; then
 * GUESS_BYTES, t->bytes set up to go on as bytes (spec_bytes). A probe
 * (c->probe) stops where PROBE_SYMS symbols do not reach the end of its
 * first blocks and the last INFLATE_WINDOW of them (short of the slack a
 * block's decode leaves unwritten before its room's end) still hold a
 * marker: PROBE_MARKERS, its measure taken without decoding a text block
 * of megabytes into symbols. Else returns the inflate result. */
static int guess_symbols(pinflate *p, spec_try *t)
{
    chunk *c = t->c;
    span *s = &t->s;
    uint64_t base = t->base;
    if (room(p, (void **)&c->sym, &c->sym_cap, out_room(p), 2) < 0)
        return INFLATE_ERROR;
    const size_t limit = out_limit(p);
    inflate_job j = {.bit = t->bit, .stop_bit = c->to - base, .out_limit = limit};
    c->nmarks = 0;
    members_on(p, &j, c);
    marks_on(p, &j, c, base, 0);
    int r;
    size_t cap = c->probe && c->sym_cap > PROBE_SYMS ? PROBE_SYMS : c->sym_cap;
    for (;;) {
        j.in = s->data;
        j.in_len = s->len;
        j.out = c->sym;
        j.out_cap = cap;
        /* a probe's room is cut short on purpose: it stops there */
        j.out_limit = cap == c->sym_cap ? fit_limit(p, limit, cap, j.out_len) : limit;
        r = inflate_decode_symbols(&j);
        j.out_limit = limit;
        c->blocks += j.blocks;
        if (r == INFLATE_NEED_OUTPUT && cap == c->sym_cap)
            __atomic_fetch_add(&p->n_cut, 1, __ATOMIC_RELAXED);
        if (r == INFLATE_NEED_OUTPUT && j.out_len >= j.out_limit / 2) {
            r = INFLATE_STOP; /* as bytes_settle does */
            break;
        }
        if (r == INFLATE_NEED_OUTPUT && cap < c->sym_cap) {
            const size_t slack = 1024; /* more than a block leaves unwritten at its room's end */
            if (has_marker(c->sym + cap - slack - INFLATE_WINDOW, INFLATE_WINDOW))
                return PROBE_MARKERS;
            cap = c->sym_cap; /* the markers end: measured as any chunk is */
            continue;
        }
        if (r == INFLATE_NEED_OUTPUT && grow((void **)&c->sym, &c->sym_cap, c->sym_cap + 1, 2) == 0) {
            cap = c->sym_cap;
            continue;
        }
        if (r == INFLATE_NEED_INPUT && span_widen(s) == 0)
            continue;
        break;
    }
    c->nsym = j.out_len;
    c->end = j.bit + base;
    members_found(c, &j, 0, base);
    if (r != INFLATE_CLEAN)
        return r == INFLATE_NEED_OUTPUT ? INFLATE_ERROR : r;
    /* The last INFLATE_WINDOW symbols are bytes: they are the history of the
     * byte decoder that takes over. */
    c->cap = 0;
    size_t est = out_room(p);
    if (room(p, (void **)&c->buf, &c->cap, est > c->nsym * 2 ? est : c->nsym * 2, 1) < 0)
        return INFLATE_ERROR;
    for (size_t i = c->nsym - INFLATE_WINDOW; i < c->nsym; i++)
        c->buf[i] = (uint8_t)c->sym[i];
    t->bytes = (inflate_job){.bit = j.bit, .stop_bit = j.stop_bit, .out_limit = j.out_limit - c->nsym,
                             .history = history_at(c, c->nsym, INFLATE_WINDOW)};
    members_on(p, &t->bytes, c);
    marks_on(p, &t->bytes, c, base, c->nsym);
    return GUESS_BYTES;
}

/* Takes the bytes' decode of t's chunk, ended with result r, into it; r. */
static int guess_bytes_end(spec_try *t, int r)
{
    chunk *c = t->c;
    c->end = t->bytes.bit + t->base;
    c->nout = c->nsym + t->bytes.out_len;
    members_found(c, &t->bytes, c->nsym, t->base);
    return r;
}

/* Opens chunk c's speculative decode: its span read. 0, or -1 (c failed). */
static int spec_open(pinflate *p, chunk *c, spec_try *t)
{
    *t = (spec_try){.c = c, .early_final = NONE};
    c->start = NONE;
    c->status = INFLATE_ERROR;
    if (span_open(&t->s, p, c->from, c->to) < 0)
        return -1;
    t->base = t->s.off * 8;
    t->from = c->from - t->base;
    return 0;
}

/* Judges the decode from start t->bit that ended with result r: 1 where the
 * chunk is settled (it decoded, or no other start is left), 0 where the
 * search goes on past it. A start whose blocks end in a final block is
 * passed over, and taken only where no later one decodes, unless the
 * source ends just after that block or its trailer is followed by another
 * member (ifs_final_trusted): such a start is most likely false. */
static int spec_judge(pinflate *p, spec_try *t, int r)
{
    chunk *c = t->c;
    if (r == PROBE_MARKERS) { /* measured: the order decodes it again */
        c->probe_cut = 1;
        return 1;
    }
    int early = r == INFLATE_END && !t->fallback &&
                src_has(p, (c->end + IFS_TAIL_BYTES * 8) / 8) &&
                !ifs_final_trusted(t->s.data, t->s.len, c->end - t->base);
    if (early && t->early_final == NONE)
        t->early_final = t->bit;
    if ((r == INFLATE_STOP || r == INFLATE_END) && !early) {
        c->start = t->bit + t->base;
        c->status = r;
        c->out = c->buf;
        if (!c->buf) { /* all symbols: replaced by their bytes in place */
            c->out = (uint8_t *)c->sym;
            c->nout = c->nsym;
        }
        return 1;
    }
    spare_give(p, c->buf, c->cap); /* a false start: its buffer serves the next */
    c->buf = NULL;
    c->cap = 0;
    if (t->fallback)
        return 1;
    t->from = t->bit + 1;
    return 0;
}

/* Goes on with t's search for its chunk's first block start from which the
 * decode succeeds: 1 where a start's bytes' decode is due (t->bytes), 0
 * where the chunk is settled. */
static int spec_advance(pinflate *p, spec_try *t)
{
    chunk *c = t->c;
    for (;;) {
        t->bit = inflate_find_block(t->s.data, t->s.len, t->from, c->to - t->base);
        t->fallback = t->bit == NONE; /* the early final start again: no other one decodes */
        if (t->fallback && t->early_final == NONE)
            return 0;
        if (t->fallback)
            t->bit = t->early_final;
        c->nsym = c->nout = c->nends = 0;
        c->blocks = 0;
        int r = guess_symbols(p, t);
        if (r == GUESS_BYTES)
            return 1;
        if (spec_judge(p, t, r))
            return 0;
    }
}

/* Takes t's bytes' decode, ended with result r, and judges it: 1 where a
 * next start's bytes are due (spec_advance), 0 where the chunk is settled. */
static int spec_bytes_done(pinflate *p, spec_try *t, int r)
{
    return !spec_judge(p, t, guess_bytes_end(t, r)) && spec_advance(p, t);
}

/* Runs t's bytes' decode alone (spec_bytes_done's answer after it). */
static int spec_bytes(pinflate *p, spec_try *t)
{
    return spec_bytes_done(p, t, run_bytes(p, t->c, &t->s, &t->bytes, t->c->nsym));
}

/* Decodes chunk c speculatively: from the first place in its range where a
 * block start decodes (spec_advance), symbols until the window is no
 * longer needed, then bytes. */
static void decode_spec(pinflate *p, chunk *c)
{
    spec_try t;
    if (spec_open(p, c, &t) < 0)
        return;
    for (int due = spec_advance(p, &t); due;)
        due = spec_bytes(p, &t);
    span_close(&t.s);
}

/* Decodes speculative chunks a and b as decode_spec does, their bytes at
 * once on this thread (inflate_decode_bytes_pair) while both have bytes
 * to decode; each ends as decode_spec would end it. */
static void decode_spec_pair(pinflate *p, chunk *a, chunk *b)
{
    spec_try t[2];
    int open[2] = {spec_open(p, a, &t[0]) == 0, spec_open(p, b, &t[1]) == 0};
    int due[2] = {open[0] && spec_advance(p, &t[0]), open[1] && spec_advance(p, &t[1])};
    while (due[0] && due[1]) {
        size_t limit[2] = {t[0].bytes.out_limit, t[1].bytes.out_limit};
        int r[2];
        for (int i = 0; i < 2; i++)
            bytes_setup(p, t[i].c, &t[i].s, &t[i].bytes, t[i].c->nsym, limit[i]);
        r[0] = inflate_decode_bytes_pair(&t[0].bytes, &t[1].bytes, &r[1]);
        for (int i = 0; i < 2; i++) {
            r[i] = bytes_settle(p, t[i].c, &t[i].s, &t[i].bytes, limit[i], r[i]);
            if (r[i] == BYTES_AGAIN) /* on alone: rare (a block past the room or the span) */
                r[i] = run_bytes(p, t[i].c, &t[i].s, &t[i].bytes, t[i].c->nsym);
            due[i] = spec_bytes_done(p, &t[i], r[i]);
        }
    }
    for (int i = 0; i < 2; i++) {
        while (due[i])
            due[i] = spec_bytes(p, &t[i]);
        if (open[i])
            span_close(&t[i].s);
    }
}

/* Moves the window past chunk c's bytes (markers taken from the window),
 * in place. Returns -1 when a marker points before the stream's start. */
static int window_advance(pinflate *p, const chunk *c)
{
    uint8_t tail[INFLATE_WINDOW];
    size_t n = c->nout < INFLATE_WINDOW ? c->nout : INFLATE_WINDOW;
    size_t first = c->nout - n;
    int bad = 0;
    if (first < c->nsym)
        bad = inflate_resolve(tail, c->sym + first, c->nsym - first, p->win, p->win_valid);
    size_t from_bytes = first < c->nsym ? c->nsym : first;
    memcpy(tail + (from_bytes - first), c->out + from_bytes, c->nout - from_bytes);
    memmove(p->win, p->win + n, INFLATE_WINDOW - n);
    memcpy(p->win + INFLATE_WINDOW - n, tail, n);
    p->win_valid = p->win_valid + n < INFLATE_WINDOW ? p->win_valid + n : INFLATE_WINDOW;
    p->win_valid = history_at(c, c->nout, p->win_valid); /* none before a member's start */
    return bad;
}

/* Whether the stream, at bit `end`, goes on as a decode from `start` did
 * (inflate_same_start over the source's bytes there: a start up to
 * SAME_REACH bits past `end`, after empty blocks, or 16 bits either way). */
static int starts_match(const pinflate *p, uint64_t end, uint64_t start)
{
    if (end == start)
        return 1;
    if (end > start + 16 || start > end + SAME_REACH)
        return 0;
    uint64_t lo = (end < start ? end : start) / 8;
    size_t len = (size_t)((end > start ? end : start) / 8 - lo) + 8;
    uint8_t *owned;
    const uint8_t *d = read_span(p, lo, &len, &owned);
    int same = d && inflate_same_start(d, len, end - lo * 8, start - lo * 8);
    free(owned);
    return same;
}

/* Unlinks every chunk after c (freeing those no worker holds). */
static void drop_after(pinflate *p, chunk *c)
{
    chunk *d = c->next;
    c->next = NULL;
    p->tail = c;
    while (d) {
        chunk *n = d->next;
        p->nchunks--;
        if (d->state == CH_RUN || d->state == CH_RESOLVE)
            d->dropped = 1;
        else
            chunk_free(p, d);
        d = n;
    }
}

/* Chunk after c that decodes [from, to) from the known position `from`
 * with the current window, linked in after c (c NULL: at the head). */
static chunk *insert_known(pinflate *p, chunk *c, uint64_t from, uint64_t to)
{
    chunk *k = chunk_new(p);
    if (!k)
        return NULL;
    k->known = 1;
    k->from = k->start = from;
    k->to = to;
    k->wvalid = p->win_valid;
    memcpy(k->window, p->win, INFLATE_WINDOW);
    if (c) {
        k->next = c->next;
        c->next = k;
        if (p->tail == c)
            p->tail = k;
    } else {
        k->next = p->head;
        p->head = k;
        if (!p->tail)
            p->tail = k;
    }
    p->nchunks++;
    return k;
}

/* A pipe: lets the spool drop the bytes nothing reads again, those before
 * the accepted position (less a few: a stored block's start is compared
 * there), before the range of the chunk after it, which the accepted
 * chunk's end may have passed, and before the data handed out, whose
 * member's trailer the caller reads (lock held). */
static void release_read(pinflate *p)
{
    uint64_t keep = p->pos / 8 > 8 ? p->pos / 8 - 8 : 0;
    const chunk *n = p->accepted->next;
    if (n && n->from / 8 < keep)
        keep = n->from / 8;
    if (p->out_pos / 8 < keep)
        keep = p->out_pos / 8;
    spool_release(p->spool, keep);
}

/* spec_cost of speculative chunk c, decoded, counted past its first window
 * (which every speculative chunk holds as symbols), so that a small chunk
 * measures as a large one would. */
static unsigned chunk_cost(const chunk *c)
{
    uint64_t sym = c->nsym > INFLATE_WINDOW ? c->nsym - INFLATE_WINDOW : 0,
             out = c->nout > INFLATE_WINDOW ? c->nout - INFLATE_WINDOW : 0;
    return out ? spec_cost(out, sym, (c->end - c->start) * out / c->nout) : COST_ONE;
}

/* Estimated cost `cost` of speculative chunk c, where it was to take a
 * core the order leaves idle (c->spare), scaled by the wall time its
 * decode took per CPU second, at most four times: where its thread waited
 * for that core (with the reader, another process), it added that much
 * less, even where its time per byte is no measure (pages faulted in). */
static unsigned shared_cost(const chunk *c, unsigned cost)
{
    if (c->spare && c->ns && c->wall_ns > c->ns)
        cost = (unsigned)(c->wall_ns < 4 * c->ns ? cost * c->wall_ns / c->ns : 4 * (uint64_t)cost);
    return cost < COST_MAX ? cost : COST_MAX;
}

/* Takes the cost of one speculative chunk into the plan's mean (lock held):
 * weighing a quarter, and at most an in-order chunk above the mean, so that
 * one chunk whose thread waited long for a core does not stop the mixing
 * until the next probe, while a run of them does within a few chunks. */
static void plan_sample(pinflate *p, unsigned cost)
{
    if (p->spec_samples++) {
        unsigned most = p->spec_cost + COST_ONE;
        p->spec_cost = (3 * p->spec_cost + (cost < most ? cost : most)) / 4;
    } else {
        p->spec_cost = cost;
    }
    p->n_spec++;
}

/* Takes in-order chunk c, decoded, into the in-order time per byte where
 * it was timed warm and is large enough that its fixed costs are a small
 * share, the newest sample weighing a quarter (lock held). */
static void order_sample(pinflate *p, const chunk *c)
{
    if (!c->known || c->cold || !c->ns || c->nout < target_out(p) / 4 ||
        !(c->status == INFLATE_STOP || c->status == INFLATE_END))
        return;
    uint64_t ps = c->ns * 1000 / c->nout;
    p->order_ps = p->order_ps ? (3 * p->order_ps + ps) / 4 : ps;
}

/* The cost of speculative chunk c, resolved and timed warm, against the
 * in-order CPU time per byte: the time of its decode and its markers'
 * resolve (the CRC-32 left out, which in-order chunks take as they are
 * read), in CPU time where every thread speculates (they share the cores
 * by design), in wall time where it was to take a core the order leaves
 * idle (c->spare), so that the time its thread waited for that core (with
 * the reader, another process) counts; at most COST_MAX (lock held). */
static unsigned time_cost(const pinflate *p, const chunk *c)
{
    uint64_t ns = c->spare ? c->wall_ns : c->ns;
    uint64_t cost = c->nout ? COST_ONE * (ns * 1000 / c->nout) / p->order_ps : COST_ONE;
    return cost < COST_MAX ? (unsigned)cost : COST_MAX;
}

/* The cost of a speculative chunk decoded in vain, to be decoded again in
 * order, as a sample: the stream's mean and an in-order chunk (lock held). */
static unsigned wasted_cost(const pinflate *p)
{
    unsigned c = p->spec_samples ? p->spec_cost + COST_ONE : 4 * COST_ONE;
    return c < COST_MAX ? c : COST_MAX;
}

/* Speculative chunks after the accepted part (lock held): all, or those
 * not decoded yet. */
static int spec_in_flight(const pinflate *p, int undecoded)
{
    int n = 0;
    for (const chunk *c = p->accepted ? p->accepted->next : p->head; c; c = c->next)
        n += !c->known && (!undecoded || c->state == CH_WAIT || c->state == CH_RUN);
    return n;
}

/* Whether the next chunk that cannot be decoded in order yet is decoded
 * speculatively (lock held): under AUTO, when the stream has no measure
 * yet, for a probe every PROBE_EVERY chunks, and while n threads at the
 * measured cost beat one in order by a quarter. */
static int speculate(const pinflate *p)
{
    if (p->plan == PINFLATE_PARALLEL)
        return 1;
    if (p->plan == PINFLATE_ORDER || p->nthreads < 2)
        return 0;
    if ((p->spec_samples == 0 && !p->spec_cost) || p->known_run >= PROBE_EVERY)
        return 1;
    return spec_pays(p);
}

/* Whether speculative chunks are taken two at a time (PAIR_BITS; lock
 * held): every one of more than HALVES_THREADS threads speculates and the
 * stream so far is mostly literals. */
static int pairs_pay(const pinflate *p)
{
    return p->nthreads > HALVES_THREADS && p->out_done && p->in_done >= (uint64_t)PAIR_BITS * p->out_done &&
           speculate(p);
}

/* The most chunks in flight at once: a few per thread, twice as many where
 * a thread takes two (lock held). */
static size_t in_flight_most(const pinflate *p)
{
    return (size_t)p->nthreads * (pairs_pay(p) ? 2 : 1) + 2;
}

/* Whether the next speculative chunk is a probe that may stop at PROBE_SYMS
 * (guess_symbols; lock held): under AUTO, a measure (the stream's first, or
 * one every PROBE_EVERY chunks) where the threads are too few to pay for
 * chunks of symbols at three times the cost. Its answer then most likely is
 * to decode in order; with more threads it is the first of many that
 * speculate, decoded whole. */
static int small_probe(const pinflate *p)
{
    return p->plan == PINFLATE_AUTO && (uint64_t)p->nthreads * COST_ONE * 4 <= 3 * COST_ONE * 5 &&
           (p->spec_samples == 0 || p->known_run >= PROBE_EVERY);
}

/* Whether, decoding in order, a speculative chunk far enough ahead still
 * adds the idle threads' work (lock held): under AUTO, one not decoded yet
 * at a time per thread but the one in order (a thread goes on with the
 * next while the order has not reached the one it decoded), while those
 * threads at the measured cost add a third of an in-order thread at least.
 * Else they only replace markers and checksum: on two cores ints' chunks
 * of symbols at twice the cost paid (a fifth off the wall time), but those
 * of data that compress more, at four times and more, cost more than they
 * added, in CPU time, memory bandwidth and fresh pages, where the reader
 * shares the cores. */
static int mixing(const pinflate *p)
{
    if (p->plan != PINFLATE_AUTO || p->nthreads < 2 ||
        (uint64_t)(p->nthreads - 1) * 3 * COST_ONE < p->spec_cost)
        return 0;
    return spec_in_flight(p, 1) < p->nthreads - 1;
}

/* The plan's cost before any sample for a stream expected at `ratio`
 * (pinflate_ratio_hint; lock held): the least a speculative chunk costs at
 * that ratio (spec_cost with no symbols), where that already rules out
 * speculating and mixing on p's threads under AUTO; else 0, for the first
 * probe to measure. */
static unsigned hinted_cost(pinflate *p, double ratio)
{
    if (p->plan != PINFLATE_AUTO || !(ratio > 0) || ratio > 1e6)
        return 0;
    p->spec_cost = spec_cost((uint64_t)(ratio * 1024), 0, 8 * 1024);
    int in_order = !speculate(p) && !mixing(p);
    unsigned cost = in_order ? p->spec_cost : 0;
    p->spec_cost = 0;
    return cost;
}

/* Whether the order, decoding in order under AUTO (mixing), has reached
 * speculative chunk n, the next after the accepted part, before n was
 * decoded: a thread is free, and decoding n in order costs less than
 * waiting for its speculation, which costs up to three times that (lock
 * held). */
static int take_over(const pinflate *p, const chunk *n)
{
    return p->plan == PINFLATE_AUTO && !n->known && n->from <= p->pos && !p->failed &&
           (n->state == CH_RUN || n->state == CH_WAIT) && !speculate(p);
}

/* Replaces speculative chunk n, the next after the accepted part, by a
 * chunk decoded in order from the accepted position over its range (a
 * running n is dropped: its worker frees it), its speculation counted as
 * wasted (lock held). The new chunk, or NULL when out of memory. */
static chunk *order_instead(pinflate *p, chunk *n)
{
    if (p->accepted)
        p->accepted->next = n->next;
    else
        p->head = n->next;
    if (p->tail == n)
        p->tail = p->accepted;
    p->nchunks--;
    uint64_t to = n->to > p->pos ? n->to : p->pos;
    if (n->state == CH_RUN)
        n->dropped = 1;
    else
        chunk_free(p, n);
    p->n_redone++;
    plan_sample(p, wasted_cost(p));
    chunk *c = insert_known(p, p->accepted, p->pos, to);
    if (!c)
        p->failed = 1;
    p->known_run++;
    return c;
}

/* Accepts decoded chunks in stream order while it can (lock held). */
static void advance(pinflate *p)
{
    chunk *c = p->accepted ? p->accepted->next : p->head;
    while (c && !p->ended) {
        if (c->state == CH_FAILED)
            return;
        if (!c->known) {
            if (p->pos >= c->to && c->state != CH_RUN) { /* covered by the chunk before */
                chunk *n = c->next;
                if (p->accepted)
                    p->accepted->next = n;
                else
                    p->head = n;
                if (p->tail == c)
                    p->tail = p->accepted;
                p->nchunks--;
                chunk_free(p, c);
                c = n;
                continue;
            }
            if (c->state != CH_DECODED)
                return;
            if (c->from > p->pos && !p->failed) /* mixing: new_chunk fills the gap first */
                return;
            if (c->start == NONE || !(c->status == INFLATE_STOP || c->status == INFLATE_END) ||
                !starts_match(p, p->pos, c->start)) {
                /* A false start, or none: decode it again from where the
                 * stream really is. */
                spare_put(p, c->buf, c->cap);
                spare_put(p, c->sym, c->sym_cap * 2);
                c->buf = NULL;
                c->sym = NULL;
                c->cap = c->sym_cap = 0;
                c->nsym = c->nout = c->nends = 0;
                c->blocks = 0;
                c->known = 1;
                c->start = p->pos;
                p->n_redone++;
                /* the speculation was wasted, unless a probe cut short
                   measured symbols all through: a chunk of them costs as
                   much at the ratio the order decodes at */
                plan_sample(p, c->probe_cut ? shared_cost(c, spec_cost(p->out_done, p->out_done,
                                                                       p->in_done))
                                            : wasted_cost(p));
                c->ns = c->wall_ns = 0;
                c->cold = 0;
                c->wvalid = p->win_valid;
                memcpy(c->window, p->win, INFLATE_WINDOW);
                c->state = CH_WAIT;
                pthread_cond_broadcast(&p->work);
                return;
            }
        } else if (c->state != CH_DECODED) {
            return;
        }
        if (!(c->status == INFLATE_STOP || c->status == INFLATE_END)) {
            c->state = CH_FAILED;
            p->failed = 1;
            pthread_cond_broadcast(&p->done);
            return;
        }
        /* c continues the stream. */
        c->wvalid = p->win_valid;
        if (c->nsym)
            memcpy(c->window, p->win, INFLATE_WINDOW);
        if (window_advance(p, c) < 0) {
            c->state = CH_FAILED;
            p->failed = 1;
            pthread_cond_broadcast(&p->done);
            return;
        }
        /* Bytes with no marker nor member end are ready at once: their
           CRC-32 is taken as they are handed out, from the cache the copy
           brings them into, with no hand-over to a worker. */
        c->crc_on_read = !c->nsym && !c->nends;
        c->state = c->crc_on_read ? CH_READY : CH_ACCEPTED;
        /* Decoded speculatively, it is a measure: of time where its pages
           were warm and in-order chunks' are known, once its markers are
           replaced; else of its symbols and ratio. */
        c->timed = !c->known && c->state == CH_ACCEPTED && !c->cold && p->order_ps;
        if (!c->known && !c->timed)
            plan_sample(p, shared_cost(c, chunk_cost(c)));
        p->accepted = c;
        p->n_accepted++;
        p->in_done += c->end - c->start;
        p->out_done += c->nout;
        p->blocks_done += (uint64_t)c->blocks;
        p->pos = c->end;
        if (p->spool)
            release_read(p);
        if (c->status == INFLATE_END) {
            p->ended = 1;
            p->end_bit = c->end;
            drop_after(p, c);
        } else if (c->end < c->to && p->nchunks < in_flight_most(p) + 1 &&
                   !insert_known(p, c, c->end, c->to)) {
            p->failed = 1; /* out of memory: the stream stops after c */
        } /* else, with one chunk more in flight than new_chunk allows (the
             rest is decoded while the reader copies c), new_chunk takes the
             rest of c's range up once the reader frees one: a range that
             decodes to many output limits (the first, sized before the ratio
             is known, of long runs) was otherwise decoded to its end ahead of
             the reader */
        pthread_cond_broadcast(&p->work);
        pthread_cond_broadcast(&p->done);
        c = c->next;
    }
}

/* Compressed bytes for the next chunk, from the ratio seen so far. */
static uint64_t chunk_bytes(const pinflate *p)
{
    if (p->fixed_chunk)
        return p->fixed_chunk;
    if (p->out_done == 0 || p->in_done < 8 * MIN_CHUNK)
        return FIRST_CHUNK;
    uint64_t bytes = target_out(p) * (p->in_done / 8) / p->out_done;
    if (p->blocks_done && bytes < p->in_done / 8 / p->blocks_done * 2)
        bytes = p->in_done / 8 / p->blocks_done * 2; /* two blocks: a start to find */
    return bytes < MIN_CHUNK ? MIN_CHUNK : bytes > MAX_CHUNK ? MAX_CHUNK : bytes;
}

/* Appends the next chunk when fewer than a few per thread are in flight:
 * decoded from the known position when everything before it is accepted,
 * else speculatively. NULL when none is due (lock held). */
static chunk *new_chunk(pinflate *p)
{
    if (!p->active || p->ended || p->failed || p->nchunks >= in_flight_most(p))
        return NULL;
    uint64_t end = src_size(p) * 8, size = chunk_bytes(p) * 8;
    chunk *c, *n = p->accepted ? p->accepted->next : p->head;
    if (n && !n->known && n->from > p->pos) {
        /* in order up to a speculative chunk ahead (mixing): a chunk's
           worth, or the whole gap where less than one and a half are left */
        c = insert_known(p, p->accepted, p->pos, p->pos + size + size / 2 < n->from ? p->pos + size : n->from);
        if (!c)
            p->failed = 1;
        p->known_run++;
        return c;
    }
    if (!p->tail || p->tail == p->accepted) {
        uint64_t from = p->pos > p->next_from ? p->pos : p->next_from;
        uint64_t to = from + size < end ? from + size : end;
        c = insert_known(p, p->tail, p->pos, to > p->pos ? to : p->pos);
        p->known_run++;
    } else {
        int mix = !speculate(p);
        if (p->next_from >= end || (mix && !mixing(p)))
            return NULL;
        /* AUTO's first measures: one speculative chunk per thread but the
           one in order, not as many as may be in flight (on two cores,
           text's would cost three in-order chunks each, and their
           symbols' memory) */
        if (p->plan == PINFLATE_AUTO && !p->spec_samples && spec_in_flight(p, 0) >= p->nthreads - 1)
            return NULL;
        /* mixing: as far ahead as the order goes while it is decoded, the
           speculative chunks before it passed over at once */
        uint64_t chunks =
            (p->spec_cost + COST_ONE - 1) / COST_ONE + 1 + (uint64_t)spec_in_flight(p, 0);
        uint64_t from = p->next_from, ahead = p->pos + chunks * size;
        if (mix && ahead > from)
            from = ahead;
        if (from >= end)
            return NULL;
        int probe = small_probe(p);
        p->known_run = 0;
        c = chunk_new(p);
        if (c) {
            c->probe = probe;
            c->spare = mix;
            c->from = from;
            c->to = c->from + size < end ? c->from + size : end;
            p->tail->next = c;
            p->tail = c;
            p->nchunks++;
        }
    }
    if (!c) {
        p->failed = 1;
        return NULL;
    }
    p->next_from = c->to;
    return c;
}

/* Replaces chunk c's markers and computes its CRC-32. 0, or -1 when a
 * marker points before the stream's start. */
static int resolve(pinflate *p, chunk *c)
{
    int rc = 0;
    if (c->nsym) {
        task_clock t0 = task_clock_now();
        rc = inflate_resolve(c->out, c->sym, c->nsym, c->window, c->wvalid);
        task_clock_add(c, t0);
        if (c->out != (uint8_t *)c->sym) { /* else the bytes are in it */
            spare_give(p, c->sym, c->sym_cap * 2);
            c->sym = NULL;
            c->sym_cap = 0;
        }
    }
    size_t from = 0;
    for (size_t k = 0; k < c->nends; k++) {
        c->seg_crc[k] = crc_update(0, c->out + from, c->ends[k].out - from);
        from = c->ends[k].out;
    }
    c->crc = crc_update(0, c->out + from, c->nout - from);
    return rc;
}

/* Where a worker has no task (lock held, dropped meanwhile): faults in an
 * output buffer of the size an in-order chunk takes (decode_known's room,
 * as grow() rounds it) and keeps it as a spare, so that the decoding
 * threads take warm pages instead of faulting fresh ones in themselves (a
 * huge page's zeroing, 0.2-0.5 ms on a VM, or a compaction's stall) while
 * the first chunks are in flight: decoding in order, the other threads
 * are idle then. At most as many a stream as chunks may be in flight and
 * the stream's source has left, while the spares and the chunks hold
 * fewer. Returns 1 when it made one. */
static int prefault_spare(pinflate *p)
{
    size_t most = (size_t)p->nthreads + 3, bytes = (size_t)1 << 16;
    if (!p->active || p->ended || p->failed || p->spool || p->prefaulted >= (int)most ||
        p->nchunks + (size_t)p->nspare >= most || p->nspare >= p->spares)
        return 0;
    uint64_t end = p->src_len * 8, left = p->next_from < end ? (end - p->next_from) / 8 : 0;
    if (left < chunk_bytes(p) * (uint64_t)(p->prefaulted + 1))
        return 0;
    while (bytes < INFLATE_WINDOW + out_room(p))
        bytes *= 2;
    p->prefaulted++;
    pthread_mutex_unlock(&p->lock);
    uint8_t *b = hugemem_alloc(bytes);
    for (size_t i = 0; b && i < bytes; i += 4096)
        b[i] = 0;
    pthread_mutex_lock(&p->lock);
    spare_put(p, b, bytes);
    p->n_prefault += b != NULL;
    return b != NULL;
}

/* The next task for a worker (lock held): a chunk to resolve, then one to
 * decode, oldest first, then a new chunk. NULL when there is none. */
static chunk *pick(pinflate *p)
{
    if (!p->active)
        return NULL;
    for (chunk *c = p->head; c; c = c->next)
        if (c->state == CH_ACCEPTED)
            return c;
    chunk *n = p->accepted ? p->accepted->next : p->head;
    if (n && take_over(p, n))
        return order_instead(p, n);
    for (chunk *c = p->head; c; c = c->next)
        if (c->state == CH_WAIT && c->known)
            return c;
    for (chunk *c = p->head; c; c = c->next)
        if (c->state == CH_WAIT)
            return c;
    return new_chunk(p);
}

/* A second speculative chunk for a thread that took speculative chunk c,
 * to decode beside it where pairs pay and every other thread is busy (an
 * idle one decodes it sooner, as at a stream's end): one waiting, else a
 * new one; NULL where there is none (lock held). A new chunk decoded in
 * order is left to another thread. */
static chunk *pick_second(pinflate *p, const chunk *c)
{
    if (c->known || p->busy < p->nthreads - 1 || !pairs_pay(p))
        return NULL;
    for (chunk *n = p->head; n; n = n->next)
        if (n != c && n->state == CH_WAIT && !n->known)
            return n;
    chunk *n = new_chunk(p);
    if (n && n->known) {
        pthread_cond_signal(&p->work);
        return NULL;
    }
    return n;
}

/* Takes chunk c that a worker decoded (lock held): freed where it was
 * dropped meanwhile (returns 0), else decoded, its time sampled (1). */
static int chunk_decoded(pinflate *p, chunk *c)
{
    if (c->dropped) {
        chunk_free(p, c);
        return 0;
    }
    c->state = CH_DECODED;
    order_sample(p, c);
    return 1;
}

/* Copies n decoded bytes out for pinflate_read (lock not held): a long copy
 * is shared in pieces with the workers that have no task, so that handing
 * out bytes, one thread's work otherwise, keeps up with many decoding
 * threads where the data compress well. */
static void copy_out(pinflate *p, uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n < 2 * COPY_SHARE_PIECE || p->nthreads < 2) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (p->busy >= p->nthreads) {
        pthread_mutex_unlock(&p->lock);
        memcpy(dst, src, n);
        return;
    }
    copy_share_run(&p->copy, dst, src, n, &p->lock, &p->work, &p->done);
    pthread_mutex_unlock(&p->lock);
}

/* Thread body: runs tasks until pinflate_destroy; a share of a copy out
 * before any chunk. */
static void *worker(void *arg)
{
    pinflate *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->quit) {
        if (copy_share_pending(&p->copy)) {
            copy_share_piece(&p->copy, &p->lock, &p->done);
            continue;
        }
        chunk *c = pick(p);
        if (!c) {
            if (!prefault_spare(p))
                pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        int resolving = c->state == CH_ACCEPTED;
        chunk *c2 = resolving ? NULL : pick_second(p, c);
        c->state = resolving ? CH_RESOLVE : CH_RUN;
        if (c2) {
            c2->state = CH_RUN;
            p->n_paired += 2;
        }
        p->busy++;
        pthread_mutex_unlock(&p->lock);
        int rc = 0;
        if (resolving) {
            rc = resolve(p, c);
        } else {
            task_clock t0 = task_clock_now();
            if (c->known)
                decode_known(p, c);
            else if (c2)
                decode_spec_pair(p, c, c2);
            else
                decode_spec(p, c);
            if (c2)
                task_clock_split(c, c2, t0);
            else
                task_clock_add(c, t0);
        }
        pthread_mutex_lock(&p->lock);
        p->busy--;
        if (resolving && c->dropped) {
            chunk_free(p, c);
        } else if (resolving) {
            c->state = rc < 0 ? CH_FAILED : CH_READY;
            if (rc < 0)
                p->failed = 1;
            if (c->timed) /* its cost is known now, its resolve included */
                plan_sample(p, c->cold ? shared_cost(c, chunk_cost(c)) : time_cost(p, c));
        } else if ((chunk_decoded(p, c) | (c2 && chunk_decoded(p, c2))) != 0) {
            advance(p);
        }
        pthread_cond_broadcast(&p->done);
        pthread_cond_broadcast(&p->work);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Starts the threads (see pinflate.h). */
int pinflate_create(pinflate **out, int threads, uint64_t chunk_bytes)
{
    *out = NULL;
    pinflate *p = calloc(1, sizeof *p);
    if (!p)
        return IO_ERR_NOMEM;
    if (threads < 1)
        threads = 1;
    p->threads = calloc((size_t)threads, sizeof *p->threads);
    p->spares = SPARES_PER_THREAD * threads + 6; /* every chunk's two buffers and span */
    p->spare = calloc((size_t)p->spares, sizeof *p->spare);
    if (!p->threads || !p->spare) {
        free(p->threads);
        free(p->spare);
        free(p);
        return IO_ERR_NOMEM;
    }
    p->fixed_chunk = chunk_bytes;
    p->plan_next = chunk_bytes ? PINFLATE_PARALLEL : PINFLATE_AUTO;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            break;
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        pinflate_destroy(p);
        return IO_ERR_NOMEM;
    }
    *out = p;
    return 0;
}

/* Unlinks every chunk of the stream (lock held). */
static void drop_all(pinflate *p)
{
    if (!p->head)
        return;
    chunk head = {.next = p->head};
    drop_after(p, &head);
    p->nchunks = 0;
    p->head = p->tail = p->accepted = NULL;
}

/* Stops the threads and frees everything (see pinflate.h). */
void pinflate_destroy(pinflate *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    drop_all(p);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    while (p->nspare)
        free(p->spare[--p->nspare].ptr);
    while (p->free_chunks) {
        chunk *c = p->free_chunks;
        p->free_chunks = c->next;
        free(c);
    }
    free(p->spare);
    free(p->threads);
    free(p);
}

/* Ends the current stream (see pinflate.h). */
void pinflate_end(pinflate *p)
{
    pthread_mutex_lock(&p->lock);
    drop_all(p);
    p->active = 0;
    while (p->busy) /* nothing may read the source after this returns */
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

/* Ends the current stream without waiting (see pinflate.h). */
void pinflate_abandon(pinflate *p)
{
    pthread_mutex_lock(&p->lock);
    drop_all(p);
    p->active = 0;
    pthread_mutex_unlock(&p->lock);
}

/* Starts a stream over fd, mem or spool at the point `at` (see pinflate.h). */
static void begin(pinflate *p, int fd, const uint8_t *mem, spool *sp, uint64_t src_len,
                  const pinflate_point *at)
{
    pinflate_end(p);
    pthread_mutex_lock(&p->lock);
    p->fd = fd;
    p->mem = mem;
    p->spool = sp;
    p->src_len = src_len;
    p->pos = p->next_from = p->out_pos = at->bit;
    p->ended = p->failed = 0;
    p->end_bit = 0;
    p->in_done = p->out_done = p->blocks_done = 0;
    p->win_valid = at->wlen < INFLATE_WINDOW ? at->wlen : INFLATE_WINDOW;
    if (p->win_valid)
        memcpy(p->win + INFLATE_WINDOW - p->win_valid, at->window + at->wlen - p->win_valid,
               p->win_valid);
    p->crc = at->crc;
    p->len = at->len;
    p->stopped = NULL;
    p->out_wlen = 0;
    p->pause = NULL;
    p->paused = 0;
    p->member_end = 0;
    p->members = p->members_next; /* no worker decodes meanwhile: pinflate_end above */
    p->plan = p->plan_next;
    p->spec_samples = 0;
    p->order_ps = 0;
    p->known_run = 0;
    p->prefaulted = 0;
    p->spec_cost = hinted_cost(p, p->ratio_next);
    p->ratio_next = 0;
    p->active = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
}

/* Sets the plan of the streams begun next (see pinflate.h). */
void pinflate_plan(pinflate *p, enum pinflate_plan plan)
{
    pthread_mutex_lock(&p->lock);
    p->plan_next = plan;
    pthread_mutex_unlock(&p->lock);
}

/* Takes the ratio the stream begun next is expected at (see pinflate.h). */
void pinflate_ratio_hint(pinflate *p, double ratio)
{
    pthread_mutex_lock(&p->lock);
    p->ratio_next = ratio;
    pthread_mutex_unlock(&p->lock);
}

/* Starts a stream of a file or memory (see pinflate.h). */
void pinflate_begin(pinflate *p, int fd, const uint8_t *mem, uint64_t src_len, uint64_t start)
{
    pinflate_point at = {.bit = start * 8, .crc = (uint32_t)crc32(0, NULL, 0)};
    begin(p, fd, mem, NULL, src_len, &at);
}

/* Goes on with a stream another decoder stopped in (see pinflate.h). */
void pinflate_begin_at(pinflate *p, int fd, const uint8_t *mem, uint64_t src_len,
                       const pinflate_point *at)
{
    begin(p, fd, mem, NULL, src_len, at);
}

/* Starts a stream of a pipe (see pinflate.h). */
void pinflate_begin_spool(pinflate *p, spool *s, uint64_t start)
{
    pinflate_point at = {.bit = start * 8, .crc = (uint32_t)crc32(0, NULL, 0)};
    begin(p, -1, NULL, s, SPOOL_UNKNOWN, &at);
}

/* Goes on with a pipe's stream another decoder stopped in (see pinflate.h). */
void pinflate_begin_spool_at(pinflate *p, spool *s, const pinflate_point *at)
{
    begin(p, -1, NULL, s, SPOOL_UNKNOWN, at);
}

/* Whether the streams begun next go on across gzip members (see
 * pinflate.h). */
void pinflate_members(pinflate *p, int on)
{
    pthread_mutex_lock(&p->lock);
    p->members_next = on;
    pthread_mutex_unlock(&p->lock);
}

/* Goes on with the next member where the stream stopped at a member's end
 * (see pinflate.h). */
int pinflate_continue(pinflate *p, uint64_t start)
{
    pthread_mutex_lock(&p->lock);
    int on = p->member_end && p->next_member == start * 8;
    if (on) {
        p->member_end = 0;
        p->crc = (uint32_t)crc32(0, NULL, 0);
        p->len = 0;
        p->out_pos = start * 8;
    }
    pthread_mutex_unlock(&p->lock);
    return on;
}

/* Whether pinflate_read stopped at a member's end with more decoded after it
 * (see pinflate.h). */
int pinflate_member_end(pinflate *p)
{
    pthread_mutex_lock(&p->lock);
    int at = p->member_end;
    pthread_mutex_unlock(&p->lock);
    return at;
}

/* Pauses the stream on *flag (see pinflate.h). */
void pinflate_pause_on(pinflate *p, const atomic_int *flag)
{
    pthread_mutex_lock(&p->lock);
    p->pause = flag;
    pthread_mutex_unlock(&p->lock);
}

/* Moves the window of handed-out bytes past a chunk's n decoded bytes. */
static void out_window_advance(pinflate *p, const uint8_t *out, size_t n)
{
    size_t take = n < INFLATE_WINDOW ? n : INFLATE_WINDOW;
    memmove(p->out_win, p->out_win + take, INFLATE_WINDOW - take);
    memcpy(p->out_win + INFLATE_WINDOW - take, out + n - take, take);
    p->out_wlen = p->out_wlen + take < INFLATE_WINDOW ? p->out_wlen + take : INFLATE_WINDOW;
}

/* Sets the hook called at each boundary between chunks handed out (see pinflate.h). */
void pinflate_on_boundary(pinflate *p, void (*fn)(void *ctx, uint64_t bit, uint64_t len), void *ctx)
{
    pthread_mutex_lock(&p->lock);
    p->on_boundary = fn;
    p->boundary_ctx = ctx;
    pthread_mutex_unlock(&p->lock);
}

/* Reports the block boundaries inside chunk c that its bytes handed out
 * have now passed, but those at its end (boundaries_at_end), seg of its
 * bytes before its member's (lock held). */
static void boundaries_passed(pinflate *p, chunk *c, size_t seg)
{
    p->marks_lost |= c->marks_lost;
    for (; c->marks_taken < c->nmarks && c->marks[c->marks_taken].out <= c->taken &&
           c->marks[c->marks_taken].out < c->nout;
         c->marks_taken++)
        p->on_boundary(p->boundary_ctx, c->marks[c->marks_taken].bit,
                       p->len + c->marks[c->marks_taken].out - seg);
}

/* Reports the block boundaries at the end of chunk c, all of whose bytes
 * are handed out (lock held): after its last bytes, after any empty blocks
 * that follow them inside it, and its end (unless the stream's). The first
 * of those is reported whether the chunk ends there or the next chunk goes
 * on past them, so the boundaries reported do not depend on where chunks
 * end. */
static void boundaries_at_end(pinflate *p, chunk *c)
{
    uint64_t last = UINT64_MAX;
    p->marks_lost |= c->marks_lost;
    for (; c->marks_taken < c->nmarks; c->marks_taken++) {
        last = c->marks[c->marks_taken].bit;
        p->on_boundary(p->boundary_ctx, last, p->len);
    }
    if (c->status != INFLATE_END && last != c->end)
        p->on_boundary(p->boundary_ctx, c->end, p->len);
}

/* Whether a block boundary pinflate_on_boundary should have reported was
 * lost for want of memory. */
int pinflate_boundaries_lost(pinflate *p)
{
    pthread_mutex_lock(&p->lock);
    int lost = p->marks_lost;
    pthread_mutex_unlock(&p->lock);
    return lost;
}

/* Hands out decoded bytes in order (see pinflate.h). */
ssize_t pinflate_read(pinflate *p, uint8_t *buf, size_t n)
{
    size_t got = 0;
    pthread_mutex_lock(&p->lock);
    while (got < n) {
        chunk *c = p->head;
        if ((!c && p->ended) || p->member_end)
            break;
        /* a pause falls between chunks, before one that has not failed, while
           the final block is still to be decoded (else the rest is ready) */
        if (!p->paused && p->pause && !p->ended && atomic_load(p->pause) &&
            (!c || c->taken == 0) && !(c && c->state == CH_FAILED))
            p->paused = 1;
        if (p->paused) {
            pthread_mutex_unlock(&p->lock);
            return got ? (ssize_t)got : PINFLATE_PAUSED;
        }
        if (!c && p->failed) { /* memory ran out where no chunk could fail in its place */
            pthread_mutex_unlock(&p->lock);
            return got ? (ssize_t)got : IO_ERR_NOMEM;
        }
        if (!c || (c->state != CH_READY && c->state != CH_FAILED)) {
            pthread_cond_wait(&p->done, &p->lock);
            continue;
        }
        if (c->state == CH_FAILED) {
            p->stopped = c;
            pthread_mutex_unlock(&p->lock);
            return got ? (ssize_t)got : PINFLATE_STOPPED;
        }
        /* up to the next member end in it, else to its end */
        size_t seg = c->ends_taken ? c->ends[c->ends_taken - 1].out : 0;
        size_t limit = c->ends_taken < c->nends ? c->ends[c->ends_taken].out : c->nout;
        size_t k = limit - c->taken < n - got ? limit - c->taken : n - got;
        pthread_mutex_unlock(&p->lock);
        if (c->crc_on_read) /* checksummed from the copy, piece by piece, in cache */
            c->crc = crc_copy(c->crc, buf + got, c->out + c->taken, k);
        else
            copy_out(p, buf + got, c->out + c->taken, k);
        pthread_mutex_lock(&p->lock);
        c->taken += k;
        got += k;
        if (p->on_boundary)
            boundaries_passed(p, c, seg);
        if (c->taken == limit && c->ends_taken < c->nends) { /* a member ends: stop there */
            const inflate_member_end *e = &c->ends[c->ends_taken];
            p->crc =
                (uint32_t)crc32_combine(p->crc, c->seg_crc[c->ends_taken], (z_off_t)(limit - seg));
            p->len += limit - seg;
            p->member_end_bit = e->end_bit;
            p->next_member = e->next_bit;
            p->out_pos = e->end_bit;
            c->ends_taken++;
            p->member_end = 1;
            break;
        }
        if (c->taken == c->nout) {
            if (p->pause) /* only a stream that may pause needs the window handed out */
                out_window_advance(p, c->out, c->nout);
            p->crc = (uint32_t)crc32_combine(p->crc, c->crc, (z_off_t)(c->nout - seg));
            p->len += c->nout - seg;
            p->out_pos = c->end;
            if (p->on_boundary)
                boundaries_at_end(p, c);
            p->head = c->next;
            if (p->tail == c)
                p->tail = NULL;
            if (p->accepted == c)
                p->accepted = NULL;
            p->nchunks--;
            chunk_free(p, c);
            pthread_cond_broadcast(&p->work);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return (ssize_t)got;
}

/* Whether the whole stream has been handed out (see pinflate.h). */
int pinflate_finished(pinflate *p)
{
    pthread_mutex_lock(&p->lock);
    int done = (p->ended && !p->head) || p->member_end;
    pthread_mutex_unlock(&p->lock);
    return done;
}

/* The stream's end, CRC-32 and length (see pinflate.h). */
void pinflate_result(const pinflate *p, uint64_t *end_byte, uint32_t *crc, uint64_t *len)
{
    *end_byte = ((p->member_end ? p->member_end_bit : p->end_bit) + 7) / 8;
    *crc = p->crc;
    *len = p->len;
}

/* Where a sequential decoder goes on (see pinflate.h). */
void pinflate_stop_point(const pinflate *p, uint64_t *bit, const uint8_t **window, size_t *wlen,
                         uint32_t *crc, uint64_t *len)
{
    const chunk *c = p->stopped;
    *bit = c->start;
    *window = c->window + INFLATE_WINDOW - c->wvalid;
    *wlen = c->wvalid;
    *crc = p->crc;
    *len = p->len;
}

/* Where the stream paused (see pinflate.h). */
void pinflate_pause_point(const pinflate *p, uint64_t *bit, const uint8_t **window, size_t *wlen,
                          uint32_t *crc, uint64_t *len)
{
    *bit = p->out_pos;
    *window = p->out_win + INFLATE_WINDOW - p->out_wlen;
    *wlen = p->out_wlen;
    *crc = p->crc;
    *len = p->len;
}

/* The source byte the handed-out data reaches (see pinflate.h). */
uint64_t pinflate_input_pos(const pinflate *p)
{
    return p->out_pos / 8;
}

/* Chunks accepted and decoded again (see pinflate.h). */
void pinflate_counts(const pinflate *p, uint64_t *chunks, uint64_t *redone)
{
    *chunks = p->n_accepted;
    *redone = p->n_redone;
}

/* Chunks decoded speculatively (see pinflate.h). */
uint64_t pinflate_speculated(const pinflate *p)
{
    return p->n_spec;
}

/* Hand-out copies shared with idle workers (see pinflate.h). */
uint64_t pinflate_shared_copies(const pinflate *p)
{
    return p->copy.runs;
}

/* Speculative chunks decoded two at once (see pinflate.h). */
uint64_t pinflate_paired(const pinflate *p)
{
    return p->n_paired;
}

/* Buffers faulted in ahead (see pinflate.h). */
uint64_t pinflate_prefaulted(const pinflate *p)
{
    return p->n_prefault;
}

/* Blocks dropped for want of room (see pinflate.h). */
uint64_t pinflate_cut_blocks(const pinflate *p)
{
    return __atomic_load_n(&p->n_cut, __ATOMIC_RELAXED);
}
