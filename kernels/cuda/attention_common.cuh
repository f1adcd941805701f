// What the two paged-attention kernels share (attention.cu: per query token, partitioned for
// long contexts; prefill_attention.cu: tiles of query tokens): the shape of a call and the
// request that owns a token.
#pragma once

#include "kernels/cuda/cuda_kernels.h"

namespace pagedchat::cuda {

constexpr int kPerLane = kMaxHeadDim / 32;  // head elements per lane of a warp

/// A paged_attention call: the metadata's device arrays and sizes, the heads, the partitions of
/// the per-token kernel, and the score scale (AttentionSpec::scale, default 1 / sqrt(head_dim)).
struct Shape {
  const int* query_start_loc;
  const int* seq_lens;
  const int* block_tables;
  int max_blocks_per_seq, num_requests, block_size;
  int n_heads, n_kv_heads, head_dim, num_partitions;
  float scale;
};

// The request that owns token t: the last r with query_start_loc[r] <= t.
__device__ inline int request_of(const int* qsl, int num_requests, int t) {
  int lo = 0, hi = num_requests - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (qsl[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// Threads of the tiled kernel's blocks, and its query and key tile sizes.
constexpr int kPrefillWarps = 4, kPrefillQueries = 16, kPrefillKeys = 16;

/// The tiled causal attention of prefill_attention.cu for a step with query chunks (meta's
/// max_query_len > 1): same results as paged_attention's per-token kernel.
void prefill_attention(float* out, const float* q, const void* key_cache, const void* value_cache, kernels::KvDType type,
                       const kernels::AttentionMetadata& meta, const Shape& s, cudaStream_t stream);

}  // namespace pagedchat::cuda
