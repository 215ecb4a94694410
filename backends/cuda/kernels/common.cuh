// dispatchcore CUDA backend: types, geometry and block reductions shared by every kernel family.
//
// Every module is one translation unit rendered by sources.py: this header, one family file
// (pointwise.cu, reduce.cu, ...), then extern "C" wrappers that instantiate the family's
// templates for one dtype. Kernel parameters are 8 bytes each (pointers, long long, double),
// after an optional geometry struct passed by value first, so the host packs them without padding.
#pragma once
#include <cuda_fp16.h>

#define DC_MAX_DIMS 8
#define DC_THREADS 256

typedef long long i64;
typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef __half f16;
typedef float f32;
typedef double f64;
typedef bool b8;

// Pointwise geometry: the (coalesced) iteration shape and each operand's element strides;
// operand 0 is the output. Broadcast dimensions have stride 0.
struct PwGeom {
  i64 ndim;
  i64 numel;
  i64 sizes[DC_MAX_DIMS];
  i64 strides[4][DC_MAX_DIMS];
};

// Reduction geometry: kept dimensions (one output element each) and reduced dimensions, with
// input and output element strides for both (the output's reduced strides matter for softmax).
struct RedGeom {
  i64 nk;      // kept dimensions (after merging), and their element count = the number of outputs
  i64 nr;      // reduced dimensions (after merging; size-1 dimensions are dropped, so it may be 0)
  i64 knumel;
  i64 rnumel;  // elements reduced into each output
  i64 ksizes[DC_MAX_DIMS];
  i64 kin[DC_MAX_DIMS];
  i64 kout[DC_MAX_DIMS];
  i64 rsizes[DC_MAX_DIMS];
  i64 rin[DC_MAX_DIMS];
  i64 rout[DC_MAX_DIMS];
};

// Element offsets of linear index i (row-major over sizes) for N operands' strides at once: one
// division per dimension, shared by the operands. The outermost dimension takes the remainder,
// so a coalesced 1-d iteration does no division at all.
template <int N>
__device__ __forceinline__ void dc_offsets(i64 i, i64 ndim, const i64* sizes, const i64 (*strides)[DC_MAX_DIMS],
                                           i64* off) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll 1
  for (i64 d = ndim - 1; d > 0; --d) {
    const i64 s = sizes[d];
    const i64 q = i / s;
    const i64 c = i - q * s;
    i = q;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += c * strides[k][d];
  }
  if (ndim > 0) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += i * strides[k][0];
  }
}

// The same for one operand whose strides are a plain array.
__device__ __forceinline__ i64 dc_offset(i64 i, i64 ndim, const i64* sizes, const i64* strides) {
  i64 off = 0;
#pragma unroll 1
  for (i64 d = ndim - 1; d > 0; --d) {
    const i64 s = sizes[d];
    const i64 q = i / s;
    off += (i - q * s) * strides[d];
    i = q;
  }
  return ndim > 0 ? off + i * strides[0] : 0;
}

// The type arithmetic happens in: float for half (as ATen's acc_type on CUDA), the type itself otherwise.
template <typename T> struct Acc { typedef T type; };
template <> struct Acc<f16> { typedef float type; };

template <typename T> __device__ __forceinline__ typename Acc<T>::type dc_load(const T* p) { return *p; }
template <> __device__ __forceinline__ float dc_load<f16>(const f16* p) { return __half2float(*p); }

// Conversions as c10::static_cast_with_inter_type: to bool is != 0, floating to uint8 goes
// through int64, half goes through float.
template <typename To> struct Cvt {
  template <typename From> __device__ __forceinline__ static To from(From v) { return static_cast<To>(v); }
  __device__ __forceinline__ static To from(f16 v) { return static_cast<To>(__half2float(v)); }
};
template <> struct Cvt<b8> {
  template <typename From> __device__ __forceinline__ static b8 from(From v) { return v != From(0); }
  __device__ __forceinline__ static b8 from(f16 v) { return __half2float(v) != 0.0f; }
};
template <> struct Cvt<u8> {
  template <typename From> __device__ __forceinline__ static u8 from(From v) { return static_cast<u8>(v); }
  __device__ __forceinline__ static u8 from(float v) { return static_cast<u8>(static_cast<i64>(v)); }
  __device__ __forceinline__ static u8 from(double v) { return static_cast<u8>(static_cast<i64>(v)); }
  __device__ __forceinline__ static u8 from(f16 v) { return static_cast<u8>(static_cast<i64>(__half2float(v))); }
};
template <> struct Cvt<f16> {
  template <typename From> __device__ __forceinline__ static f16 from(From v) {
    return __float2half(static_cast<float>(v));
  }
  __device__ __forceinline__ static f16 from(double v) { return __double2half(v); }
  __device__ __forceinline__ static f16 from(f16 v) { return v; }
};

template <typename T, typename V> __device__ __forceinline__ void dc_store(T* p, V v) { *p = Cvt<T>::from(v); }

// A Scalar argument arrives as (double, long long); integral and bool types read the integer.
template <typename C> __device__ __forceinline__ C dc_scalar(double d, i64 i) { return static_cast<C>(i); }
template <> __device__ __forceinline__ float dc_scalar<float>(double d, i64 i) { return static_cast<float>(d); }
template <> __device__ __forceinline__ double dc_scalar<double>(double d, i64 i) { return d; }
template <> __device__ __forceinline__ b8 dc_scalar<b8>(double d, i64 i) { return i != 0; }

// A Scalar operand of a tensor of type T: first converted to T (TensorIterator casts a wrapped
// number to the common dtype), then read in Acc<T>. Only half differs from dc_scalar.
template <typename T> __device__ __forceinline__ typename Acc<T>::type dc_scalar_as(double d, i64 i) {
  return dc_scalar<typename Acc<T>::type>(d, i);
}
template <> __device__ __forceinline__ float dc_scalar_as<f16>(double d, i64 i) { return __half2float(__double2half(d)); }

// Math overloads: the float versions call the single-precision functions.
__device__ __forceinline__ float dc_exp(float x) { return expf(x); }
__device__ __forceinline__ double dc_exp(double x) { return exp(x); }
__device__ __forceinline__ float dc_log(float x) { return logf(x); }
__device__ __forceinline__ double dc_log(double x) { return log(x); }
__device__ __forceinline__ float dc_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double dc_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float dc_sin(float x) { return sinf(x); }
__device__ __forceinline__ double dc_sin(double x) { return sin(x); }
__device__ __forceinline__ float dc_cos(float x) { return cosf(x); }
__device__ __forceinline__ double dc_cos(double x) { return cos(x); }
__device__ __forceinline__ float dc_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double dc_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float dc_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double dc_pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ float dc_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double dc_abs(double x) { return fabs(x); }
template <typename T> __device__ __forceinline__ T dc_abs(T x) { return x < T(0) ? T(-x) : x; }
__device__ __forceinline__ u8 dc_abs(u8 x) { return x; }
__device__ __forceinline__ b8 dc_abs(b8 x) { return x; }

template <typename T> __device__ __forceinline__ bool dc_isnan(T x) { return false; }
__device__ __forceinline__ bool dc_isnan(float x) { return x != x; }
__device__ __forceinline__ bool dc_isnan(double x) { return x != x; }

// Lowest value of a type: the identity of max reductions.
template <typename T> __device__ __forceinline__ T dc_lowest();
template <> __device__ __forceinline__ float dc_lowest<float>() { return -__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double dc_lowest<double>() { return -__longlong_as_double(0x7ff0000000000000LL); }
template <> __device__ __forceinline__ i64 dc_lowest<i64>() { return (i64)0x8000000000000000ULL; }
template <> __device__ __forceinline__ i32 dc_lowest<i32>() { return (i32)0x80000000U; }
template <> __device__ __forceinline__ i16 dc_lowest<i16>() { return (i16)-32768; }
template <> __device__ __forceinline__ i8 dc_lowest<i8>() { return (i8)-128; }
template <> __device__ __forceinline__ u8 dc_lowest<u8>() { return (u8)0; }
template <> __device__ __forceinline__ b8 dc_lowest<b8>() { return false; }

// Block-wide reductions over DC_THREADS threads: warp shuffles, then one value per warp in
// shared memory. Every thread of the block must call them; all get the result.
template <typename A, typename Op>
__device__ __forceinline__ A dc_block_reduce(A v, Op op, A* smem) {
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads();  // smem may still be read by a previous call
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  const unsigned nwarps = (blockDim.x + 31u) >> 5;
  v = threadIdx.x < nwarps ? smem[threadIdx.x] : smem[0];
  if (warp == 0) {
    for (int o = 16; o > 0; o >>= 1) {
      A other = __shfl_down_sync(0xffffffffu, v, o);
      if (lane + o < nwarps) v = op(v, other);
    }
    if (lane == 0) smem[0] = v;
  }
  __syncthreads();
  return smem[0];
}

struct DcSum {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};
// max that propagates NaN, as torch's max reductions do
struct DcMax {
  template <typename A> __device__ __forceinline__ A operator()(A a, A b) const {
    return (dc_isnan(a) || a > b) ? a : b;
  }
};
