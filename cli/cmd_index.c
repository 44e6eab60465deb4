/* cmd_index.c - `gpubatch index`: write a seek index of a single-member
 * gzip file (io/gzip/gzindex.h), for --index and --shard. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "io/clock.h"
#include "io/gzip/gzindex.h"
#include "io/par.h"
#include "io/reader.h"
#include "io/sink.h"
#include "msg.h"
#include "options.h"

static const char index_usage[] =
    "Usage: gpubatch index [OPTIONS] FILE\n"
    "Write a seek index of the gzip file FILE (one member, not blocked gzip) in\n"
    "gztool's format, which rapidgzip imports: access points every few MiB of\n"
    "output, with their 32 KiB windows. reduce, quadratic and transpose then\n"
    "decode FILE from its points on every core, and a shard reads only its part.\n"
    "\n"
    "  -o, --output IDX   write the index to IDX (default FILE" GZINDEX_SUFFIX ", where the\n"
    "                     commands find it; - is standard output)\n"
    "  -f, --force        overwrite an existing IDX\n"
    "  -p, --threads N    CPU threads (default: one per core)\n"
    "  -q, --quiet        no warnings\n"
    "  -v, --verbose      report the points and the time on stderr\n"
    "  -h, --help         this help\n";

/* Writes the index of `path` to `out` (NULL: beside it); the exit status. */
static int index_file(const char *path, const char *out, int force)
{
    char beside[4096];
    if (!out) {
        if ((size_t)snprintf(beside, sizeof beside, "%s%s", path, GZINDEX_SUFFIX) >= sizeof beside) {
            msg_error("%s: name too long", path);
            return 1;
        }
        out = beside;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        msg_error("%s: %s", path,
                  fd < 0 ? strerror(errno)
                         : "not a regular file (an index is of a file read from offsets)");
        if (fd >= 0)
            close(fd);
        return 1;
    }
    io_status st;
    io_file_id id = {(uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
    io_sink *sink = NULL;
    uint8_t *idx = NULL;
    size_t len = 0, points = 0;
    double t0 = io_seconds();
    int rc = gzindex_build(fd, (uint64_t)sb.st_size, NULL, io_gzip_member_error, &idx, &len, &points,
                           &st);
    close(fd);
    if (rc < 0) {
        msg_status(path, &st);
        return 1;
    }
    double secs = io_seconds() - t0;
    if (io_sink_open(&sink, out, force, &id, 1, &st) < 0) {
        free(idx);
        return msg_status(out, &st);
    }
    if (io_sink_write(sink, idx, len) < 0 || io_sink_commit(sink) < 0) {
        msg_error("%s: %s", out, io_sink_commit_error()[0] ? io_sink_commit_error() : "write error");
        free(idx);
        return 1;
    }
    msg_info("%s: %zu access points, %zu bytes (%.2f%% of the file), %.3f s on %d threads", out,
             points, len, sb.st_size ? 100.0 * (double)len / (double)sb.st_size : 0.0, secs,
             par_cpus());
    free(idx);
    return 0;
}

/* Entry point of `gpubatch index`. */
int cmd_index(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'}, {"force", no_argument, 0, 'f'},
        {"threads", required_argument, 0, 'p'}, {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},       {"help", no_argument, 0, OPT_HELP},
        {"version", no_argument, 0, OPT_VERSION}, {0, 0, 0, 0},
    };
    static const char shortopts[] = ":o:fp:qvh";
    cli_set_command("index");
    cli_common common;
    cli_common_init(&common);
    const char *out = NULL;
    int force = 0, opt;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            out = optarg;
            break;
        case 'f':
            force = 1;
            break;
        case 'p':
        case 'q':
        case 'v':
            if (cli_common_option(&common, opt, optarg) < 0)
                return 2;
            break;
        case 'h':
        case OPT_HELP:
            fputs(index_usage, stdout);
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("index", "give one gzip FILE");
    return index_file(argv[optind], out, force);
}
