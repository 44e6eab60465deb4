/* dtype.c - the table behind dtype.h. */
#include "dtype.h"

#include <string.h>

struct dt_info {
    const char *name;
    const char *short_name;
    const char *npy;
    const char *npy_alt; /* other spelling numpy accepts in a header */
    size_t size;
    size_t swap; /* bytes of one byte-order unit (dt_swap_unit) */
};

static const struct dt_info dt_table[DT_COUNT] = {
    [DT_NONE] = {"none", "", "", "", 0, 0},
    [DT_F32] = {"float32", "f32", "<f4", "<f4", 4, 4},
    [DT_F64] = {"float64", "f64", "<f8", "<f8", 8, 8},
    [DT_I8] = {"int8", "i8", "|i1", "<i1", 1, 0},
    [DT_I16] = {"int16", "i16", "<i2", "<i2", 2, 2},
    [DT_I32] = {"int32", "i32", "<i4", "<i4", 4, 4},
    [DT_I64] = {"int64", "i64", "<i8", "<i8", 8, 8},
    [DT_U8] = {"uint8", "u8", "|u1", "<u1", 1, 0},
    [DT_U16] = {"uint16", "u16", "<u2", "<u2", 2, 2},
    [DT_U32] = {"uint32", "u32", "<u4", "<u4", 4, 4},
    [DT_U64] = {"uint64", "u64", "<u8", "<u8", 8, 8},
    [DT_C64] = {"complex64", "c64", "<c8", "<c8", 8, 4},
    [DT_C128] = {"complex128", "c128", "<c16", "<c16", 16, 8},
    [DT_F16] = {"float16", "f16", "<f2", "<f2", 2, 2},
    /* ml_dtypes' bfloat16 is a numpy "void" type: np.save writes '<V2' (a
     * plain 2-byte void writes '|V2'); any 2-byte void is read as bfloat16 */
    [DT_BF16] = {"bfloat16", "bf16", "<V2", "|V2", 2, 2},
    [DT_BOOL] = {"bool", "b1", "|b1", "<b1", 1, 0},
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

/* dt_from_name, plus descriptors that say big-endian ('>' or '!'). */
dt_type dt_parse(const char *name, int *big_endian)
{
    *big_endian = 0;
    if (name && (name[0] == '>' || name[0] == '!')) {
        for (int t = DT_NONE + 1; t < DT_COUNT; t++)
            if (!strcmp(name + 1, dt_table[t].npy + 1)) {
                *big_endian = dt_table[t].swap != 0;
                return (dt_type)t;
            }
        return DT_NONE;
    }
    return dt_from_name(name);
}

/* Real floating-point types. */
int dt_is_float(dt_type t)
{
    return t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16;
}

/* Signed integer types. */
int dt_is_signed_int(dt_type t)
{
    return t == DT_I8 || t == DT_I16 || t == DT_I32 || t == DT_I64;
}

/* Byte-order unit of a type. */
size_t dt_swap_unit(dt_type t)
{
    return (t > DT_NONE && t < DT_COUNT) ? dt_table[t].swap : 0;
}
