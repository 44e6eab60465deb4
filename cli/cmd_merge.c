/* cmd_merge.c - `gpubatch merge`: the result of a whole input from the
 * files its shards wrote (reduce states, or parts of an array output). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "commands.h"
#include "input.h"
#include "io/gzip/bgzf.h"
#include "io/gzip/gz_writer.h"
#include "io/reader.h"
#include "msg.h"
#include "options.h"
#include "output.h"
#include "result.h"
#include "shard.h"

static const char merge_usage[] =
    "Usage: gpubatch merge [OPTIONS] FILE...\n"
    "Combine the state files (from reduce) or part files (from quadratic and\n"
    "transpose) that the N shards of one input wrote, given in any order. States:\n"
    "print the result of the whole array exactly as reduce prints it (along axes:\n"
    "print it, or write it to -o FILE.npy or FILE.npz as reduce does). Parts: write\n"
    "the whole output, the bytes one run would have written.\n"
    "\n"
    "  --json             print reduce results as JSON (as reduce --json)\n"
    "  -o, --output FILE  write the merged parts to FILE (atomically)\n"
    "  -c, --stdout       write the merged parts to standard output (the default)\n"
    "  -f, --force        overwrite an existing FILE (or write to a terminal)\n"
    "  --ignore-time      merge shards whose input files have different modification\n"
    "                     times (copies known to hold the same bytes)\n"
    "  A FILE named *.gz is blocked gzip, any other name and standard output plain:\n"
    "  the parts' bytes are copied where they hold that (blocked gzip at their level\n"
    "  unless -1 .. -9 names another), else inflated or compressed on the way.\n"
    "  --compress         write blocked gzip whatever the name\n"
    "  -1 .. -9           write blocked gzip at this level (a FILE must end in .gz,\n"
    "                     or add --compress)\n"
    "  --no-compress      write plain bytes whatever the name\n"
    "  -q, --quiet        no warnings\n"
    "  -v, --verbose      report what was merged on stderr\n"
    "  -h, --help         this help\n";

enum { OPT_JSON = OPT_FIRST_COMMAND_OPTION, OPT_IGNORE_TIME };

/* One file given to merge. */
typedef struct {
    const char *path;
    shard_meta m;
    rd_state st;
} merge_item;

/* Whether two shards' input files have the same modification time: to the
 * nanosecond, or to the second where one file system keeps no fraction;
 * a file of format 2 records none and agrees with any. */
static int merge_same_time(const shard_meta *a, const shard_meta *b)
{
    if (!a->has_time || !b->has_time)
        return 1;
    return a->time_s == b->time_s &&
           (a->time_ns == b->time_ns || a->time_ns == 0 || b->time_ns == 0);
}

/* Writes a shard's input time as UTC text, to the nanosecond. */
static void merge_time_text(char *buf, size_t len, const shard_meta *m)
{
    struct tm tm;
    time_t t = (time_t)m->time_s;
    if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, len, "%lld", (long long)m->time_s);
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, ".%09u UTC", (unsigned)m->time_ns);
}

/* Names the first field in which two shard files of one input differ, or
 * NULL when they agree (times are compared apart). */
static const char *merge_mismatch(const merge_item *a, const merge_item *b)
{
    if (a->m.kind != b->m.kind)
        return "kind of file";
    if (a->m.spec.count != b->m.spec.count)
        return "number of shards";
    if (a->m.source_bytes != b->m.source_bytes)
        return "input file size";
    if (a->m.input_check != b->m.input_check)
        return "input data (input-check)";
    if (a->m.dtype != b->m.dtype)
        return "dtype";
    if (a->m.ndim != b->m.ndim ||
        memcmp(a->m.shape, b->m.shape, sizeof a->m.shape[0] * (a->m.ndim > 0 ? a->m.ndim : 0)))
        return "shape";
    if (a->m.fortran_order != b->m.fortran_order)
        return "memory order";
    if (a->m.nelem != b->m.nelem)
        return "number of elements";
    if (a->m.kind == SHARD_KIND_STATE && a->st.ops != b->st.ops)
        return "operations";
    if (a->m.kind == SHARD_KIND_STATE && a->st.skipnan != b->st.skipnan)
        return "--skipnan";
    if (a->m.kind == SHARD_KIND_STATE && a->st.ddof != b->st.ddof)
        return "--ddof";
    if (a->m.axis != b->m.axis || a->m.axes != b->m.axes)
        return "--axis";
    if (a->m.keepdims != b->m.keepdims)
        return "--keepdims";
    if (a->m.kind == SHARD_KIND_PART && a->m.total != b->m.total)
        return "output size";
    if (a->m.kind == SHARD_KIND_PART && a->m.level != b->m.level)
        return "compression level";
    return NULL;
}

/* Reads every file and orders them by shard index in byset[]; 0, or 1
 * after an error (missing, duplicate or mismatched shards). */
static int merge_collect(merge_item *items, int n, merge_item **byset, int ignore_time)
{
    io_status why;
    for (int i = 0; i < n; i++) {
        if (shard_read(items[i].path, &items[i].m, &items[i].st, &why) < 0)
            return msg_status(items[i].path, &why);
        const char *diff = merge_mismatch(&items[0], &items[i]);
        if (diff) {
            msg_error("%s: not a shard of the same input and run as %s (%s differs)",
                      items[i].path, items[0].path, diff);
            return 1;
        }
        if (!ignore_time && !merge_same_time(&items[0].m, &items[i].m)) {
            char t0[64], t1[64];
            merge_time_text(t0, sizeof t0, &items[0].m);
            merge_time_text(t1, sizeof t1, &items[i].m);
            msg_error("%s: its input was modified at %s, %s's at %s: the input changed between "
                      "the shard runs (--ignore-time merges copies known to be the same)",
                      items[i].path, t1, items[0].path, t0);
            return 1;
        }
        merge_item **slot = &byset[items[i].m.spec.index];
        if (*slot) {
            msg_error("%s: shard %llu/%llu given twice (also %s)", items[i].path,
                      (unsigned long long)items[i].m.spec.index,
                      (unsigned long long)items[i].m.spec.count, (*slot)->path);
            return 1;
        }
        *slot = &items[i];
    }
    for (uint64_t i = 0; i < items[0].m.spec.count; i++)
        if (!byset[i]) {
            msg_error("%s: shard %llu/%llu is missing", items[0].m.input, (unsigned long long)i,
                      (unsigned long long)items[0].m.spec.count);
            return 1;
        }
    return 0;
}

/* Merges reduce states in shard order and prints the whole array's result. */
static int merge_states(merge_item **byset, uint64_t count, int json)
{
    const shard_meta *m0 = &byset[0]->m;
    rd_state all;
    rd_state_init(&all, m0->dtype, byset[0]->st.ops, byset[0]->st.skipnan);
    all.ddof = byset[0]->st.ddof;
    for (uint64_t i = 0; i < count; i++) {
        const merge_item *it = byset[i];
        uint64_t t0, t1;
        shard_tiles(&it->m.spec, it->m.nelem, &t0, &t1);
        uint64_t e0 = t0 * RD_TILE, e1 = t1 * RD_TILE < it->m.nelem ? t1 * RD_TILE : it->m.nelem;
        const rd_extrema *x = &it->st.ext;
        if (it->m.first != t0 || it->m.end != t1 || it->st.nelem != e1 - e0 ||
            it->st.count > it->st.nelem ||
            (x->min_idx != RD_NO_INDEX && (x->min_idx < e0 || x->min_idx >= e1)) ||
            (x->max_idx != RD_NO_INDEX && (x->max_idx < e0 || x->max_idx >= e1))) {
            msg_error("%s: the state does not match shard %llu/%llu of %llu elements",
                      it->path, (unsigned long long)i, (unsigned long long)count,
                      (unsigned long long)it->m.nelem);
            return 1;
        }
        rd_state_merge(&all, &it->st);
    }
    frame_info fi;
    memset(&fi, 0, sizeof fi);
    fi.dtype = m0->dtype;
    fi.ndim = m0->ndim;
    fi.fortran_order = m0->fortran_order;
    memcpy(fi.shape, m0->shape, sizeof fi.shape);
    msg_info("%s: merged %llu shard states", m0->input, (unsigned long long)count);
    return result_print(m0->input, &fi, &all, 0, NULL, json);
}

/* Merges the states of a reduction along axes in shard order and prints or
 * writes the whole array's result as reduce --axis does. */
static int merge_axis(merge_item **byset, uint64_t count, const out_opts *oo, int json)
{
    const shard_meta *m0 = &byset[0]->m;
    const rd_state *o0 = &byset[0]->st;
    const char *out_path = oo->path && strcmp(oo->path, "-") ? oo->path : NULL;
    uint64_t shape[NPY_MAX_DIMS];
    int ndim = m0->ndim < 0 ? 1 : m0->ndim;
    memcpy(shape, m0->shape, sizeof shape);
    if (m0->ndim < 0)
        shape[0] = m0->nelem;
    io_status why;
    ax_plan plan;
    if (ax_plan_init(&plan, m0->dtype, o0->ops, o0->skipnan, ndim, shape, m0->fortran_order,
                     m0->axes, m0->keepdims, &why) < 0)
        return msg_status(byset[0]->path, &why);
    if (plan.nelem != m0->nelem) {
        msg_error("%s: the shape does not hold the state's %llu elements", byset[0]->path,
                  (unsigned long long)m0->nelem);
        return 1;
    }
    struct stat so, si;
    for (uint64_t i = 0; out_path && i < count && stat(out_path, &so) == 0; i++)
        if (stat(byset[i]->path, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
            msg_error("%s: is one of the state files: not overwritten", out_path);
            return 1;
        }
    if (__builtin_popcount(o0->ops) > 1 && out_path &&
        !(strlen(out_path) >= 4 && !strcmp(out_path + strlen(out_path) - 4, ".npz")))
        return msg_error("%s: several operations go to an .npz archive, a member each: name "
                         "the output FILE.npz", out_path), 1;
    ax_state *all = ax_state_new(&plan);
    int status = 1;
    if (!all)
        return msg_error("out of memory for the state of %llu outputs",
                         (unsigned long long)plan.nout), 1;
    for (uint64_t i = 0; i < count; i++) {
        const merge_item *it = byset[i];
        uint64_t t0, t1;
        shard_tiles(&it->m.spec, plan.nelem, &t0, &t1);
        uint64_t e0 = ax_shard_cut(&plan, t0 * RD_TILE), e1 = ax_shard_cut(&plan, t1 * RD_TILE);
        if (it->m.first != e0 || it->m.end != e1) {
            msg_error("%s: the state does not match shard %llu/%llu of %llu elements", it->path,
                      (unsigned long long)i, (unsigned long long)count,
                      (unsigned long long)plan.nelem);
            goto out_free;
        }
        ax_state *sh = ax_state_load(&plan, e0, e1, it->m.blob, it->m.blob_len, &why);
        if (!sh) {
            msg_error("%s: the state does not match shard %llu/%llu: %s", it->path,
                      (unsigned long long)i, (unsigned long long)count, why.text);
            goto out_free;
        }
        int rc = ax_state_merge(all, sh);
        ax_state_free(sh);
        if (rc < 0) {
            msg_error("%s: the state does not follow shard %llu's", it->path,
                      (unsigned long long)(i ? i - 1 : 0));
            goto out_free;
        }
    }
    msg_info("%s: merged %llu shard states", m0->input, (unsigned long long)count);
    out_opts out;
    memset(&out, 0, sizeof out);
    out.path = out_path;
    out.force = oo->force;
    out.threads = 1;
    out.npz = out.path && strlen(out.path) >= 4 && !strcmp(out.path + strlen(out.path) - 4, ".npz");
    if (out.path && out_name_is_gz(out.path))
        out.level = CLI_DEFAULT_LEVEL;
    status = result_axis(m0->input, &plan, all, (int)o0->ddof, &out, NULL, json);
out_free:
    ax_state_free(all);
    return status;
}

/* How merge_scan treats the bytes of a part: checks its blocks, copies the
 * bytes to the output, or inflates its blocks into the output. */
enum { SCAN_CHECK, SCAN_COPY, SCAN_INFLATE };

/* Little-endian 32-bit value at p. */
static uint32_t merge_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Inflates the BGZF block blk (total bytes, checked before) and appends
 * its data to out; 0, or 1 after an error (the part changed since it was
 * checked, or the output failed). */
static int merge_inflate_block(const merge_item *it, const unsigned char *blk, size_t total,
                               out_stream *out)
{
    static unsigned char data[1 << 16]; /* a block's ISIZE is at most 64 KiB */
    size_t head = bgzf_header_size(blk);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) {
        msg_error("out of memory");
        return 1;
    }
    z.next_in = (unsigned char *)blk + head;
    z.avail_in = (uInt)(total - head - 8);
    z.next_out = data;
    z.avail_out = sizeof data;
    int zr = inflate(&z, Z_FINISH);
    size_t n = sizeof data - z.avail_out;
    inflateEnd(&z);
    if (zr != Z_STREAM_END || n != merge_le32(blk + total - 4) ||
        (uint32_t)crc32(0, data, (uInt)n) != merge_le32(blk + total - 8)) {
        msg_error("%s: the part changed while being merged", it->path);
        return 1;
    }
    return out_write(out, data, n);
}

/* Reads bytes [from, to) of a part's file fd in windows and adds them to
 * *crc. SCAN_CHECK checks that they are whole BGZF blocks as gpubatch
 * writes them (its header, each inflating to exactly its BSIZE, ISIZE and
 * CRC-32), adding their data bytes to *data; SCAN_COPY appends them to out;
 * SCAN_INFLATE appends the data of their blocks to out. 0, or 1 after an
 * error naming the part (or the output). */
static int merge_scan(const merge_item *it, int fd, uint64_t from, uint64_t to, int mode,
                      uint32_t *crc, uint64_t *data, out_stream *out)
{
    static unsigned char buf[4 << 20];
    io_status st;
    while (from < to) {
        size_t want = to - from < sizeof buf ? (size_t)(to - from) : sizeof buf, used = 0;
        ssize_t k = pread(fd, buf, want, (off_t)from);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            msg_error("%s: %s", it->path, k < 0 ? strerror(errno) : "file shrank while merging");
            return 1;
        }
        if (mode == SCAN_CHECK) {
            if (bgzf_check(fd, io_gzip_member_error, buf, (size_t)k, from, &used, &st) < 0)
                return msg_status(it->path, &st);
            for (size_t pos = 0, total; pos < used; pos += total) {
                total = bgzf_block_size(buf + pos, used - pos);
                if (memcmp(buf + pos, gz_eof_block, 16)) {
                    msg_error("%s: gzip member at byte %llu: not a block as gpubatch writes it",
                              it->path, (unsigned long long)(from + pos));
                    return 1;
                }
                *data += merge_le32(buf + pos + total - 4);
            }
            if (used == 0) {
                msg_error("%s: gzip member at byte %llu: %s", it->path, (unsigned long long)from,
                          (size_t)k < want ? "truncated" : "not a BGZF block");
                return 1;
            }
        } else if (mode == SCAN_INFLATE) {
            for (size_t total; (total = bgzf_block_size(buf + used, (size_t)k - used)) &&
                               total <= (size_t)k - used;
                 used += total)
                if (merge_inflate_block(it, buf + used, total, out))
                    return 1;
            if (used == 0) {
                msg_error("%s: the part changed while being merged", it->path);
                return 1;
            }
        } else {
            used = (size_t)k;
            *data += used;
        }
        *crc = (uint32_t)crc32(*crc, buf, (uInt)used);
        if (mode == SCAN_COPY && out && out_write(out, buf, used))
            return 1;
        from += used;
    }
    return 0;
}

/* Reports a part whose last line is not its 'part-end' line: bytes
 * appended after one found in its last 64 KiB, else cut short. Returns 1. */
static int merge_no_end(const merge_item *it, int fd, uint64_t size)
{
    static char tail[65536 + 1];
    uint64_t from = size > sizeof tail - 1 ? size - (sizeof tail - 1) : 0;
    from = from > it->m.data_offset ? from : it->m.data_offset;
    ssize_t k = size > from ? pread(fd, tail, (size_t)(size - from), (off_t)from) : 0;
    uint32_t crc;
    for (ssize_t i = k - SHARD_PART_END_LEN; i >= 0; i--)
        if (tail[i] == 'p' && shard_part_end_parse(tail + i, &crc) == 0) {
            msg_error("%s: %llu bytes follow its 'part-end' line: bytes were appended to the part",
                      it->path, (unsigned long long)(k - i - SHARD_PART_END_LEN));
            return 1;
        }
    msg_error("%s: truncated part (no 'part-end' line)", it->path);
    return 1;
}

/* Checks a part before anything is copied: its last line, the CRC-32 of its
 * bytes against it, its end-of-file block when compressed, every block, and
 * that it holds exactly the data its header says; *copy_end gets the end of
 * what is copied and *crc the part's CRC-32. 0, or 1 after an error. */
static int merge_check_part(const merge_item *it, int fd, uint64_t *copy_end, uint32_t *crc)
{
    struct stat st;
    char line[SHARD_PART_END_LEN + 1] = "";
    unsigned char tail[GZ_WRITER_EOF_LEN];
    if (fstat(fd, &st) < 0) {
        msg_error("%s: %s", it->path, strerror(errno));
        return 1;
    }
    uint64_t size = (uint64_t)st.st_size, want = it->m.end - it->m.first, have = 0;
    uint64_t end = size - SHARD_PART_END_LEN, eof = it->m.level > 0 ? GZ_WRITER_EOF_LEN : 0;
    uint32_t sum = 0, data_crc;
    if (size < it->m.data_offset + SHARD_PART_END_LEN + eof ||
        pread(fd, line, SHARD_PART_END_LEN, (off_t)end) != SHARD_PART_END_LEN ||
        shard_part_end_parse(line, &data_crc) < 0)
        return merge_no_end(it, fd, size);
    *copy_end = end - eof;
    if (eof && (pread(fd, tail, sizeof tail, (off_t)*copy_end) != (ssize_t)sizeof tail ||
                memcmp(tail, gz_eof_block, sizeof tail))) {
        msg_error("%s: truncated part (no end-of-file block)", it->path);
        return 1;
    }
    if (merge_scan(it, fd, it->m.data_offset, *copy_end, eof ? SCAN_CHECK : SCAN_COPY, &sum, &have,
                   NULL))
        return 1;
    sum = (uint32_t)crc32(sum, tail, (uInt)eof);
    if (sum != data_crc) {
        msg_error("%s: the part's data does not match its CRC: the file is damaged or was edited",
                  it->path);
        return 1;
    }
    if (have != want) {
        msg_error("%s: the part holds %llu bytes of data, its header says %llu", it->path,
                  (unsigned long long)have, (unsigned long long)want);
        return 1;
    }
    *crc = sum;
    return 0;
}

/* Joins the parts in shard order into one output: their bytes copied as
 * they are when the output is to hold what they hold (blocked gzip at the
 * parts' level, or plain), else their data inflated and/or compressed at
 * the output's level, the bytes one run at that level writes. */
static int merge_parts(merge_item **byset, uint64_t count, const out_opts *oo)
{
    int level_in = byset[0]->m.level, level_out = oo->level, status = 1;
    if (level_out > 0 && level_in > 0 && !oo->level_given)
        level_out = level_in; /* compressed, at no level asked: the parts' own blocks */
    int copy = level_out == level_in, mode = copy || level_in == 0 ? SCAN_COPY : SCAN_INFLATE;
    out_opts opts = *oo;
    opts.level = copy ? 0 : level_out; /* the writer's: 0 passes the bytes through */
    opts.threads = backend_cpu_count();
    uint64_t expect = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (byset[i]->m.first != expect) {
            msg_error("%s: part starts at output byte %llu, the previous one ends at %llu",
                      byset[i]->path, (unsigned long long)byset[i]->m.first,
                      (unsigned long long)expect);
            return 1;
        }
        expect = byset[i]->m.end;
    }
    if (expect != byset[0]->m.total) {
        msg_error("%s: the parts end at output byte %llu of %llu", byset[count - 1]->path,
                  (unsigned long long)expect, (unsigned long long)byset[0]->m.total);
        return 1;
    }
    int *fds = malloc(count * sizeof *fds);
    io_file_id *ids = malloc(count * sizeof *ids);
    uint64_t *ends = malloc(count * sizeof *ends);
    uint32_t *crcs = malloc(count * sizeof *crcs);
    out_stream out;
    uint64_t opened = 0;
    if (!fds || !ids || !ends || !crcs) {
        msg_error("out of memory");
        goto out_close;
    }
    for (; opened < count; opened++) {
        struct stat st;
        const merge_item *it = byset[opened];
        fds[opened] = open(it->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fds[opened] < 0 || fstat(fds[opened], &st) < 0) {
            msg_error("%s: %s", it->path, strerror(errno));
            if (fds[opened] >= 0)
                close(fds[opened]);
            goto out_close;
        }
        ids[opened] = (io_file_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
        if (merge_check_part(it, fds[opened], &ends[opened], &crcs[opened])) {
            close(fds[opened]);
            goto out_close;
        }
    }
    if (out_open(&out, &opts, ids, count))
        goto out_close;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t crc = 0;
        uint64_t data = 0;
        if (merge_scan(byset[i], fds[i], byset[i]->m.data_offset, ends[i], mode, &crc, &data,
                       &out))
            goto out_abort;
        if (level_in > 0)
            crc = (uint32_t)crc32(crc, gz_eof_block, GZ_WRITER_EOF_LEN);
        if (crc != crcs[i]) {
            msg_error("%s: the part changed while being merged", byset[i]->path);
            goto out_abort;
        }
    }
    if (copy && level_out > 0 && out_write(&out, gz_eof_block, GZ_WRITER_EOF_LEN))
        goto out_abort;
    const char *name = out.name;
    if (out_close(&out))
        goto out_close;
    if (copy)
        msg_info("%s: merged %llu parts", name, (unsigned long long)count);
    else if (level_out)
        msg_info("%s: merged %llu parts (%s) into blocked gzip at level %d", name,
                 (unsigned long long)count, level_in ? "blocked gzip, inflated" : "plain",
                 level_out);
    else
        msg_info("%s: merged %llu parts (blocked gzip, inflated) into plain bytes", name,
                 (unsigned long long)count);
    status = 0;
    goto out_close;
out_abort:
    out_abort(&out);
out_close:
    for (uint64_t i = 0; i < opened; i++)
        close(fds[i]);
    free(crcs);
    free(ends);
    free(ids);
    free(fds);
    return status;
}

/* Entry point of `gpubatch merge`. */
int cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, 0, OPT_JSON},
        {"ignore-time", no_argument, 0, OPT_IGNORE_TIME},
        CLI_OUTPUT_LONGOPTS,
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, OPT_HELP},
        {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0},
    };
    static const char shortopts[] = ":qvh" CLI_OUTPUT_SHORTOPTS;
    out_opts oo;
    int json = 0, ignore_time = 0, opt, handled;
    memset(&oo, 0, sizeof oo);
    cli_set_command("merge");
    cli_common common; /* for -q and -v alone: merge takes no input options */
    cli_common_init(&common);
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if ((handled = cli_verbosity_option(&common, opt)) < 0)
            return 2;
        if (handled || out_option(&oo, opt, optarg))
            continue;
        switch (opt) {
        case OPT_JSON:
            json = 1;
            break;
        case OPT_IGNORE_TIME:
            ignore_time = 1;
            break;
        case 'h':
        case OPT_HELP:
            fputs(merge_usage, stdout);
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (out_resolve(&oo))
        return 2;
    int n = argc - optind;
    if (n < 1)
        return cli_usage_error("merge", "no FILE given");
    merge_item *items = calloc((size_t)n, sizeof *items);
    merge_item **byset = calloc(SHARD_MAX_COUNT, sizeof *byset);
    int status = 1;
    if (!items || !byset) {
        msg_error("out of memory");
        goto out_free;
    }
    for (int i = 0; i < n; i++)
        items[i].path = argv[optind + i];
    if (merge_collect(items, n, byset, ignore_time))
        goto out_free;
    uint64_t count = items[0].m.spec.count;
    if (items[0].m.kind == SHARD_KIND_STATE) {
        if (oo.path && strcmp(oo.path, "-") && !items[0].m.axis) {
            status = cli_usage_error("merge", "-o FILE goes with part files; reduce states print");
            goto out_free;
        }
        if (oo.compress || oo.level_given) {
            status = cli_usage_error("merge", "--compress, --no-compress and -1 .. -9 go with "
                                              "part files; reduce states print");
            goto out_free;
        }
        if (input_stdout_guard((const char *const *)argv + optind, n))
            goto out_free;
        status = items[0].m.axis ? merge_axis(byset, count, &oo, json)
                                 : merge_states(byset, count, json);
    } else {
        status = merge_parts(byset, count, &oo);
    }
out_free:
    for (int i = 0; items && i < n; i++)
        free(items[i].m.blob);
    free(byset);
    free(items);
    return status;
}
