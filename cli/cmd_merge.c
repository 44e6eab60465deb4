/* cmd_merge.c - `gpubatch merge`: the result of a whole input from the
 * files its shards wrote (reduce states, or parts of an array output). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "commands.h"
#include "io/gzwrite.h"
#include "msg.h"
#include "options.h"
#include "output.h"
#include "shard.h"

static const char merge_usage[] =
    "Usage: gpubatch merge [OPTIONS] FILE...\n"
    "Combine the state files (from reduce) or part files (from quadratic and\n"
    "transpose) that the N shards of one input wrote, given in any order. States:\n"
    "print the result of the whole array exactly as reduce prints it. Parts: write\n"
    "the whole output, the bytes one run would have written.\n"
    "\n"
    "  --json             print reduce results as JSON (as reduce --json)\n"
    "  -o, --output FILE  write the merged parts to FILE (atomically)\n"
    "  -c, --stdout       write the merged parts to standard output (the default)\n"
    "  -f, --force        overwrite an existing FILE\n"
    "  -q, --quiet        no warnings\n"
    "  -v, --verbose      report what was merged on stderr\n"
    "  -h, --help         this help\n";

enum { OPT_JSON = OPT_FIRST_COMMAND_OPTION };

/* One file given to merge. */
typedef struct {
    const char *path;
    shard_meta m;
    rd_state st;
} merge_item;

/* Names the first field in which two shard files of one input differ, or
 * NULL when they agree. */
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
    if (a->m.kind == SHARD_KIND_PART && a->m.total != b->m.total)
        return "output size";
    if (a->m.kind == SHARD_KIND_PART && a->m.level != b->m.level)
        return "compression level";
    return NULL;
}

/* Reads every file and orders them by shard index in byset[]; 0, or 1
 * after an error (missing, duplicate or mismatched shards). */
static int merge_collect(merge_item *items, int n, merge_item **byset)
{
    char err[512];
    for (int i = 0; i < n; i++) {
        if (shard_read(items[i].path, &items[i].m, &items[i].st, err, sizeof err) < 0) {
            msg_error("%s: %s", items[i].path, err);
            return 1;
        }
        const char *diff = merge_mismatch(&items[0], &items[i]);
        if (diff) {
            msg_error("%s: not a shard of the same input and run as %s (%s differs)",
                      items[i].path, items[0].path, diff);
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
    return reduce_print(m0->input, &fi, &all, json);
}

/* Reads bytes [from, to) of a part's file fd in windows: adds them to *crc,
 * and, when blocks is set, checks that they are whole BGZF blocks as
 * gpubatch writes them (its header, each inflating to exactly its BSIZE,
 * ISIZE and CRC-32), adding their data bytes to *data; with a sink, appends
 * them to it. 0, or 1 after an error naming the part (or the output). */
static int merge_scan(const merge_item *it, int fd, uint64_t from, uint64_t to, int blocks,
                      uint32_t *crc, uint64_t *data, io_sink *sink, const char *out_name)
{
    static unsigned char buf[4 << 20];
    char err[512];
    while (from < to) {
        size_t want = to - from < sizeof buf ? (size_t)(to - from) : sizeof buf, used = want;
        ssize_t k = pread(fd, buf, want, (off_t)from);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            msg_error("%s: %s", it->path, k < 0 ? strerror(errno) : "file shrank while merging");
            return 1;
        }
        if (blocks) {
            if (io_bgzf_check(fd, buf, (size_t)k, from, &used, err, sizeof err) < 0) {
                msg_error("%s: %s", it->path, err);
                return 1;
            }
            for (size_t pos = 0, total; pos < used; pos += total) {
                total = io_bgzf_block_size(buf + pos, used - pos);
                if (memcmp(buf + pos, gz_eof_block, 16)) {
                    msg_error("%s: gzip member at byte %llu: not a block as gpubatch writes it",
                              it->path, (unsigned long long)(from + pos));
                    return 1;
                }
                *data += (uint64_t)buf[pos + total - 4] | (uint64_t)buf[pos + total - 3] << 8 |
                         (uint64_t)buf[pos + total - 2] << 16 | (uint64_t)buf[pos + total - 1] << 24;
            }
            if (used == 0) {
                msg_error("%s: gzip member at byte %llu: %s", it->path, (unsigned long long)from,
                          (size_t)k < want ? "truncated" : "not a BGZF block");
                return 1;
            }
        } else {
            used = (size_t)k;
            *data += used;
        }
        *crc = (uint32_t)crc32(*crc, buf, (uInt)used);
        int rc = sink ? io_sink_write(sink, buf, used) : 0;
        if (rc < 0) {
            if (rc != IO_ERR_PIPE)
                msg_error("%s: %s", out_name, io_sink_error(sink));
            return 1;
        }
        from += used;
    }
    return 0;
}

/* Checks a part before anything is copied: its last line, the CRC-32 of its
 * bytes against it, its end-of-file block when compressed, every block, and
 * that it holds exactly the data its header says; *copy_end gets the end of
 * what is copied and *crc the part's CRC-32. 0, or 1 after an error. */
static int merge_check_part(const merge_item *it, int fd, uint64_t *copy_end, uint32_t *crc)
{
    struct stat st;
    char line[SHARD_PART_END_LEN + 1] = "";
    unsigned char tail[GZW_EOF_LEN];
    if (fstat(fd, &st) < 0) {
        msg_error("%s: %s", it->path, strerror(errno));
        return 1;
    }
    uint64_t size = (uint64_t)st.st_size, want = it->m.end - it->m.first, have = 0;
    uint64_t end = size - SHARD_PART_END_LEN, eof = it->m.level > 0 ? GZW_EOF_LEN : 0;
    uint32_t sum = 0, data_crc;
    if (size < it->m.data_offset + SHARD_PART_END_LEN + eof ||
        pread(fd, line, SHARD_PART_END_LEN, (off_t)end) != SHARD_PART_END_LEN ||
        shard_part_end_parse(line, &data_crc) < 0) {
        msg_error("%s: truncated part (no 'part-end' line)", it->path);
        return 1;
    }
    *copy_end = end - eof;
    if (eof && (pread(fd, tail, sizeof tail, (off_t)*copy_end) != (ssize_t)sizeof tail ||
                memcmp(tail, gz_eof_block, sizeof tail))) {
        msg_error("%s: truncated part (no end-of-file block)", it->path);
        return 1;
    }
    if (merge_scan(it, fd, it->m.data_offset, *copy_end, eof != 0, &sum, &have, NULL, NULL))
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

/* Concatenates the parts in shard order into one output. */
static int merge_parts(merge_item **byset, uint64_t count, const out_opts *oo)
{
    const char *path = oo->path ? oo->path : "-";
    const char *out_name = strcmp(path, "-") ? path : "(stdout)";
    int level = byset[0]->m.level, status = 1;
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
    io_sink *sink = NULL;
    char err[512];
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
    if (io_sink_open(&sink, path, oo->force, ids, count, err, sizeof err) < 0) {
        msg_error("%s: %s", out_name, err);
        goto out_close;
    }
    if (level > 0 && io_sink_is_tty(sink)) {
        msg_error("refusing to write compressed data to a terminal (use -o FILE or a pipe)");
        goto out_abort;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint32_t crc = 0;
        uint64_t data = 0;
        if (merge_scan(byset[i], fds[i], byset[i]->m.data_offset, ends[i], 0, &crc, &data, sink,
                       out_name))
            goto out_abort;
        if (level > 0)
            crc = (uint32_t)crc32(crc, gz_eof_block, GZW_EOF_LEN);
        if (crc != crcs[i]) {
            msg_error("%s: the part changed while being merged", byset[i]->path);
            goto out_abort;
        }
    }
    if (level > 0 && io_sink_write(sink, gz_eof_block, GZW_EOF_LEN) < 0) {
        msg_error("%s: %s", out_name, io_sink_error(sink));
        goto out_abort;
    }
    if (io_sink_commit(sink) < 0) {
        sink = NULL;
        msg_error("%s: %s", out_name, io_sink_commit_error());
        goto out_close;
    }
    sink = NULL;
    msg_info("%s: merged %llu parts", out_name, (unsigned long long)count);
    status = 0;
out_abort:
    io_sink_abort(sink);
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
        {"output", required_argument, 0, 'o'},
        {"stdout", no_argument, 0, 'c'},
        {"force", no_argument, 0, 'f'},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, OPT_HELP},
        {0, 0, 0, 0},
    };
    out_opts oo;
    int json = 0, opt;
    memset(&oo, 0, sizeof oo);
    cli_set_command("merge");
    cli_common common; /* for -q and -v alone: merge takes no input options */
    cli_common_init(&common);
    while ((opt = getopt_long(argc, argv, "o:cfqvh", longopts, NULL)) != -1) {
        if ((opt == 'q' || opt == 'v') && cli_common_option(&common, opt, optarg))
            continue;
        switch (opt) {
        case OPT_JSON:
            json = 1;
            break;
        case 'o':
        case 'c':
        case 'f':
            out_option(&oo, opt, optarg);
            break;
        case 'h':
        case OPT_HELP:
            fputs(merge_usage, stdout);
            return 0;
        default:
            return cli_usage_error("merge", "unknown option");
        }
    }
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
    if (merge_collect(items, n, byset))
        goto out_free;
    uint64_t count = items[0].m.spec.count;
    if (items[0].m.kind == SHARD_KIND_STATE) {
        if (oo.path && strcmp(oo.path, "-")) {
            status = cli_usage_error("merge", "-o FILE goes with part files; reduce states print");
            goto out_free;
        }
        status = merge_states(byset, count, json);
    } else {
        status = merge_parts(byset, count, &oo);
    }
out_free:
    free(byset);
    free(items);
    return status;
}
