/* fuzz_gzindex.c - fuzz harness for the seek index parser and the reads it
 * drives (io/gzip/gzindex.c, io_reader_set_index).
 *
 * The input is an index file; the gzip file is fixed: 192 KiB of text-like
 * data (tests/gzindex_fixture.h) that zlib deflates at level 6, written to
 * a temporary file. An index that parses and attaches must either be
 * refused while reading or give the data's exact bytes, read whole and
 * from a seek point that the input's bytes pick; every refusal has its
 * line. The seeds in corpus/gzindex are real indexes of that file: gpubatch's
 * at several spacings (GZINDEX_SEEDS=DIR run on any input writes the file,
 * fixture.gz, and these), and rapidgzip's --export-index --index-format
 * gztool of fixture.gz, sparse and not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/gzip/gzindex.h"
#include "io/reader.h"
#include "tests/gzindex_fixture.h"

#define FIXTURE_LEN ((size_t)192 << 10)

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

static uint8_t fixture_bytes[FIXTURE_LEN];
static char fixture_path[64];

/* Removes the fixture's file at exit. */
static void fixture_remove(void)
{
    unlink(fixture_path);
}

/* Writes the fixture's gzip file and gpubatch's indexes of it into dir. */
static void write_seeds(const char *dir, const uint8_t *gz, size_t gzlen)
{
    static const uint64_t chunks[] = {4096, 16384, 65536};
    char name[4096];
    snprintf(name, sizeof name, "%s/fixture.gz", dir);
    FILE *f = fopen(name, "wb");
    require(f && fwrite(gz, 1, gzlen, f) == gzlen);
    fclose(f);
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        uint8_t *idx;
        size_t len;
        require(fixture_index(fixture_path, chunks[i], &idx, &len) == 0);
        snprintf(name, sizeof name, "%s/gpubatch-%llu", dir, (unsigned long long)chunks[i]);
        require((f = fopen(name, "wb")) && fwrite(idx, 1, len, f) == len);
        fclose(f);
        free(idx);
    }
}

/* Makes the fixture's data and gzip file once per process. */
static void fixture_once(void)
{
    if (fixture_path[0])
        return;
    uint8_t *gz;
    size_t gzlen;
    fixture_data(fixture_bytes, FIXTURE_LEN, 2, 55);
    require(fixture_gzip(fixture_bytes, FIXTURE_LEN, 6, 0, &gz, &gzlen) == 0);
    require(fixture_file(gz, gzlen, fixture_path) == 0);
    atexit(fixture_remove);
    const char *dir = getenv("GZINDEX_SEEDS");
    if (dir)
        write_seeds(dir, gz, gzlen);
    free(gz);
}

/* Reads the fixture through the index at [from, from + count): refused
 * with a line, or its exact bytes. */
static void read_checked(const uint8_t *data, size_t size, uint64_t from, uint64_t count)
{
    static uint8_t out[FIXTURE_LEN + 1];
    size_t got;
    int rc = fixture_read(fixture_path, data, size, from, count, out, sizeof out, &got);
    if (rc < 0)
        return;
    uint64_t want = count == UINT64_MAX || from + count > FIXTURE_LEN ? FIXTURE_LEN - from : count;
    require(got == want && !memcmp(out, fixture_bytes + from, got));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fixture_once();
    gzindex *x;
    io_status st;
    if (gzindex_parse(&x, "input", data, size, &st) < 0) {
        require(st.text[0] != '\0' && strstr(st.text, "input"));
        return 0;
    }
    gzindex_free(x);
    read_checked(data, size, 0, UINT64_MAX);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    read_checked(data, size, h % FIXTURE_LEN, (h >> 32) % 50000);
    return 0;
}
