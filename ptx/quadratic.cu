// quadratic.cu - the batch quadratic solver, compiled once per coefficient
// type (-DGB_DT_f32, -DGB_DT_f64) into ptx/quadratic_TYPE.compute_NN.ptx.
// Each thread solves rows i, i + gridDim.x * blockDim.x, ... with the
// solver of quadratic_math.h (the CPU backend runs the same code), so the
// roots do not depend on the launch shape.
#include "ptx/quadratic_math.h"

#if defined(GB_DT_f32)
typedef float coef_t;
#define QD_SOLVE qd_solve_f32
#elif defined(GB_DT_f64)
typedef double coef_t;
#define QD_SOLVE qd_solve_f64
#else
#error "compile with -DGB_DT_f32 or -DGB_DT_f64"
#endif

// Rows (a, b, c) in, rows (re x1, im x1, re x2, im x2) out: an (N, 3) array
// to an (N, 2) complex array.
extern "C" __global__ void __launch_bounds__(256)
    qdk_rows(const coef_t *__restrict__ in, unsigned long long n, coef_t *__restrict__ out)
{
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        coef_t a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
        coef_t re1, im1, re2, im2;
        QD_SOLVE(a, b, c, &re1, &im1, &re2, &im2);
#if defined(GB_DT_f32)
        reinterpret_cast<float4 *>(out)[i] = make_float4(re1, im1, re2, im2);
#else
        reinterpret_cast<double2 *>(out)[2 * i] = make_double2(re1, im1);
        reinterpret_cast<double2 *>(out)[2 * i + 1] = make_double2(re2, im2);
#endif
    }
}
