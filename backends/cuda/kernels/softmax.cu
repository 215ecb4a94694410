// softmax and log_softmax along one dimension (ATen's SoftMax.cu, the "persistent" idea without
// its vectorised fast paths): one block per row, three passes over the row in Acc<T>.
// RedGeom: the kept dimensions are the rows; the one reduced dimension is the softmax dimension.

template <typename T>
__device__ __forceinline__ void dc_softmax(const RedGeom& g, T* out, const T* in, i64 log) {
  typedef typename Acc<T>::type A;
  __shared__ A smem[32];
  const i64 o = blockIdx.x;
  const i64 ibase = dc_offset(o, g.nk, g.ksizes, g.kin);
  const i64 obase = dc_offset(o, g.nk, g.ksizes, g.kout);
  // a softmax dimension of size 1 was merged away (nr == 0): one element, stride irrelevant
  const i64 n = g.rnumel, istride = g.nr ? g.rin[0] : 0, ostride = g.nr ? g.rout[0] : 0;
  A m = dc_lowest<A>();
  for (i64 r = threadIdx.x; r < n; r += blockDim.x) m = DcMax()(m, dc_load(in + ibase + r * istride));
  m = dc_block_reduce(m, DcMax(), smem);
  A s = A(0);
  for (i64 r = threadIdx.x; r < n; r += blockDim.x) s += dc_exp(dc_load(in + ibase + r * istride) - m);
  s = dc_block_reduce(s, DcSum(), smem);
  if (log) {
    const A shift = m + dc_log(s);
    for (i64 r = threadIdx.x; r < n; r += blockDim.x) {
      dc_store(out + obase + r * ostride, dc_load(in + ibase + r * istride) - shift);
    }
  } else {
    const A inv = A(1) / s;
    for (i64 r = threadIdx.x; r < n; r += blockDim.x) {
      dc_store(out + obase + r * ostride, dc_exp(dc_load(in + ibase + r * istride) - m) * inv);
    }
  }
}
