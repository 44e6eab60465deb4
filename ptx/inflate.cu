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
// gzs_tails: a block per segment: where the last 32 KiB of its symbols hold
//   no marker, they are the window after it (wins[i + 1]), and clean[i] = 1.
// gzs_windows: one block walks the segments in order and writes the window
//   after each of the others from the one before it (wins[0]: the window
//   before the batch, `valid` bytes of it real).
// gzs_replace: the symbols of every segment as bytes, in their places of the
//   batch's output; a block per GZS_TILE symbols of a segment.
// gzs_crc: the CRC-32 terms of the batch's output, a warp per GZS_PIECE
//   bytes, xor-ed into *acc (if_crc32_finish gives the CRC).
// A marker into window bytes that do not exist sets *bad.
#include "inflate_stream.h"

#define GZS_WINDOW_THREADS 1024
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

extern "C" __global__ void __launch_bounds__(256)
gzs_tails(const ifs_seg *__restrict__ segs, const unsigned short *__restrict__ syms,
          unsigned char *wins, unsigned char *clean)
{
    unsigned i = blockIdx.x, nout = segs[i].nout;
    const unsigned short *tail = syms + segs[i].sym_off + nout - IFS_WINDOW;
    int marker = nout < IFS_WINDOW;
    for (unsigned p = threadIdx.x; !marker && p < IFS_WINDOW; p += 256)
        marker = tail[p] >= 256u;
    marker = __syncthreads_or(marker);
    if (threadIdx.x == 0)
        clean[i] = !marker;
    if (marker)
        return;
    unsigned char *next = wins + (unsigned long long)(i + 1) * IFS_WINDOW;
    for (unsigned p = threadIdx.x; p < IFS_WINDOW; p += 256)
        next[p] = (unsigned char)tail[p];
}

// Writes positions threadIdx.x + k * GZS_WINDOW_THREADS of the window after
// a segment of nout symbols (sym) from the window before it (w, `valid`
// bytes of it real): every symbol is loaded before any is resolved, so the
// loads overlap. Positions before the segment's first symbol copy w
// (marked by bit 16); a marker into bytes that do not exist sets *err.
__device__ __forceinline__ void gzs_window_step(const unsigned short *__restrict__ sym,
                                                unsigned nout, const unsigned char *w,
                                                unsigned valid, unsigned char *next, int *err)
{
    const unsigned per = IFS_WINDOW / GZS_WINDOW_THREADS;
    unsigned v[per];
#pragma unroll
    for (unsigned k = 0; k < per; k++) {
        long long q = (long long)nout - IFS_WINDOW + threadIdx.x + k * GZS_WINDOW_THREADS;
        v[k] = q >= 0 ? sym[q] : 0x10000u | (IFS_MARKER + (unsigned)(IFS_WINDOW + q));
    }
    unsigned char b[per];
#pragma unroll
    for (unsigned k = 0; k < per; k++) {
        unsigned i = (v[k] & 0xffffu) - IFS_MARKER;
        if (v[k] >= 256u && !(v[k] & 0x10000u) && i < IFS_WINDOW - valid)
            *err = 1;
        b[k] = v[k] < 256u ? (unsigned char)v[k] : w[i & (IFS_WINDOW - 1u)];
    }
#pragma unroll
    for (unsigned k = 0; k < per; k++)
        next[threadIdx.x + k * GZS_WINDOW_THREADS] = b[k];
}

extern "C" __global__ void __launch_bounds__(GZS_WINDOW_THREADS)
gzs_windows(const ifs_seg *__restrict__ segs, unsigned n, const unsigned short *__restrict__ syms,
            unsigned char *wins, const unsigned char *__restrict__ clean, unsigned valid,
            unsigned *bad)
{
    __shared__ unsigned char done[GZS_WINDOW_THREADS];
    int err = 0;
    for (unsigned base = 0; base < n; base += GZS_WINDOW_THREADS) {
        __syncthreads();
        if (base + threadIdx.x < n)
            done[threadIdx.x] = clean[base + threadIdx.x];
        __syncthreads();
        for (unsigned i = base; i < n && i < base + GZS_WINDOW_THREADS; i++) {
            unsigned nout = segs[i].nout;
            if (!done[i - base]) {
                gzs_window_step(syms + segs[i].sym_off, nout,
                                wins + (unsigned long long)i * IFS_WINDOW, valid,
                                wins + (unsigned long long)(i + 1) * IFS_WINDOW, &err);
                __syncthreads();
            }
            valid = valid + nout > IFS_WINDOW ? IFS_WINDOW : valid + nout;
        }
    }
    if (err)
        atomicOr(bad, 1u);
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
