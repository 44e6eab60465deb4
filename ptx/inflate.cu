// inflate.cu - blocked gzip on the GPU: the members of one chunk, each an
// independent deflate stream of at most 64 KiB of output, inflated into
// their places in a decoded buffer and checked against their CRC-32.
//
// gzk_inflate: one thread per member, its decoder tables (if_tables) in
//   shared memory; a member that fails to decode sets *bad to the lowest
//   failing member index (atomicMin) and its output is left unspecified.
// gzk_crc: one warp per member; lane l checksums bytes [2048 l, 2048 l +
//   2048) of the output, and the lanes' registers are combined by
//   multiplying each by x^(8 * bytes after its part) (ptx/inflate_math.h);
//   a mismatch sets *bad the same way.
// Both take the member table and the compressed bytes as the host laid them
// out (if_member); the compressed buffer has IF_IN_PAD readable bytes past
// its last member.
#include "inflate_math.h"

#define GZ_THREADS IF_GPU_THREADS
#define GZ_CRC_PART 2048u // bytes per lane in gzk_crc

extern "C" __global__ void __launch_bounds__(GZ_THREADS)
gzk_inflate(const unsigned char *__restrict__ comp, const if_member *__restrict__ members,
            unsigned n, unsigned char *__restrict__ dec, unsigned *bad)
{
    __shared__ if_tables tables[GZ_THREADS];
    unsigned i = blockIdx.x * GZ_THREADS + threadIdx.x;
    if (i >= n)
        return;
    if_member m = members[i];
    if (m.isize > IF_MAX_OUT ||
        if_inflate(comp + m.in_off, m.in_len, dec + m.out_off, m.isize, &tables[threadIdx.x]))
        atomicMin(bad, i);
}

extern "C" __global__ void __launch_bounds__(32)
gzk_crc(const if_member *__restrict__ members, unsigned n, const unsigned char *__restrict__ dec,
        unsigned *bad)
{
    __shared__ if_u32 table[256];
    for (unsigned k = threadIdx.x; k < 256; k += 32)
        if_crc32_table(table, k);
    __syncwarp();
    unsigned i = blockIdx.x, lane = threadIdx.x;
    if (i >= n)
        return;
    if_member m = members[i];
    if (m.isize > IF_MAX_OUT)
        return; // gzk_inflate reported it
    unsigned start = lane * GZ_CRC_PART < m.isize ? lane * GZ_CRC_PART : m.isize;
    unsigned end = start + GZ_CRC_PART < m.isize ? start + GZ_CRC_PART : m.isize;
    if_u32 term = if_crc32_part(table, dec + m.out_off, start, end, if_crc32_xpow(m.isize - end));
    for (int h = 16; h > 0; h >>= 1)
        term ^= __shfl_xor_sync(0xffffffffu, term, h);
    if (lane == 0 && if_crc32_finish(term, m.isize) != m.crc)
        atomicMin(bad, i);
}

// ---- one deflate stream in segments (ptx/inflate_stream.h) ----
//
// gzs_decode: one warp per listed segment (todo): its lanes look for the
//   segment's start (unless exact) 32 bit offsets at a time, and lane 0
//   decodes its blocks into 16-bit symbols with its tables in shared memory
//   (a warp of its own: no other segment's decode diverges from it).
// gzs_group_maps: a block per group of `group` segments (all but the last):
//   the window after the group as a map of the window before it
//   (ifs_tail, ifs_compose), segment after segment, into maps[g].
// gzs_group_windows: one block: the window before each group from the one
//   before it and its map, group after group (wins[g * group]; wins[0]:
//   the window before the batch).
// gzs_windows: a block per group: the windows within it, segment after
//   segment (wins[i + 1] from wins[i] and segment i's last symbols).
// gzs_replace: the symbols of every segment as bytes, in their places of the
//   batch's output; a block per GZS_TILE symbols of a segment.
// gzs_crc: the CRC-32 terms of the batch's output, a warp per GZS_PIECE
//   bytes, xor-ed into *acc (if_crc32_finish gives the CRC).
// A marker into window bytes that do not exist sets *bad (gzs_replace).
#include "inflate_stream.h"

#define GZS_WINDOW_THREADS 1024
#define GZS_PER (IFS_WINDOW / GZS_WINDOW_THREADS) // window positions per thread
#define GZS_TILE 4096u   // symbols per block of gzs_replace
#define GZS_PIECE 65536u // bytes per warp of gzs_crc

extern "C" __global__ void __launch_bounds__(32)
gzs_decode(const unsigned char *__restrict__ in, unsigned len, ifs_seg *segs,
           const int *__restrict__ todo, unsigned ntodo, unsigned short *syms)
{
    __shared__ if_tables tables;
    unsigned k = blockIdx.x;
    if (k >= ntodo)
        return;
    ifs_seg s = segs[todo[k]];
    ifs_segment(in, len, &s, syms, &tables);
    if (threadIdx.x == 0)
        segs[todo[k]] = s;
}

extern "C" __global__ void __launch_bounds__(GZS_WINDOW_THREADS)
gzs_group_maps(const ifs_seg *__restrict__ segs, unsigned n, unsigned group,
               const unsigned short *__restrict__ syms, unsigned short *maps)
{
    unsigned first = blockIdx.x * group, last = first + group < n ? first + group : n;
    unsigned short *map = maps + (unsigned long long)blockIdx.x * IFS_WINDOW;
    for (unsigned i = first; i < last; i++) {
        const unsigned short *sym = syms + segs[i].sym_off;
        unsigned nout = segs[i].nout, v[GZS_PER];
#pragma unroll
        for (unsigned k = 0; k < GZS_PER; k++)
            v[k] = ifs_tail(sym, nout, threadIdx.x + k * GZS_WINDOW_THREADS);
        if (i > first) {
            __syncthreads(); // the map's last entries are written
#pragma unroll
            for (unsigned k = 0; k < GZS_PER; k++)
                v[k] = ifs_compose(v[k], map);
            __syncthreads(); // and read, before they are overwritten
        }
#pragma unroll
        for (unsigned k = 0; k < GZS_PER; k++)
            map[threadIdx.x + k * GZS_WINDOW_THREADS] = (unsigned short)v[k];
    }
}

extern "C" __global__ void __launch_bounds__(GZS_WINDOW_THREADS)
gzs_group_windows(const unsigned short *__restrict__ maps, unsigned ngroups, unsigned group,
                  unsigned char *wins)
{
    for (unsigned g = 1; g < ngroups; g++) {
        const unsigned char *w = wins + (unsigned long long)(g - 1) * group * IFS_WINDOW;
        unsigned char *next = wins + (unsigned long long)g * group * IFS_WINDOW;
        const unsigned short *map = maps + (unsigned long long)(g - 1) * IFS_WINDOW;
        unsigned char b[GZS_PER];
#pragma unroll
        for (unsigned k = 0; k < GZS_PER; k++)
            b[k] = ifs_apply(map[threadIdx.x + k * GZS_WINDOW_THREADS], w);
#pragma unroll
        for (unsigned k = 0; k < GZS_PER; k++)
            next[threadIdx.x + k * GZS_WINDOW_THREADS] = b[k];
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(GZS_WINDOW_THREADS)
gzs_windows(const ifs_seg *__restrict__ segs, unsigned n, unsigned group,
            const unsigned short *__restrict__ syms, unsigned char *wins)
{
    unsigned first = blockIdx.x * group, last = first + group < n ? first + group : n;
    /* the window after a group that another follows is gzs_group_windows' */
    unsigned end = last < n ? last - 1 : last;
    for (unsigned i = first; i < end; i++) {
        const unsigned short *sym = syms + segs[i].sym_off;
        unsigned nout = segs[i].nout;
        const unsigned char *w = wins + (unsigned long long)i * IFS_WINDOW;
        unsigned char b[GZS_PER];
#pragma unroll
        for (unsigned k = 0; k < GZS_PER; k++)
            b[k] = ifs_apply(ifs_tail(sym, nout, threadIdx.x + k * GZS_WINDOW_THREADS), w);
#pragma unroll
        for (unsigned k = 0; k < GZS_PER; k++)
            wins[(unsigned long long)(i + 1) * IFS_WINDOW + threadIdx.x + k * GZS_WINDOW_THREADS] =
                b[k];
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(256)
gzs_replace(const ifs_seg *__restrict__ segs, const unsigned short *__restrict__ syms,
            const unsigned char *__restrict__ wins, unsigned valid0, unsigned char *out,
            unsigned *bad)
{
    const ifs_seg *s = &segs[blockIdx.y];
    unsigned nout = s->nout, first = blockIdx.x * GZS_TILE;
    if (first >= nout)
        return;
    unsigned long long before = valid0 + s->out_pos;
    unsigned valid = before > IFS_WINDOW ? IFS_WINDOW : (unsigned)before;
    const unsigned char *w = wins + (unsigned long long)blockIdx.y * IFS_WINDOW;
    const unsigned short *sym = syms + s->sym_off;
    unsigned char *o = out + s->out_pos;
    unsigned last = first + GZS_TILE < nout ? first + GZS_TILE : nout;
    int err = 0;
    for (unsigned q = first + threadIdx.x; q < last; q += 256)
        o[q] = ifs_resolve(sym[q], w, valid, &err);
    if (err)
        atomicOr(bad, 1u);
}

extern "C" __global__ void __launch_bounds__(32)
gzs_crc(const unsigned char *__restrict__ out, unsigned long long total, unsigned *acc)
{
    __shared__ if_u32 table[256];
    for (unsigned k = threadIdx.x; k < 256; k += 32)
        if_crc32_table(table, k);
    __syncwarp();
    unsigned long long piece = (unsigned long long)blockIdx.x * GZS_PIECE;
    if (piece >= total)
        return;
    unsigned size = total - piece < GZS_PIECE ? (unsigned)(total - piece) : GZS_PIECE;
    unsigned lane = threadIdx.x;
    unsigned start = lane * GZ_CRC_PART < size ? lane * GZ_CRC_PART : size;
    unsigned end = start + GZ_CRC_PART < size ? start + GZ_CRC_PART : size;
    if_u32 term = if_crc32_part(table, out + piece, start, end,
                                if_crc32_xpow((unsigned)(total - piece - end)));
    for (int h = 16; h > 0; h >>= 1)
        term ^= __shfl_xor_sync(0xffffffffu, term, h);
    if (lane == 0 && term)
        atomicXor(acc, term);
}
