/* test_run.c - the run as one object (runtime/run.c): inputs handed to
 * run_input as a command hands them, on the CPU backend and on the
 * stand-in driver's devices (tests/cli/fakecuda.c).
 *
 * Chunks: a reduction of random bytes, plain (read in place and through
 * the buffers) and gzip, over several chunk sizes, buffer counts and
 * threads, each input after others through the same run (buffers kept,
 * grown for a larger chunk), must give the exact sum, extrema and count
 * computed here, its check called once with the data's bytes. A stream:
 * a copy's chunks reach the sink in order, byte for byte. A whole matrix:
 * one matrix larger than a chunk, staged and transposed, and a batch of
 * small ones through the engine, against a transpose done here; a staged
 * matrix from a gzip file whose first member is inflated on a device and
 * its second on the host (the transpose kernel the stand-in driver's
 * launch hook). A gzip
 * member handed from the host to a device (the device's inflate is the
 * stand-in of tests/gzs_standin.h) and back: each state of the hand-over
 * told once, every byte counted once. Along axes on a device (the CPU's
 * chunk code as the launch, over the stand-in's device memory): plain data
 * copied in and a gzip member inflated there give the CPU backend's result
 * bytes. The same member read from a pipe (its spool): handed to the device
 * from its start and from the host's pause, every byte counted once, the
 * result bytes along axes the CPU backend's, a cut or damaged member the
 * host's error line, and small and empty pipes read through. A device
 * failing: a copy to the device and a kernel's launch failing each make
 * run_input fail with one error line naming the input and the driver's
 * error, and no check of the data after it. */
#include "check.h"
#include "runtime/gzip/gzstream.h"

#include "../gzs_standin.h"
#include "../pipe_feeder.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/clock.h"
#include "io/frame.h"
#include "io/par.h"
#include "io/reader.h"
#include "tests/gzindex_fixture.h"
#include "runtime/backend.h"
#include "runtime/axis.h"
#include "runtime/backend_state.h"
#include "runtime/engine.h"
#include "runtime/reduce.h"
#include "runtime/run.h"
#include "runtime/transpose.h"

#define RND_SEED 0x9e3779b97f4a7c15ull
#include "rnd.h"

/* What the message hooks saw. */
static int errors, warns, begins, ends, checks;
static char last_error[IO_STATUS_TEXT + 256];
static uint64_t checked_bytes;

/* Waits for cuda's devices (run_msgs.ready). */
static int hook_ready(backend *be, int first)
{
    return backend_ready(be) < 0;
}

/* Counts auto's fallbacks: none is expected (run_msgs.fallback). */
static void hook_fallback(const backend *be, const char *why)
{
    warns++;
}

/* -v lines that tell a gzip member's hand-over, by its states: the host
 * ran the start, the device went on, the device could not go on. */
static int told_host, told_device, told_back;

/* Counts the -v lines of a member's hand-over (run_msgs.info). */
static void hook_info(const char *line)
{
    told_host += strstr(line, "inflated on the host's threads while the GPU started") != NULL;
    told_device += strstr(line, "inflated on the GPU in") != NULL;
    told_back += strstr(line, "could not go on where the host paused") != NULL;
}

/* Counts warnings (run_msgs.warn). */
static void hook_warn(const char *line)
{
    warns++;
}

/* Counts errors and keeps the last one's line (run_msgs.error). */
static void hook_error(const char *name, const io_status *st)
{
    errors++;
    snprintf(last_error, sizeof last_error, "%s: %s", name ? name : "(none)", st->text);
}

/* Counts the progress display's starts (run_msgs.progress_begin). */
static void hook_begin(const char *name, int64_t total)
{
    begins++;
}

/* Ignores the progress (run_msgs.progress). */
static void hook_progress(uint64_t raw)
{
}

/* Counts the progress display's ends (run_msgs.progress_end). */
static void hook_end(void)
{
    ends++;
}

static run_msgs msgs = {.ready = hook_ready, .fallback = hook_fallback, .info = hook_info,
                        .warn = hook_warn, .error = hook_error, .progress_begin = hook_begin,
                        .progress = hook_progress, .progress_end = hook_end};

/* Records the data's bytes a run read (run_op.check). */
static int hook_check(void *ctx, uint64_t bytes)
{
    checks++;
    checked_bytes = bytes;
    return 0;
}

/* The results a sink collected, in order. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
    int writes;
} collected;

/* Appends plain results (run_sink.write); compressed spans are not asked for. */
static int hook_write(void *ctx, const gz_writer_span *span, const void *out, size_t bytes)
{
    collected *c = ctx;
    if (span)
        return 1;
    if (c->len + bytes > c->cap) {
        c->cap = (c->len + bytes) * 2;
        c->p = realloc(c->p, c->cap);
    }
    memcpy(c->p + c->len, out, bytes);
    c->len += bytes;
    c->writes++;
    return 0;
}

/* Writes n bytes to a new temporary file, gzip-compressed when gz is set;
 * its path goes to path. */
static void temp_file(char path[64], const unsigned char *data, size_t n, int gz)
{
    snprintf(path, 64, "/tmp/test_run.XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (gz == 2) { /* two members, the second after the data's middle */
        close(fd);
        for (int k = 0; k < 2; k++) {
            size_t from = k ? n / 2 : 0, len = k ? n - n / 2 : n / 2;
            gzFile f = gzopen(path, k ? "ab1" : "wb1");
            CHECK(f != NULL);
            CHECK(len == 0 || gzwrite(f, data + from, (unsigned)len) == (int)len);
            CHECK(gzclose(f) == Z_OK);
        }
    } else if (gz) {
        gzFile f = gzdopen(fd, "wb1");
        CHECK(f != NULL);
        CHECK(n == 0 || gzwrite(f, data, (unsigned)n) == (int)n);
        CHECK(gzclose(f) == Z_OK);
    } else {
        CHECK(write(fd, data, n) == (ssize_t)n);
        close(fd);
    }
}

/* Random bytes. */
static unsigned char *random_bytes(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)rnd();
    return p;
}

/* Whether member_case reads gzip through a seek index, and the index it
 * built (before the backend opens) for open_input. */
static int with_index;
static uint8_t *index_bytes;
static size_t index_len;

/* Whether open_input reads the file through a pipe (opened by name, as a
 * named pipe is), its feeder and the bytes it writes. */
static int via_pipe;
static pipe_feeder feeder;
static uint8_t *feed_bytes;

/* The bytes of the file at path (*n of them). */
static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*n ? *n : 1);
    CHECK(b && fread(b, 1, *n, f) == *n);
    fclose(f);
    return b;
}

/* One input of a case: opens the file at path as raw bytes of dtype
 * (through index_bytes where set; through a pipe with via_pipe). */
static io_reader *open_input(const char *path, dt_type dtype, frame_info *fi)
{
    io_reader *r = NULL;
    io_status st;
    char name[32];
    if (via_pipe) {
        size_t n;
        feed_bytes = read_file(path, &n);
        snprintf(name, sizeof name, "/dev/fd/%d",
                 pipe_feeder_start(&feeder, feed_bytes, n, 1 << 20, rnd()));
        path = name;
    }
    CHECKF(io_reader_open(&r, path, &st) == 0, "%s", st.text);
    if (index_bytes) {
        gzindex *x;
        CHECK(gzindex_parse(&x, "test.gzidx", index_bytes, index_len, &st) == 0);
        CHECKF(io_reader_set_index(r, x, &st) == 0, "%s", st.text);
    }
    CHECKF(frame_open(r, dtype, 0, NULL, -1, fi, &st) == 0, "%s", st.text);
    return r;
}

/* Closes an input of open_input (and its pipe's feeder). */
static void close_input(io_reader *r)
{
    io_reader_close(r);
    if (feed_bytes) {
        pipe_feeder_end(&feeder, NULL);
        free(feed_bytes);
        feed_bytes = NULL;
    }
}

/* Clears what the hooks saw. */
static void hooks_reset(void)
{
    errors = warns = begins = ends = checks = 0;
    told_host = told_device = told_back = 0;
    checked_bytes = UINT64_MAX;
    last_error[0] = 0;
}

/* Reduces the file at path (n random bytes as uint8) through rn and checks
 * the sum, extrema and count against data, and the hooks' calls. */
static void reduce_one(run *rn, const char *path, const unsigned char *data, size_t n,
                       size_t chunk)
{
    frame_info fi;
    io_reader *r = open_input(path, DT_U8, &fi);
    if (!r)
        return;
    rd_state st;
    rd_state_init(&st, DT_U8, RD_OP_SUM | RD_OP_MIN | RD_OP_MAX | RD_OP_COUNT, 0);
    rd_job job = {.dtype = DT_U8, .ops = st.ops, .st = &st};
    run_source src = {.name = path, .r = r, .fi = &fi, .chunk = chunk, .limit = fi.data_bytes,
                      .prefix = fi.prefix, .prefix_len = fi.prefix_len};
    run_op op = {.ops = &rd_engine_ops, .ctx = &job, .grain = RD_TILE, .cpu_ns = 1.0,
                 .per_device = 1, .shared_buffers = 1, .check = hook_check};
    run_sink sink = {.msgs = &msgs};
    hooks_reset();
    uint64_t bytes = 0;
    int rc = run_input(rn, &src, &op, &sink, &bytes);
    CHECKF(rc == 0 && errors == 0, "%s (%zu bytes, chunk %zu, MAP %s)", last_error, n, chunk, getenv("GPUBATCH_MAP"));
    CHECK(bytes == n && checks == 1 && checked_bytes == n);
    CHECK(begins == 1 && ends == 1 && warns == 0);
    rd_result res;
    rd_state_result(&st, &res);
    uint64_t sum = 0;
    unsigned lo = 255, hi = 0;
    for (size_t i = 0; i < n; i++) {
        sum += data[i];
        lo = data[i] < lo ? data[i] : lo;
        hi = data[i] > hi ? data[i] : hi;
    }
    CHECKF(res.isum == (__int128)sum && res.count == n, "%s: %zu bytes, chunk %zu", path, n,
           chunk);
    CHECK(n == 0 || (res.have_extrema && res.umin == lo && res.umax == hi));
    io_reader_close(r);
}

/* Opens a CPU backend of `threads` threads and a run over it with chunks
 * of `chunk` bytes and `streams` buffers. */
static run *cpu_run(backend *be, int threads, size_t chunk, int streams)
{
    memset(be, 0, sizeof *be);
    CHECK(backend_open(be, BACKEND_CPU, NULL, threads) == 0);
    run *rn = NULL;
    run_plan plan = {.chunk = chunk, .streams = streams};
    CHECK(run_open(&rn, be, &plan) == 0);
    return rn;
}

/* Chunks: reductions of plain and gzip files of many sizes through one
 * run per backend shape, inputs after each other sharing its buffers. */
static void test_run_chunks(void)
{
    static const size_t sizes[] = {1, 999, RD_TILE, 3 * RD_TILE + 17, (size_t)5 << 20};
    static const size_t chunks[] = {(size_t)128 << 10, (size_t)1 << 20};
    static const int streams[] = {2, 3, 5};
    static const int threads[] = {1, 3};
    for (int map = 0; map < 2; map++) {
        setenv("GPUBATCH_MAP", map ? "1" : "0", 1);
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
            for (size_t s = 0; s < sizeof streams / sizeof *streams; s++) {
                backend be;
                run *rn = cpu_run(&be, threads[t], chunks[1], streams[s]);
                for (int gz = 0; gz < 2; gz++)
                    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
                        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
                            unsigned char *data = random_bytes(sizes[i]);
                            char path[64];
                            temp_file(path, data, sizes[i], gz);
                            reduce_one(rn, path, data, sizes[i], chunks[c]);
                            unlink(path);
                            free(data);
                        }
                run_close(rn);
                backend_close(&be);
            }
    }
    unsetenv("GPUBATCH_MAP");
}

/* The default chunk of a single gzip member or plain data run on the
 * host's cores alone is at most RUN_HOST_CHUNK per thread (on two
 * threads a small ring, reused; on sixteen the plan's 32 MiB), but for the
 * view's chunk where the CPU reads a plain file in place; a chunk given on
 * the command line and run_chunk keep the plan's. */
static void test_run_host_chunk(void)
{
    unsigned char *data = random_bytes(999);
    char plain[64], gz[64];
    temp_file(plain, data, 999, 0);
    temp_file(gz, data, 999, 1);
    for (int k = 0; k < 4; k++) {
        int given = k & 1, threads = k < 2 ? 2 : 16;
        backend be;
        memset(&be, 0, sizeof be);
        CHECK(backend_open(&be, BACKEND_CPU, NULL, threads) == 0);
        run_plan plan = {.chunk = (size_t)32 << 20, .chunk_given = given, .streams = 4};
        run *rn = NULL;
        CHECK(run_open(&rn, &be, &plan) == 0);
        frame_info fi_plain, fi_gz;
        io_reader *rp = open_input(plain, DT_U8, &fi_plain), *rg = open_input(gz, DT_U8, &fi_gz);
        CHECK(rp && rg);
        if (rp && rg) {
            uint64_t big = (uint64_t)1 << 40; /* data larger than any chunk */
            size_t want = given || threads == 16 ? plan.chunk : 2 * RUN_HOST_CHUNK;
            CHECKF(run_stream_chunk(rn, rp, 0, 0, big, 0) == want, "given %d, %d threads: %zu",
                   given, threads, run_stream_chunk(rn, rp, 0, 0, big, 0));
            CHECKF(run_stream_chunk(rn, rg, 0, 0, big, 0) == want, "given %d, %d threads: %zu", given,
                   threads, run_stream_chunk(rn, rg, 0, 0, big, 0));
            /* known data, or a plain file's size, bound the chunk to whole aligned units;
               a gzip file's size bounds its data at deflate's largest expansion */
            CHECK(run_stream_chunk(rn, rp, 0, 0, RUN_CHUNK_ALIGN + 1, 0) == 2 * RUN_CHUNK_ALIGN);
            CHECK(run_stream_chunk(rn, rp, 0, 0, 0, 0) == RUN_CHUNK_ALIGN);
            CHECK(run_stream_chunk(rn, rp, 0, 0, UINT64_MAX, 0) == RUN_CHUNK_ALIGN);
            uint64_t most = (uint64_t)io_reader_file_size(rg) * (uint64_t)GZSTREAM_RATIO_MAX;
            size_t gz_want = (size_t)((most + RUN_CHUNK_ALIGN - 1) / RUN_CHUNK_ALIGN * RUN_CHUNK_ALIGN);
            gz_want = gz_want < want ? gz_want : want;
            CHECKF(gz_want < want && run_stream_chunk(rn, rg, 0, 0, UINT64_MAX, 0) == gz_want, "%zu",
                   run_stream_chunk(rn, rg, 0, 0, UINT64_MAX, 0));
            CHECK(run_chunk(rn, rg, 0) == plan.chunk);
            /* a file the CPU reads in place takes the view's chunk unless one is given;
               gzip, and a view refused by GPUBATCH_MAP=0, keep theirs */
            size_t view = RUN_VIEW_CHUNK;
            size_t pp = fi_plain.prefix_len, pg = fi_gz.prefix_len;
            CHECKF(run_stream_chunk(rn, rp, 0, pp, big, view) == (given ? plan.chunk : view),
                   "given %d: %zu", given, run_stream_chunk(rn, rp, 0, pp, big, view));
            CHECK(run_stream_chunk(rn, rp, 0, pp, 999, view) == RUN_CHUNK_ALIGN);
            CHECK(run_stream_chunk(rn, rg, 0, pg, big, view) == want);
            setenv("GPUBATCH_MAP", "0", 1);
            CHECK(run_stream_chunk(rn, rp, 0, pp, big, view) == want);
            unsetenv("GPUBATCH_MAP");
        }
        io_reader_close(rp);
        io_reader_close(rg);
        run_close(rn);
        backend_close(&be);
    }
    unlink(plain);
    unlink(gz);
    free(data);
}

/* A single deflate stream inflated on the host's cores alone goes through
 * RUN_HOST_INFLATE_STREAMS buffers, not the plan's 4 (its decoder holds
 * chunks of its own ahead of the ring); plain input, or --streams or
 * --chunk given, keeps the plan's. The results are the data's. */
static void test_run_host_inflate_streams(void)
{
    size_t n = 300000;
    unsigned char *data = random_bytes(n);
    char plain[64], gz[64];
    temp_file(plain, data, n, 0);
    temp_file(gz, data, n, 1);
    for (int k = 0; k < 6; k++) {
        int gzip = k & 1, given = k >> 1; /* 1: --streams, 2: --chunk */
        backend be;
        memset(&be, 0, sizeof be);
        CHECK(backend_open(&be, BACKEND_CPU, NULL, 2) == 0);
        run_plan plan = {.chunk = (size_t)1 << 20, .chunk_given = given == 2, .streams = 4,
                         .streams_given = given == 1};
        run *rn = NULL;
        CHECK(run_open(&rn, &be, &plan) == 0);
        CHECK(run_buffers(rn) == 0);
        reduce_one(rn, gzip ? gz : plain, data, n, plan.chunk);
        int want = gzip && !given ? RUN_HOST_INFLATE_STREAMS : plan.streams;
        CHECKF(run_buffers(rn) == want, "gzip %d, given %d: %d buffers", gzip, given,
               run_buffers(rn));
        run_close(rn);
        backend_close(&be);
    }
    unlink(plain);
    unlink(gz);
    free(data);
}

/* Buffers the memory cannot hold: run_plan_check refuses --streams of them
 * before anything starts, with the line the user sees, and a run opened
 * over them refuses its first input through the error hook before it
 * allocates or reads. */
static void test_run_ring_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return;
    unsigned long long ram = (unsigned long long)pages * (unsigned long long)page;
    size_t half = (size_t)(ram / 2 + ((size_t)1 << 20)); /* two of them exceed the memory */
    run_plan plan = {.chunk = half, .streams = 2};
    io_status st;
    io_clear(&st);
    char want[512];
    snprintf(want, sizeof want,
             "--chunk %llu MiB times 2 buffers (--streams 2) needs %llu MiB of buffers, more "
             "than this machine's %llu MiB of memory: lower --chunk or --streams",
             (unsigned long long)half >> 20, (2ull * half) >> 20, ram >> 20);
    CHECK(run_plan_check(&plan, &st) == IO_ERR_NOMEM && st.code == IO_ERR_NOMEM);
    CHECKF(!strcmp(st.text, want), "'%s'", st.text);
    plan.streams = 1;
    io_clear(&st);
    CHECK(run_plan_check(&plan, &st) == 0 && st.code == 0);
    plan.streams = 2;
    backend be;
    memset(&be, 0, sizeof be);
    CHECK(backend_open(&be, BACKEND_CPU, NULL, 1) == 0);
    run *rn = NULL;
    CHECK(run_open(&rn, &be, &plan) == 0);
    unsigned char *data = random_bytes(999);
    char path[64];
    temp_file(path, data, 999, 0);
    frame_info fi;
    io_reader *r = open_input(path, DT_U8, &fi);
    if (r) {
        rd_state rs;
        rd_state_init(&rs, DT_U8, RD_OP_SUM, 0);
        rd_job job = {.dtype = DT_U8, .ops = rs.ops, .st = &rs};
        run_source src = {.name = path, .r = r, .fi = &fi, .chunk = 4096,
                          .limit = fi.data_bytes};
        run_op op = {.ops = &rd_engine_ops, .ctx = &job, .grain = RD_TILE, .cpu_ns = 1.0,
                     .per_device = 1, .shared_buffers = 1, .check = hook_check};
        run_sink sink = {.msgs = &msgs};
        hooks_reset();
        uint64_t bytes = 0;
        CHECK(run_input(rn, &src, &op, &sink, &bytes) == 1);
        CHECKF(errors == 1 && strstr(last_error, want), "%d '%s'", errors, last_error);
        CHECK(bytes == 0 && begins == 0 && checks == 0);
        io_reader_close(r);
    }
    run_close(rn);
    backend_close(&be);
    unlink(path);
    free(data);
}

/* Runs the file at path through op into a collecting sink with chunks of
 * `chunk` bytes; returns run_input's answer, the results in *out. */
static int run_collect(run *rn, const char *path, dt_type dtype, const run_op *op, size_t chunk,
                       collected *out)
{
    frame_info fi;
    io_reader *r = open_input(path, dtype, &fi);
    if (!r)
        return -1;
    memset(out, 0, sizeof *out);
    run_source src = {.name = path, .r = r, .fi = &fi, .chunk = chunk, .limit = fi.data_bytes,
                      .prefix = fi.prefix, .prefix_len = fi.prefix_len};
    run_sink sink = {.write = hook_write, .ctx = out, .msgs = &msgs};
    hooks_reset();
    uint64_t bytes = 0;
    int rc = run_input(rn, &src, op, &sink, &bytes);
    io_reader_close(r);
    return rc;
}

/* A stream: a copy's chunks, plain and gzip, reach the sink in order. */
static void test_run_stream(void)
{
    backend be;
    size_t chunk = (size_t)64 << 10;
    run *rn = cpu_run(&be, 2, chunk, 3);
    static const size_t sizes[] = {1, 4096, (size_t)1 << 20, ((size_t)3 << 20) + 5};
    for (int gz = 0; gz < 2; gz++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            unsigned char *data = random_bytes(sizes[i]);
            char path[64];
            temp_file(path, data, sizes[i], gz);
            run_op copy = {.cpu_ns = 1.0, .slot_per_buffer = 1};
            collected out;
            int rc = run_collect(rn, path, DT_U8, &copy, chunk, &out);
            CHECKF(rc == 0 && errors == 0, "%s", last_error);
            CHECKF(out.len == sizes[i] && !memcmp(out.p, data, sizes[i]),
                   "copy of %zu bytes (gzip %d): %zu bytes back", sizes[i], gz, out.len);
            CHECK(out.writes >= (int)((sizes[i] + chunk - 1) / chunk));
            free(out.p);
            unlink(path);
            free(data);
        }
    run_close(rn);
    backend_close(&be);
}

/* Transposes `count` rows x cols matrices of 4-byte elements (random
 * bytes and mask) through the run, staged whole where one is larger than
 * the chunk, and compares with the transpose done here. */
static void transpose_case(run *rn, uint64_t count, uint64_t rows, uint64_t cols, size_t chunk,
                           int gz, unsigned char mask)
{
    size_t n = (size_t)(count * rows * cols * 4);
    unsigned char *data = random_bytes(n);
    for (size_t i = 0; i < n; i++)
        data[i] &= mask;
    char path[64];
    temp_file(path, data, n, gz);
    tp_job matrix = {4, rows, cols};
    int staged = 0;
    chunk = tp_chunk_for(&matrix, chunk, &staged);
    CHECK(staged == (rows * cols * 4 > chunk));
    run_op op = {.ops = staged ? NULL : &tp_engine_ops, .whole = staged ? &matrix : NULL,
                 .ctx = &matrix, .grain = staged ? 4 : tp_matrix_bytes(&matrix), .cpu_ns = 1.0,
                 .slot_per_buffer = 1};
    collected out;
    int rc = run_collect(rn, path, DT_F32, &op, chunk, &out);
    CHECKF(rc == 0 && errors == 0, "%s", last_error);
    int wrong = out.len != n;
    for (uint64_t b = 0; b < count && !wrong; b++)
        for (uint64_t i = 0; i < rows && !wrong; i++)
            for (uint64_t j = 0; j < cols && !wrong; j++)
                wrong = memcmp(out.p + ((b * cols + j) * rows + i) * 4,
                               data + ((b * rows + i) * cols + j) * 4, 4) != 0;
    CHECKF(!wrong, "%llu matrices %llux%llu, chunk %zu (staged %d, gzip %d): %zu bytes back",
           (unsigned long long)count, (unsigned long long)rows, (unsigned long long)cols, chunk,
           staged, gz, out.len);
    free(out.p);
    unlink(path);
    free(data);
}

/* A whole matrix staged on the CPU, and a batch of small ones through the
 * engine, each in a run of its own (a command's single input). */
static void test_run_whole(void)
{
    for (int gz = 0; gz < 2; gz++)
        for (int k = 0; k < 3; k++) {
            backend be;
            size_t chunk = (size_t)16 << 10;
            run *rn = cpu_run(&be, 2, chunk, 2);
            if (k == 0)
                transpose_case(rn, 1, 300, 257, chunk, gz, 0xff); /* staged, 300 KB */
            else if (k == 1)
                transpose_case(rn, 1, 1, 100000, chunk, gz, 0xff); /* a row, staged */
            else
                transpose_case(rn, 50, 17, 31, chunk, gz, 0xff); /* a batch through the engine */
            run_close(rn);
            backend_close(&be);
        }
}

/* The stand-in driver's body for the transpose kernels (its launch hook),
 * the devices' memory being the host's: the launch of a grid's first tile
 * transposes a whole matrix, as a staged matrix (one) is launched. */
static void transpose_kernel(const char *name, void **params)
{
    size_t elem;
    if (sscanf(name, "tpk_%*[a-z]_e%zu", &elem) != 1 || *(unsigned long long *)params[4] != 0)
        return;
    const unsigned char *in = (const unsigned char *)(uintptr_t)*(CUdeviceptr *)params[0];
    unsigned char *out = (unsigned char *)(uintptr_t)*(CUdeviceptr *)params[1];
    unsigned long long rows = *(unsigned long long *)params[2], cols = *(unsigned long long *)params[3];
    for (unsigned long long i = 0; i < rows; i++)
        for (unsigned long long j = 0; j < cols; j++)
            memcpy(out + (j * rows + i) * elem, in + (i * cols + j) * elem, elem);
}

/* A staged matrix from a gzip member on a device: its data inflated there
 * (the stand-in's decoder) go into the staged matrix from device memory,
 * the host reads on where the device stopped into the same matrix, and
 * the transpose (the launch hook's) is the one done here; the device's
 * part told once. */
static void test_run_whole_member(void)
{
    char lib[4096];
    snprintf(lib, sizeof lib, "%s", getenv("GPUBATCH_LIBCUDA"));
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL); /* the copy the driver's loader finds */
    void (*set_hook)(void (*)(const char *, void **)) =
        h ? (void (*)(void (*)(const char *, void **)))dlsym(h, "fakecuda_set_launch_hook") : NULL;
    CHECKF(set_hook != NULL, "%s: no fakecuda_set_launch_hook", lib);
    if (!set_hook)
        return;
    set_hook(transpose_kernel);
    setenv("GPUBATCH_HOST_INFLATE", "0", 1);
    static const uint64_t shapes[][2] = {{300, 257}, {500, 600}, {700, 800}, {1023, 1025}, {1, 100000}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        backend be;
        memset(&be, 0, sizeof be);
        CHECKF(backend_open(&be, BACKEND_CUDA, NULL, 2) == 0, "%s", be.st.text);
        run *rn;
        size_t chunk = (size_t)64 << 10;
        run_plan plan = {.chunk = chunk, .streams = 2};
        CHECK(run_open(&rn, &be, &plan) == 0);
        transpose_case(rn, 1, shapes[k][0], shapes[k][1], chunk, 2, 0x0f);
        CHECKF(told_device == 1, "%llux%llu: device %d", (unsigned long long)shapes[k][0],
               (unsigned long long)shapes[k][1], told_device);
        run_close(rn);
        backend_close(&be);
    }
    unsetenv("GPUBATCH_HOST_INFLATE");
    set_hook(NULL);
    dlclose(h);
}

/* Opens a backend of kind and a run over it, sums the file at path (uint8)
 * through it as reduce does, and closes both; run_input's answer, *bytes
 * the data bytes it counted (the hooks keep what they saw). The stand-in
 * device's kernels do nothing, so the sum itself is not looked at. */
static int reduce_on(backend_kind kind, const char *path, uint64_t *bytes)
{
    backend be;
    memset(&be, 0, sizeof be);
    *bytes = 0;
    int rc = backend_open(&be, kind, NULL, 1);
    CHECKF(rc == 0, "%s", be.st.text);
    if (rc != 0)
        return rc;
    run *rn;
    run_plan plan = {.chunk = (size_t)1 << 20, .streams = 2};
    CHECK(run_open(&rn, &be, &plan) == 0);
    frame_info fi;
    io_reader *r = open_input(path, DT_U8, &fi);
    rd_state st;
    rd_state_init(&st, DT_U8, RD_OP_SUM, 0);
    rd_job job = {.dtype = DT_U8, .ops = RD_OP_SUM, .st = &st};
    char modules[RD_MAX_MODULES][64];
    for (int i = rd_modules(DT_U8, RD_OP_SUM, 0, modules); i-- > 0;)
        run_want_module(rn, modules[i]);
    run_source src = {.name = path, .r = r, .fi = &fi, .chunk = plan.chunk,
                      .limit = fi.data_bytes, .prefix = fi.prefix, .prefix_len = fi.prefix_len};
    run_op op = {.ops = &rd_engine_ops, .ctx = &job, .grain = RD_TILE, .cpu_ns = 1.0,
                 .per_device = 1, .shared_buffers = 1, .check = hook_check};
    run_sink sink = {.msgs = &msgs};
    hooks_reset();
    rc = run_input(rn, &src, &op, &sink, bytes);
    close_input(r);
    run_close(rn);
    backend_close(&be);
    return rc;
}

/* Runs a reduction on the stand-in driver's device with the variable var
 * set to value (a failing stage) and expects the run to fail with one
 * error line naming the input and the driver's error, after a successful
 * run of the same input on a healthy device. */
static void device_fails(const char *var, const char *value, const char *want)
{
    size_t n = (size_t)3 << 20;
    unsigned char *data = random_bytes(n);
    char path[64];
    temp_file(path, data, n, 0);
    for (int fail = 0; fail < 2; fail++) {
        if (fail)
            setenv(var, value, 1);
        uint64_t bytes;
        int rc = reduce_on(BACKEND_CUDA, path, &bytes);
        if (!fail) {
            CHECKF(rc == 0 && errors == 0 && checks == 1 && bytes == n, "%s", last_error);
        } else {
            CHECKF(rc != 0 && errors == 1 && checks == 0, "%s=%s: rc %d, %d errors", var,
                   value, rc, errors);
            CHECKF(strncmp(last_error, path, strlen(path)) == 0 && strstr(last_error, want),
                   "%s=%s: %s", var, value, last_error);
        }
        CHECK(begins == 1 && ends == 1);
        unsetenv(var);
    }
    unlink(path);
    free(data);
}

/* Sums a gzip member of n bytes (4 random bits each) on backend kind, its
 * device opening after the run starts (auto holding it back for
 * GPUBATCH_GPU_READY_AFTER chunks); every byte must be counted once. */
static void member_case(backend_kind kind, size_t n, const char *delay_ms)
{
    unsigned char *data = random_bytes(n);
    for (size_t i = 0; i < n; i++)
        data[i] &= 0x0f;
    char path[64];
    temp_file(path, data, n, 1);
    setenv("GPUBATCH_GPU_READY_AFTER", "1", 1);
    setenv("FAKECUDA_INIT_DELAY_MS", delay_ms, 1);
    if (with_index) /* a point every 256 KiB of input */
        CHECK(fixture_index(path, (uint64_t)256 << 10, &index_bytes, &index_len) == 0);
    uint64_t bytes;
    int rc = reduce_on(kind, path, &bytes);
    free(index_bytes);
    index_bytes = NULL;
    CHECKF(rc == 0 && errors == 0, "%s", last_error);
    CHECKF(bytes == n && checks == 1 && checked_bytes == n, "%llu of %zu bytes counted",
           (unsigned long long)bytes, n);
    unsetenv("GPUBATCH_GPU_READY_AFTER");
    unsetenv("FAKECUDA_INIT_DELAY_MS");
    unlink(path);
    free(data);
}

/* A gzip member handed between the host and a device: with auto, the
 * host's threads run its start while the device opens, pause where the
 * rest pays for the device, and the device goes on from the pause; with
 * cuda (GPUBATCH_HOST_INFLATE=0) the device takes the member from its
 * start. The stand-in's decoder stops early on these members, so the host
 * reads on in order from where the device stopped: every byte must be
 * counted once, whichever side ran it. */
static void member_both(size_t auto_n)
{
    member_case(BACKEND_AUTO, auto_n, "300");
    /* through an index the host's chunks run on every core without speculation: on a busy
       machine they may reach the member's end before the device is worth it, a run with no
       hand-over (its bytes still counted once, above) */
    if (!with_index || told_host)
        CHECKF(told_host == 1 && told_device == 1, "auto (index %d): host %d, device %d",
               with_index, told_host, told_device);
    setenv("GPUBATCH_HOST_INFLATE", "0", 1);
    member_case(BACKEND_CUDA, (size_t)4 << 20, "300");
    CHECKF(told_host == 0 && told_device == 1, "cuda: host %d, device %d", told_host,
           told_device);
    unsetenv("GPUBATCH_HOST_INFLATE");
}

/* The hand-over of a member read by the parallel decoder. */
static void test_run_member(void)
{
    member_both((size_t)40 << 20);
}

/* The same hand-over of a member read from a pipe, whose size is not
 * known: with auto the host pauses once the device is open (its context
 * late, the driver being started already), the device going on from
 * there; with cuda the device takes it from its start. */
static void test_run_member_pipe(void)
{
    via_pipe = 1;
    setenv("FAKECUDA_CTX_DELAY_MS", "300", 1);
    member_case(BACKEND_AUTO, (size_t)40 << 20, "300");
    unsetenv("FAKECUDA_CTX_DELAY_MS");
    CHECKF(told_host == 1 && told_device == 1, "auto, a pipe: host %d, device %d", told_host,
           told_device);
    setenv("GPUBATCH_HOST_INFLATE", "0", 1);
    member_case(BACKEND_CUDA, (size_t)4 << 20, "300");
    CHECKF(told_host == 0 && told_device == 1, "cuda, a pipe: host %d, device %d", told_host,
           told_device);
    unsetenv("GPUBATCH_HOST_INFLATE");
    via_pipe = 0;
}

/* Reduces the file at path (uint8) through a pipe on backend kind: the
 * run's answer, with the error line in last_error. */
static int pipe_reduce(backend_kind kind, const char *path, uint64_t *bytes)
{
    via_pipe = 1;
    int rc = reduce_on(kind, path, bytes);
    via_pipe = 0;
    return rc;
}

/* A member cut short or with bytes changed in its middle, read from a
 * pipe: the device takes it (GPUBATCH_HOST_INFLATE=0), stops before the
 * damage and the host reads on, with the CPU backend's error line; small
 * members (read in order or in parallel) and an empty member or pipe are
 * read through, every byte counted. */
static void test_run_member_pipe_damage(void)
{
    size_t n = (size_t)12 << 20;
    unsigned char *data = random_bytes(n);
    for (size_t i = 0; i < n; i++)
        data[i] &= 0x0f;
    char path[64];
    temp_file(path, data, n, 1);
    size_t glen;
    uint8_t *gz = read_file(path, &glen);
    for (int round = 0; round < 4; round++) {
        size_t where = glen / 4 + (size_t)(rnd() % (glen / 2));
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (round % 2) { /* cut short there */
            CHECK(fwrite(gz, 1, where, f) == where);
        } else { /* a few bytes changed there */
            uint8_t *bad = malloc(glen);
            memcpy(bad, gz, glen);
            for (int k = 0; k < 4; k++)
                bad[where + (size_t)k * 7] ^= (uint8_t)(1 + rnd() % 255);
            CHECK(fwrite(bad, 1, glen, f) == glen);
            free(bad);
        }
        fclose(f);
        uint64_t bytes;
        int want_rc = pipe_reduce(BACKEND_CPU, path, &bytes);
        char want[sizeof last_error];
        snprintf(want, sizeof want, "%s", last_error);
        CHECKF(want_rc != 0 && errors == 1, "round %d: the CPU read it", round);
        setenv("GPUBATCH_HOST_INFLATE", "0", 1);
        int rc = pipe_reduce(BACKEND_CUDA, path, &bytes);
        unsetenv("GPUBATCH_HOST_INFLATE");
        CHECKF(rc == want_rc && errors == 1 && checks == 0 && !strcmp(last_error, want),
               "round %d (%s at byte %zu of %zu): rc %d, %d errors, [%s], not [%s]", round,
               round % 2 ? "cut" : "changed", where, glen, rc, errors, last_error, want);
        CHECKF(told_device == 1, "round %d: device %d", round, told_device);
    }
    unlink(path);
    free(gz);
    static const size_t sizes[] = {0, 1000, 200000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int gzip = 0; gzip < 2; gzip++) {
            temp_file(path, data, sizes[i], gzip);
            uint64_t bytes;
            setenv("GPUBATCH_HOST_INFLATE", "0", 1);
            int rc = pipe_reduce(BACKEND_CUDA, path, &bytes);
            unsetenv("GPUBATCH_HOST_INFLATE");
            CHECKF(rc == 0 && errors == 0 && bytes == sizes[i] && checks == 1,
                   "%zu bytes%s through a pipe: rc %d, %llu bytes, %s", sizes[i],
                   gzip ? " of gzip" : "", rc, (unsigned long long)bytes, last_error);
            unlink(path);
        }
    }
    free(data);
}

/* Text, many bytes to a compressed one: too few compressed bytes to pay
 * for the device counted as they are, many decoded ones counted as data
 * (the ratio decoded so far): with auto the host's threads run its start
 * while the device opens, then the device goes on from the pause. */
static void test_run_member_text(void)
{
    static const char *const lines[] = {"INFO [net] request served", "INFO [disk] flushed pages",
                                       "DEBUG [cache] cache hit", "WARN [sched] queue long"};
    size_t n = (size_t)48 << 20, at = 0;
    char *data = malloc(n + 64);
    unsigned long u = 0;
    while (at < n) {
        u += rnd() % 8 == 0;
        at += (size_t)sprintf(data + at, "%lu.%03lu %s\n", 1700000000 + u / 1000, u % 1000,
                              lines[rnd() % 4]);
    }
    char path[64];
    temp_file(path, (const unsigned char *)data, n, 1);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (uint64_t)sb.st_size * 8 < n); /* a high ratio */
    setenv("GPUBATCH_GPU_READY_AFTER", "1", 1);
    setenv("FAKECUDA_CTX_DELAY_MS", "100", 1); /* the driver is started already */
    uint64_t bytes;
    int rc = reduce_on(BACKEND_AUTO, path, &bytes);
    CHECKF(rc == 0 && errors == 0 && bytes == n && checked_bytes == n, "%s", last_error);
    CHECKF(told_host == 1 && told_device == 1, "text member, %lld compressed bytes: host %d, "
           "device %d", (long long)sb.st_size, told_host, told_device);
    unsetenv("GPUBATCH_GPU_READY_AFTER");
    unsetenv("FAKECUDA_CTX_DELAY_MS");
    unlink(path);
    free(data);
}

/* The same hand-over of a member read through its seek index: the host's
 * chunks from the index's points pause at a point, the device goes on
 * from there with the point's window; every byte counted once. With no
 * speculation the host is faster: a longer member. */
static void test_run_member_indexed(void)
{
    with_index = 1;
    member_both((size_t)128 << 20);
    with_index = 0;
}

/* The axis op's launch on the stand-in's devices, whose memory is the
 * host's: the chunk's result buffer made by the CPU's code from the
 * chunk's input in device memory, as the kernels must make it. */
static int axis_launch(engine_chunk *c)
{
    const ax_job *j = c->op;
    size_t sz = dt_size(j->plan->dtype);
    uint64_t e0 = j->first + c->offset / sz;
    ax_cpu_chunk(j->plan, (const void *)(uintptr_t)c->in, e0, e0 + c->bytes / sz, c->capacity,
                 c->host_out);
    return 0;
}

/* Reduces the raw float32 (rows, cols) file at path along axis 0 on
 * backend kind (the device's launch axis_launch), a chunk's data in whole
 * elements as reduce --axis cuts a gzip member; returns every op's result
 * bytes one after the other (NULL after a failed run), *len their length. */
static unsigned char *axis_on(backend_kind kind, const char *path, uint64_t rows, uint64_t cols,
                              size_t *len)
{
    backend be;
    memset(&be, 0, sizeof be);
    CHECKF(backend_open(&be, kind, NULL, 2) == 0, "%s", be.st.text);
    run *rn;
    run_plan plan = {.chunk = (size_t)1 << 20, .streams = 2};
    CHECK(run_open(&rn, &be, &plan) == 0);
    frame_info fi;
    io_reader *r = open_input(path, DT_F32, &fi);
    unsigned ops = RD_OP_MEAN | RD_OP_STD | RD_OP_MIN | RD_OP_ARGMAX;
    uint64_t shape[2] = {rows, cols};
    ax_plan p;
    io_status st;
    CHECK(ax_plan_init(&p, DT_F32, ops, 0, 2, shape, 0, 1, 0, &st) == 0);
    ax_state *state = ax_state_new(&p);
    ax_job job = {.plan = &p, .st = state};
    engine_ops eops = ax_engine_ops;
    eops.launch = axis_launch;
    run_source src = {.name = path, .r = r, .fi = &fi, .chunk = plan.chunk,
                      .limit = fi.data_bytes, .prefix = fi.prefix, .prefix_len = fi.prefix_len};
    run_op op = {.ops = &eops, .ctx = &job, .grain = sizeof(float), .cpu_ns = 1.0,
                 .per_device = 1, .shared_buffers = 1, .check = hook_check};
    run_sink sink = {.msgs = &msgs};
    hooks_reset();
    uint64_t bytes = 0;
    int rc = run_input(rn, &src, &op, &sink, &bytes);
    CHECKF(rc == 0 && errors == 0 && bytes == rows * cols * 4, "%s", last_error);
    unsigned char *out = NULL;
    *len = 0;
    for (int bit = 0; rc == 0 && bit < RD_OP_NUM; bit++) {
        if (!(ops & (1u << bit)))
            continue;
        size_t n = (size_t)p.nout * dt_size(ax_result_type(&p, 1 << bit));
        out = realloc(out, *len + n);
        ax_state_result(state, 1 << bit, 0, out + *len);
        *len += n;
    }
    ax_state_free(state);
    close_input(r);
    run_close(rn);
    backend_close(&be);
    return out;
}

/* Along axes on a device: plain data copied in and a gzip member inflated
 * there (the stand-in's decoder) give the CPU backend's result bytes, the
 * member's data run on the device in batches of whole elements. */
static void test_run_axis_device(void)
{
    uint64_t rows = 150001, cols = 7;
    size_t n = rows * cols * sizeof(float);
    float *x = malloc(n);
    for (size_t i = 0; i < rows * cols; i++)
        x[i] = (float)((int)(rnd() % 2001) - 1000) / 8 + (rnd() % 50 == 0 ? 1e6f : 0);
    char plain[64], gz[64];
    temp_file(plain, (const unsigned char *)x, n, 0);
    temp_file(gz, (const unsigned char *)x, n, 1);
    size_t want_len, got_len;
    unsigned char *want = axis_on(BACKEND_CPU, plain, rows, cols, &want_len);
    unsigned char *got = axis_on(BACKEND_CUDA, plain, rows, cols, &got_len);
    CHECK(want && got && got_len == want_len && !memcmp(got, want, want_len));
    free(got);
    setenv("GPUBATCH_HOST_INFLATE", "0", 1);
    got = axis_on(BACKEND_CUDA, gz, rows, cols, &got_len);
    CHECKF(told_device == 1, "member along axes: device %d", told_device);
    CHECK(want && got && got_len == want_len && !memcmp(got, want, want_len));
    free(got);
    via_pipe = 1; /* the member from a pipe */
    got = axis_on(BACKEND_CUDA, gz, rows, cols, &got_len);
    via_pipe = 0;
    CHECKF(told_device == 1, "member along axes from a pipe: device %d", told_device);
    CHECK(want && got && got_len == want_len && !memcmp(got, want, want_len));
    unsetenv("GPUBATCH_HOST_INFLATE");
    free(got);
    free(want);
    unlink(plain);
    unlink(gz);
    free(x);
}

/* A device failing in each stage: the copy in, the kernel. */
static void test_run_device_fails(void)
{
    device_fails("FAKECUDA_COPY_ERROR", "700", "CUDA_ERROR_ILLEGAL_ADDRESS");
    device_fails("FAKECUDA_LAUNCH_ERROR", "719", "CUDA_ERROR_LAUNCH_FAILED");
}

int main(void)
{
    char lib[4096];
    const char *build = getenv("BUILD");
    snprintf(lib, sizeof lib, "%s/tests/libfakecuda.so", build && *build ? build : "build");
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "test_run: %s not found (make tests)\n", lib);
        return 1;
    }
    setenv("GPUBATCH_LIBCUDA", lib, 1);
    unsetenv("GPUBATCH_HOST_INFLATE");
    /* the hand-over cases time the host's decode against the stand-in device's start for two
       threads: on many cores the host reached a member's end before any hand-over */
    par_limit(2);
    msgs.started = io_seconds();
    RUN(test_run_ring_memory);
    RUN(test_run_chunks);
    RUN(test_run_host_chunk);
    RUN(test_run_host_inflate_streams);
    RUN(test_run_stream);
    RUN(test_run_whole);
    RUN(test_run_member);
    RUN(test_run_member_text);
    RUN(test_run_member_indexed);
    RUN(test_run_member_pipe);
    RUN(test_run_member_pipe_damage);

    RUN(test_run_axis_device);
    RUN(test_run_whole_member); /* after the member tests, which want the driver's first start */
    RUN(test_run_device_fails);
    return check_summary();
}
