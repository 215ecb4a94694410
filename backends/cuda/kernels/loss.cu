// nll_loss_forward (ATen's Loss.cu nll_loss_forward_reduce_cuda_kernel_2d and the no-reduction
// kernel): input [n, C] (or [C] with one target), int64 targets, optional per-class weights.
// An out-of-range target is reported through *bad (the host raises), not a device assert.

template <typename T>
__device__ __forceinline__ void dc_nll_loss(T* out, T* total_weight, const T* in, const i64* target, const T* weight,
                                            i64* bad, i64 n, i64 classes, i64 in_s0, i64 in_s1, i64 t_s0,
                                            i64 w_s0, i64 out_s0, i64 reduction, i64 ignore_index) {
  typedef typename Acc<T>::type A;
  if (reduction == 0) {  // one loss per sample, any number of blocks
    const i64 stride = (i64)blockDim.x * gridDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
      const i64 t = target[i * t_s0];
      A v = A(0);
      if (t != ignore_index) {
        if (t < 0 || t >= classes) {
          *bad = t;
        } else {
          const A w = weight != 0 ? (A)dc_load(weight + t * w_s0) : A(1);
          v = -(A)dc_load(in + i * in_s0 + t * in_s1) * w;
        }
      }
      dc_store(out + i * out_s0, v);
    }
    return;
  }
  __shared__ A smem[32];
  A loss = A(0), total = A(0);
  for (i64 i = threadIdx.x; i < n; i += blockDim.x) {  // a single block
    const i64 t = target[i * t_s0];
    if (t == ignore_index) continue;
    if (t < 0 || t >= classes) {
      *bad = t;
      continue;
    }
    const A w = weight != 0 ? (A)dc_load(weight + t * w_s0) : A(1);
    loss -= (A)dc_load(in + i * in_s0 + t * in_s1) * w;
    total += w;
  }
  loss = dc_block_reduce(loss, DcSum(), smem);
  total = dc_block_reduce(total, DcSum(), smem);
  if (threadIdx.x == 0) {
    if (reduction == 1) loss = loss / total;  // mean: 0/0 is nan when every target is ignored
    dc_store(out, loss);
    dc_store(total_weight, total);
  }
}
