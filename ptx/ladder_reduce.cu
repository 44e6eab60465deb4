// ladder_reduce.cu - the classic reduction ladder (sum of n float32, float
// accumulators), step by step, for `gpubatch bench`; compiled into
// ptx/ladder_reduce.compute_NN.ptx. The reproducible production kernel is
// reduce.cu: these kernels are for measurement only, and their float sums
// depend on the launch shape.
//
// Every kernel takes the element count as a 64-bit value, handles any n
// (including n smaller than the thread count) and leaves shared counters at
// zero, corrections of the published code. Two-pass variants run the same
// kernel twice: pass 1 with LR_GRID blocks writes one partial per block,
// pass 2 with one block sums the LR_GRID partials.
#define LR_BLOCK 1024 // threads per block: the article's launch shape
#define LR_FULL_MASK 0xffffffffu

typedef unsigned long long u64;

// One thread sums everything in index order.
extern "C" __global__ void lr_serial(const float *__restrict__ x, u64 n, float *__restrict__ out)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    float s = 0.0f;
    for (u64 i = 0; i < n; i++)
        s += x[i];
    *out = s;
}

// After every thread stored its sum in sh: thread 0 adds them one by one
// into out[blockIdx.x].
__device__ __forceinline__ void serial_block_sum(const float *sh, float *out)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned k = 0; k < blockDim.x; k++)
            t += sh[k];
        out[blockIdx.x] = t;
    }
}

// Block b sums a contiguous part, each thread a contiguous sub-range of it;
// thread 0 adds the block's per-thread sums serially.
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_contiguous(const float *__restrict__ x, u64 n, float *__restrict__ out)
{
    __shared__ float sh[LR_BLOCK];
    const u64 per_block = (n + gridDim.x - 1) / gridDim.x;
    const u64 b0 = (u64)blockIdx.x * per_block;
    const u64 b1 = b0 + per_block < n ? b0 + per_block : n;
    const u64 per_thread = (per_block + blockDim.x - 1) / blockDim.x;
    const u64 t0 = b0 + threadIdx.x * per_thread;
    const u64 t1 = t0 + per_thread < b1 ? t0 + per_thread : b1;
    float s = 0.0f;
    for (u64 i = t0; i < t1; i++)
        s += x[i];
    sh[threadIdx.x] = s;
    serial_block_sum(sh, out);
}

// Thread g of all T threads sums x[g], x[g + T], ...: a warp's loads are
// one contiguous segment.
__device__ __forceinline__ float strided_sum(const float *__restrict__ x, u64 n)
{
    const u64 stride = (u64)gridDim.x * blockDim.x;
    float s = 0.0f;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        s += x[i];
    return s;
}

// Stores each thread's interleaved sum in sh[threadIdx.x] for the block.
__device__ __forceinline__ void stage_strided_sum(float *sh, const float *__restrict__ x, u64 n)
{
    sh[threadIdx.x] = strided_sum(x, n);
    __syncthreads();
}

// Interleaved reads; thread 0 still adds the per-thread sums serially.
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_interleaved(const float *__restrict__ x, u64 n, float *__restrict__ out)
{
    __shared__ float sh[LR_BLOCK];
    sh[threadIdx.x] = strided_sum(x, n);
    serial_block_sum(sh, out);
}

// Halving tree over shared memory down to `stop` values (blockDim.x a power
// of two): the upper half is added to the lower half, no bank conflicts.
__device__ __forceinline__ void tree_down_to(float *sh, unsigned stop)
{
    for (unsigned h = blockDim.x / 2; h >= stop && h > 0; h /= 2) {
        if (threadIdx.x < h)
            sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
}

// Interleaved reads and an in-block tree with a barrier at every level.
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_tree(const float *__restrict__ x, u64 n, float *__restrict__ out)
{
    __shared__ float sh[LR_BLOCK];
    stage_strided_sum(sh, x, n);
    tree_down_to(sh, 1);
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

// The last 64 values reduced by warp 0 through volatile shared memory.
// Since Volta a warp's lanes need not run in lockstep, so each read and
// write is separated by __syncwarp() (the published code relied on
// lockstep execution and races on current GPUs).
__device__ __forceinline__ float last_warp_volatile(float *sh)
{
    volatile float *v = sh;
    const unsigned t = threadIdx.x;
    float r = v[t];
#pragma unroll
    for (unsigned h = 32; h >= 1; h /= 2) {
        r += v[t + h];
        __syncwarp();
        v[t] = r;
        __syncwarp();
    }
    return r;
}

// Tree with barriers down to 64 values, then the last warp without them.
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_last_warp(const float *__restrict__ x, u64 n, float *__restrict__ out)
{
    __shared__ float sh[LR_BLOCK];
    stage_strided_sum(sh, x, n);
    tree_down_to(sh, 64);
    if (threadIdx.x < 32) {
        float r = last_warp_volatile(sh);
        if (threadIdx.x == 0)
            out[blockIdx.x] = r;
    }
}

// The block tree for a compile-time block size B, fully unrolled; thread 0
// gets the sum.
template <unsigned B> __device__ __forceinline__ float block_tree_unrolled(float *sh)
{
    const unsigned t = threadIdx.x;
    if (B >= 1024) { if (t < 512) sh[t] += sh[t + 512]; __syncthreads(); }
    if (B >= 512) { if (t < 256) sh[t] += sh[t + 256]; __syncthreads(); }
    if (B >= 256) { if (t < 128) sh[t] += sh[t + 128]; __syncthreads(); }
    if (B >= 128) { if (t < 64) sh[t] += sh[t + 64]; __syncthreads(); }
    return t < 32 ? last_warp_volatile(sh) : 0.0f;
}

// Block size fixed at compile time, the whole tree unrolled.
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_unrolled(const float *__restrict__ x, u64 n, float *__restrict__ out)
{
    __shared__ float sh[LR_BLOCK];
    stage_strided_sum(sh, x, n);
    float r = block_tree_unrolled<LR_BLOCK>(sh);
    if (threadIdx.x == 0)
        out[blockIdx.x] = r;
}

// One launch: every block writes its partial; the last block to finish
// (found with an atomic ticket after a memory fence) sums the partials and
// resets the ticket counter for the next launch.
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_last_block(const float *__restrict__ x, u64 n, float *partial, unsigned *counter,
                  float *out)
{
    __shared__ float sh[LR_BLOCK];
    __shared__ bool is_last;
    stage_strided_sum(sh, x, n);
    float r = block_tree_unrolled<LR_BLOCK>(sh);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = r;
        __threadfence(); // the partial is visible before the ticket is taken
        is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last)
        return;
    float s = 0.0f;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x)
        s += __ldcg(&partial[i]); // from L2: other blocks wrote them
    sh[threadIdx.x] = s;
    __syncthreads();
    r = block_tree_unrolled<LR_BLOCK>(sh);
    if (threadIdx.x == 0) {
        *out = r;
        *counter = 0;
    }
}

// Every thread adds its interleaved partial to *out atomically (*out is
// zeroed before the launch).
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_atomic(const float *__restrict__ x, u64 n, float *out)
{
    atomicAdd(out, strided_sum(x, n));
}

// Tree with barriers down to 32 values per block, then warp 0 finishes with
// xor shuffles, without shared memory.
extern "C" __global__ void __launch_bounds__(LR_BLOCK)
    lr_shuffle(const float *__restrict__ x, u64 n, float *__restrict__ out)
{
    __shared__ float sh[LR_BLOCK];
    stage_strided_sum(sh, x, n);
    tree_down_to(sh, 32);
    if (threadIdx.x < 32) {
        float r = sh[threadIdx.x];
#pragma unroll
        for (unsigned h = 16; h >= 1; h /= 2)
            r += __shfl_xor_sync(LR_FULL_MASK, r, h);
        if (threadIdx.x == 0)
            out[blockIdx.x] = r;
    }
}
