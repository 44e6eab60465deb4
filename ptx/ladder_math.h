/* ladder_math.h - the quadratic ladder's record, compiled both as CUDA (the
 * kernels in ladder_quadratic.cu) and as C (the CPU rows of `gpubatch
 * bench`), so both solve a record with the same operations.
 *
 * A record is the articles' array-of-structs element, seven float32:
 * {a, b, c, re x1, re x2, im x1, im x2}. It is solved in place with the
 * textbook formula, qd_naive_f32 of quadratic_math.h. */
#ifndef GPUBATCH_PTX_LADDER_MATH_H
#define GPUBATCH_PTX_LADDER_MATH_H

#include "quadratic_math.h"

#define LQ_FIELDS 7 /* floats per record */

/* Solves the record at r in place. */
GB_HD void lq_solve_record(float *r)
{
    float re1, im1, re2, im2;
    qd_naive_f32(r[0], r[1], r[2], &re1, &im1, &re2, &im2);
    r[3] = re1;
    r[4] = re2;
    r[5] = im1;
    r[6] = im2;
}

#endif
