/* axis.h - reductions along axes (`reduce --axis`): the canonical groups of
 * an array's axes, the order of every output element's sums, the chunk
 * contract that the CPU and the GPU (runtime/axis_gpu.c) both meet byte for
 * byte, and the streaming state that folds chunks into the outputs.
 *
 * The order (docs/numerics.md states it for users):
 *  - memory order: a Fortran-order array is the C-order array of its
 *    reversed shape (the axes mapped likewise); length-1 axes are dropped and
 *    neighbouring axes of the same kind (reduced / kept) merged, so the
 *    groups alternate;
 *  - stage 1: when the last group is reduced (length T), every run of T
 *    consecutive elements is reduced in today's whole-array order, tiles of
 *    RD_TILE counted from the run's start, the tile sums by the pairwise tree
 *    over tile indices; when it is kept, T = 1 and a run is its element;
 *  - stage 2: an output element's run partials p_0 .. p_{J-1} (C order of
 *    the other reduced groups) are cut into blocks of RD_AXIS_BLOCK; a
 *    block's sum is sequential from -0.0, the blocks' sums go through the
 *    pairwise tree over block indices (rd_tree's).
 *
 * The chunk contract. A chunk is elements [e0, e1) of the stream (whole
 * elements). Its work is cut into units (ax_plan.unit):
 *  - AX_UNIT_TILE (T > 1): unit u is tile (u % tiles_per_run) of run
 *    (u / tiles_per_run): elements [run*T + tile*RD_TILE, run*T +
 *    min((tile+1)*RD_TILE, T)). One part per unit (width 1): the tile's
 *    moments, extrema and variance partial exactly as rd_cpu_tiles and the
 *    whole-array kernels give them for a tile of that length, with extrema
 *    indices counted from the run's first element.
 *  - AX_UNIT_BLOCK (T == 1): unit u is block (u % blocks_per_sweep) of sweep
 *    (u / blocks_per_sweep): rows [16*block, min(16*block + 16, L)) of the
 *    innermost reduced group (length L), each row C consecutive elements (C
 *    the length of the kept group after it), starting at element
 *    sweep*L*C + 16*block*C. C parts per unit (width C), one per column:
 *    the column's block of the stage 2, its rows added in row order from
 *    -0.0 (sums, squares), its variance partial by the element step
 *    (rd_var_step) from the empty partial, extrema indices the stage-2
 *    index j of the row.
 *  - AX_UNIT_NONE: no units; the whole chunk goes to the host as raw bytes.
 * The complete units inside a chunk are [u0, u1) (ax_chunk_of); the
 * elements before unit u0 (the head) and after unit u1 - 1 (the tail) are
 * copied raw. The complete units of each segment (a run's tiles, a sweep's
 * blocks) are folded in the chunk: they are cut into entries, the maximal
 * aligned subtrees of the segment's tree of at most 2^levels leaves (the
 * leaf of a unit: its tile's index in the run, or j / RD_AXIS_BLOCK of its
 * block's first row; ax_chunk_entries lists them for levels =
 * AX_FOLD_LEVELS, which the GPU and ax_cpu_chunk write; the CPU engine
 * writes more, so that the host folds fewer parts), and an entry's part
 * is the root of the pairwise tree over its units' parts: sums by rd_add
 * (left + right), variance partials by rd_var_merge (left, right), counts
 * and exact sums added, extrema merged. Extrema indices of a block entry are
 * the stage-2 index j of the row. The result buffer of a chunk
 * (ax_out_bytes for the capacity) holds, at the byte offsets of
 * ax_layout_for(capacity):
 *    0           ax_chunk_hdr (u0, u1, head and tail element counts, entries,
 *                levels)
 *    sum_at      the parts' sums, where the ops need sum or mean: a double
 *                for float types, else the exact sum as 128 bits (low
 *                64-bit word first); sum_size bytes each
 *    sq_at       the parts' sums of squares, where they need sumsq: a double
 *                for float and 64-bit integer types, else 128 exact bits
 *    count_at    the parts' element counts (uint64), only with skipnan where
 *                they need sum, mean, sumsq or count (without skipnan a
 *                part's count is its elements: the host knows it)
 *    extrema_at  rd_extrema of the parts, where they need min/max/argmin/argmax
 *    var_at      rd_var of the parts, where they need var/std
 *    raw_at      the head's raw element bytes (as read: little-endian), then
 *                at once the tail's
 * each array nentries * width parts long, entry by entry, column by column.
 * Where an array is not needed its offset equals the next one's; every
 * byte the layout does not name is zero. An entry that is a whole run of
 * one tile of a plan with J == 1 (a short row wholly inside the chunk) is
 * its output element finished: the host stores it as it is. ax_cpu_chunk
 * writes the buffer on the CPU; the GPU's must be the same bytes. The host
 * then folds head, parts and tail, in that order, into the output's state
 * (ax_state_add_chunk). */
#ifndef GPUBATCH_RUNTIME_AXIS_H
#define GPUBATCH_RUNTIME_AXIS_H

#include <stddef.h>
#include <stdint.h>

#include "io/dtype.h"
#include "io/status.h"
#include "ptx/axis_args.h"
#include "ptx/reduce_math.h"
#include "reduce.h"

#define AX_MAX_DIMS 32

enum { AX_UNIT_NONE = 0, AX_UNIT_TILE = 1, AX_UNIT_BLOCK = 2 };

/* AX_FOLD_LEVELS (an entry of a chunk's parts folds at most 2^AX_FOLD_LEVELS
 * units) is in ptx/axis_args.h, which the kernels share. */

/* The geometry of one reduction along axes. */
typedef struct {
    dt_type dtype;
    unsigned ops;
    int skipnan;
    /* the user's array and request */
    int ndim;
    uint64_t shape[AX_MAX_DIMS];
    unsigned axes;     /* bit a: axis a (of the user's shape) is reduced */
    int fortran;       /* the data is in Fortran order */
    int keepdims;
    /* canonical groups, memory order, alternating kinds */
    int ngroups;
    uint64_t glen[AX_MAX_DIMS];
    int greduced[AX_MAX_DIMS];
    uint64_t nelem;    /* elements of the array */
    uint64_t T;        /* stage-1 run length (1: the last group is kept) */
    uint64_t nruns;    /* nelem / T (0 for an empty array) */
    uint64_t J;        /* run partials per output element */
    uint64_t nout;     /* output elements */
    uint64_t nblocks;  /* stage-2 blocks per output element: ceil(J / RD_AXIS_BLOCK) */
    /* units of a chunk's work */
    int unit;          /* AX_UNIT_* */
    uint64_t tiles_per_run;               /* AX_UNIT_TILE */
    uint64_t L, C, blocks_per_sweep;      /* AX_UNIT_BLOCK */
    size_t width;      /* parts per unit */
} ax_plan;

/* Parses an --axis LIST ("0", "-1", "0,2") against ndim axes into a mask;
 * 0 with its line in *st on a malformed list, an axis out of range or one
 * given twice (negative axes count from the end, as numpy's). */
int ax_parse_axes(const char *list, int ndim, unsigned *mask, io_status *st);

/* Makes the plan of reducing the axes in mask of an array (shape in C
 * order as the header gives it, fortran its memory order). 0, or
 * IO_ERR_FORMAT with its line. */
int ax_plan_init(ax_plan *p, dt_type dtype, unsigned ops, int skipnan, int ndim,
                 const uint64_t *shape, int fortran, unsigned axes, int keepdims,
                 io_status *st);

/* The shape of the result as the user sees it (C order of the user's kept
 * axes, length 1 for the reduced ones with keepdims); returns its ndim. */
int ax_result_shape(const ax_plan *p, uint64_t *shape);

/* The start of every chunk's result buffer. */
typedef struct {
    uint64_t u0, u1;       /* the complete units inside the chunk */
    uint64_t head, tail;   /* raw elements before u0 and after u1 - 1 */
    uint64_t nentries;     /* entries of the parts (ax_chunk_entries) */
    uint64_t levels;       /* the entries fold at most 2^levels units each */
} ax_chunk_hdr;

/* One entry: units [u, u + n) of one segment, n = 2^level, aligned. */
typedef struct {
    uint64_t u, n;
    unsigned level;
} ax_entry;

/* The entries of complete units [u0, u1) into out (NULL: counted only);
 * returns how many (at most u1 - u0). */
size_t ax_chunk_entries(const ax_plan *p, uint64_t u0, uint64_t u1, ax_entry *out);

/* The leaf index of unit u in its segment's tree. */
uint64_t ax_unit_leaf(const ax_plan *p, uint64_t u);

/* Where the pieces of a chunk's result buffer lie (bytes), and which
 * partials the ops need. */
typedef struct {
    int use_m, use_e, use_v;   /* the ops need moments, extrema, variance */
    int use_sum, use_sq, use_cnt; /* the moments' arrays the buffer holds */
    size_t sum_size, sq_size;  /* bytes of one sum, one square sum (8 or 16) */
    size_t max_parts; /* parts of a chunk at most */
    size_t sum_at, sq_at, count_at, extrema_at, var_at, raw_at, total;
} ax_layout;

/* The units and raw ends of the chunk of elements [e0, e1), its entries
 * of AX_FOLD_LEVELS. */
ax_chunk_hdr ax_chunk_of(const ax_plan *p, uint64_t e0, uint64_t e1);

/* The layout of a result buffer for chunks of at most capacity bytes. */
ax_layout ax_layout_for(const ax_plan *p, size_t capacity);

/* Bytes of a result buffer for chunks of at most capacity bytes. */
size_t ax_out_bytes(const ax_plan *p, size_t capacity);

/* The chunk for a run of p: chunk (a multiple of align), halved to whole
 * multiples of align while a chunk's results would take far more memory
 * than its data (short runs: a part per few elements). */
size_t ax_chunk_for(const ax_plan *p, size_t chunk, size_t align);

/* The first element of unit u and its element count. */
void ax_unit_span(const ax_plan *p, uint64_t u, uint64_t *start, uint64_t *n);

/* Whether the CPU's extrema parts of plan p note the unit of RD_AXIS_BLOCK
 * rows an extremum lies in rather than its row: float block units without
 * argmin or argmax, whose results and saved states do not show the row. */
int ax_extrema_by_unit(const ax_plan *p);

/* Whether n extrema parts of plan p agree as its results and saved states
 * see them: the keys, and the indices, or their units where
 * ax_extrema_by_unit (for tests: the backends and codes differ there). */
int ax_extrema_parts_same(const ax_plan *p, const rd_extrema *a, const rd_extrema *b, size_t n);

/* The chunk's whole result buffer on the CPU: x holds elements [e0, e1),
 * out has ax_out_bytes(p, capacity) bytes. */
void ax_cpu_chunk(const ax_plan *p, const void *x, uint64_t e0, uint64_t e1, size_t capacity,
                  void *out);

/* ax_cpu_chunk's buffer from the reference code, which takes the elements
 * one at a time (for tests: the lane-wise code must give the same bytes). */
void ax_cpu_chunk_scalar(const ax_plan *p, const void *x, uint64_t e0, uint64_t e1,
                         size_t capacity, void *out);

/* The parts of entries ent[0 .. n), the chunk's entries at .. at + n, of a
 * chunk whose element e0 lies at x (x its data), into the arrays of layout
 * l of the buffer out: the CPU's work, run on any thread. */
void ax_cpu_entries(const ax_plan *p, const ax_layout *l, const void *x, uint64_t e0,
                    const ax_entry *ent, size_t n, size_t at, void *out);

/* The streaming state of the outputs: per output element the running
 * stage-2 block and the block tree, the exact sums and the extrema; one
 * run's carry of a cut tile. Opaque. */
typedef struct ax_state ax_state;

/* A new state for plan p (kept by pointer); NULL when out of memory. */
ax_state *ax_state_new(const ax_plan *p);
void ax_state_free(ax_state *s);

/* Folds a chunk's result buffer (its capacity's layout) into the state, in
 * stream order. 0, or IO_ERR_FORMAT (an integer sum beyond 128 bits). */
int ax_state_add_chunk(ax_state *s, const void *out, size_t capacity);

/* What ax_state_result found: some element had nothing to reduce (min of
 * an empty axis: no value; mean or var: NaN, numpy's warning), or an exact
 * sum beyond its result type. */
enum { AX_RESULT_EMPTY = 1, AX_RESULT_RANGE = 2 };

/* The final values of op bit `op` (one of rd_op) for every output element,
 * in the result's memory order (C order, or Fortran order for a
 * Fortran-order input), into a buffer of nout ax_result_type elements;
 * ddof for var/std. Returns the AX_RESULT_* flags found. */
int ax_state_result(const ax_state *s, int op, int ddof, void *out);

/* A state for plan p (kept by pointer) that, where every output element is
 * one whole run of at most a tile (the last axes reduced, a run no longer
 * than RD_TILE elements), computes each op's values (ddof for var/std) as
 * the chunks come, into an array a value per op and output, instead of
 * keeping the accumulators of every output to the end; otherwise a state
 * as ax_state_new's. Not for shards. NULL when out of memory. */
ax_state *ax_state_new_values(const ax_plan *p, int ddof);

/* The values of op bit `op` of a state of ax_state_new_values that computes
 * them, as ax_state_result gives them (its flags in *flags), owned by the
 * state; NULL for any other state. ax_state_result of such a state copies
 * them (its ddof is the state's). */
const void *ax_state_values(const ax_state *s, int op, int *flags);

/* The element type of op's result: int64/uint64 exact integer sums and
 * counts, int64 indices, the input's type for min/max, else float64. */
dt_type ax_result_type(const ax_plan *p, int op);

/* Shards (`reduce --shard I/N --axis`). A shard is elements [e0, e1) of
 * the stream, its ends from ax_shard_cut (no tile is cut; runs, rows and
 * stage-2 blocks are cut anywhere). Its state holds, beyond a whole
 * stream's, the trees of the run it starts inside from its first tile on,
 * and per output element the stage-2 partials of the block it starts inside
 * (at most RD_AXIS_BLOCK - 1) and its block tree from its first own block
 * (rd_tree's stack from any leaf). */

/* The start of the unit that holds element e (nelem for e >= nelem). */
uint64_t ax_shard_cut(const ax_plan *p, uint64_t e);

/* A new state for elements [e0, e1) of plan p's stream, which chunks from
 * element e0 on fold into (ax_state_add_chunk); NULL when out of memory. */
ax_state *ax_state_new_shard(const ax_plan *p, uint64_t e0, uint64_t e1);

/* Appends shard state b to a, a whole-stream state of every element before
 * b's: the result has the bits of one state over both. 0, or IO_ERR_FORMAT
 * when b is not a shard state that starts where a ends. */
int ax_state_merge(ax_state *a, const ax_state *b);

/* Bytes of shard state s's accumulators (host byte order), bounded by a
 * constant times the output's element count. */
size_t ax_state_bytes(const ax_state *s);

/* Writes shard state s's accumulators into buf (ax_state_bytes long). */
void ax_state_save(const ax_state *s, unsigned char *buf);

/* The shard state of elements [e0, e1) of plan p from ax_state_save's len
 * bytes at buf, checked against the geometry (stacks, cut runs, every
 * output's stage-2 range) so that merging it stays in bounds; NULL with
 * the reason in *st. */
ax_state *ax_state_load(const ax_plan *p, uint64_t e0, uint64_t e1, const unsigned char *buf,
                        size_t len, io_status *st);

/* The engine operation (runtime/engine.h); its context is an ax_job. */
typedef struct {
    const ax_plan *plan;
    uint64_t first;  /* element index at stream offset 0 */
    ax_state *st;
} ax_job;

/* The operation's CPU side; its launch is NULL: a caller sets a copy's to
 * the GPU's, ax_gpu_launch (runtime/axis_gpu.h), which depends on this
 * module, not the other way. */
struct engine_ops;
extern const struct engine_ops ax_engine_ops;

#endif
