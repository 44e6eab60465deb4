/* result.c - the results of a reduced array on standard output, as text
 * lines or one JSON object: what reduce and merge print. */
#include "result.h"

#include <stdio.h>

#include "format.h"
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
