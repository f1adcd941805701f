// Rotary embedding (interleaved or rotate-half pairs; the frequencies already hold any scaling)
// and the fused attention prologue on a stacked Q/K/V row (bias, Qwen3's q/k norms, RoPE, the
// cache write), a thread block per token, as vLLM's csrc/pos_encoding_kernels.cu. The angle, its
// cos/sin and the rotation are kernels/rope_math.h's; the norm kernels/norm_math.h's.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/norm_math.h"
#include "kernels/rope_math.h"

namespace pagedchat::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxPairs = kMaxHeadDim / 2;

// cos/sin of every pair at `pos` into shared memory (float64 angle, rounded once).
__device__ void rope_table(float* c, float* s, int pos, const double* inv_freq, int half) {
  for (int i = threadIdx.x; i < half; i += blockDim.x) kernels::rope_cos_sin(pos, inv_freq[i], &c[i], &s[i]);
  __syncthreads();
}

// Rotates pair p of `heads` heads of src into dst (dst may be src); called for every pair index.
__device__ __forceinline__ void rope_pair_at(float* dst, const float* src, int p, int hd, bool neox, const float* c,
                                             const float* s) {
  const int half = hd / 2, head = p / half, i = p % half;
  int i0, i1;
  kernels::rope_pair(i, hd, neox, &i0, &i1);
  float y0, y1;
  kernels::rope_rotate(src[head * hd + i0], src[head * hd + i1], c[i], s[i], &y0, &y1);
  dst[head * hd + i0] = y0;
  dst[head * hd + i1] = y1;
}

__global__ void rotary_kernel(float* q, float* k, const int* positions, int n_heads, int n_kv_heads, int hd, bool neox,
                              const double* inv_freq) {
  __shared__ float c[kMaxPairs], s[kMaxPairs];
  const int t = blockIdx.x, half = hd / 2;
  rope_table(c, s, positions[t], inv_freq, half);
  float* qt = q + int64_t(t) * n_heads * hd;
  float* kt = k + int64_t(t) * n_kv_heads * hd;
  for (int p = threadIdx.x; p < n_heads * half; p += blockDim.x) rope_pair_at(qt, qt, p, hd, neox, c, s);
  for (int p = threadIdx.x; p < n_kv_heads * half; p += blockDim.x) rope_pair_at(kt, kt, p, hd, neox, c, s);
}

// RMSNorm of `heads` [hd] vectors at x, a warp per head.
__device__ void norm_heads(float* x, const float* weight, int heads, int hd, float eps) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int h = warp; h < heads; h += warps) {
    float* v = x + h * hd;
    float ss = 0.0f;
    for (int i = lane; i < hd; i += 32) ss += v[i] * v[i];
    const float scale = kernels::rms_inv_scale(warp_sum(ss), hd, eps);
    for (int i = lane; i < hd; i += 32) v[i] = kernels::rms_norm_value(v[i], scale, weight[i]);
  }
}

template <typename Kv>
__global__ void qkv_rope_and_cache_kernel(float* q, float* qkv, const int* positions, typename Kv::T* key_cache,
                                          typename Kv::T* value_cache, const int64_t* slots, kernels::QkvSpec s) {
  __shared__ float c[kMaxPairs], sn[kMaxPairs];
  const int t = blockIdx.x, hd = s.head_dim, half = hd / 2;
  const int qw = s.n_heads * hd, kvw = s.n_kv_heads * hd, w = qw + 2 * kvw;  // QkvSpec's widths (host functions)
  float* row = qkv + int64_t(t) * w;
  if (s.bias) {
    for (int i = threadIdx.x; i < w; i += blockDim.x) row[i] += s.bias[i];
    __syncthreads();
  }
  if (s.q_norm) {
    norm_heads(row, s.q_norm, s.n_heads, hd, s.norm_eps);
    norm_heads(row + qw, s.k_norm, s.n_kv_heads, hd, s.norm_eps);
    __syncthreads();
  }
  rope_table(c, sn, positions[t], s.rope.inv_freq, half);
  for (int p = threadIdx.x; p < s.n_heads * half; p += blockDim.x)
    rope_pair_at(q + int64_t(t) * qw, row, p, hd, s.rope.neox, c, sn);
  const int64_t slot = slots[t];
  if (slot < 0) return;  // padding
  // RoPE(K) in place in the row (each pair by one thread), then K and V to the cache.
  for (int p = threadIdx.x; p < s.n_kv_heads * half; p += blockDim.x) rope_pair_at(row + qw, row + qw, p, hd, s.rope.neox, c, sn);
  __syncthreads();
  for (int i = threadIdx.x; i < kvw; i += blockDim.x) {
    Kv::store(key_cache, slot * kvw + i, row[qw + i]);
    Kv::store(value_cache, slot * kvw + i, row[qw + kvw + i]);
  }
}

}  // namespace

void rotary_embedding(float* q, float* k, const int* positions, int T, int n_heads, int n_kv_heads,
                      const kernels::RopeSpec& rope, cudaStream_t stream) {
  if (T <= 0) return;
  rotary_kernel<<<T, kThreads, 0, stream>>>(q, k, positions, n_heads, n_kv_heads, rope.head_dim, rope.neox, rope.inv_freq);
}

void qkv_rope_and_cache(float* q, float* qkv, const int* positions, void* key_cache, void* value_cache,
                        kernels::KvDType type, const int64_t* slot_mapping, int T, const kernels::QkvSpec& spec,
                        cudaStream_t stream) {
  if (T <= 0) return;
  dispatch_kv(type, [&](auto kv) {
    using Kv = decltype(kv);
    qkv_rope_and_cache_kernel<Kv><<<T, kThreads, 0, stream>>>(q, qkv, positions, static_cast<typename Kv::T*>(key_cache),
                                                              static_cast<typename Kv::T*>(value_cache), slot_mapping, spec);
  });
}

}  // namespace pagedchat::cuda
