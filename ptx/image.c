/* image.c - the build tool that packs the kernel modules into images
 * (`make ptx`) and unpacks them again (`make ptx-unpack`).
 *
 * An image, ptx/images/FAMILY.img, is a text table followed by the entries'
 * bytes:
 *
 *   gpubatch image 1: module kind arch isa abi size stored
 *   reduce_f32_moments ptx 75 70 0 48213 8090
 *   reduce_f32_moments sass 75 70 8 28960 7311
 *   ...
 *   (an empty line)
 *   each entry's zlib stream (RFC 1950), in the order of the table
 *
 * One line per entry: the module; its kind, ptx (PTX text for compute_ARCH)
 * or sass (a cubin, native code for sm_ARCH); the PTX ISA version
 * (10 * major + minor) of the PTX, or for a cubin of the PTX it was
 * assembled from; the cubin's ELF ABI version (0 for PTX); its size; and
 * the size of its zlib stream. Each entry is compressed on its own (zlib
 * level 9), so a program inflates only the modules it loads; the table is
 * text, so `sed '/^$/q' IMAGE` shows it.
 *
 * Usage:
 *   image pack OUT FILE...   FILE is DIR/MODULE.compute_NN.ptx or
 *                            DIR/MODULE.sm_NN.cubin, a cubin after the PTX
 *                            it was assembled from (its module's of the
 *                            highest arch <= NN); writes OUT atomically
 *   image unpack IMAGE DIR   writes each entry back to DIR as such a file */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cubin.h"

#define IMAGE_MAGIC "gpubatch image 1: module kind arch isa abi size stored\n"
#define IMAGE_MAX_ENTRIES 4096
#define IMAGE_NAME_MAX 128

enum { IMAGE_PTX, IMAGE_SASS };

/* One entry of an image. */
typedef struct {
    char module[IMAGE_NAME_MAX];
    int kind, arch, isa, abi;
    unsigned char *data; /* the zlib stream */
    unsigned long size, stored;
} image_entry;

static const char *const image_kinds[] = {"ptx", "sass"};

/* Reads a whole file into a new buffer (NUL-terminated); 0 or -1 with a message. */
static int image_read(const char *path, unsigned char **out, unsigned long *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    if (!f)
        goto out_fail;
    if (fseek(f, 0, SEEK_END) < 0)
        goto out_close;
    long n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) < 0)
        goto out_close;
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        goto out_close;
    buf[n] = 0;
    fclose(f);
    *out = buf;
    *len = (unsigned long)n;
    return 0;
out_close:
    free(buf);
    fclose(f);
out_fail:
    fprintf(stderr, "image: cannot read %s\n", path);
    return -1;
}

/* Writes len bytes to path; 0 or -1 with a message. */
static int image_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "image: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* The PTX ISA version of PTX text's .version line (70 for 7.0), or -1. */
static int image_ptx_isa(const char *text)
{
    const char *line = strstr(text, "\n.version ");
    int major, minor;
    if (!line || sscanf(line, "\n.version %d.%d", &major, &minor) != 2)
        return -1;
    return major * 10 + minor;
}

/* The PTX among the n entries before that a cubin of module for sm_arch is
 * assembled from: the module's PTX of the highest architecture <= arch. */
static const image_entry *image_source(const image_entry *es, int n, const char *module, int arch)
{
    const image_entry *src = NULL;
    for (int i = 0; i < n; i++)
        if (es[i].kind == IMAGE_PTX && !strcmp(es[i].module, module) && es[i].arch <= arch &&
            (!src || es[i].arch > src->arch))
            src = &es[i];
    return src;
}

/* Fills e from a file named MODULE.compute_NN.ptx or MODULE.sm_NN.cubin;
 * a cubin takes the ISA version of its source PTX among the n entries es
 * before it. 0 or -1. */
static int image_entry_from_file(image_entry *e, const char *path, const image_entry *es, int n)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strchr(base, '.');
    unsigned char *raw = NULL;
    unsigned long len;
    char ext[16];
    memset(e, 0, sizeof *e);
    if (!dot || (size_t)(dot - base) >= sizeof e->module)
        goto out_name;
    memcpy(e->module, base, (size_t)(dot - base));
    if (sscanf(dot, ".compute_%d.%15s", &e->arch, ext) == 2 && !strcmp(ext, "ptx"))
        e->kind = IMAGE_PTX;
    else if (sscanf(dot, ".sm_%d.%15s", &e->arch, ext) == 2 && !strcmp(ext, "cubin"))
        e->kind = IMAGE_SASS;
    else
        goto out_name;
    if (image_read(path, &raw, &len) < 0)
        return -1;
    if (e->kind == IMAGE_PTX) {
        e->isa = image_ptx_isa((const char *)raw);
        if (e->isa < 0) {
            fprintf(stderr, "image: %s has no .version line\n", path);
            goto out_free;
        }
    } else {
        if (cubin_sm(raw, len) != e->arch) {
            fprintf(stderr, "image: %s is not a CUDA cubin for sm_%d\n", path, e->arch);
            goto out_free;
        }
        const image_entry *src = image_source(es, n, e->module, e->arch);
        if (!src) {
            fprintf(stderr, "image: %s does not follow the PTX it is assembled from\n", path);
            goto out_free;
        }
        e->isa = src->isa;
        e->abi = cubin_abi(raw);
    }
    e->size = len;
    e->stored = compressBound(len);
    e->data = malloc(e->stored);
    if (!e->data || compress2(e->data, &e->stored, raw, len, 9) != Z_OK) {
        fprintf(stderr, "image: cannot compress %s\n", path);
        goto out_free;
    }
    free(raw);
    return 0;
out_free:
    free(e->data);
    e->data = NULL;
    free(raw);
    return -1;
out_name:
    fprintf(stderr, "image: %s is not named MODULE.compute_NN.ptx or MODULE.sm_NN.cubin\n", path);
    return -1;
}

/* image pack OUT FILE...: the table, then the streams, written to OUT.tmp
 * and renamed. */
static int image_pack(const char *out, char **files, int n)
{
    image_entry *es = calloc((size_t)n + 1, sizeof *es);
    char tmp[4096];
    FILE *f = NULL;
    int rc = -1, made = 0;
    if (!es || n > IMAGE_MAX_ENTRIES || snprintf(tmp, sizeof tmp, "%s.tmp", out) >= (int)sizeof tmp)
        goto out_free;
    for (; made < n; made++)
        if (image_entry_from_file(&es[made], files[made], es, made) < 0)
            goto out_free;
    f = fopen(tmp, "wb");
    if (!f)
        goto out_write;
    fputs(IMAGE_MAGIC, f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s %s %d %d %d %lu %lu\n", es[i].module, image_kinds[es[i].kind], es[i].arch,
                es[i].isa, es[i].abi, es[i].size, es[i].stored);
    fputc('\n', f);
    for (int i = 0; i < n; i++)
        fwrite(es[i].data, 1, es[i].stored, f);
    if (ferror(f) | fclose(f) || rename(tmp, out) < 0) {
        remove(tmp);
        goto out_write;
    }
    rc = 0;
    goto out_free;
out_write:
    fprintf(stderr, "image: cannot write %s\n", out);
out_free:
    for (int i = 0; i < made; i++)
        free(es[i].data);
    free(es);
    return rc;
}

/* image unpack IMAGE DIR: checks the table against the file's size and
 * writes each inflated entry to DIR. */
static int image_unpack(const char *path, const char *dir)
{
    unsigned char *img, *out = NULL;
    unsigned long len;
    if (image_read(path, &img, &len) < 0)
        return -1;
    int rc = -1;
    const char *p = (const char *)img, *end = strstr(p, "\n\n");
    if (strncmp(p, IMAGE_MAGIC, strlen(IMAGE_MAGIC)) || !end)
        goto out_bad;
    unsigned long at = (unsigned long)(end + 2 - p);
    for (p += strlen(IMAGE_MAGIC); p < end + 1; p = strchr(p, '\n') + 1) {
        image_entry e;
        char kind[8], name[4096];
        int used = 0;
        if (sscanf(p, "%127s %7s %d %d %d %lu %lu%n", e.module, kind, &e.arch, &e.isa, &e.abi,
                   &e.size, &e.stored, &used) != 7 || p[used] != '\n' ||
            e.stored > len - at || (strcmp(kind, "ptx") && strcmp(kind, "sass")))
            goto out_bad;
        int ptx = !strcmp(kind, "ptx");
        uLongf size = e.size;
        out = malloc(e.size ? e.size : 1);
        if (!out || uncompress(out, &size, img + at, e.stored) != Z_OK || size != e.size)
            goto out_bad;
        snprintf(name, sizeof name, "%s/%s.%s%d.%s", dir, e.module, ptx ? "compute_" : "sm_",
                 e.arch, ptx ? "ptx" : "cubin");
        if (image_write(name, out, e.size) < 0)
            goto out_free;
        free(out);
        out = NULL;
        at += e.stored;
    }
    if (at == len) {
        rc = 0;
        goto out_free;
    }
out_bad:
    fprintf(stderr, "image: %s is not a valid image\n", path);
out_free:
    free(out);
    free(img);
    return rc;
}

/* Entry point: pack or unpack. */
int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "pack"))
        return image_pack(argv[2], argv + 3, argc - 3) < 0;
    if (argc == 4 && !strcmp(argv[1], "unpack"))
        return image_unpack(argv[2], argv[3]) < 0;
    fprintf(stderr, "usage: image pack OUT FILE... | image unpack IMAGE DIR\n");
    return 2;
}
