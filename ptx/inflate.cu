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
#include "ptx/inflate_math.h"

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
