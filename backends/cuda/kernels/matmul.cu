// Tiled shared-memory matrix product for mm and bmm: C[b] = A[b] @ B[b], any strides.
//
// A 64x64 tile of C per block of 256 threads; each thread accumulates a 4x4 micro-tile whose
// rows and columns are 16 apart (so shared-memory reads of a warp hit distinct banks). K is
// walked in steps of 16: the block stages a 64x16 slab of A and a 16x64 slab of B in shared
// memory (zero-padded at the edges), synchronises, and multiplies from there. Accumulation is in
// Acc<T> (float for half, as cuBLAS without TF32; double for double).

#define DC_BM 64
#define DC_BN 64
#define DC_BK 16

template <typename T>
__device__ __forceinline__ void dc_matmul(T* c, const T* a, const T* b, i64 m, i64 n, i64 k, i64 batch,
                                          i64 sa_b, i64 sa_m, i64 sa_k, i64 sb_b, i64 sb_k, i64 sb_n,
                                          i64 sc_b, i64 sc_m, i64 sc_n) {
  typedef typename Acc<T>::type A;
  __shared__ A as[DC_BK][DC_BM + 1];  // as[kk][row]; +1 pads the transposed stores off one bank
  __shared__ A bs[DC_BK][DC_BN];      // bs[kk][col]
  const int tid = threadIdx.x;
  const int tx = tid & 15, ty = tid >> 4;
  const i64 row0 = (i64)blockIdx.y * DC_BM, col0 = (i64)blockIdx.x * DC_BN;
  for (i64 z = blockIdx.z; z < batch; z += gridDim.z) {
    const T* az = a + z * sa_b;
    const T* bz = b + z * sb_b;
    A acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = A(0);
    for (i64 k0 = 0; k0 < k; k0 += DC_BK) {
#pragma unroll
      for (int l = 0; l < 4; ++l) {  // 1024 elements of each slab, 4 per thread
        const int idx = tid + l * 256;
        const int ar = idx / DC_BK, ak = idx % DC_BK;  // consecutive threads walk k: coalesced for row-major A
        const i64 gr = row0 + ar, gk = k0 + ak;
        as[ak][ar] = (gr < m && gk < k) ? (A)dc_load(az + gr * sa_m + gk * sa_k) : A(0);
        const int bk = idx / DC_BN, bc = idx % DC_BN;  // consecutive threads walk n: coalesced for row-major B
        const i64 gk2 = k0 + bk, gc = col0 + bc;
        bs[bk][bc] = (gk2 < k && gc < n) ? (A)dc_load(bz + gk2 * sb_k + gc * sb_n) : A(0);
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < DC_BK; ++kk) {
        A ra[4], rb[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) ra[i] = as[kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < 4; ++j) rb[j] = bs[kk][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
      }
      __syncthreads();
    }
    T* cz = c + z * sc_b;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const i64 r = row0 + ty + 16 * i;
      if (r >= m) continue;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const i64 col = col0 + tx + 16 * j;
        if (col < n) dc_store(cz + r * sc_m + col * sc_n, acc[i][j]);
      }
    }
  }
}
