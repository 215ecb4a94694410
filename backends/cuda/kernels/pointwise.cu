// Pointwise kernels over strided, broadcast operands (ATen's TensorIterator loops on CUDA).
//
// One thread per element in a grid-stride loop; offsets come from PwGeom (operand 0 = output).
// The host casts inputs to the op's compute type first, so each op is a template over one type
// T (its arithmetic in Acc<T>); the output type O is T, or bool for comparisons.

template <typename O, typename T, typename F>
__device__ __forceinline__ void dc_unary_loop(const PwGeom& g, O* out, const T* a, F f) {
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += stride) {
    i64 off[2];
    dc_offsets<2>(i, g.ndim, g.sizes, g.strides, off);
    dc_store(out + off[0], f(dc_load(a + off[1])));
  }
}

template <typename O, typename T, typename F>
__device__ __forceinline__ void dc_binary_loop(const PwGeom& g, O* out, const T* a, const T* b, F f) {
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += stride) {
    i64 off[3];
    dc_offsets<3>(i, g.ndim, g.sizes, g.strides, off);
    dc_store(out + off[0], f(dc_load(a + off[1]), dc_load(b + off[2])));
  }
}

// --- functors: C is the compute type Acc<T> -----------------------------------------------------
template <typename C> struct Identity { __device__ C operator()(C x) const { return x; } };
template <typename C> struct Neg { __device__ C operator()(C x) const { return -x; } };
template <typename C> struct Abs { __device__ C operator()(C x) const { return dc_abs(x); } };
template <typename C> struct Exp { __device__ C operator()(C x) const { return dc_exp(x); } };
template <typename C> struct Log { __device__ C operator()(C x) const { return dc_log(x); } };
template <typename C> struct Sqrt { __device__ C operator()(C x) const { return dc_sqrt(x); } };
template <typename C> struct Sin { __device__ C operator()(C x) const { return dc_sin(x); } };
template <typename C> struct Cos { __device__ C operator()(C x) const { return dc_cos(x); } };
template <typename C> struct Tanh { __device__ C operator()(C x) const { return dc_tanh(x); } };
template <typename C> struct Sigmoid {
  __device__ C operator()(C x) const { return C(1) / (C(1) + dc_exp(-x)); }
};
// relu is clamp_min(x, 0): NaN stays NaN
template <typename C> struct Relu {
  __device__ C operator()(C x) const { return (dc_isnan(x) || x > C(0)) ? x : C(0); }
};
// clamp(x, lo, hi) as ATen's clamp_scalar: NaN propagates; flags say which bounds exist
template <typename C> struct Clamp {
  C lo, hi;
  i64 flags;
  __device__ C operator()(C x) const {
    if (dc_isnan(x)) return x;
    if ((flags & 1) && x < lo) x = lo;
    if ((flags & 2) && x > hi) x = hi;
    return x;
  }
};

// integer power as c10's powi: negative exponents give 1, -1 or 0
template <typename C> __device__ __forceinline__ C dc_powi(C a, C b) {
  if (b < C(0)) {
    if (a == C(1)) return C(1);
    if (a == C(-1)) return (b % C(2)) == C(0) ? C(1) : C(-1);
    return C(0);
  }
  C r = C(1);
  while (b) {
    if (b & C(1)) r = r * a;
    b = b / C(2);
    a = a * a;
  }
  return r;
}
template <typename C> __device__ __forceinline__ C dc_pow_any(C a, C b) { return dc_powi(a, b); }
__device__ __forceinline__ float dc_pow_any(float a, float b) { return dc_pow(a, b); }
__device__ __forceinline__ double dc_pow_any(double a, double b) { return dc_pow(a, b); }

template <typename C> struct AddS { C s; __device__ C operator()(C x) const { return x + s; } };
template <typename C> struct MulS { C s; __device__ C operator()(C x) const { return x * s; } };
template <typename C> struct DivS { C s; __device__ C operator()(C x) const { return x / s; } };
template <typename C> struct PowS { C s; __device__ C operator()(C x) const { return dc_pow_any(x, s); } };
template <typename C> struct RPowS { C s; __device__ C operator()(C x) const { return dc_pow_any(s, x); } };
template <typename C> struct EqS { C s; __device__ b8 operator()(C x) const { return x == s; } };
template <typename C> struct NeS { C s; __device__ b8 operator()(C x) const { return x != s; } };
template <typename C> struct LtS { C s; __device__ b8 operator()(C x) const { return x < s; } };
template <typename C> struct LeS { C s; __device__ b8 operator()(C x) const { return x <= s; } };
template <typename C> struct GtS { C s; __device__ b8 operator()(C x) const { return x > s; } };
template <typename C> struct GeS { C s; __device__ b8 operator()(C x) const { return x >= s; } };

template <typename C> struct Add { C alpha; __device__ C operator()(C a, C b) const { return a + alpha * b; } };
template <typename C> struct Mul { __device__ C operator()(C a, C b) const { return a * b; } };
template <typename C> struct Div { __device__ C operator()(C a, C b) const { return a / b; } };
template <typename C> struct Pow { __device__ C operator()(C a, C b) const { return dc_pow_any(a, b); } };
template <typename C> struct SqDiff { __device__ C operator()(C a, C b) const { C d = a - b; return d * d; } };
template <typename C> struct Eq { __device__ b8 operator()(C a, C b) const { return a == b; } };
template <typename C> struct Ne { __device__ b8 operator()(C a, C b) const { return a != b; } };
template <typename C> struct Lt { __device__ b8 operator()(C a, C b) const { return a < b; } };
template <typename C> struct Le { __device__ b8 operator()(C a, C b) const { return a <= b; } };
template <typename C> struct Gt { __device__ b8 operator()(C a, C b) const { return a > b; } };
template <typename C> struct Ge { __device__ b8 operator()(C a, C b) const { return a >= b; } };

template <typename C> struct BitAnd { __device__ C operator()(C a, C b) const { return a & b; } };

// +inf and a quiet NaN of a floating compute type (dc_lowest is -inf)
template <typename C> __device__ __forceinline__ C dc_inf() { return -dc_lowest<C>(); }
template <typename C> __device__ __forceinline__ C dc_nan() { return dc_inf<C>() - dc_inf<C>(); }

// xlogy: NaN where y is NaN, 0 where x is 0, else x * log(y) (BinaryMiscOpsKernels.cu)
template <typename C> struct Xlogy {
  __device__ C operator()(C x, C y) const {
    if (dc_isnan(y)) return y;
    return x == C(0) ? C(0) : x * dc_log(y);
  }
};
// logit: x clamped to [eps, 1 - eps] unless eps is negative (none given); log(x / (1 - x)), +inf at 1
template <typename C> struct Logit {
  C eps;
  __device__ C operator()(C x) const {
    if (eps >= C(0)) {
      const C hi = C(1) - eps;
      x = x < eps ? eps : (x > hi ? hi : x);
    }
    return x == C(1) ? dc_inf<C>() : dc_log(x / (C(1) - x));
  }
};
// logit_backward: dy / (x (1 - x)), dy * inf at 0 and 1; outside [eps, 1 - eps] 0, outside [0, 1] NaN without eps
template <typename C> struct LogitBackward {
  C eps;
  __device__ C operator()(C dy, C x) const {
    const bool no_eps = eps < C(0);
    const C lo = no_eps ? C(0) : eps;
    const C hi = C(1) - lo;
    if (x < lo || x > hi) return no_eps ? dc_nan<C>() : C(0);
    return (x == C(0) || x == C(1)) ? dy * dc_inf<C>() : dy / (x * (C(1) - x));
  }
};

// bool arithmetic as ATen's: add is "or", mul is "and" (the result converts back with != 0)
template <> struct Add<b8> { b8 alpha; __device__ b8 operator()(b8 a, b8 b) const { return a || (alpha && b); } };
template <> struct Mul<b8> { __device__ b8 operator()(b8 a, b8 b) const { return a && b; } };

// --- kernels (instantiated per dtype by the wrappers sources.py renders) --------------------------
template <typename T>
__device__ __forceinline__ void dc_fill(const PwGeom& g, T* out, double sd, i64 si) {
  typedef typename Acc<T>::type C;
  const C v = dc_scalar<C>(sd, si);
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += stride) {
    i64 off[1];
    dc_offsets<1>(i, g.ndim, g.sizes, g.strides, off);
    dc_store(out + off[0], v);
  }
}

template <typename T, typename S>
__device__ __forceinline__ void dc_cast(const PwGeom& g, T* out, const S* a) {
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += stride) {
    i64 off[2];
    dc_offsets<2>(i, g.ndim, g.sizes, g.strides, off);
    out[off[0]] = Cvt<T>::from(a[off[1]]);
  }
}

template <typename T, typename F>
__device__ __forceinline__ void dc_unary(const PwGeom& g, T* out, const T* a) {
  dc_unary_loop(g, out, a, F());
}

template <typename O, typename T, template <typename> class F>
__device__ __forceinline__ void dc_scalar_op(const PwGeom& g, O* out, const T* a, double sd, i64 si) {
  typedef typename Acc<T>::type C;
  F<C> f;
  f.s = dc_scalar_as<T>(sd, si);
  dc_unary_loop(g, out, a, f);
}

template <typename T>
__device__ __forceinline__ void dc_clamp(const PwGeom& g, T* out, const T* a, double lod, i64 loi, double hid,
                                         i64 hii, i64 flags) {
  typedef typename Acc<T>::type C;
  Clamp<C> f;
  f.lo = dc_scalar_as<T>(lod, loi);
  f.hi = dc_scalar_as<T>(hid, hii);
  f.flags = flags;
  dc_unary_loop(g, out, a, f);
}

template <typename O, typename T, typename F>
__device__ __forceinline__ void dc_binary(const PwGeom& g, O* out, const T* a, const T* b, F f) {
  dc_binary_loop(g, out, a, b, f);
}

template <typename T>
__device__ __forceinline__ void dc_where(const PwGeom& g, T* out, const b8* c, const T* a, const T* b) {
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += stride) {
    i64 off[4];
    dc_offsets<4>(i, g.ndim, g.sizes, g.strides, off);
    out[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
  }
}
