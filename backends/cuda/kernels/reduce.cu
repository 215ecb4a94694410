// Reductions over any set of dimensions (ATen's ReduceOps on CUDA): sum, mean, amax, argmax/max.dim.
//
// One block per output element (blockIdx.x over the kept dimensions); blockIdx.y splits a long
// reduction into chunks whose partial results the host reduces in a second launch. Threads
// stride over their chunk, then reduce in the block (warp shuffles + shared memory).

// Small integers reduce in int (shuffles have no 8/16-bit forms); half in float.
template <typename T> struct RedAcc { typedef typename Acc<T>::type type; };
template <> struct RedAcc<u8> { typedef i32 type; };
template <> struct RedAcc<i8> { typedef i32 type; };
template <> struct RedAcc<i16> { typedef i32 type; };

__device__ __forceinline__ i64 dc_kept_offset(const RedGeom& g, i64 o, const i64* strides) {
  return dc_offset(o, g.nk, g.ksizes, strides);
}

// sum (mean: scale = 1/n on the final pass) and amax; out[offset(o) + chunk]
template <typename T, typename Op>
__device__ __forceinline__ void dc_reduce(const RedGeom& g, T* out, const T* in, i64 chunk, double scale,
                                          typename RedAcc<T>::type init, Op op) {
  typedef typename RedAcc<T>::type A;
  __shared__ A smem[32];
  const i64 o = blockIdx.x;
  const i64 base = dc_kept_offset(g, o, g.kin);
  const i64 start = (i64)blockIdx.y * chunk;
  i64 end = start + chunk;
  if (end > g.rnumel) end = g.rnumel;
  A acc = init;
  for (i64 r = start + threadIdx.x; r < end; r += blockDim.x) {
    acc = op(acc, (A)dc_load(in + base + dc_offset(r, g.nr, g.rsizes, g.rin)));
  }
  acc = dc_block_reduce(acc, op, smem);
  if (threadIdx.x == 0) {
    if (scale != 1.0) acc = acc * (A)scale;  // MeanOps: the factor in the accumulation type
    dc_store(out + dc_kept_offset(g, o, g.kout) + blockIdx.y, acc);
  }
}

// argmax over the reduced dimensions (the index is linear over them, row-major), and with
// out_val != 0 the max itself (max.dim). The first maximum wins; NaN counts as the maximum.
// An index of -1 means "nothing seen yet" (a thread with no element): it loses to anything.
template <typename A>
__device__ __forceinline__ bool dc_arg_better(A v, i64 i, A best, i64 besti) {
  if (i < 0) return false;
  if (besti < 0) return true;
  if (dc_isnan(best)) return dc_isnan(v) && i < besti;
  if (dc_isnan(v)) return true;
  return v > best || (v == best && i < besti);
}

template <typename T>
__device__ __forceinline__ void dc_argmax(const RedGeom& g, i64* out_idx, T* out_val, const T* in) {
  typedef typename RedAcc<T>::type A;
  __shared__ A sval[32];
  __shared__ i64 sidx[32];
  const i64 o = blockIdx.x;
  const i64 base = dc_kept_offset(g, o, g.kin);
  A best = dc_lowest<A>();
  i64 besti = -1;
  for (i64 r = threadIdx.x; r < g.rnumel; r += blockDim.x) {
    const A v = (A)dc_load(in + base + dc_offset(r, g.nr, g.rsizes, g.rin));
    if (dc_arg_better(v, r, best, besti)) {
      best = v;
      besti = r;
    }
  }
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int off = 16; off > 0; off >>= 1) {
    const A v = __shfl_down_sync(0xffffffffu, best, off);
    const i64 i = __shfl_down_sync(0xffffffffu, besti, off);
    if (lane + off < 32 && dc_arg_better(v, i, best, besti)) {
      best = v;
      besti = i;
    }
  }
  if (lane == 0) {
    sval[warp] = best;
    sidx[warp] = besti;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned nwarps = (blockDim.x + 31u) >> 5;
    for (unsigned w = 1; w < nwarps; ++w) {
      if (dc_arg_better(sval[w], sidx[w], best, besti)) {
        best = sval[w];
        besti = sidx[w];
      }
    }
    const i64 ko = dc_kept_offset(g, o, g.kout);
    out_idx[ko] = besti;
    if (out_val != 0) dc_store(out_val + ko, best);
  }
}
