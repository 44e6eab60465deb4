/* dtype.c - the table behind dtype.h. */
#include "dtype.h"

#include <string.h>

struct dt_info {
    const char *name;
    const char *short_name;
    const char *npy;
    const char *npy_alt; /* other spelling numpy accepts in a header */
    size_t size;
};

static const struct dt_info dt_table[DT_COUNT] = {
    [DT_NONE] = {"none", "", "", "", 0},
    [DT_F32] = {"float32", "f32", "<f4", "<f4", 4},
    [DT_F64] = {"float64", "f64", "<f8", "<f8", 8},
    [DT_I8] = {"int8", "i8", "|i1", "<i1", 1},
    [DT_I16] = {"int16", "i16", "<i2", "<i2", 2},
    [DT_I32] = {"int32", "i32", "<i4", "<i4", 4},
    [DT_I64] = {"int64", "i64", "<i8", "<i8", 8},
    [DT_U8] = {"uint8", "u8", "|u1", "<u1", 1},
    [DT_U16] = {"uint16", "u16", "<u2", "<u2", 2},
    [DT_U32] = {"uint32", "u32", "<u4", "<u4", 4},
    [DT_U64] = {"uint64", "u64", "<u8", "<u8", 8},
    [DT_C64] = {"complex64", "c64", "<c8", "<c8", 8},
    [DT_C128] = {"complex128", "c128", "<c16", "<c16", 16},
};

/* Size of one element in bytes. */
size_t dt_size(dt_type t)
{
    return (t > DT_NONE && t < DT_COUNT) ? dt_table[t].size : 0;
}

/* Canonical long name. */
const char *dt_name(dt_type t)
{
    return (t > DT_NONE && t < DT_COUNT) ? dt_table[t].name : "none";
}

/* Descriptor numpy writes for this type. */
const char *dt_npy_descr(dt_type t)
{
    return (t > DT_NONE && t < DT_COUNT) ? dt_table[t].npy : "";
}

/* Accepts the long name, the short name, and the .npy descriptor with or
 * without its byte-order character ('<', '|' or '='). */
dt_type dt_from_name(const char *name)
{
    if (!name || !*name)
        return DT_NONE;
    for (int t = DT_NONE + 1; t < DT_COUNT; t++) {
        const struct dt_info *d = &dt_table[t];
        if (!strcmp(name, d->name) || !strcmp(name, d->short_name) || !strcmp(name, d->npy) ||
            !strcmp(name, d->npy_alt) || !strcmp(name, d->npy + 1))
            return (dt_type)t;
        if (name[0] == '=' && !strcmp(name + 1, d->npy + 1))
            return (dt_type)t;
    }
    return DT_NONE;
}

/* Real floating-point types. */
int dt_is_float(dt_type t)
{
    return t == DT_F32 || t == DT_F64;
}

/* Signed integer types. */
int dt_is_signed_int(dt_type t)
{
    return t == DT_I8 || t == DT_I16 || t == DT_I32 || t == DT_I64;
}
