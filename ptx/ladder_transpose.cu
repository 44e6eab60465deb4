// ladder_transpose.cu - the classic matrix transpose ladder (N x N float32,
// row-major, b[j][i] = a[i][j]) for `gpubatch bench`; compiled into
// ptx/ladder_transpose.compute_NN.ptx. Every kernel handles any N, not only
// multiples of the tile (the published code assumed them).
#define LT_TILE 32 // tile side; the tiled kernels run TILE x TILE blocks

// One thread per element: reads along a row are coalesced, writes stride by
// N. Any block shape (blockDim.x x blockDim.y) works.
extern "C" __global__ void lt_naive(const float *__restrict__ a, float *__restrict__ b,
                                    unsigned n)
{
    const unsigned j = blockIdx.x * blockDim.x + threadIdx.x; // column of a
    const unsigned i = blockIdx.y * blockDim.y + threadIdx.y; // row of a
    if (i < n && j < n)
        b[(size_t)j * n + i] = a[(size_t)i * n + j];
}

// Copies tile (blockIdx.y, blockIdx.x) of a through shared memory and writes
// it transposed, so both global reads and writes are coalesced; PITCH is
// the shared row length (TILE + 1 moves column reads onto distinct banks).
template <unsigned PITCH>
__device__ __forceinline__ void tile_transpose(const float *__restrict__ a, float *__restrict__ b,
                                               unsigned n)
{
    __shared__ float tile[LT_TILE * PITCH];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned j = blockIdx.x * LT_TILE + tx, i = blockIdx.y * LT_TILE + ty;
    if (i < n && j < n)
        tile[ty * PITCH + tx] = a[(size_t)i * n + j];
    __syncthreads();
    // Thread (tx, ty) now writes row blockIdx.x * TILE + ty of b.
    j = blockIdx.y * LT_TILE + tx;
    i = blockIdx.x * LT_TILE + ty;
    if (i < n && j < n)
        b[(size_t)i * n + j] = tile[tx * PITCH + ty];
}

// Shared-memory tile, rows of TILE words: column reads conflict on banks.
extern "C" __global__ void __launch_bounds__(LT_TILE * LT_TILE)
    lt_shared(const float *__restrict__ a, float *__restrict__ b, unsigned n)
{
    tile_transpose<LT_TILE>(a, b, n);
}

// The same with each shared row padded by one word.
extern "C" __global__ void __launch_bounds__(LT_TILE * LT_TILE)
    lt_padded(const float *__restrict__ a, float *__restrict__ b, unsigned n)
{
    tile_transpose<LT_TILE + 1>(a, b, n);
}
