/* shard.c - shard ranges, positioning a sharded input, and the text
 * headers of state and part files. */
#include "shard.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "io/gzip/gz_writer.h"
#include "msg.h"
#include "runtime/axis.h"

#define SHARD_STATE_MAGIC "gpubatch reduce-state 4"
#define SHARD_PART_MAGIC "gpubatch array-part 3"
#define SHARD_VERSION_NOTIME '2' /* the format before input-time, still read */
#define SHARD_VERSION_NOVAR '3'  /* a state before var and std, still read */
#define SHARD_HEADER_MAX 65536 /* a state file, or a part's header, is smaller */
#define SHARD_AXIS_MAGIC "gpubatch reduce-state 5" /* reduce --axis */
#define SHARD_AXIS_MAX ((size_t)1 << 31) /* an axis state file is smaller */
#define SHARD_HEX_LINE 64 /* bytes of an axis state per hex line */

/* Parses "I/N". */
int shard_parse(const char *arg, shard_spec *s)
{
    char *end;
    if (!arg || *arg < '0' || *arg > '9')
        return -1;
    errno = 0;
    unsigned long long i = strtoull(arg, &end, 10);
    if (errno || *end != '/' || end[1] < '0' || end[1] > '9')
        return -1;
    unsigned long long n = strtoull(end + 1, &end, 10);
    if (errno || *end || n == 0 || n > SHARD_MAX_COUNT || i >= n)
        return -1;
    s->index = i;
    s->count = n;
    return 0;
}

/* floor(total * i / n) without overflow. */
static uint64_t shard_cut(uint64_t total, uint64_t i, uint64_t n)
{
    return (uint64_t)((unsigned __int128)total * i / n);
}

/* Tile range of a reduce shard. */
void shard_tiles(const shard_spec *s, uint64_t nelem, uint64_t *t0, uint64_t *t1)
{
    uint64_t tiles = nelem / RD_TILE + (nelem % RD_TILE != 0);
    *t0 = shard_cut(tiles, s->index, s->count);
    *t1 = shard_cut(tiles, s->index + 1, s->count);
}

/* The first row >= q whose output offset is a multiple of block, at most
 * rows; q itself when no row within one period qualifies. */
static uint64_t shard_align_row(uint64_t q, uint64_t rows, uint64_t header_bytes,
                                uint64_t row_bytes, uint64_t block)
{
    if (q >= rows || block == 0)
        return q;
    for (uint64_t r = q; r < q + block && r < rows; r++)
        if (((unsigned __int128)r * row_bytes + header_bytes) % block == 0)
            return r;
    for (uint64_t r = rows; r < q + block; r++) /* the next one is past the end */
        if (((unsigned __int128)r * row_bytes + header_bytes) % block == 0)
            return rows;
    return q;
}

/* Row range of an array shard, aligned to output blocks. */
void shard_rows(const shard_spec *s, uint64_t rows, uint64_t header_bytes, uint64_t row_bytes,
                uint64_t block, uint64_t *r0, uint64_t *r1)
{
    /* shard 0 starts with the header; every other boundary is aligned */
    *r0 = s->index == 0 ? 0
                        : shard_align_row(shard_cut(rows, s->index, s->count), rows,
                                          header_bytes, row_bytes, block);
    *r1 = shard_align_row(shard_cut(rows, s->index + 1, s->count), rows, header_bytes,
                          row_bytes, block);
}

/* Finds the data of a sharded input without reading it. */
int shard_input_open(io_reader *r, const frame_info *fi, shard_input *in, io_status *st)
{
    uint64_t size;
    in->data_start = io_reader_tell(r) - fi->prefix_len;
    in->source_bytes = io_reader_file_size(r);
    int rc = io_reader_data_size(r, &size);
    if (rc < 0)
        return io_fail(st, rc, "%s", io_reader_error(r));
    uint64_t have = size - in->data_start;
    if (fi->data_bytes != UINT64_MAX && have < fi->data_bytes)
        return io_fail(st, IO_ERR_FORMAT,
                       "truncated: expected %llu bytes of data, the input has %llu",
                       (unsigned long long)fi->data_bytes, (unsigned long long)have);
    if (fi->data_bytes != UINT64_MAX && have > fi->data_bytes)
        return io_fail(st, IO_ERR_FORMAT,
                       "the input holds more than the expected %llu bytes of data",
                       (unsigned long long)fi->data_bytes);
    in->data_bytes = have;
    if ((rc = io_reader_fingerprint(r, &in->check)) < 0)
        return io_fail(st, rc, "%s", io_reader_error(r));
    in->has_time = io_reader_mtime(r, &in->time_s, &in->time_ns) == 0;
    return frame_check_end(fi, have, st);
}

/* Checks the blocks that this shard answers for, then positions the reader
 * at its bytes. */
int shard_input_seek(io_reader *r, const shard_input *in, uint64_t start, uint64_t len, int last,
                     io_status *st)
{
    int rc = io_reader_check_blocks(r, start ? in->data_start + start : 0,
                                     last ? UINT64_MAX : in->data_start + start + len);
    if (rc >= 0)
        rc = io_reader_seek(r, in->data_start + start, last ? UINT64_MAX : len);
    if (rc < 0)
        io_fail(st, rc, "%s", io_reader_error(r));
    return rc;
}

/* Describes the input in m. */
void shard_meta_input(shard_meta *m, const char *name, const frame_info *fi,
                      const shard_input *in, const shard_spec *s)
{
    memset(m, 0, sizeof *m);
    m->spec = *s;
    snprintf(m->input, sizeof m->input, "%s", name);
    m->source_bytes = in->source_bytes;
    m->dtype = fi->dtype;
    m->ndim = fi->ndim;
    memcpy(m->shape, fi->shape, sizeof m->shape);
    m->fortran_order = fi->fortran_order;
    m->nelem = in->data_bytes / dt_size(fi->dtype);
    m->input_check = in->check;
    m->has_time = in->has_time;
    m->time_s = in->time_s;
    m->time_ns = in->time_ns;
}

/* Writes a name with backslash, control bytes and DEL escaped. */
static void shard_put_name(FILE *f, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

/* Reverses shard_put_name in place; -1 on a bad escape. */
static int shard_get_name(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        if (p[1] == '\\') {
            *o++ = '\\';
            p++;
            continue;
        }
        unsigned v;
        if (p[1] != 'x' || !isxdigit((unsigned char)p[2]) || !isxdigit((unsigned char)p[3]) ||
            sscanf(p + 2, "%2x", &v) != 1 || v == 0)
            return -1;
        *o++ = (char)v;
        p += 3;
    }
    *o = 0;
    return 0;
}

/* The lines every state and part file starts with after its magic. */
static void shard_put_common(FILE *f, const char *magic, const shard_meta *m)
{
    fprintf(f, "%s\nshard %" PRIu64 " %" PRIu64 "\ninput ", magic, m->spec.index,
            m->spec.count);
    shard_put_name(f, m->input);
    fprintf(f, "\nsource-bytes %" PRId64 "\ndtype %s\nshape %d", m->source_bytes,
            dt_name(m->dtype), m->ndim);
    for (int d = 0; d < m->ndim; d++)
        fprintf(f, " %" PRIu64, m->shape[d]);
    fprintf(f, "\nfortran-order %d\nelements %" PRIu64 "\ninput-check %016" PRIx64 "\n",
            m->fortran_order, m->nelem, m->input_check);
    if (m->has_time)
        fprintf(f, "input-time %" PRId64 ".%09" PRIu32 "\n", m->time_s, m->time_ns);
    else
        fputs("input-time none\n", f);
}

/* Ends a text with its check line: the CRC-32 of everything before it. */
static void shard_put_check(FILE *f, char *const *text, const size_t *len)
{
    fflush(f); /* *text and *len: the memory stream's bytes so far */
    fprintf(f, "check %08lx\n", crc32(0, (const Bytef *)*text, (uInt)*len));
}

/* A part's last line. */
void shard_part_end(char *buf, uint32_t crc)
{
    snprintf(buf, SHARD_PART_END_LEN + 1, "part-end %08lx\n", (unsigned long)crc);
}

/* Parses a part's last line. */
int shard_part_end_parse(const char *buf, uint32_t *crc)
{
    unsigned long v;
    int used = 0;
    if (strncmp(buf, "part-end ", 9) || sscanf(buf + 9, "%8lx%n", &v, &used) != 1 || used != 8 ||
        buf[17] != '\n' || !isxdigit((unsigned char)buf[9]))
        return -1;
    *crc = (uint32_t)v;
    return 0;
}

/* Writes one tree's pending subtrees: level, first leaf, value bits (and
 * the value in hex for reading), NaNs as one (rd_canon). */
static void shard_put_tree(FILE *f, const char *key, const rd_tree *t)
{
    uint64_t start[128], end = t->next;
    for (int i = t->depth - 1; i >= 0; i--) {
        end -= (uint64_t)1 << t->level[i];
        start[i] = end;
    }
    fprintf(f, "%s %d\n", key, t->depth);
    for (int i = 0; i < t->depth; i++) {
        uint64_t bits;
        double v = rd_canon(t->value[i]);
        memcpy(&bits, &v, sizeof bits);
        fprintf(f, "%u %" PRIu64 " %016" PRIx64 " %a\n", t->level[i], start[i], bits, v);
    }
}

/* Writes the variance tree's pending subtrees: level, first leaf, then the
 * partial's count, shift and double-double sums as hex bits (rd_canon_var). */
static void shard_put_vtree(FILE *f, const rd_vtree *t)
{
    uint64_t start[128], end = t->next;
    for (int i = t->depth - 1; i >= 0; i--) {
        end -= (uint64_t)1 << t->level[i];
        start[i] = end;
    }
    fprintf(f, "var-tree %d\n", t->depth);
    for (int i = 0; i < t->depth; i++) {
        const rd_var c = rd_canon_var(t->value[i]), *v = &c;
        double d[5] = {v->k, v->s1.hi, v->s1.lo, v->s2.hi, v->s2.lo};
        uint64_t b[5];
        memcpy(b, d, sizeof b);
        fprintf(f, "%u %" PRIu64 " %" PRIu64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64
                   " %016" PRIx64 " %016" PRIx64 "\n",
                t->level[i], start[i], (uint64_t)v->n, b[0], b[1], b[2], b[3], b[4]);
    }
}

/* Writes a 128-bit value as 32 hex digits. */
static void shard_put_u128(FILE *f, const char *key, rd_u128 v)
{
    fprintf(f, "%s %016" PRIx64 "%016" PRIx64 "\n", key, (uint64_t)(v >> 64), (uint64_t)v);
}

/* Writes an extremum: key bits and global index ("none" when empty). */
static void shard_put_extremum(FILE *f, const char *key, uint64_t k, uint64_t idx)
{
    if (idx == RD_NO_INDEX)
        fprintf(f, "%s %016" PRIx64 " none\n", key, k);
    else
        fprintf(f, "%s %016" PRIx64 " %" PRIu64 "\n", key, k, idx);
}

/* Writes the ops line: the names of the op bits in order. */
static void shard_put_ops(FILE *f, unsigned ops)
{
    fputs("ops ", f);
    for (int bit = 0, n = 0; bit < RD_OP_NUM; bit++)
        if (ops & (1u << bit))
            fprintf(f, "%s%s", n++ ? "," : "", rd_op_name(bit));
    fputc('\n', f);
}

static int shard_commit(const char *path, int force, const io_file_id *input, FILE *f,
                        char **textp, size_t *lenp);

/* A memory stream for a state file's text (*text, *len), its first lines
 * written; NULL when out of memory. */
static FILE *shard_begin(const char *magic, const shard_meta *m, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = open_memstream(text, len);
    if (f)
        shard_put_common(f, magic, m);
    return f;
}

/* Writes a reduce shard's state file. */
int shard_write_state(const char *path, int force, const io_file_id *input, const shard_meta *m,
                      const rd_state *st)
{
    char *text;
    size_t len;
    FILE *f = shard_begin(SHARD_STATE_MAGIC, m, &text, &len);
    if (!f)
        return msg_error("out of memory"), 1;
    fprintf(f, "tiles %" PRIu64 " %" PRIu64 "\n", m->first, m->end);
    shard_put_ops(f, st->ops);
    fprintf(f, "skipnan %d\nddof %.0f\nshard-elements %" PRIu64 "\ncount %" PRIu64 "\n",
            st->skipnan, st->ddof, st->nelem, st->count);
    shard_put_u128(f, "isum", st->isum);
    shard_put_u128(f, "isumsq", st->isq);
    shard_put_extremum(f, "min", st->ext.min_key, st->ext.min_idx);
    shard_put_extremum(f, "max", st->ext.max_key, st->ext.max_idx);
    shard_put_tree(f, "sum-tree", &st->sum_tree);
    shard_put_tree(f, "sumsq-tree", &st->sq_tree);
    shard_put_vtree(f, &st->var_tree);
    fputs("end\n", f);
    return shard_commit(path, force, input, f, &text, &len);
}

/* Ends the text of memory stream f with its check line and writes it to
 * path atomically; frees the text. 0, or 1 after an error. */
static int shard_commit(const char *path, int force, const io_file_id *input, FILE *f,
                        char **textp, size_t *lenp)
{
    io_status why;
    shard_put_check(f, textp, lenp);
    int closed = fclose(f);
    char *text = *textp;
    size_t len = *lenp;
    if (closed != 0) {
        free(text);
        return msg_error("out of memory"), 1;
    }
    io_sink *sink;
    int status = 1;
    if (io_sink_open(&sink, path, force, input, input ? 1 : 0, &why) < 0) {
        msg_status(path, &why);
    } else if (io_sink_write(sink, text, len) < 0) {
        msg_error("%s: %s", path, io_sink_error(sink));
        io_sink_abort(sink);
    } else if (io_sink_commit(sink) < 0) {
        msg_error("%s: %s", path, io_sink_commit_error());
    } else {
        status = 0;
    }
    free(text);
    return status;
}

/* Writes a reduce --axis shard's state file. */
int shard_write_axis_state(const char *path, int force, const io_file_id *input,
                           const shard_meta *m, const rd_state *st, const unsigned char *blob,
                           size_t len)
{
    char *text;
    size_t tlen;
    FILE *f = shard_begin(SHARD_AXIS_MAGIC, m, &text, &tlen);
    if (!f)
        return msg_error("out of memory"), 1;
    fprintf(f, "range %" PRIu64 " %" PRIu64 "\naxes", m->first, m->end);
    for (int a = 0, n = 0; a < 32; a++)
        if (m->axes & (1u << a))
            fprintf(f, "%c%d", n++ ? ',' : ' ', a);
    fprintf(f, "\nkeepdims %d\n", m->keepdims);
    shard_put_ops(f, st->ops);
    fprintf(f, "skipnan %d\nddof %.0f\nstate-bytes %zu\n", st->skipnan, st->ddof, len);
    for (size_t at = 0; at < len; at += SHARD_HEX_LINE) {
        char line[2 * SHARD_HEX_LINE + 1];
        size_t n = len - at < SHARD_HEX_LINE ? len - at : SHARD_HEX_LINE;
        for (size_t i = 0; i < n; i++) {
            line[2 * i] = "0123456789abcdef"[blob[at + i] >> 4];
            line[2 * i + 1] = "0123456789abcdef"[blob[at + i] & 15];
        }
        line[2 * n] = '\n';
        fwrite(line, 1, 2 * n + 1, f);
    }
    fputs("end\n", f);
    return shard_commit(path, force, input, f, &text, &tlen);
}

/* Text of a part file's header. */
int shard_part_header(char *buf, size_t len, const shard_meta *m)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f)
        return -1;
    shard_put_common(f, SHARD_PART_MAGIC, m);
    fprintf(f, "bytes %" PRIu64 " %" PRIu64 " %" PRIu64 "\nlevel %d\n", m->first, m->end,
            m->total, m->level);
    shard_put_check(f, &text, &n);
    fputs("data\n", f);
    int rc = fclose(f) == 0 && n < len ? (int)n : -1;
    if (rc > 0)
        memcpy(buf, text, n + 1); /* with its NUL: callers take strlen */
    free(text);
    return rc;
}

/* A cursor over the lines of a header. */
typedef struct {
    char *base;  /* the file's first byte */
    const char *orig; /* the file's bytes as read (parsing writes over line ends) */
    char *p;     /* next line */
    int line;    /* its number */
    io_status *st; /* the reason a line is refused */
} shard_text;

/* The value of the next line, which must start with key and a space (or be
 * key alone when the value is empty); NULL and a reason otherwise. */
static char *shard_line(shard_text *t, const char *key)
{
    char *nl = strchr(t->p, '\n');
    size_t k = strlen(key);
    t->line++;
    if (!nl) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: ends before '%s'", t->line, key);
        return NULL;
    }
    *nl = 0;
    char *line = t->p;
    t->p = nl + 1;
    if (strncmp(line, key, k) || (line[k] != ' ' && line[k] != 0)) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: expected '%s'", t->line, key);
        return NULL;
    }
    return line[k] ? line + k + 1 : line + k;
}

/* Parses the next line "key N1 N2 ..." into count unsigned values. */
static int shard_line_u64(shard_text *t, const char *key, uint64_t *v, int count)
{
    char *s = shard_line(t, key), *end;
    if (!s)
        return -1;
    for (int i = 0; i < count; i++) {
        errno = 0;
        if (*s < '0' || *s > '9' || (v[i] = strtoull(s, &end, 10), errno)) {
            io_fail(t->st, IO_ERR_FORMAT, "line %d: bad '%s' value", t->line, key);
            return -1;
        }
        s = end;
        if (*s == ' ')
            s++;
    }
    if (*s) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad '%s' value", t->line, key);
        return -1;
    }
    return 0;
}

/* Parses the input-time line: "SECONDS.NANOSECONDS" or "none". */
static int shard_get_time(shard_text *t, shard_meta *m)
{
    char *s = shard_line(t, "input-time");
    long long sec;
    unsigned ns;
    int used = 0;
    if (!s)
        return -1;
    if (!strcmp(s, "none"))
        return 0;
    if (sscanf(s, "%lld.%9u%n", &sec, &ns, &used) != 2 || s[used] || used < 11 ||
        strlen(strchr(s, '.')) != 10 || ns > 999999999u) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad input-time", t->line);
        return -1;
    }
    m->has_time = 1;
    m->time_s = sec;
    m->time_ns = ns;
    return 0;
}

/* Parses the lines shared by states and parts (format 2 has no input-time). */
static int shard_get_common(shard_text *t, shard_meta *m, int with_time)
{
    uint64_t v[2];
    char *s;
    if (shard_line_u64(t, "shard", v, 2) < 0)
        return -1;
    if (v[1] == 0 || v[1] > SHARD_MAX_COUNT || v[0] >= v[1]) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad shard", t->line);
        return -1;
    }
    m->spec.index = v[0];
    m->spec.count = v[1];
    if (!(s = shard_line(t, "input")))
        return -1;
    if (strlen(s) >= sizeof m->input || shard_get_name(s) < 0) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad input name", t->line);
        return -1;
    }
    strcpy(m->input, s);
    if (!(s = shard_line(t, "source-bytes")))
        return -1;
    long long sb;
    int used = 0;
    if (sscanf(s, "%lld%n", &sb, &used) != 1 || s[used] || sb < -1) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad source-bytes", t->line);
        return -1;
    }
    m->source_bytes = sb;
    if (!(s = shard_line(t, "dtype")))
        return -1;
    if ((m->dtype = dt_from_name(s)) == DT_NONE) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: unknown dtype '%.40s'", t->line, s);
        return -1;
    }
    if (!(s = shard_line(t, "shape")))
        return -1;
    char *end;
    long nd = strtol(s, &end, 10);
    if (end == s || nd < -1 || nd > NPY_MAX_DIMS) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad shape", t->line);
        return -1;
    }
    m->ndim = (int)nd;
    for (int d = 0; d < m->ndim; d++) {
        if (*end != ' ' || end[1] < '0' || end[1] > '9') {
            io_fail(t->st, IO_ERR_FORMAT, "line %d: bad shape", t->line);
            return -1;
        }
        m->shape[d] = strtoull(end + 1, &end, 10);
    }
    if (*end) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad shape", t->line);
        return -1;
    }
    if (shard_line_u64(t, "fortran-order", v, 1) < 0)
        return -1;
    m->fortran_order = v[0] != 0;
    if (shard_line_u64(t, "elements", &m->nelem, 1) < 0 || !(s = shard_line(t, "input-check")))
        return -1;
    unsigned long long c;
    int got = 0;
    if (strlen(s) != 16 || sscanf(s, "%16llx%n", &c, &got) != 1 || got != 16) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad input-check", t->line);
        return -1;
    }
    m->input_check = c;
    return with_time ? shard_get_time(t, m) : 0;
}

/* Parses the check line: the CRC-32 of every byte before it. */
static int shard_get_check(shard_text *t)
{
    uLong want = crc32(0, (const Bytef *)t->orig, (uInt)(t->p - t->base));
    char *s = shard_line(t, "check");
    unsigned long crc;
    int used = 0;
    if (!s)
        return -1;
    if (strlen(s) != 8 || sscanf(s, "%8lx%n", &crc, &used) != 1 || used != 8 || crc != want) {
        io_fail(t->st, IO_ERR_FORMAT,
                "line %d: the check does not match the text: the file is "
                "damaged or was edited",
                t->line);
        return -1;
    }
    return 0;
}

/* Parses a 32-hex-digit 128-bit value. */
static int shard_get_u128(shard_text *t, const char *key, rd_u128 *out)
{
    char *s = shard_line(t, key);
    unsigned long long hi, lo;
    int used = 0;
    if (!s)
        return -1;
    if (strlen(s) != 32 || sscanf(s, "%16llx%16llx%n", &hi, &lo, &used) != 2 || used != 32) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad '%s' value", t->line, key);
        return -1;
    }
    *out = (rd_u128)hi << 64 | lo;
    return 0;
}

/* Parses an extremum line. */
static int shard_get_extremum(shard_text *t, const char *key, rd_u64 *k, rd_u64 *idx)
{
    char *s = shard_line(t, key), rest[32];
    unsigned long long kv;
    if (!s)
        return -1;
    if (sscanf(s, "%16llx %31s", &kv, rest) != 2) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad '%s' value", t->line, key);
        return -1;
    }
    *k = kv;
    if (!strcmp(rest, "none")) {
        *idx = RD_NO_INDEX;
        return 0;
    }
    char *end;
    errno = 0;
    *idx = strtoull(rest, &end, 10);
    if (errno || *end || *idx == RD_NO_INDEX) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad '%s' index", t->line, key);
        return -1;
    }
    return 0;
}

/* Whether a subtree of 2^level leaves from leaf start may follow a tree
 * whose next leaf is next, within a shard ending at leaf end. */
static int shard_subtree_ok(unsigned level, uint64_t start, uint64_t next, uint64_t end)
{
    return level <= 62 && start == next && start % (1ull << level) == 0 && end >= start &&
           end - start >= (1ull << level);
}

/* Parses a tree's first line, KEY and its count of subtrees (at most 128). */
static int shard_get_depth(shard_text *t, const char *key, uint64_t *depth)
{
    if (shard_line_u64(t, key, depth, 1) < 0)
        return -1;
    if (*depth > 128) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: too many subtrees", t->line);
        return -1;
    }
    return 0;
}

/* Parses the variance tree (format 4), as shard_get_tree a tree of doubles. */
static int shard_get_vtree(shard_text *t, rd_vtree *tree, uint64_t first, uint64_t end)
{
    uint64_t depth;
    if (shard_get_depth(t, "var-tree", &depth) < 0)
        return -1;
    rd_vtree_init_at(tree, first);
    for (uint64_t i = 0; i < depth; i++) {
        char *nl = strchr(t->p, '\n');
        unsigned level = 0;
        unsigned long long start = 0, n = 0, b[5];
        char canon[192] = "";
        t->line++;
        if (nl && (*nl = 0, sscanf(t->p, "%u %llu %llu %16llx %16llx %16llx %16llx %16llx", &level,
                                   &start, &n, &b[0], &b[1], &b[2], &b[3], &b[4]) == 8))
            snprintf(canon, sizeof canon, "%u %llu %llu %016llx %016llx %016llx %016llx %016llx",
                     level, start, n, b[0], b[1], b[2], b[3], b[4]);
        if (!nl || strcmp(t->p, canon) || !shard_subtree_ok(level, start, tree->next, end) ||
            n > ((end - start) << 14)) {
            io_fail(t->st, IO_ERR_FORMAT, "line %d: bad var-tree subtree", t->line);
            return -1;
        }
        t->p = nl + 1;
        double d[5];
        uint64_t u[5] = {b[0], b[1], b[2], b[3], b[4]};
        memcpy(d, u, sizeof d);
        rd_var v = {n, d[0], {d[1], d[2]}, {d[3], d[4]}};
        rd_vtree_push_level(tree, v, level);
    }
    if (depth && tree->next != end) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: the var-tree does not cover the shard's tiles",
                t->line);
        return -1;
    }
    return 0;
}

/* Parses a tree: its subtrees must be aligned, contiguous from tile first
 * and end at tile end (or be absent). */
static int shard_get_tree(shard_text *t, const char *key, rd_tree *tree, uint64_t first,
                          uint64_t end)
{
    uint64_t depth;
    if (shard_get_depth(t, key, &depth) < 0)
        return -1;
    rd_tree_init_at(tree, first);
    for (uint64_t i = 0; i < depth; i++) {
        char *nl = strchr(t->p, '\n');
        unsigned level = 0;
        unsigned long long start = 0, bits = 0;
        char canon[128];
        double v = 0;
        t->line++;
        if (nl && (*nl = 0, sscanf(t->p, "%u %llu %16llx", &level, &start, &bits) == 3)) {
            uint64_t b = bits;
            memcpy(&v, &b, sizeof v);
            /* the line as shard_put_tree writes it: the hex bits and the
             * value beside them must agree */
            snprintf(canon, sizeof canon, "%u %llu %016llx %a", level, start, bits, v);
        }
        if (!nl || strcmp(t->p, canon) || !shard_subtree_ok(level, start, tree->next, end)) {
            io_fail(t->st, IO_ERR_FORMAT, "line %d: bad %s subtree", t->line, key);
            return -1;
        }
        t->p = nl + 1;
        rd_tree_push_level(tree, v, level);
    }
    if (depth && tree->next != end) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: the %s does not cover the shard's tiles", t->line,
                key);
        return -1;
    }
    return 0;
}

/* Names what a state's fields say against each other (the sums a shard's
 * tiles must have, its count against its elements, the extrema against the
 * count, integer sums against what count elements of the type can add up
 * to), or NULL when they agree. */
static const char *shard_state_why(const shard_meta *m, const rd_state *st)
{
    int fl = dt_is_float(m->dtype), sqf = fl || dt_size(m->dtype) == 8;
    int tiles = m->end > m->first, sq = (st->ops & RD_OP_SUMSQ) != 0;
    if ((st->sum_tree.depth != 0) != (tiles && fl))
        return "the sum tree does not cover the shard's tiles";
    if ((st->sq_tree.depth != 0) != (tiles && sq && sqf))
        return "the sumsq tree does not cover the shard's tiles";
    if ((st->var_tree.depth != 0) != (tiles && (st->ops & (RD_OP_VAR | RD_OP_STD)) != 0))
        return "the var tree does not cover the shard's tiles";
    if (st->count > st->nelem || (!st->skipnan && st->count != st->nelem))
        return "count and shard-elements disagree";
    if ((st->ops & RD_OP_EXTREMA) &&
        ((st->ext.min_idx == RD_NO_INDEX) != (st->count == 0) ||
         (st->ext.max_idx == RD_NO_INDEX) != (st->count == 0)))
        return "the extrema do not match the count";
    if (!(st->ops & RD_OP_EXTREMA) &&
        (st->ext.min_idx != RD_NO_INDEX || st->ext.max_idx != RD_NO_INDEX))
        return "extrema without min or max among the operations";
    if ((fl && st->isum) || ((fl || !sq || sqf) && st->isq))
        return "an integer sum beside float sums";
    if (!fl) {
        /* |a sum of count elements| is at most count times the largest magnitude */
        int bits = 8 * (int)dt_size(m->dtype), sgn = dt_is_signed_int(m->dtype);
        rd_u128 most = m->dtype == DT_BOOL ? 1
                       : sgn              ? (rd_u128)1 << (bits - 1)
                                          : ((rd_u128)1 << bits) - 1;
        rd_u128 hi = most * st->count, lo = sgn ? hi : 0;
        __int128 v = (__int128)st->isum;
        if (sgn ? (v < 0 ? (rd_u128)0 - st->isum > lo : (rd_u128)v > hi - st->count) : st->isum > hi)
            return "the integer sum is out of the count's reach";
        if (!sqf && st->isq > most * most * st->count)
            return "the integer sum of squares is out of the count's reach";
    }
    return NULL;
}

/* Parses the lines ops, skipnan and (var: format 4 on) ddof into a new st. */
static int shard_get_opts(shard_text *t, const shard_meta *m, rd_state *st, int var)
{
    uint64_t v[1];
    char *s;
    if (!(s = shard_line(t, "ops")))
        return -1;
    io_status why;
    unsigned ops = rd_parse_ops(s, &why);
    if (!ops) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: %s", t->line, why.text);
        return -1;
    }
    if (shard_line_u64(t, "skipnan", v, 1) < 0)
        return -1;
    rd_state_init(st, m->dtype, ops, v[0] != 0);
    if (var && shard_line_u64(t, "ddof", v, 1) < 0)
        return -1;
    if (var && v[0] > 1000000000) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad ddof", t->line);
        return -1;
    }
    st->ddof = var ? (double)v[0] : 0;
    if (!var && (ops & (RD_OP_VAR | RD_OP_STD))) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: var or std in a format 3 state", t->line);
        return -1;
    }
    return 0;
}

/* The value of hex digit c, or -1. */
static int shard_nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Parses the rest of an axis state (format 5): its range, axes, options
 * and the accumulators' hex lines into m->blob. */
static int shard_get_axis(shard_text *t, shard_meta *m, rd_state *st)
{
    uint64_t v[2];
    char *s;
    io_status why;
    if (shard_line_u64(t, "range", v, 2) < 0)
        return -1;
    m->first = v[0];
    m->end = v[1];
    if (m->end < m->first || m->end > m->nelem) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad range", t->line);
        return -1;
    }
    if (!(s = shard_line(t, "axes")))
        return -1;
    if (ax_parse_axes(s, m->ndim < 0 ? 1 : m->ndim, &m->axes, &why) < 0) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: %s", t->line, why.text);
        return -1;
    }
    m->axis = 1;
    if (shard_line_u64(t, "keepdims", v, 1) < 0)
        return -1;
    m->keepdims = v[0] != 0;
    if (shard_get_opts(t, m, st, 1) < 0 || shard_line_u64(t, "state-bytes", v, 1) < 0)
        return -1;
    if (v[0] > SHARD_AXIS_MAX || !(m->blob = malloc(v[0] ? (size_t)v[0] : 1))) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad state-bytes", t->line);
        return -1;
    }
    m->blob_len = (size_t)v[0];
    for (size_t at = 0; at < m->blob_len; at += SHARD_HEX_LINE) {
        size_t n = m->blob_len - at < SHARD_HEX_LINE ? m->blob_len - at : SHARD_HEX_LINE;
        char *nl = strchr(t->p, '\n');
        t->line++;
        if (!nl || (size_t)(nl - t->p) != 2 * n) {
            io_fail(t->st, IO_ERR_FORMAT, "line %d: bad state line", t->line);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            int hi = shard_nibble(t->p[2 * i]), lo = shard_nibble(t->p[2 * i + 1]);
            if (hi < 0 || lo < 0) {
                io_fail(t->st, IO_ERR_FORMAT, "line %d: bad state line", t->line);
                return -1;
            }
            m->blob[at + i] = (unsigned char)(hi << 4 | lo);
        }
        t->p = nl + 1;
    }
    if (!shard_line(t, "end") || shard_get_check(t) < 0)
        return -1;
    if (*t->p) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: data after 'end'", t->line + 1);
        return -1;
    }
    return 0;
}

/* Parses the rest of a state file of format version (its digit). */
static int shard_get_state(shard_text *t, shard_meta *m, rd_state *st, int version)
{
    uint64_t v[2];
    if (shard_line_u64(t, "tiles", v, 2) < 0)
        return -1;
    m->first = v[0];
    m->end = v[1];
    if (m->end < m->first) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad tiles", t->line);
        return -1;
    }
    int var = version > SHARD_VERSION_NOVAR;
    if (shard_get_opts(t, m, st, var) < 0)
        return -1;
    if (shard_line_u64(t, "shard-elements", &st->nelem, 1) < 0 ||
        shard_line_u64(t, "count", &st->count, 1) < 0 || shard_get_u128(t, "isum", &st->isum) < 0 ||
        shard_get_u128(t, "isumsq", &st->isq) < 0 ||
        shard_get_extremum(t, "min", &st->ext.min_key, &st->ext.min_idx) < 0 ||
        shard_get_extremum(t, "max", &st->ext.max_key, &st->ext.max_idx) < 0 ||
        shard_get_tree(t, "sum-tree", &st->sum_tree, m->first, m->end) < 0 ||
        shard_get_tree(t, "sumsq-tree", &st->sq_tree, m->first, m->end) < 0 ||
        (var && shard_get_vtree(t, &st->var_tree, m->first, m->end) < 0))
        return -1;
    if (!shard_line(t, "end") || shard_get_check(t) < 0)
        return -1;
    const char *bad = shard_state_why(m, st);
    if (bad) {
        io_fail(t->st, IO_ERR_FORMAT, "the state contradicts itself: %s", bad);
        return -1;
    }
    if (*t->p) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: data after 'end'", t->line + 1);
        return -1;
    }
    return 0;
}

/* Parses the rest of a part's header. */
static int shard_get_part(shard_text *t, shard_meta *m, const char *base)
{
    uint64_t v[3];
    if (shard_line_u64(t, "bytes", v, 3) < 0)
        return -1;
    m->first = v[0];
    m->end = v[1];
    m->total = v[2];
    if (m->first > m->end || m->end > m->total) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad byte range", t->line);
        return -1;
    }
    if (shard_line_u64(t, "level", v, 1) < 0)
        return -1;
    if (v[0] > 9) {
        io_fail(t->st, IO_ERR_FORMAT, "line %d: bad level", t->line);
        return -1;
    }
    m->level = (int)v[0];
    if (shard_get_check(t) < 0 || !shard_line(t, "data"))
        return -1;
    m->data_offset = (uint64_t)(t->p - base);
    return 0;
}

/* The format version digit of the file buf starts with when it is magic's
 * (the current one) or an older one still read (2, and 3 for a state), or
 * -1 for neither. */
static int shard_magic(const char *buf, const char *magic)
{
    size_t n = strlen(magic);
    char v = buf[n - 1];
    if (strncmp(buf, magic, n - 1) || buf[n] != '\n')
        return -1;
    if (v == magic[n - 1] || v == SHARD_VERSION_NOTIME ||
        (v == SHARD_VERSION_NOVAR && magic[n - 1] > SHARD_VERSION_NOVAR))
        return v;
    return -1;
}

/* Reads a state file or a part's header. */
int shard_read(const char *path, shard_meta *m, rd_state *st, io_status *why)
{
    memset(m, 0, sizeof *m);
    int fd = !strcmp(path, "-") ? -1 : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        io_fail(why, IO_ERR_OPEN, "%s",
                !strcmp(path, "-") ? "merge reads files, not standard input" : strerror(errno));
        return -1;
    }
    char *buf = malloc(SHARD_HEADER_MAX + 1);
    ssize_t got = 0, k = 0;
    while (buf && got < SHARD_HEADER_MAX &&
           ((k = read(fd, buf + got, SHARD_HEADER_MAX - (size_t)got)) > 0 ||
            (k < 0 && errno == EINTR)))
        got += k > 0 ? k : 0;
    /* an axis state holds its accumulators: read on to its end */
    size_t cap = SHARD_HEADER_MAX;
    int axis = buf && !strncmp(buf, SHARD_AXIS_MAGIC "\n", strlen(SHARD_AXIS_MAGIC) + 1);
    while (axis && k > 0 && (size_t)got == cap && cap < SHARD_AXIS_MAX) {
        char *more = realloc(buf, 2 * cap + 1);
        if (!more)
            break;
        buf = more;
        cap *= 2;
        while ((size_t)got < cap && ((k = read(fd, buf + got, cap - (size_t)got)) > 0 ||
                                     (k < 0 && errno == EINTR)))
            got += k > 0 ? k : 0;
    }
    int read_errno = errno;
    close(fd);
    if (!buf || k < 0) {
        io_fail(why, buf ? IO_ERR_READ : IO_ERR_NOMEM, "%s",
                buf ? strerror(read_errno) : "out of memory");
        free(buf);
        return -1;
    }
    buf[got] = 0;
    char *orig = malloc((size_t)got + 1);
    if (!orig) {
        io_fail(why, IO_ERR_NOMEM, "out of memory");
        free(buf);
        return -1;
    }
    memcpy(orig, buf, (size_t)got + 1);
    shard_text t = {buf, orig, buf, 0, why};
    int rc = -1, version;
    if (axis) {
        m->kind = SHARD_KIND_STATE;
        t.p = buf + strlen(SHARD_AXIS_MAGIC) + 1;
        t.line = 1;
        if (memchr(buf, 0, (size_t)got) || (size_t)got == cap)
            io_fail(why, IO_ERR_FORMAT, "not a gpubatch state file (binary data or too large)");
        else if (shard_get_common(&t, m, 1) == 0)
            rc = shard_get_axis(&t, m, st);
    } else if ((version = shard_magic(buf, SHARD_STATE_MAGIC)) >= 0) {
        m->kind = SHARD_KIND_STATE;
        t.p = buf + strlen(SHARD_STATE_MAGIC) + 1;
        t.line = 1;
        if (memchr(buf, 0, (size_t)got) || got == SHARD_HEADER_MAX)
            io_fail(why, IO_ERR_FORMAT, "not a gpubatch state file (binary data or too large)");
        else if (shard_get_common(&t, m, version > SHARD_VERSION_NOTIME) == 0)
            rc = shard_get_state(&t, m, st, version);
    } else if ((version = shard_magic(buf, SHARD_PART_MAGIC)) >= 0) {
        m->kind = SHARD_KIND_PART;
        t.p = buf + strlen(SHARD_PART_MAGIC) + 1;
        t.line = 1;
        char *data = strstr(buf, "\ndata\n");
        if (!data || memchr(buf, 0, (size_t)(data - buf)))
            io_fail(why, IO_ERR_FORMAT, "not a gpubatch part file (no 'data' line)");
        else if (shard_get_common(&t, m, version > SHARD_VERSION_NOTIME) == 0)
            rc = shard_get_part(&t, m, buf);
    } else if (!strncmp(buf, "gpubatch ", 9) && strchr(buf, '\n') &&
               strchr(buf, '\n')[-1] == '\r') {
        io_fail(why, IO_ERR_FORMAT, "its lines end in CR LF, not LF as gpubatch writes them: "
                                    "the file was converted (dos2unix restores it)");
    } else if (!strncmp(buf, "gpubatch ", 9)) {
        io_fail(why, IO_ERR_FORMAT, "unsupported version of a gpubatch shard file");
    } else {
        io_fail(why, IO_ERR_FORMAT,
                "not a gpubatch state or part file (written by reduce or quadratic --shard)");
    }
    free(orig);
    free(buf);
    if (rc < 0) {
        free(m->blob);
        m->blob = NULL;
    }
    return rc;
}

/* Cuts and positions a part of an array output (see shard.h). */
int shard_part_open(io_reader *r, const frame_info *fi, const shard_spec *s, const char *name,
                    size_t record_in, size_t record_out, uint64_t (*header_len)(void *, uint64_t),
                    void *ctx, int level, char *part_head, size_t part_len, uint64_t *records,
                    uint64_t *limit)
{
    io_status st;
    shard_input in;
    shard_meta m;
    uint64_t r0, r1;
    if (shard_input_open(r, fi, &in, &st) < 0 ||
        (in.data_bytes % record_in &&
         io_fail(&st, IO_ERR_FORMAT, "size %llu bytes is not a whole number of %zu-byte records",
                 (unsigned long long)in.data_bytes, record_in) < 0))
        return msg_status(name, &st);
    *records = in.data_bytes / record_in;
    uint64_t head = header_len(ctx, *records);
    shard_rows(s, *records, head, record_out, GZ_WRITER_BLOCK_DATA, &r0, &r1);
    if (shard_input_seek(r, &in, r0 * record_in, (r1 - r0) * record_in, r1 == *records, &st) < 0)
        return msg_status(name, &st);
    shard_meta_input(&m, name, fi, &in, s);
    m.first = s->index ? head + r0 * record_out : 0;
    m.end = head + r1 * record_out;
    m.total = head + *records * record_out;
    m.level = level;
    if (shard_part_header(part_head, part_len, &m) < 0) {
        msg_error("%s: the input's name is too long for a part file", name);
        return 1;
    }
    *limit = (r1 - r0) * record_in;
    return 0;
}
