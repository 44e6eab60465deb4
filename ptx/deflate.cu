// deflate.cu - blocked gzip output compressed on the GPU: the whole blocks of
// DF_BLOCK_MAX bytes of a device buffer (the last one may be shorter), each
// becoming the BGZF member that the host's writer makes of the same bytes.
//
// dfk_fast: level 1, DW_WARPS warps per block (ptx/deflate_warp.h), each CTA
//   taking blocks blockIdx.x, + gridDim.x, ... with its own dw_work in ws;
//   the deflate data of block b goes to bodies + b * DW_SLOT_PITCH and its
//   length to sizes[b].
// dfk_serial: any level, one thread per block running df_compress (its
//   df_near in shared memory, its df_far in ws), the same outputs.
// dfk_crc: the CRC-32 of each block, one warp per block (lane l takes bytes
//   [2048 l, 2048 l + 2048); the parts are combined as in inflate.cu).
// dfk_gather: one CTA per block lays its member out (gzip header with the
//   BC field, the deflate data, CRC-32, ISIZE) after the members of the
//   blocks before it, so that the members lie end to end in `members`
//   (device memory, or pinned host memory the device addresses).
#include "deflate_math.h"
#include "deflate_warp.h"
#include "inflate_math.h"

#define DF_CRC_PART 2048u // bytes per lane in dfk_crc
#define DF_GATHER_THREADS 256u

// Data bytes of block b of a buffer of nbytes.
__device__ __forceinline__ unsigned df_block_len(unsigned long long nbytes, unsigned b)
{
    unsigned long long left = nbytes - (unsigned long long)b * DF_BLOCK_MAX;
    return left < DF_BLOCK_MAX ? (unsigned)left : DF_BLOCK_MAX;
}

extern "C" __global__ void __launch_bounds__(DW_T, DW_CTAS_PER_SM)
dfk_fast(const unsigned char *__restrict__ in, unsigned long long nbytes, unsigned nblocks,
         unsigned char *__restrict__ bodies, unsigned *__restrict__ sizes, dw_work *ws)
{
    __shared__ dw_shared sh;
    dw_work *wk = ws + blockIdx.x;
    for (unsigned b = blockIdx.x; b < nblocks; b += gridDim.x) {
        unsigned len = dw_compress_fast(&sh, wk, in + (unsigned long long)b * DF_BLOCK_MAX,
                                        df_block_len(nbytes, b),
                                        bodies + (unsigned long long)b * DW_SLOT_PITCH);
        if (threadIdx.x == 0)
            sizes[b] = len;
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(1)
dfk_serial(const unsigned char *__restrict__ in, unsigned long long nbytes, unsigned nblocks,
           int level, unsigned char *__restrict__ bodies, unsigned *__restrict__ sizes,
           df_far *ws)
{
    __shared__ df_near nr;
    for (unsigned b = blockIdx.x; b < nblocks; b += gridDim.x)
        sizes[b] = df_compress(&nr, ws + blockIdx.x, in + (unsigned long long)b * DF_BLOCK_MAX,
                               df_block_len(nbytes, b), level,
                               bodies + (unsigned long long)b * DW_SLOT_PITCH);
}

extern "C" __global__ void __launch_bounds__(32)
dfk_crc(const unsigned char *__restrict__ in, unsigned long long nbytes, unsigned nblocks,
        unsigned *__restrict__ crcs)
{
    __shared__ if_u32 table[256];
    for (unsigned k = threadIdx.x; k < 256; k += 32)
        if_crc32_table(table, k);
    __syncwarp();
    unsigned b = blockIdx.x, lane = threadIdx.x;
    if (b >= nblocks)
        return;
    unsigned n = df_block_len(nbytes, b);
    const unsigned char *p = in + (unsigned long long)b * DF_BLOCK_MAX;
    unsigned start = lane * DF_CRC_PART < n ? lane * DF_CRC_PART : n;
    unsigned end = start + DF_CRC_PART < n ? start + DF_CRC_PART : n;
    if_u32 term = if_crc32_part(table, p, start, end, if_crc32_xpow(n - end));
    for (int h = 16; h > 0; h >>= 1)
        term ^= __shfl_xor_sync(0xffffffffu, term, h);
    if (lane == 0)
        crcs[b] = if_crc32_finish(term, n);
}

extern "C" __global__ void __launch_bounds__(DF_GATHER_THREADS)
dfk_gather(const unsigned char *__restrict__ bodies, const unsigned *__restrict__ sizes,
           const unsigned *__restrict__ crcs, unsigned long long nbytes, unsigned nblocks,
           unsigned char *__restrict__ members)
{
    __shared__ unsigned long long part[DF_GATHER_THREADS];
    unsigned b = blockIdx.x, t = threadIdx.x;
    if (b >= nblocks)
        return;
    unsigned long long off = 0;
    for (unsigned i = t; i < b; i += DF_GATHER_THREADS)
        off += sizes[i] + DF_MEMBER_HEADER + DF_MEMBER_TRAILER;
    part[t] = off;
    __syncthreads();
    for (unsigned s = DF_GATHER_THREADS / 2; s > 0; s >>= 1) {
        if (t < s)
            part[t] += part[t + s];
        __syncthreads();
    }
    unsigned body = sizes[b], total = DF_MEMBER_HEADER + body + DF_MEMBER_TRAILER;
    unsigned char *m = members + part[0];
    const unsigned char *src = bodies + (unsigned long long)b * DW_SLOT_PITCH;
    const unsigned char header[16] = {BGZF_HEADER_BYTES};
    if (t < 16)
        m[t] = header[t];
    else if (t < 18)
        m[t] = (unsigned char)((total - 1u) >> (8 * (t - 16)));
    else if (t < 22)
        m[DF_MEMBER_HEADER + body + t - 18] = (unsigned char)(crcs[b] >> (8 * (t - 18)));
    else if (t < 26)
        m[DF_MEMBER_HEADER + body + t - 18] =
            (unsigned char)(df_block_len(nbytes, b) >> (8 * (t - 22)));
    df_copy_out(m + DF_MEMBER_HEADER, src, body, t, DF_GATHER_THREADS);
}
