/* reduce.h - the host side of `reduce`: per-chunk tile partials computed on
 * the GPU or the CPU (rd_engine_ops), and their combination in tile order into
 * final values (rd_state). See ptx/reduce_math.h for the arithmetic order
 * that makes every backend, chunk size and thread count give the same bits. */
#ifndef GPUBATCH_RUNTIME_REDUCE_H
#define GPUBATCH_RUNTIME_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "io/dtype.h"
#include "io/status.h"
#include "ptx/reduce_math.h"

enum rd_op {
    RD_OP_SUM = 1 << 0,
    RD_OP_MEAN = 1 << 1,
    RD_OP_MIN = 1 << 2,
    RD_OP_MAX = 1 << 3,
    RD_OP_ARGMIN = 1 << 4,
    RD_OP_ARGMAX = 1 << 5,
    RD_OP_SUMSQ = 1 << 6,
    RD_OP_COUNT = 1 << 7,
    RD_OP_VAR = 1 << 8,
    RD_OP_STD = 1 << 9,
};
#define RD_OP_EXTREMA (RD_OP_MIN | RD_OP_MAX | RD_OP_ARGMIN | RD_OP_ARGMAX)
#define RD_OP_NUM 10

/* Name of op bit i ("sum", "mean", ...), in the order of enum rd_op. */
const char *rd_op_name(int bit);

/* Parses "sum,min,max" into a mask; 0 and IO_ERR_FORMAT with its line in
 * *st on an unknown name, a name given twice, an empty name (a comma
 * first, last or twice) or an empty list. */
unsigned rd_parse_ops(const char *list, io_status *st);

/* A pairwise tree over a stream of doubles in index order, padded with -0.0
 * to a power of two: push values one by one, then finish. The stack holds
 * the complete aligned subtrees not yet merged, in index order: entry i has
 * 2^level[i] leaves and ends where entry i+1 starts; the last ends at leaf
 * `next`. A tree may start at any leaf (one shard of an array): its stack is
 * then the maximal aligned subtrees of its leaf range, which continue into
 * the whole array's tree with rd_tree_push_level(). */
typedef struct {
    double value[128];
    unsigned char level[128];
    int depth;
    uint64_t next; /* index of the next leaf */
} rd_tree;

void rd_tree_init(rd_tree *t);
/* An empty tree whose first leaf will have index `first`. */
void rd_tree_init_at(rd_tree *t, uint64_t first);
void rd_tree_push(rd_tree *t, double v);
/* Pushes a complete subtree of 2^level leaves with root value v, starting
 * at leaf t->next (which must be a multiple of 2^level): the same bits as
 * pushing its leaves one by one. */
void rd_tree_push_level(rd_tree *t, double v, unsigned level);
/* Root of the tree; -0.0 when nothing was pushed. */
double rd_tree_finish(const rd_tree *t);

/* x, with every NaN as one quiet NaN: the form a saved state holds, since
 * a NaN's sign and payload differ between backends and no result shows
 * them. */
double rd_canon(double x);

/* A variance partial with its doubles as rd_canon writes them. */
rd_var rd_canon_var(rd_var v);

/* The same tree over variance partials (rd_var_merge for the additions,
 * the empty partial for the padding), with rd_tree's stack and semantics. */
typedef struct {
    rd_var value[128];
    unsigned char level[128];
    int depth;
    uint64_t next; /* index of the next leaf */
} rd_vtree;

/* An empty tree whose first leaf will have index `first`. */
void rd_vtree_init_at(rd_vtree *t, uint64_t first);
void rd_vtree_push(rd_vtree *t, rd_var v);
/* Pushes a complete subtree of 2^level leaves with root v at leaf t->next. */
void rd_vtree_push_level(rd_vtree *t, rd_var v, unsigned level);
/* Root of the tree; the empty partial when nothing was pushed. */
rd_var rd_vtree_finish(const rd_vtree *t);

/* The running state of one array's reduction. */
typedef struct {
    dt_type dtype;
    unsigned ops;
    int skipnan;
    rd_tree sum_tree, sq_tree; /* float sums (and 64-bit integer squares) */
    rd_vtree var_tree;         /* variance partials of the tiles (var, std) */
    double ddof;               /* var and std divide by count - ddof (0 after init) */
    rd_u128 isum, isq;         /* exact integer sums */
    uint64_t count;            /* elements counted (NaN excluded with skipnan) */
    uint64_t nelem;            /* elements seen */
    rd_extrema ext;
} rd_state;

void rd_state_init(rd_state *s, dt_type dtype, unsigned ops, int skipnan);

/* Makes an empty state start at tile `first_tile` (a shard of an array). */
void rd_state_start_at(rd_state *s, uint64_t first_tile);

/* Appends b, the state of the tiles that follow s's in the same array (a
 * later shard): the result has the bits of one state over both ranges. */
void rd_state_merge(rd_state *s, const rd_state *b);

/* Adds the partials of ntiles consecutive tiles (the next ones in index
 * order); m, e or v may be NULL when their ops are not wanted. */
void rd_state_add(rd_state *s, const rd_moments *m, const rd_extrema *e, const rd_var *v,
                  size_t ntiles, uint64_t nelem);

/* Final values. Float results are doubles; integer sums are exact. */
typedef struct {
    uint64_t count;     /* elements counted */
    int is_float;       /* sum/sumsq/mean are doubles (else exact integers) */
    double sum, sumsq, mean;
    __int128 isum;      /* exact sum of an integer array */
    unsigned __int128 isumsq; /* exact sum of squares (8..32-bit integers) */
    int sumsq_is_float; /* 64-bit integers: sumsq is a double */
    int have_extrema;   /* 0 when the array is empty (or all NaN with skipnan) */
    double fmin, fmax;  /* float arrays (NaN when NaN propagated) */
    int64_t imin, imax; /* signed integer arrays */
    uint64_t umin, umax;/* unsigned integer arrays */
    uint64_t argmin, argmax;
    double var, std;    /* with the state's ddof; NaN where count - ddof <= 0 */
} rd_result;

void rd_state_result(const rd_state *s, rd_result *r);

/* A reduction as the engine runs it (runtime/engine.h): chunks of one
 * array's elements, their partials folded into st in input order. */
typedef struct {
    dt_type dtype;
    unsigned ops;
    int skipnan;
    uint64_t first; /* global index of the element at stream offset 0 */
    rd_state *st;   /* the array's state */
} rd_job;

/* The reduction's engine operation (runtime/engine.h); its context is an
 * rd_job. Declared by its tag so that this header needs no device types. */
struct engine_ops;
extern const struct engine_ops rd_engine_ops;

/* The short name of a type in kernel module names ("f32", "bf16", ...). */
const char *rd_dtype_tag(dt_type t);

/* The most embedded modules one reduction launches. */
#define RD_MAX_MODULES 3

/* The names of the embedded modules a reduction of ops over dtype
 * launches (at most RD_MAX_MODULES, into names); returns how many. */
int rd_modules(dt_type dtype, unsigned ops, int skipnan, char names[RD_MAX_MODULES][64]);

/* Computes the partials of tiles [t0, t1) of a chunk on the CPU with the
 * operation order of the GPU kernels, with the widest instruction set this
 * CPU has (runtime/simd.h); every variant gives the same bits. m / e may be
 * NULL. */
void rd_cpu_tiles(const void *x, size_t nelem, uint64_t first, dt_type dtype, int skipnan,
                  int want_sq, size_t t0, size_t t1, rd_moments *m, rd_extrema *e);

/* The variance partials of tiles [t0, t1) of a chunk of nelem elements
 * into v[t0..t1): rd_var_tile's bits, vectorized like rd_cpu_tiles. */
void rd_cpu_var_tiles(const void *x, size_t nelem, dt_type dtype, int skipnan, size_t t0,
                      size_t t1, rd_var *v);




#endif
