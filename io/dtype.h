/* dtype.h - element types of the arrays gpubatch reads and writes.
 *
 * One enum for the whole program; the .npy descriptor, the command-line
 * name and the element size all derive from it here. Data is always
 * little-endian in memory: big-endian input is byte-swapped as it is read
 * (dt_swap_unit says in what units). */
#ifndef GPUBATCH_IO_DTYPE_H
#define GPUBATCH_IO_DTYPE_H

#include <stddef.h>

typedef enum {
    DT_NONE = 0,
    DT_F32,
    DT_F64,
    DT_I8,
    DT_I16,
    DT_I32,
    DT_I64,
    DT_U8,
    DT_U16,
    DT_U32,
    DT_U64,
    DT_C64,
    DT_C128,
    DT_F16,  /* IEEE binary16, numpy's float16 */
    DT_BF16, /* bfloat16 (the top half of a float32), ml_dtypes' bfloat16 */
    DT_BOOL, /* one byte, zero false and anything else true, as numpy reads it */
    DT_COUNT
} dt_type;

/* Size of one element in bytes (0 for DT_NONE or out of range). */
size_t dt_size(dt_type t);

/* Canonical name as the command line and messages spell it ("float32"). */
const char *dt_name(dt_type t);

/* The little-endian .npy descriptor ("<f4"; "|i1" for one-byte types;
 * "<V2" for bfloat16, as numpy writes ml_dtypes' bfloat16 arrays). */
const char *dt_npy_descr(dt_type t);

/* Parses a command-line name: "float32", "f32", "f4", "int8", "i1", "uint64", "u8",
 * "complex64", "c8", "float16", "f2", "bfloat16", "bool", "b1", ...
 * Returns DT_NONE when unknown. */
dt_type dt_from_name(const char *name);

/* dt_from_name, and also a .npy descriptor with a byte-order character:
 * *big_endian is set for '>' or '!' before a type of more than one byte,
 * cleared otherwise. Returns DT_NONE when unknown. */
dt_type dt_parse(const char *name, int *big_endian);

/* Nonzero for the real floating-point types (types with NaN): float16,
 * bfloat16, float32, float64; complex excluded. */
int dt_is_float(dt_type t);

/* Nonzero for signed integer types. */
int dt_is_signed_int(dt_type t);

/* Bytes reversed together when data of type t is big-endian: the element
 * size, or the size of one part of a complex; 0 for one-byte types. */
size_t dt_swap_unit(dt_type t);

#endif
