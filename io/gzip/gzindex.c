/* gzindex.c - seek indexes of a single-member gzip file (see gzindex.h).
 *
 * The file: 8 zero bytes, "gzipindx", the point count twice (uint64), then
 * per point its decoded offset (uint64), the byte `in` after its bit
 * offset (uint64), the `bits` of the byte before `in` that belong to the
 * point (uint32: bit offset = 8 * in - bits), the compressed window's
 * length (uint32) and the window; then the member's decoded size (uint64).
 * Every number is big-endian. gpubatch's check record follows: "GPBXCHK1",
 * the gzip file's length (uint64), the CRC-32 of its first 64 KiB, its
 * last 8 bytes, one CRC-32 per chunk, and a CRC-32 of every byte before it. */
#include "gzindex.h"

#include "io/crc.h"
#include "io/hugemem.h"
#include "io/par.h"
#include "io/pread.h"
#include "bgzf.h"
#include "copy_share.h"
#include "gzip_header.h"
#include "inflate.h"
#include "pinflate.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HEAD_LEN 32           /* zeros, magic, the count twice */
#define POINT_LEN 24          /* a point's fixed fields */
#define CHECK_MAGIC "GPBXCHK1"
#define CHECK_FIXED 32        /* the check record's magic, length, head CRC, trailer, 4 zeros */
#define MAX_INDEX ((uint64_t)1 << 32) /* an index file larger is refused */
#define SPACING_OUT ((uint64_t)1 << 20) /* the least output between two points */
#define SPACING_RATIO 100     /* compressed bytes before a point per byte of it */
#define READ_STEP ((size_t)8 << 20)  /* decoded bytes read at a time while building */

/* Big-endian 64-bit value at p. */
static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* Big-endian 32-bit value at p. */
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Writes v big-endian in `bytes` bytes at p. */
static void put_be(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* Reads the optional check record at d[at..len) into x: 1 when present and
 * whole, 0 when absent, or a negative error. */
static int parse_check(gzindex *x, const uint8_t *d, size_t at, size_t len, io_status *st)
{
    if (at == len)
        return 0;
    size_t need = CHECK_FIXED + 4 * x->n + 4;
    if (len - at < 8 || memcmp(d + at, CHECK_MAGIC, 8))
        return io_fail(st, IO_ERR_FORMAT, "%s: not a seek index: unknown bytes after its end",
                       x->path);
    if (len - at != need)
        return io_fail(st, IO_ERR_FORMAT, "%s: damaged seek index: its check record is %s",
                       x->path, len - at < need ? "cut short" : "followed by other bytes");
    if (crc_update(0, d, len - 4) != be32(d + len - 4))
        return io_fail(st, IO_ERR_FORMAT,
                       "%s: damaged seek index: its bytes do not match their CRC-32", x->path);
    x->file_len = be64(d + at + 8);
    x->head_crc = be32(d + at + 16);
    memcpy(x->trailer, d + at + 20, 8);
    for (size_t i = 0; i < x->n; i++)
        x->pt[i].crc = be32(d + at + CHECK_FIXED + 4 * i);
    return 1;
}

/* Parses an index (see gzindex.h). */
int gzindex_parse(gzindex **out, const char *path, const void *data, size_t len, io_status *st)
{
    *out = NULL;
    gzindex *x = calloc(1, sizeof *x);
    if (!x || !(x->path = strdup(path)) || !(x->data = malloc(len ? len : 1))) {
        gzindex_free(x);
        return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    }
    memcpy(x->data, data, len);
    x->len = len;
    const uint8_t *d = x->data;
    static const uint8_t zero[8];
    int rc = IO_ERR_FORMAT;
    if (len >= 5 && !memcmp(d, "GZIDX", 5)) {
        io_fail(st, rc, "%s: an indexed_gzip index (GZIDX) is not read: export it with "
                        "--index-format gztool", path);
        goto out_free;
    }
    if (len < HEAD_LEN || memcmp(d, zero, 8) || memcmp(d + 8, "gzipind", 7) ||
        (d[15] != 'x' && d[15] != 'X')) {
        io_fail(st, rc, "%s: not a seek index (gztool's format, \"gzipindx\", is read)", path);
        goto out_free;
    }
    if (d[15] == 'X') {
        io_fail(st, rc, "%s: a gztool index with line numbers (\"gzipindX\") is not read: "
                        "export it with --index-format gztool", path);
        goto out_free;
    }
    uint64_t n = be64(d + 16);
    if (n == 0 || n != be64(d + 24) || n > (len - HEAD_LEN) / POINT_LEN) {
        io_fail(st, rc, "%s: %s seek index: it holds %llu of %llu access points", path,
                n == 0 ? "an empty" : "an incomplete or damaged", (unsigned long long)n,
                (unsigned long long)be64(d + 24));
        goto out_free;
    }
    if (!(x->pt = calloc((size_t)n, sizeof *x->pt))) {
        rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
        goto out_free;
    }
    x->n = (size_t)n;
    size_t at = HEAD_LEN;
    for (size_t i = 0; i < x->n; i++) {
        if (len - at < POINT_LEN + 8) {
            io_fail(st, rc, "%s: damaged seek index: cut short in access point %zu", path, i);
            goto out_free;
        }
        gzindex_point *p = &x->pt[i];
        uint64_t in = be64(d + at + 8);
        uint32_t bits = be32(d + at + 16);
        p->out = be64(d + at);
        p->zlen = be32(d + at + 20);
        if (bits > 7 || in > UINT64_MAX / 8 || (bits && !in) || p->zlen > len - at - POINT_LEN - 8 ||
            (i == 0 && p->out) ||
            (i && (p->out < x->pt[i - 1].out || in * 8 - bits <= x->pt[i - 1].bit))) {
            io_fail(st, rc, "%s: damaged seek index: access point %zu is out of order or out of "
                            "range", path, i);
            goto out_free;
        }
        p->bit = in * 8 - bits;
        p->zwin = p->zlen ? d + at + POINT_LEN : NULL;
        at += POINT_LEN + p->zlen;
    }
    x->usize = be64(d + at);
    at += 8;
    if (x->usize < x->pt[x->n - 1].out) {
        io_fail(st, rc, "%s: damaged seek index: its size is below its last access point", path);
        goto out_free;
    }
    int c = parse_check(x, d, at, len, st);
    if (c < 0) {
        rc = c;
        goto out_free;
    }
    x->checked = c;
    *out = x;
    return 0;
out_free:
    gzindex_free(x);
    return rc;
}

/* Reads and parses an index file (see gzindex.h). */
int gzindex_load(gzindex **out, const char *path, io_status *st)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        int e = fd < 0 ? errno : EISDIR;
        if (fd >= 0)
            close(fd);
        return io_fail(st, IO_ERR_OPEN, "%s: %s", path,
                       fd >= 0 && !S_ISREG(sb.st_mode) ? "not a regular file" : strerror(e));
    }
    if ((uint64_t)sb.st_size > MAX_INDEX) {
        close(fd);
        return io_fail(st, IO_ERR_FORMAT, "%s: not a seek index (over 4 GiB)", path);
    }
    uint8_t *buf = malloc((size_t)sb.st_size + 1);
    ssize_t k = buf ? io_pread_full(fd, buf, (size_t)sb.st_size, 0) : 0;
    close(fd);
    int rc;
    if (!buf)
        rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    else if (k != (ssize_t)sb.st_size)
        rc = io_fail(st, IO_ERR_READ, "%s: %s", path,
                     k < 0 ? strerror((int)-k) : "the file shrank while read");
    else
        rc = gzindex_parse(out, path, buf, (size_t)k, st);
    free(buf);
    return rc;
}

/* Fails with a line saying why x is not the index of the gzip file. */
static int not_its_index(const gzindex *x, io_status *st, const char *why)
{
    return io_fail(st, IO_ERR_FORMAT,
                   "the seek index %s is not this file's (%s): make a new one with `gpubatch "
                   "index`", x->path, why);
}

/* Checks x against the gzip file (see gzindex.h). */
int gzindex_check(const gzindex *x, int fd, uint64_t file_len, io_status *st)
{
    uint8_t head[GZINDEX_HEAD_BYTES], tail[8];
    size_t hn = file_len < sizeof head ? (size_t)file_len : sizeof head;
    ssize_t k = io_pread_full(fd, head, hn, 0);
    if (k == (ssize_t)hn && file_len >= 8)
        k = io_pread_full(fd, tail, 8, file_len - 8) == 8 ? k : -EIO;
    if (k != (ssize_t)hn || file_len < 18)
        return k < 0 ? io_fail(st, IO_ERR_READ, "%s", strerror((int)-k))
                     : not_its_index(x, st, "the file is too short for gzip");
    if (bgzf_block_size(head, hn))
        return io_fail(st, IO_ERR_FORMAT,
                       "blocked gzip (BGZF) needs no seek index: leave out %s", x->path);
    if (x->checked) {
        if (x->file_len != file_len)
            return not_its_index(x, st, "the file's length differs");
        if (x->head_crc != crc_update(0, head, hn))
            return not_its_index(x, st, "the file's first bytes differ");
        if (memcmp(x->trailer, tail, 8))
            return not_its_index(x, st, "the file's gzip trailer differs");
    }
    uint32_t isize = (uint32_t)tail[4] | (uint32_t)tail[5] << 8 | (uint32_t)tail[6] << 16 |
                     (uint32_t)tail[7] << 24;
    if ((uint32_t)x->usize != isize)
        return not_its_index(x, st, "its size is not the ISIZE of the file's gzip trailer");
    if (x->pt[x->n - 1].bit / 8 + 8 >= file_len || x->pt[0].bit / 8 < 10)
        return not_its_index(x, st, "an access point lies outside the file's deflate data");
    return 0;
}

/* Inflates a point's window (see gzindex.h). */
int gzindex_window(const gzindex *x, size_t i, uint8_t *win, size_t *wlen, io_status *st)
{
    uLongf n = INFLATE_WINDOW;
    *wlen = 0;
    if (!x->pt[i].zlen)
        return 0;
    int z = uncompress(win, &n, x->pt[i].zwin, x->pt[i].zlen);
    if (z != Z_OK)
        return io_fail(st, IO_ERR_FORMAT, "%s: damaged seek index: the window of access point "
                                          "%zu %s", x->path, i,
                       z == Z_BUF_ERROR ? "is over 32 KiB or cut short" : "does not inflate");
    *wlen = n;
    return 0;
}

/* Frees an index. */
void gzindex_free(gzindex *x)
{
    if (!x)
        return;
    free(x->path);
    free(x->data);
    free(x->pt);
    free(x);
}

/* --- reading through an index --- */

/* One chunk, from point i to the next (or to the member's end), decoded by
 * one job of a batch. */
typedef struct {
    const gzindex *x;
    int fd;
    uint64_t file_len;
    size_t i;
    uint8_t *buf;   /* INFLATE_WINDOW bytes of history, then the chunk's bytes */
    size_t cap;     /* its allocation, kept between batches */
    const uint8_t *mem; /* the whole file mapped, or NULL: read into src */
    uint8_t *src;   /* the chunk's compressed bytes (read from fd) */
    size_t src_cap;
    size_t n;       /* the chunk's decoded bytes */
    uint32_t crc;
    uint64_t end_bit; /* the last chunk: just past the final block */
    int rc;
    io_status st;
} chunk_job;

struct gzindex_stream {
    const gzindex *x;
    int fd;
    uint64_t file_len;
    chunk_job *slot;     /* chunk i decodes into slot[i % nslot] */
    unsigned char *done; /* per slot: its chunk is decoded */
    size_t nslot, nworker;
    pthread_t *worker;
    size_t started;      /* workers running */
    pthread_mutex_t mu;
    pthread_cond_t wake; /* a chunk was handed out in full, or the workers must stop */
    pthread_cond_t ready; /* a chunk was decoded */
    int stop;            /* the workers leave */
    size_t next, last;   /* chunks still to hand to a worker: [next, last] */
    size_t cur;          /* the chunk being handed out */
    size_t end;          /* one past the last chunk asked for */
    size_t taken;        /* its bytes handed out */
    uint64_t skip;       /* decoded bytes to drop before the first handed out */
    int whole;           /* the read began at the member's start */
    int ended;
    uint64_t end_bit, len, chunks;
    uint64_t in_pos;     /* the file byte where the bytes handed out were compressed */
    uint32_t crc;
    int pair;            /* chunks of mostly literals: a worker may take two (take_pair) */
    atomic_ullong pairs; /* pairs of chunks decoded at once */
    copy_share copy;     /* gzindex_stream_read's copy out, shared with idle workers */
    const atomic_int *pause; /* gzindex_stream_pause_on's flag, or NULL */
    int paused;          /* stopped before chunk `cur` */
};

/* Makes room for `need` bytes in *buf (capacity *cap), its bytes not
 * kept: from HUGEMEM_PAGE on in huge pages, rounded up to whole ones, so
 * that the next chunks, of about the same size, reuse the pages faulted in
 * (a fresh 4 KiB page costs more than decoding its bytes). 0 or -1. */
static int reserve(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t room = need;
    if (need >= HUGEMEM_PAGE && need <= SIZE_MAX - HUGEMEM_PAGE)
        room = (need + HUGEMEM_PAGE - 1) / HUGEMEM_PAGE * HUGEMEM_PAGE;
    uint8_t *b = hugemem_alloc(room);
    if (!b)
        return -1;
    free(*buf);
    *buf = b;
    *cap = room;
    return 0;
}

/* The decoded bytes from point i to the next (or to the member's end). */
static uint64_t chunk_out_len(const gzindex *x, size_t i)
{
    return (i + 1 == x->n ? x->usize : x->pt[i + 1].out) - x->pt[i].out;
}

/* Sets up the decode of one chunk into j: from its point with the point's
 * window, to the next point exactly (or the member's final block); with
 * halves, as two halves of itself where that pays, with the room that
 * inflate_decode_bytes then needs past the chunk's bytes (the second
 * half's symbols). 0, or -1 with the error in c->rc and c->st. */
static int chunk_open(chunk_job *c, inflate_job *j, int halves)
{
    const gzindex *x = c->x;
    const gzindex_point *p = &x->pt[c->i];
    int last = c->i + 1 == x->n;
    uint64_t c0 = p->bit / 8;
    uint64_t c1 = last ? c->file_len : x->pt[c->i + 1].bit / 8 + 64;
    c1 = c1 > c->file_len ? c->file_len : c1;
    uint64_t olen = chunk_out_len(x, c->i);
    uint64_t room = olen + (halves ? olen / 4 + ((uint64_t)1 << 20) : 0);
    c->rc = 0;
    c->n = 0;
    if (room > SIZE_MAX - INFLATE_WINDOW || c1 - c0 > SIZE_MAX || c0 >= c1 ||
        reserve(&c->buf, &c->cap, INFLATE_WINDOW + (size_t)room) < 0 ||
        (!c->mem && reserve(&c->src, &c->src_cap, (size_t)(c1 - c0)) < 0)) {
        c->rc = io_fail(&c->st, IO_ERR_NOMEM, "%s", "out of memory");
        return -1;
    }
    const uint8_t *in = c->mem ? c->mem + c0 : c->src;
    ssize_t k = c->mem ? (ssize_t)(c1 - c0) : io_pread_full(c->fd, c->src, (size_t)(c1 - c0), c0);
    if (k != (ssize_t)(c1 - c0)) {
        c->rc = io_fail(&c->st, IO_ERR_READ, "%s", k < 0 ? strerror((int)-k) : "the file shrank");
        return -1;
    }
    size_t wlen;
    if ((c->rc = gzindex_window(x, c->i, c->buf, &wlen, &c->st)) < 0)
        return -1;
    size_t hist = wlen < p->out ? wlen : (size_t)p->out;
    memmove(c->buf + INFLATE_WINDOW - hist, c->buf + wlen - hist, hist);
    *j = (inflate_job){.in = in, .in_len = (size_t)(c1 - c0), .bit = p->bit % 8,
                       .stop_bit = last ? UINT64_MAX : x->pt[c->i + 1].bit - c0 * 8,
                       .out_limit = SIZE_MAX, .out = c->buf + INFLATE_WINDOW,
                       .out_cap = (size_t)room, .history = hist, .halves = halves};
    return 0;
}

/* Takes the result r of chunk c's decode with j: it must end at the next
 * point exactly (or at the member's final block) with the point's length
 * of data, and match the chunk's CRC-32 where the index has one. */
static void chunk_close(chunk_job *c, const inflate_job *j, int r)
{
    const gzindex *x = c->x;
    const gzindex_point *p = &x->pt[c->i];
    int last = c->i + 1 == x->n;
    uint64_t c0 = p->bit / 8, olen = chunk_out_len(x, c->i);
    int ok = last ? r == INFLATE_END : r == INFLATE_STOP && j->bit == j->stop_bit;
    if (!ok || j->out_len != olen) {
        c->rc = io_fail(&c->st, IO_ERR_CORRUPT,
                        "the data from access point %zu (byte %llu) of the seek index %s does not "
                        "decode %s: the index is damaged or not this file's, or the data is "
                        "corrupt (read without the index to tell)",
                        c->i, (unsigned long long)c0, x->path,
                        last ? "to the member's end" : "to the next point");
        return;
    }
    c->n = (size_t)olen;
    c->crc = crc_update(0, c->buf + INFLATE_WINDOW, c->n);
    c->end_bit = c0 * 8 + j->bit;
    if (x->checked && c->crc != p->crc)
        c->rc = io_fail(&c->st, IO_ERR_CRC,
                        "the data from access point %zu (byte %llu) of the seek index %s does not "
                        "match its CRC-32: the index is damaged or not this file's, or the data "
                        "is corrupt", c->i, (unsigned long long)c0, x->path);
}

/* Decodes one chunk (a worker's job); with halves, a chunk of mostly
 * literals as two halves of itself at once (inflate_job.halves). */
static void chunk_run(chunk_job *c, int halves)
{
    inflate_job j;
    if (chunk_open(c, &j, halves) == 0)
        chunk_close(c, &j, inflate_decode_bytes(&j));
}

/* Decodes chunks a and b at once on this thread (inflate_decode_bytes_pair),
 * each with its own result; one that cannot be set up leaves the other to
 * decode alone. */
static void chunk_run_pair(chunk_job *a, chunk_job *b)
{
    inflate_job ja, jb;
    int oa = chunk_open(a, &ja, 0), ob = chunk_open(b, &jb, 0);
    if (oa == 0 && ob == 0) {
        int rb, ra = inflate_decode_bytes_pair(&ja, &jb, &rb);
        chunk_close(a, &ja, ra);
        chunk_close(b, &jb, rb);
    } else if (oa == 0) {
        chunk_close(a, &ja, inflate_decode_bytes(&ja));
    } else if (ob == 0) {
        chunk_close(b, &jb, inflate_decode_bytes(&jb));
    }
}

/* Whether a worker that took chunk i takes the next one too, to decode both
 * at once (lock held): a stream of mostly literals on more than
 * INFLATE_HALVES_THREADS workers, with a slot free for it and more chunks
 * left than the other workers take, so that the stream's last ones spread
 * over every thread. */
static int take_pair(const gzindex_stream *s)
{
    return s->pair && s->next <= s->last && s->next < s->cur + s->nslot &&
           s->last - s->next >= s->nworker;
}

/* A worker: takes a piece of the reading thread's copy where one waits,
 * else decodes the next chunk (or two, take_pair) into its slot once the
 * chunk a ring ago has been handed out, until told to stop. */
static void *chunk_worker(void *arg)
{
    gzindex_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && !copy_share_pending(&s->copy) &&
               (s->next > s->last || s->next >= s->cur + s->nslot))
            pthread_cond_wait(&s->wake, &s->mu);
        if (s->stop)
            break;
        if (copy_share_pending(&s->copy)) {
            copy_share_piece(&s->copy, &s->mu, &s->ready);
            continue;
        }
        size_t i = s->next++;
        chunk_job *c = &s->slot[i % s->nslot], *c2 = NULL;
        c->i = i;
        if (take_pair(s)) {
            c2 = &s->slot[s->next % s->nslot];
            c2->i = s->next++;
            atomic_fetch_add(&s->pairs, 1);
        }
        pthread_mutex_unlock(&s->mu);
        if (c2)
            chunk_run_pair(c, c2);
        else
            chunk_run(c, s->nworker <= INFLATE_HALVES_THREADS);
        pthread_mutex_lock(&s->mu);
        s->done[i % s->nslot] = 1;
        if (c2)
            s->done[c2->i % s->nslot] = 1;
        pthread_cond_broadcast(&s->ready);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Stops the workers and drops the chunks they decoded and were not handed
 * out: the next chunk to decode is then `cur`. */
static void stop_workers(gzindex_stream *s)
{
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->mu);
    for (size_t k = 0; k < s->started; k++)
        pthread_join(s->worker[k], NULL);
    s->started = 0;
    s->stop = 0;
    s->next = s->cur;
    memset(s->done, 0, s->nslot);
}

/* Starts the workers (at least one; none when none can be created, and the
 * reading thread then decodes each chunk itself). */
static void start_workers(gzindex_stream *s)
{
    while (s->started < s->nworker &&
           pthread_create(&s->worker[s->started], NULL, chunk_worker, s) == 0)
        s->started++;
}

/* Opens a read through an index (see gzindex.h). */
int gzindex_stream_open(gzindex_stream **out, const gzindex *x, int fd, const uint8_t *mem,
                        uint64_t file_len, int nworkers)
{
    gzindex_stream *s = calloc(1, sizeof *s);
    size_t workers = (size_t)(nworkers > 0 ? nworkers : par_cpus());
    if (!s)
        return IO_ERR_NOMEM;
    s->nworker = workers;
    /* the compressed bits a decoded byte, over the member (a ratio the
       index knows before any chunk is decoded) */
    s->pair = workers > INFLATE_HALVES_THREADS &&
              (double)file_len * 8 >= (double)x->usize * INFLATE_PAIR_BITS;
    s->nslot = (s->pair ? 3 : 2) * workers;
    if (!(s->slot = calloc(s->nslot, sizeof *s->slot)) || !(s->done = calloc(s->nslot, 1)) ||
        !(s->worker = calloc(workers, sizeof *s->worker))) {
        free(s->slot);
        free(s->done);
        free(s);
        return IO_ERR_NOMEM;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->wake, NULL);
    pthread_cond_init(&s->ready, NULL);
    for (size_t k = 0; k < s->nslot; k++) {
        s->slot[k].x = x;
        s->slot[k].fd = fd;
        s->slot[k].mem = mem;
        s->slot[k].file_len = file_len;
    }
    s->x = x;
    s->fd = fd;
    s->file_len = file_len;
    gzindex_stream_seek(s, 0, UINT64_MAX);
    *out = s;
    return 0;
}

/* Positions a read through an index (see gzindex.h). */
void gzindex_stream_seek(gzindex_stream *s, uint64_t from, uint64_t upto)
{
    const gzindex *x = s->x;
    size_t lo = 0, hi = x->n; /* the last point at or before `from` */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->pt[mid].out <= from)
            lo = mid;
        else
            hi = mid;
    }
    size_t last = lo;
    while (last + 1 < x->n && x->pt[last + 1].out < upto)
        last++;
    stop_workers(s);
    s->cur = s->next = lo;
    s->last = last;
    s->end = last + 1;
    s->skip = from - x->pt[lo].out;
    s->whole = from == 0;
    s->taken = 0;
    s->ended = 0;
    s->paused = 0;
    s->crc = 0;
    s->len = 0;
}

/* The chunk being handed out, decoded: waits for its worker (or decodes it
 * here where no worker runs). NULL after its failure, with the line in *st
 * and the error in *rc. */
static chunk_job *current_chunk(gzindex_stream *s, int *rc, io_status *st)
{
    chunk_job *c = &s->slot[s->cur % s->nslot];
    if (!s->started)
        start_workers(s);
    pthread_mutex_lock(&s->mu);
    if (!s->started && !s->done[s->cur % s->nslot]) {
        s->next = s->cur + 1;
        c->i = s->cur;
        chunk_run(c, 1);
        s->done[s->cur % s->nslot] = 1;
    }
    while (!s->done[s->cur % s->nslot])
        pthread_cond_wait(&s->ready, &s->mu);
    pthread_mutex_unlock(&s->mu);
    if (c->rc < 0) {
        *st = c->st;
        *rc = c->rc;
        return NULL;
    }
    return c;
}

/* Marks the chunk being handed out as taken in full: its slot goes to the
 * chunk a ring later. */
static void chunk_taken(gzindex_stream *s, const chunk_job *c)
{
    s->crc = (uint32_t)crc32_combine(s->crc, c->crc, (z_off_t)c->n);
    s->len += c->n;
    s->chunks++;
    if (c->i + 1 == s->x->n) {
        s->ended = 1;
        s->end_bit = c->end_bit;
    }
    s->in_pos = c->end_bit / 8;
    s->taken = 0;
    pthread_mutex_lock(&s->mu);
    s->done[s->cur % s->nslot] = 0;
    s->cur++;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->mu);
}

/* Copies n decoded bytes out to the reader: a long copy in pieces shared
 * with the workers that wait for room, so that on many cores handing out
 * bytes keeps up with the decoding. */
static void hand_out(gzindex_stream *s, uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n < 2 * COPY_SHARE_PIECE || s->started == 0) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&s->mu);
    copy_share_run(&s->copy, dst, src, n, &s->mu, &s->wake, &s->ready);
    pthread_mutex_unlock(&s->mu);
}

/* Hands out decoded bytes in order (see gzindex.h). */
ssize_t gzindex_stream_read(gzindex_stream *s, uint8_t *buf, size_t n, io_status *st)
{
    size_t got = 0;
    while (got < n && !s->paused && !s->ended && s->cur < s->end) {
        if (s->pause && s->whole && s->taken == 0 && atomic_load(s->pause)) {
            stop_workers(s); /* the chunks not handed out are dropped */
            s->paused = 1;
            break;
        }
        int rc;
        chunk_job *c = current_chunk(s, &rc, st);
        if (!c)
            return rc;
        s->in_pos = s->x->pt[c->i].bit / 8;
        if (s->skip) {
            size_t d = c->n - s->taken < s->skip ? c->n - s->taken : (size_t)s->skip;
            s->taken += d;
            s->skip -= d;
        }
        size_t k = c->n - s->taken < n - got ? c->n - s->taken : n - got;
        hand_out(s, buf + got, c->buf + INFLATE_WINDOW + s->taken, k);
        s->taken += k;
        got += k;
        if (s->taken == c->n)
            chunk_taken(s, c);
    }
    return (ssize_t)got;
}

/* Where the member ended (see gzindex.h). */
int gzindex_stream_end(const gzindex_stream *s, uint64_t *end_bit, int *whole, uint32_t *crc,
                       uint64_t *len)
{
    if (!s->ended)
        return 0;
    *end_bit = s->end_bit;
    *whole = s->whole;
    *crc = s->crc;
    *len = s->len;
    return 1;
}

/* Pauses a read at a boundary between chunks (see gzindex.h). */
void gzindex_stream_pause_on(gzindex_stream *s, const atomic_int *flag)
{
    s->pause = flag;
}

/* Where a read paused (see gzindex.h). */
int gzindex_stream_paused(const gzindex_stream *s, uint64_t *bit, uint8_t *win, size_t *wlen,
                          uint32_t *crc, uint64_t *len, io_status *st)
{
    if (!s->paused)
        return 0;
    int rc = gzindex_window(s->x, s->cur, win, wlen, st);
    if (rc < 0)
        return rc;
    uint64_t out = s->x->pt[s->cur].out;
    if (*wlen > out) { /* the member's bytes before the point are fewer */
        memmove(win, win + *wlen - out, (size_t)out);
        *wlen = (size_t)out;
    }
    *bit = s->x->pt[s->cur].bit;
    *crc = s->crc;
    *len = s->len;
    return 1;
}

/* Where the bytes handed out were compressed. */
uint64_t gzindex_stream_input_pos(const gzindex_stream *s)
{
    return s->in_pos;
}

/* Chunks decoded so far. */
uint64_t gzindex_stream_chunks(const gzindex_stream *s)
{
    return s->chunks;
}

/* The copies out shared with the workers (see gzindex.h). */
uint64_t gzindex_stream_shared_copies(const gzindex_stream *s)
{
    return s->copy.runs;
}

/* The pairs of chunks decoded at once on a thread (see gzindex.h). */
uint64_t gzindex_stream_pairs(const gzindex_stream *s)
{
    return atomic_load(&s->pairs);
}

/* Frees a read through an index. */
void gzindex_stream_close(gzindex_stream *s)
{
    if (!s)
        return;
    stop_workers(s);
    for (size_t i = 0; i < s->nslot; i++) {
        free(s->slot[i].buf);
        free(s->slot[i].src);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->wake);
    pthread_cond_destroy(&s->ready);
    free(s->slot);
    free(s->done);
    free(s->worker);
    free(s);
}

/* --- building an index --- */

/* A point kept while building: its offsets, its compressed window, the
 * CRC-32 of the bytes from it to the next. */
typedef struct {
    uint64_t bit, out;
    uint8_t *zwin;
    uint32_t zlen, crc;
} build_point;

/* What the builder collects: the boundaries the decoder reported in the
 * last read, and the points kept. */
typedef struct {
    struct { uint64_t bit, len; } *pend;
    size_t npend, pend_cap;
    uint64_t seen_out; /* the output before the last boundary reported */
    int overflow;     /* a boundary did not fit in memory */
    build_point *pt;
    size_t n, cap;
    uint32_t expect; /* the compressed window the next point is expected to have */
    gzindex_spacing sp;
} builder;

/* pinflate's boundary hook: notes the boundary for after the read, but
 * not one after an empty block (no bytes since the boundary before): a
 * speculative chunk may start past empty blocks, whose boundaries then go
 * unreported. */
static void on_boundary(void *ctx, uint64_t bit, uint64_t len)
{
    builder *b = ctx;
    if (len == b->seen_out)
        return;
    b->seen_out = len;
    if (b->npend == b->pend_cap) {
        size_t cap = b->pend_cap ? 2 * b->pend_cap : 256;
        void *grown = realloc(b->pend, cap * sizeof *b->pend);
        if (!grown) {
            b->overflow = 1;
            return;
        }
        b->pend = grown;
        b->pend_cap = cap;
    }
    b->pend[b->npend].bit = bit;
    b->pend[b->npend++].len = len;
}

/* Adds a point to b with the window `win` (wlen bytes), compressed by zlib
 * at level 6. 0 or IO_ERR_NOMEM. */
static int add_point(builder *b, uint64_t bit, uint64_t out, const uint8_t *win, size_t wlen)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        build_point *p = realloc(b->pt, cap * sizeof *p);
        if (!p)
            return IO_ERR_NOMEM;
        b->pt = p;
        b->cap = cap;
    }
    build_point *p = &b->pt[b->n];
    *p = (build_point){.bit = bit, .out = out};
    if (wlen) {
        uLongf zl = compressBound((uLong)wlen);
        if (!(p->zwin = malloc(zl)))
            return IO_ERR_NOMEM;
        if (compress2(p->zwin, &zl, win, (uLong)wlen, 6) != Z_OK) {
            free(p->zwin);
            return IO_ERR_NOMEM;
        }
        p->zlen = (uint32_t)zl;
    }
    b->n++;
    return 0;
}

/* Whether the block boundary at (bit, out) may be the next point: sp.min_out
 * bytes of output after the last point, and at least sp.ratio times the
 * size a point is expected to take (its fixed fields, CRC-32 and the
 * compressed window of the last point, or of the last boundary dropped
 * since) of compressed bytes after it. */
static int may_be_point(const builder *b, uint64_t bit, uint64_t out)
{
    const build_point *l = &b->pt[b->n - 1];
    return out - l->out >= b->sp.min_out &&
           (bit - l->bit) / 8 >= b->sp.ratio * (POINT_LEN + 4 + (uint64_t)b->expect);
}

/* Keeps the point just added (the last of b) when the compressed bytes
 * since the one before are at least sp.ratio times its own size, so that
 * every point pays for itself; else drops it, expecting the next to be as
 * large. Every boundary of the stream is offered in order, so the points
 * depend on the file and the spacing alone. */
static void keep_if_paid(builder *b)
{
    build_point *p = &b->pt[b->n - 1], *l = &b->pt[b->n - 2];
    b->expect = p->zlen;
    if ((p->bit - l->bit) / 8 >= b->sp.ratio * (POINT_LEN + 4 + (uint64_t)p->zlen))
        return;
    free(p->zwin);
    b->n--;
}

/* Writes the index of b's points (see the file comment) into *out. */
static int serialize(const builder *b, uint64_t usize, uint64_t file_len, uint32_t head_crc,
                     const uint8_t *trailer, uint8_t **out, size_t *len)
{
    size_t total = HEAD_LEN + 8 + CHECK_FIXED + 4 * b->n + 4;
    for (size_t i = 0; i < b->n; i++)
        total += POINT_LEN + b->pt[i].zlen;
    uint8_t *d = malloc(total), *w = d;
    if (!d)
        return IO_ERR_NOMEM;
    memset(w, 0, 8);
    memcpy(w + 8, "gzipindx", 8);
    put_be(w + 16, b->n, 8);
    put_be(w + 24, b->n, 8);
    w += HEAD_LEN;
    for (size_t i = 0; i < b->n; i++) {
        const build_point *p = &b->pt[i];
        put_be(w, p->out, 8);
        put_be(w + 8, (p->bit + 7) / 8, 8);
        put_be(w + 16, (8 - p->bit % 8) % 8, 4);
        put_be(w + 20, p->zlen, 4);
        if (p->zlen)
            memcpy(w + POINT_LEN, p->zwin, p->zlen);
        w += POINT_LEN + p->zlen;
    }
    put_be(w, usize, 8);
    w += 8;
    memset(w, 0, CHECK_FIXED); /* its last 4 bytes are reserved: zeros */
    memcpy(w, CHECK_MAGIC, 8);
    put_be(w + 8, file_len, 8);
    put_be(w + 16, head_crc, 4);
    memcpy(w + 20, trailer, 8);
    w += CHECK_FIXED;
    for (size_t i = 0; i < b->n; i++, w += 4)
        put_be(w, b->pt[i].crc, 4);
    put_be(w, crc_update(0, d, (size_t)(w - d)), 4);
    *out = d;
    *len = total;
    return 0;
}

/* Reads the member through the parallel decoder, keeping points at the
 * boundaries it reports. The CRC-32 and length of the whole member in *crc
 * and *len, its end in *end_byte. 0, 1 where the decoder stopped at
 * damaged data, or IO_ERR_NOMEM. */
static int build_pass(pinflate *p, builder *b, uint64_t *end_byte, uint32_t *crc, uint64_t *len)
{
    uint8_t *buf = malloc(INFLATE_WINDOW + READ_STEP);
    if (!buf)
        return IO_ERR_NOMEM;
    uint64_t base = 0, crc_at = 0; /* stream offset of buf + INFLATE_WINDOW; chunk CRC so far */
    uint32_t ccrc = 0;
    int rc = 0;
    for (;;) {
        b->npend = 0;
        ssize_t k = pinflate_read(p, buf + INFLATE_WINDOW, READ_STEP);
        if (k < 0) {
            rc = k == IO_ERR_NOMEM ? IO_ERR_NOMEM : 1;
            break;
        }
        for (size_t i = 0; i < b->npend && rc == 0; i++) {
            uint64_t bit = b->pend[i].bit, out = b->pend[i].len;
            if (!may_be_point(b, bit, out))
                continue;
            const uint8_t *at = buf + INFLATE_WINDOW + (out - base);
            size_t wlen = out < INFLATE_WINDOW ? (size_t)out : INFLATE_WINDOW;
            if ((rc = add_point(b, bit, out, at - wlen, wlen)) < 0)
                break;
            keep_if_paid(b);
            if (b->pt[b->n - 1].bit != bit)
                continue;
            ccrc = crc_update(ccrc, buf + INFLATE_WINDOW + (crc_at - base), (size_t)(out - crc_at));
            b->pt[b->n - 2].crc = ccrc;
            ccrc = 0;
            crc_at = out;
        }
        if (rc)
            break;
        ccrc = crc_update(ccrc, buf + INFLATE_WINDOW + (crc_at - base),
                          (size_t)(base + (uint64_t)k - crc_at));
        crc_at = base + (uint64_t)k;
        if (k == 0)
            break;
        /* keep the last 32 KiB before the next read's bytes */
        if ((size_t)k >= INFLATE_WINDOW) {
            memmove(buf, buf + k, INFLATE_WINDOW);
        } else {
            memmove(buf, buf + k, INFLATE_WINDOW - (size_t)k);
            memmove(buf + INFLATE_WINDOW - k, buf + INFLATE_WINDOW, (size_t)k);
        }
        base += (uint64_t)k;
    }
    free(buf);
    if (rc == 0) {
        b->pt[b->n - 1].crc = ccrc;
        pinflate_result(p, end_byte, crc, len);
    }
    return rc;
}

/* Why the member at the start of the file open as fd cannot be indexed,
 * after the decoder stopped or ended elsewhere than the file's last 8
 * bytes: the reader's own line for damaged data (member_error), else that
 * more follows the member. Returns the negative code. */
static int refusal(int fd, uint64_t file_len, uint64_t end_byte, int stopped,
                   int (*member_error)(int, uint64_t, uint64_t, io_status *), io_status *st)
{
    int rc = member_error(fd, 0, UINT64_MAX, st);
    if (rc < 0)
        return rc;
    if (stopped || end_byte + 8 > file_len)
        return io_fail(st, IO_ERR_FORMAT, "%s",
                       "a gzip header with a header CRC or unusual fields: not indexed");
    return io_fail(st, IO_ERR_FORMAT, "%s",
                   "more follows the first gzip member: a seek index covers a file of one "
                   "member (concatenate no members, or write blocked gzip)");
}

/* Builds an index (see gzindex.h). */
int gzindex_build(int fd, uint64_t file_len, const gzindex_spacing *sp,
                  int (*member_error)(int, uint64_t, uint64_t, io_status *), uint8_t **out,
                  size_t *len, size_t *points, io_status *st)
{
    uint8_t head[GZINDEX_HEAD_BYTES], tail[8] = {0};
    size_t hn = file_len < sizeof head ? (size_t)file_len : sizeof head;
    ssize_t k = io_pread_full(fd, head, hn, 0);
    *points = 0;
    io_clear(st);
    if (k >= 0 && k == (ssize_t)hn && file_len >= 8)
        k = io_pread_full(fd, tail, 8, file_len - 8) == 8 ? k : -EIO;
    if (k < 0)
        return io_fail(st, IO_ERR_READ, "%s", strerror((int)-k));
    if (!gzip_header_magic(head, hn))
        return io_fail(st, IO_ERR_FORMAT, "%s", "not gzip: only gzip files take a seek index");
    if (bgzf_block_size(head, hn))
        return io_fail(st, IO_ERR_FORMAT, "%s",
                       "blocked gzip (BGZF) needs no seek index: it is read from any block");
    size_t hlen = pinflate_header(head, hn);
    if (!hlen)
        return refusal(fd, file_len, 0, 1, member_error, st);
    pinflate *p;
    static const gzindex_spacing usual = {0, SPACING_OUT, SPACING_RATIO};
    if (pinflate_create(&p, par_cpus(), (sp ? sp : &usual)->chunk_bytes) < 0)
        return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    builder b = {.sp = *(sp ? sp : &usual)};
    pinflate_on_boundary(p, on_boundary, &b);
    pinflate_begin(p, fd, NULL, file_len, hlen);
    uint64_t end_byte = 0, usize = 0;
    uint32_t crc = 0;
    int rc = add_point(&b, (uint64_t)hlen * 8, 0, NULL, 0);
    if (rc == 0)
        rc = build_pass(p, &b, &end_byte, &crc, &usize);
    int lost = pinflate_boundaries_lost(p);
    pinflate_end(p);
    pinflate_destroy(p);
    uint8_t want[8];
    for (int i = 0; i < 4; i++) {
        want[i] = (uint8_t)(crc >> (8 * i));
        want[4 + i] = (uint8_t)(usize >> (8 * i));
    }
    if (rc == 1 || (rc == 0 && (end_byte + 8 != file_len || memcmp(tail, want, 8))))
        rc = refusal(fd, file_len, end_byte, rc == 1, member_error, st);
    else if (rc == 0 && (b.overflow || lost))
        rc = IO_ERR_NOMEM;
    else if (rc == 0)
        rc = serialize(&b, usize, file_len, crc_update(0, head, hn), tail, out, len);
    if (rc == IO_ERR_NOMEM && !st->code)
        io_fail(st, rc, "%s", "out of memory");
    *points = b.n;
    for (size_t i = 0; i < b.n; i++)
        free(b.pt[i].zwin);
    free(b.pt);
    free(b.pend);
    return rc;
}
