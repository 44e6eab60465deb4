/* dtype.h - element types of the arrays gpubatch reads and writes.
 *
 * One enum for the whole program; the .npy descriptor, the command-line
 * name and the element size all derive from it here. */
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
    DT_COUNT
} dt_type;

/* Size of one element in bytes (0 for DT_NONE or out of range). */
size_t dt_size(dt_type t);

/* Canonical name as the command line and messages spell it ("float32"). */
const char *dt_name(dt_type t);

/* The little-endian .npy descriptor ("<f4"; "|i1" for one-byte types). */
const char *dt_npy_descr(dt_type t);

/* Parses a command-line name: "float32", "f32", "f4", "int8", "i1", "uint64", "u8",
 * "complex64", "c8", ... Returns DT_NONE when unknown. */
dt_type dt_from_name(const char *name);

/* Nonzero for float32/float64 (types with NaN), complex excluded. */
int dt_is_float(dt_type t);

/* Nonzero for signed integer types. */
int dt_is_signed_int(dt_type t);

#endif
