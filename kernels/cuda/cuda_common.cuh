// Shared by the CUDA kernel files: KV-cache element access (one struct per KvDType, through the
// host/device conversions of kernels/float16_math.h, so what a GPU writes is bitwise what the CPU
// writes), block reductions and the dispatch on the cache type.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/float16_math.h"
#include "kernels/ops.h"

namespace pagedchat::cuda {

/// float32 cache elements.
struct KvF32 {
  using T = float;
  static __device__ __forceinline__ float load(const T* p, int64_t i) { return p[i]; }
  static __device__ __forceinline__ void store(T* p, int64_t i, float v) { p[i] = v; }
};

/// bfloat16 cache elements (uint16_t bits).
struct KvBF16 {
  using T = uint16_t;
  static __device__ __forceinline__ float load(const T* p, int64_t i) { return kernels::float_from_bf16(p[i]); }
  static __device__ __forceinline__ void store(T* p, int64_t i, float v) { p[i] = kernels::bf16_from_float(v); }
};

/// IEEE binary16 cache elements (uint16_t bits); loads through the hardware conversion (exact).
struct KvF16 {
  using T = uint16_t;
  static __device__ __forceinline__ float load(const T* p, int64_t i) { return __half2float(__ushort_as_half(p[i])); }
  static __device__ __forceinline__ void store(T* p, int64_t i, float v) { p[i] = kernels::fp16_from_float(v); }
};

/// Calls fn(KvX{}) for the struct of `type`.
template <typename F>
void dispatch_kv(kernels::KvDType type, const F& fn) {
  switch (type) {
    case kernels::KvDType::kFloat32: fn(KvF32{}); return;
    case kernels::KvDType::kBFloat16: fn(KvBF16{}); return;
    case kernels::KvDType::kFloat16: fn(KvF16{}); return;
    case kernels::KvDType::kQ8_0: return;  // refused by the engine before any kernel runs
  }
}

/// Sum of v over the warp, in every lane.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// Sum of v over the block (blockDim.x a multiple of 32, at most 1024), in every thread. Uses
/// 33 floats of shared memory; every thread must call it.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float s = lane < int(blockDim.x >> 5) ? partial[lane] : 0.0f;
    s = warp_sum(s);
    if (lane == 0) total = s;
  }
  __syncthreads();
  const float r = total;
  __syncthreads();  // partial/total may be reused by the next call
  return r;
}

/// Threads per block for row-wise kernels over `width` elements: a multiple of 32 in [32, 1024].
inline int row_threads(int width) {
  int t = 32;
  while (t < width && t < 1024) t *= 2;
  return t;
}

}  // namespace pagedchat::cuda
