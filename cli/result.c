/* result.c - the results of a reduced array on standard output, as text
 * lines or one JSON object: what reduce and merge print. */
#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "io/crc.h"
#include "io/npy.h"
#include "io/npzwrite.h"
#include "ptx/half_math.h"
#include "msg.h"

/* Text of one op's value; returns -1 with a reason when it has none. */
static int result_value(const rd_state *st, const rd_result *r, int bit, char *buf, size_t len,
                        const char **why)
{
    unsigned op = 1u << bit;
    int fl = dt_is_float(st->dtype);
    int needs_elements = op & (RD_OP_MEAN | RD_OP_EXTREMA);
    if (needs_elements && r->count == 0) {
        *why = st->nelem == 0 ? "the array is empty" : "every element is NaN";
        return -1;
    }
    switch (op) {
    case RD_OP_SUM:
        if (fl)
            fmt_double(buf, len, r->sum);
        else
            fmt_i128(buf, len, r->isum);
        break;
    case RD_OP_SUMSQ:
        if (r->sumsq_is_float)
            fmt_double(buf, len, r->sumsq);
        else
            fmt_u128(buf, len, r->isumsq);
        break;
    case RD_OP_MEAN:
        fmt_double(buf, len, r->mean);
        break;
    case RD_OP_VAR:
        fmt_double(buf, len, r->var);
        break;
    case RD_OP_STD:
        fmt_double(buf, len, r->std);
        break;
    case RD_OP_COUNT:
        snprintf(buf, len, "%llu", (unsigned long long)r->count);
        break;
    case RD_OP_ARGMIN:
        snprintf(buf, len, "%llu", (unsigned long long)r->argmin);
        break;
    case RD_OP_ARGMAX:
        snprintf(buf, len, "%llu", (unsigned long long)r->argmax);
        break;
    case RD_OP_MIN:
    case RD_OP_MAX: {
        int is_min = op == RD_OP_MIN;
        double v = is_min ? r->fmin : r->fmax; /* a float16/bfloat16's is a float32 */
        if (st->dtype == DT_F32)
            fmt_float(buf, len, (float)v);
        else if (st->dtype == DT_F16)
            fmt_float16(buf, len, (float)v);
        else if (st->dtype == DT_BF16)
            fmt_bfloat16(buf, len, (float)v);
        else if (st->dtype == DT_BOOL)
            snprintf(buf, len, "%s", (is_min ? r->umin : r->umax) ? "true" : "false");
        else if (fl)
            fmt_double(buf, len, v);
        else if (dt_is_signed_int(st->dtype))
            snprintf(buf, len, "%lld", (long long)(is_min ? r->imin : r->imax));
        else
            snprintf(buf, len, "%llu", (unsigned long long)(is_min ? r->umin : r->umax));
        break;
    }
    }
    return 0;
}

/* Reports the ops of mask that have no value for the one reason why, in
 * one error line: "NAME: min, max: why". */
static void result_report(const char *name, unsigned mask, const char *why)
{
    char ops[128] = "";
    size_t n = 0;
    for (int bit = 0; bit < RD_OP_NUM; bit++)
        if (mask & (1u << bit))
            n += (size_t)snprintf(ops + n, n < sizeof ops ? sizeof ops - n : 0, "%s%s",
                                  n ? ", " : "", rd_op_name(bit));
    msg_error("%s: %s: %s", name, ops, why);
}

/* Prints one array's results (see result.h): the ops of st and refused
 * that have a value, then one error line for those that have none. */
int result_print(const char *name, const frame_info *fi, const rd_state *st, unsigned refused,
                 const char *refused_why, int json)
{
    rd_result r;
    rd_state_result(st, &r);
    char vals[RD_OP_NUM][64];
    unsigned ops = st->ops | refused, missing = 0;
    if ((st->ops & (RD_OP_VAR | RD_OP_STD)) && r.var != r.var)
        msg_warn("%s: var, std: too few elements (count - ddof <= 0) or a NaN or infinity gives "
                 "NaN, as numpy's", name);
    const char *why = NULL;
    for (int bit = 0; bit < RD_OP_NUM; bit++)
        if ((st->ops & (1u << bit)) &&
            result_value(st, &r, bit, vals[bit], sizeof vals[bit], &why) < 0)
            missing |= 1u << bit;
    if (json) {
        fputs("{\"file\": ", stdout);
        fmt_json_string(stdout, name);
        printf(", \"dtype\": \"%s\", \"shape\": [", dt_name(st->dtype));
        if (fi->ndim < 0)
            printf("%llu", (unsigned long long)st->nelem);
        for (int d = 0; d < fi->ndim; d++)
            printf("%s%llu", d ? ", " : "", (unsigned long long)fi->shape[d]);
        putchar(']');
        for (int bit = 0; bit < RD_OP_NUM; bit++)
            if (ops & (1u << bit)) {
                printf(", \"%s\": ", rd_op_name(bit));
                if ((missing | refused) & (1u << bit))
                    fputs("null", stdout);
                else
                    fmt_json_number(stdout, vals[bit]);
            }
        puts("}");
    } else {
        int esc = fmt_name_needs_escape(name);
        for (int bit = 0; bit < RD_OP_NUM; bit++)
            if ((st->ops & ~missing) & (1u << bit)) {
                printf("%s%s %s  ", esc ? "\\" : "", rd_op_name(bit), vals[bit]);
                fmt_name(stdout, name);
                putchar('\n');
            }
    }
    int status = msg_flush_stdout();
    if (missing)
        result_report(name, missing, why);
    if (refused)
        result_report(name, refused, refused_why);
    return status || missing || refused;
}

/* ---- reductions along axes ---- */

/* Text of element i of a result array of type t (op's). */
static void result_elem(dt_type t, int op, const void *a, uint64_t i, char *buf, size_t len)
{
    const char *b = (const char *)a + i * dt_size(t);
    switch (t) {
    case DT_F64: {
        double d;
        memcpy(&d, b, 8);
        fmt_double(buf, len, d);
        break;
    }
    case DT_F32: {
        float f;
        memcpy(&f, b, 4);
        fmt_float(buf, len, f);
        break;
    }
    case DT_F16:
    case DT_BF16: {
        uint16_t h;
        memcpy(&h, b, 2);
        if (t == DT_F16)
            fmt_float16(buf, len, hf_f16_to_f32(h));
        else
            fmt_bfloat16(buf, len, hf_bf16_to_f32(h));
        break;
    }
    case DT_BOOL:
        snprintf(buf, len, "%s", *b ? "true" : "false");
        break;
    default: {
        int64_t v = 0;
        memcpy(&v, b, dt_size(t));
        if (dt_is_signed_int(t)) {
            if (dt_size(t) < 8) /* sign-extend */
                v = (int64_t)((uint64_t)v << (64 - 8 * dt_size(t))) >> (64 - 8 * dt_size(t));
            snprintf(buf, len, "%lld", (long long)v);
        } else {
            snprintf(buf, len, "%llu", (unsigned long long)(uint64_t)v);
        }
    }
    }
    (void)op;
}

/* Offset in the result array (memory order) of the element at C-order
 * index i of the user's result shape. */
static uint64_t result_offset(const ax_plan *p, const uint64_t *shape, int ndim, uint64_t i)
{
    if (!p->fortran)
        return i;
    uint64_t off = 0, stride = 1, d[AX_MAX_DIMS];
    for (int k = ndim - 1; k >= 0; k--) {
        d[k] = i % shape[k];
        i /= shape[k];
    }
    for (int k = 0; k < ndim; k++) {
        off += d[k] * stride;
        stride *= shape[k];
    }
    return off;
}

/* Prints a result array as nested lists in C order. */
static void result_nested(FILE *f, const ax_plan *p, dt_type t, int op, const void *a,
                          const uint64_t *shape, int ndim, int json)
{
    uint64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    char buf[64];
    if (ndim == 0) {
        result_elem(t, op, a, 0, buf, sizeof buf);
        json ? fmt_json_number(f, buf) : (void)fputs(buf, f);
        return;
    }
    for (int k = 0; k < ndim; k++)
        fputc('[', f);
    for (uint64_t i = 0; i < n; i++) {
        result_elem(t, op, a, result_offset(p, shape, ndim, i), buf, sizeof buf);
        json ? fmt_json_number(f, buf) : (void)fputs(buf, f);
        int close = 0; /* how many dimensions end after element i */
        for (uint64_t r = i + 1, k = ndim; k-- > 0 && r % shape[k] == 0; r /= shape[k])
            close++;
        for (int k = 0; k < close; k++)
            fputc(']', f);
        if (i + 1 < n) {
            fputs(", ", f);
            for (int k = 0; k < close; k++)
                fputc('[', f);
        }
    }
    if (n == 0)
        for (int k = 0; k < ndim; k++)
            fputc(']', f);
}

/* Writes the bytes to os and adds them to *at: 0, or -1 when the write
 * failed. */
static int result_put(out_stream *os, uint64_t *at, const void *buf, size_t n)
{
    *at += n;
    return out_write(os, buf, n);
}

/* Writes the result arrays to out's file: one .npy, or an .npz of them (a
 * member named by each op), each array written from where it was computed,
 * not copied into an archive first. 0, or 1 after an error message. */
static int result_axis_write(const char *name, const ax_plan *p, void *const *arrays,
                             const int *ops, int nops, const out_opts *out,
                             const io_file_id *inputs)
{
    uint64_t shape[AX_MAX_DIMS];
    int ndim = ax_result_shape(p, shape);
    out_opts o = *out;
    int npz = o.npz;
    o.npz = 0; /* the archive's records are written here, among plain bytes */
    out_stream os;
    if (out_open(&os, &o, inputs, inputs ? 1 : 0) != 0)
        return 1;
    npzw_entry e[RD_OP_NUM];
    char names[RD_OP_NUM][NPZW_NAME_MAX];
    unsigned char rec[NPZW_DIR_MAX(RD_OP_NUM)];
    uint64_t at = 0;
    int bad = 0;
    for (int i = 0; i < nops && !bad; i++) {
        dt_type t = ax_result_type(p, ops[i]);
        uint8_t head[256];
        int hl = npy_write_header(head, sizeof head, t, ndim, shape, p->fortran);
        size_t data = (size_t)(p->nout * dt_size(t));
        if (hl < 0) {
            msg_error("%s: the result's shape does not fit an .npy header", name);
            out_abort(&os);
            return 1;
        }
        snprintf(names[i], sizeof names[i], "%s.npy", rd_op_name(__builtin_ctz(ops[i])));
        e[i] = (npzw_entry){names[i], (uint64_t)hl + data,
                            crc_update(crc_update(0, head, (size_t)hl), arrays[i], data), at};
        bad = (npz && result_put(&os, &at, rec, npzw_local(rec, names[i]))) ||
              result_put(&os, &at, head, (size_t)hl) || result_put(&os, &at, arrays[i], data) ||
              (npz && result_put(&os, &at, rec, npzw_descriptor(rec, e[i].crc, e[i].size)));
    }
    if (!bad && npz)
        bad = result_put(&os, &at, rec, npzw_directory(rec, e, nops, at));
    if (bad || out_close(&os)) {
        out_abort(&os);
        return 1;
    }
    return 0;
}

/* Prints or writes the results of a reduction along axes (see result.h). */
int result_axis(const char *name, const ax_plan *p, const ax_state *st, int ddof,
                const out_opts *out, const io_file_id *inputs, int json)
{
    int ops[RD_OP_NUM], nops = 0, status = 0;
    void *arrays[RD_OP_NUM] = {0}, *owned[RD_OP_NUM] = {0};
    unsigned missing = 0, nan_ops = 0, range = 0;
    for (int bit = 0; bit < RD_OP_NUM; bit++)
        if (p->ops & (1u << bit))
            ops[nops++] = 1 << bit;
    int to_file = out && out->path;
    if (!to_file && p->nout > RESULT_AXIS_PRINT_MAX) {
        msg_error("%s: the result has %llu elements per operation, more than text and JSON "
                  "print (%d): write it with -o FILE.npy (or FILE.npz for several)",
                  name, (unsigned long long)p->nout, RESULT_AXIS_PRINT_MAX);
        return 1;
    }
    for (int i = 0; i < nops; i++) {
        dt_type t = ax_result_type(p, ops[i]);
        int flags;
        const void *kept = ax_state_values(st, ops[i], &flags); /* computed as chunks came */
        if (kept) {
            arrays[i] = (void *)kept;
        } else if (!(owned[i] = arrays[i] = calloc(p->nout ? (size_t)p->nout : 1, dt_size(t)))) {
            msg_error("%s: out of memory for the result", name);
            status = 1;
            goto out_free;
        } else {
            flags = ax_state_result(st, ops[i], ddof, arrays[i]);
        }
        int needs = ops[i] & RD_OP_EXTREMA;
        if ((flags & AX_RESULT_EMPTY) && needs)
            missing |= (unsigned)ops[i];
        else if (flags & AX_RESULT_EMPTY)
            nan_ops |= (unsigned)ops[i];
        if (flags & AX_RESULT_RANGE)
            range |= (unsigned)ops[i];
    }
    if (nan_ops)
        for (int bit = 0; bit < RD_OP_NUM; bit++)
            if (nan_ops & (1u << bit))
                msg_warn("%s: %s: an empty reduction (or with --ddof, too few elements) gives "
                         "NaN, as numpy's", name, rd_op_name(bit));
    if (to_file) {
        if (missing || range) {
            if (missing)
                result_report(name, missing, "zero-size reduction along the axes has no value "
                              "(no output written)");
            if (range)
                result_report(name, range, "an exact sum does not fit 64 bits (no output "
                              "written)");
            status = 1;
        } else {
            status = result_axis_write(name, p, arrays, ops, nops, out, inputs);
        }
        goto out_free;
    }
    uint64_t shape[AX_MAX_DIMS];
    int ndim = ax_result_shape(p, shape);
    unsigned shown = p->ops & ~missing & ~range;
    if (json) {
        fputs("{\"file\": ", stdout);
        fmt_json_string(stdout, name);
        printf(", \"dtype\": \"%s\", \"shape\": [", dt_name(p->dtype));
        for (int d = 0; d < p->ndim; d++)
            printf("%s%llu", d ? ", " : "", (unsigned long long)p->shape[d]);
        fputs("], \"axis\": [", stdout);
        for (int a = 0, n = 0; a < p->ndim; a++)
            if (p->axes & (1u << a))
                printf("%s%d", n++ ? ", " : "", a);
        fputs("], \"result_shape\": [", stdout);
        for (int d = 0; d < ndim; d++)
            printf("%s%llu", d ? ", " : "", (unsigned long long)shape[d]);
        putchar(']');
        for (int i = 0; i < nops; i++) {
            printf(", \"%s\": ", rd_op_name(__builtin_ctz(ops[i])));
            if (shown & (unsigned)ops[i])
                result_nested(stdout, p, ax_result_type(p, ops[i]), ops[i], arrays[i], shape,
                              ndim, 1);
            else
                fputs("null", stdout);
        }
        puts("}");
    } else {
        int esc = fmt_name_needs_escape(name);
        for (int i = 0; i < nops; i++)
            if (shown & (unsigned)ops[i]) {
                printf("%s%s ", esc ? "\\" : "", rd_op_name(__builtin_ctz(ops[i])));
                result_nested(stdout, p, ax_result_type(p, ops[i]), ops[i], arrays[i], shape,
                              ndim, 0);
                fputs("  ", stdout);
                fmt_name(stdout, name);
                putchar('\n');
            }
    }
    status = msg_flush_stdout();
    if (missing)
        result_report(name, missing, "zero-size reduction along the axes has no value");
    if (range)
        result_report(name, range, "an exact sum does not fit 64 bits");
    status |= missing || range;
out_free:
    for (int i = 0; i < nops; i++)
        free(owned[i]);
    return status;
}
