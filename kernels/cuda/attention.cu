// Paged attention over the KV cache (Kwon et al. 2023, "Efficient Memory Management for Large
// Language Model Serving with PagedAttention"; vLLM's csrc/attention/ v1 and v2): one thread block
// per (query token, query head, context partition of kAttentionPartition tokens). Each warp takes
// every kWarps-th key of the partition, finds its slot through the request's block table, and
// keeps an online softmax (kernels/softmax_math.h) of its scores with the weighted sum of V in
// registers (head_dim / 32 values per lane); the warps are merged in shared memory. With one
// partition (v1) the result is written directly; with several (v2, long contexts) each partition
// writes its (max, sum, weighted sum) and a reduce kernel merges them. A token at position p of its
// request attends to keys 0..p (causal). Steps with prefill chunks (max_query_len > 1) go to the
// tiled kernel of prefill_attention.cu instead (the decodes of such a step too).
#include "kernels/cuda/attention_common.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/softmax_math.h"

#include <algorithm>

namespace pagedchat::cuda {

namespace {

constexpr int kWarps = 4;

// Scratch layout for v2: acc [T, n_heads, partitions, head_dim], then (max, sum) [T, n_heads, partitions, 2].
__device__ __forceinline__ int64_t part_index(const Shape& s, int t, int h, int p) {
  return (int64_t(t) * s.n_heads + h) * s.num_partitions + p;
}

template <typename Kv>
__global__ void __launch_bounds__(kWarps * 32)
    paged_attention_kernel(float* out, float* scratch, const float* q, const typename Kv::T* key_cache,
                           const typename Kv::T* value_cache, Shape s, int num_tokens) {
  __shared__ float sm_max[kWarps], sm_sum[kWarps];
  __shared__ float sm_acc[kWarps][kMaxHeadDim];
  const int t = blockIdx.x, h = blockIdx.y, p = blockIdx.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int hd = s.head_dim, kvw = s.n_kv_heads * hd;
  const int r = request_of(s.query_start_loc, s.num_requests, t);
  const int q0 = s.query_start_loc[r], qlen = s.query_start_loc[r + 1] - q0;
  const int ctx = s.seq_lens[r] - qlen + (t - q0) + 1;  // keys 0..ctx-1
  const int begin = p * kAttentionPartition;
  const int end = min(ctx, begin + kAttentionPartition);
  const int kvh = h / (s.n_heads / s.n_kv_heads);
  const int* table = s.block_tables + int64_t(r) * s.max_blocks_per_seq;

  float qv[kPerLane], acc[kPerLane];
  const float* qt = q + (int64_t(t) * s.n_heads + h) * hd;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int d = lane + 32 * j;
    qv[j] = d < hd ? qt[d] : 0.0f;
    acc[j] = 0.0f;
  }
  kernels::SoftmaxState st = kernels::softmax_empty();
  for (int key = begin + warp; key < end; key += kWarps) {
    const int64_t slot = int64_t(table[key / s.block_size]) * s.block_size + key % s.block_size;
    const int64_t base = slot * kvw + int64_t(kvh) * hd;
    float dot = 0.0f;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int d = lane + 32 * j;
      if (d < hd) dot += qv[j] * Kv::load(key_cache, base + d);
    }
    const float score = warp_sum(dot) * s.scale;
    float w;
    const float rescale = kernels::softmax_add(&st, score, &w);
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int d = lane + 32 * j;
      if (d < hd) acc[j] = acc[j] * rescale + w * Kv::load(value_cache, base + d);
    }
  }
  if (lane == 0) {
    sm_max[warp] = st.max;
    sm_sum[warp] = st.sum;
  }
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int d = lane + 32 * j;
    if (d < hd) sm_acc[warp][d] = acc[j];
  }
  __syncthreads();
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    kernels::SoftmaxState m{sm_max[0], sm_sum[0]};
    float a = sm_acc[0][d];
    for (int w = 1; w < kWarps; ++w) {
      float ra, rb;
      kernels::softmax_merge(&m, kernels::SoftmaxState{sm_max[w], sm_sum[w]}, &ra, &rb);
      a = a * ra + sm_acc[w][d] * rb;
    }
    if (s.num_partitions == 1) {
      out[(int64_t(t) * s.n_heads + h) * hd + d] = kernels::softmax_finish(m, a);
    } else {
      const int64_t i = part_index(s, t, h, p);
      scratch[i * hd + d] = a;
      if (d == 0) {
        float* ml = scratch + int64_t(num_tokens) * s.n_heads * s.num_partitions * hd;
        ml[2 * i] = m.max;
        ml[2 * i + 1] = m.sum;
      }
    }
  }
}

// v2's reduce: merges the partitions of (t, h).
__global__ void paged_attention_reduce_kernel(float* out, const float* scratch, Shape s, int num_tokens) {
  const int t = blockIdx.x, h = blockIdx.y, hd = s.head_dim;
  const float* ml = scratch + int64_t(num_tokens) * s.n_heads * s.num_partitions * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    kernels::SoftmaxState m = kernels::softmax_empty();
    float a = 0.0f;
    for (int p = 0; p < s.num_partitions; ++p) {
      const int64_t i = part_index(s, t, h, p);
      float ra, rb;
      kernels::softmax_merge(&m, kernels::SoftmaxState{ml[2 * i], ml[2 * i + 1]}, &ra, &rb);
      a = a * ra + scratch[i * hd + d] * rb;
    }
    out[(int64_t(t) * s.n_heads + h) * hd + d] = kernels::softmax_finish(m, a);
  }
}

int partitions(const kernels::AttentionMetadata& m) {
  const int longest = m.max_seq_len > 0 ? m.max_seq_len : m.max_blocks_per_seq * m.block_size;
  return longest <= kAttentionPartition ? 1 : (longest + kAttentionPartition - 1) / kAttentionPartition;
}

}  // namespace

int64_t attention_scratch_floats(const kernels::AttentionMetadata& meta, int n_heads, int head_dim) {
  // The partitioned path runs for decode-only steps, whose tokens are at most their requests; so
  // the profiling pass (max_num_seqs requests, max_model_len contexts) sizes it for every step.
  const int np = partitions(meta);
  return np == 1 ? 0 : int64_t(std::max(meta.num_requests, meta.num_tokens)) * n_heads * np * (head_dim + 2);
}

void paged_attention(float* out, const float* q, const void* key_cache, const void* value_cache, kernels::KvDType type,
                     const kernels::AttentionMetadata& meta, int n_heads, int n_kv_heads, int head_dim, float scale,
                     float* scratch, cudaStream_t stream) {
  const int T = meta.num_tokens;
  if (T <= 0 || n_heads <= 0) return;
  Shape s{meta.query_start_loc, meta.seq_lens, meta.block_tables, meta.max_blocks_per_seq, meta.num_requests,
          meta.block_size, n_heads, n_kv_heads, head_dim, partitions(meta), scale};
  if (meta.max_query_len > 1) {  // prefill chunks in the step: the tiled kernel, one partition
    s.num_partitions = 1;
    prefill_attention(out, q, key_cache, value_cache, type, meta, s, stream);
    return;
  }
  const dim3 grid(unsigned(T), unsigned(n_heads), unsigned(s.num_partitions));
  dispatch_kv(type, [&](auto kv) {
    using Kv = decltype(kv);
    paged_attention_kernel<Kv><<<grid, kWarps * 32, 0, stream>>>(out, scratch, q, static_cast<const typename Kv::T*>(key_cache),
                                                                 static_cast<const typename Kv::T*>(value_cache), s, T);
  });
  if (s.num_partitions > 1)
    paged_attention_reduce_kernel<<<dim3(unsigned(T), unsigned(n_heads)), 128, 0, stream>>>(out, scratch, s, T);
}

}  // namespace pagedchat::cuda
