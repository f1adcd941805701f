// Causal attention of prefill chunks over the paged cache, tiled (FlashAttention-2's loop order,
// Dao 2023, over PagedAttention's block tables): a thread block per (request, query head, tile of
// kPrefillQueries consecutive query tokens). The block walks the keys the tile's last query sees
// in tiles of kPrefillKeys, loading each K/V tile from the cache into shared memory once for all
// its queries; each warp keeps kPrefillQueries / kPrefillWarps queries with their online softmax
// (kernels/softmax_math.h) and weighted sums of V in registers. Query i of a chunk that starts
// after `past` cached tokens sits at position past + i and sees keys 0..past + i.
#include "kernels/cuda/attention_common.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/softmax_math.h"

namespace pagedchat::cuda {

namespace {

constexpr int kQueriesPerWarp = kPrefillQueries / kPrefillWarps;

template <typename Kv>
__global__ void __launch_bounds__(kPrefillWarps * 32)
    prefill_attention_kernel(float* out, const float* q, const typename Kv::T* key_cache,
                             const typename Kv::T* value_cache, Shape s, int tiles_per_request) {
  __shared__ float ks[kPrefillKeys][kMaxHeadDim];
  __shared__ float vs[kPrefillKeys][kMaxHeadDim];
  const int r = blockIdx.x / tiles_per_request, first = (blockIdx.x % tiles_per_request) * kPrefillQueries;
  const int h = blockIdx.y;
  const int q0 = s.query_start_loc[r], qlen = s.query_start_loc[r + 1] - q0;
  if (first >= qlen) return;  // the whole block: this request has fewer tiles
  const int nq = min(kPrefillQueries, qlen - first);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int hd = s.head_dim, kvw = s.n_kv_heads * hd, kvh = h / (s.n_heads / s.n_kv_heads);
  const int past = s.seq_lens[r] - qlen;  // tokens cached before the chunk
  const int* table = s.block_tables + int64_t(r) * s.max_blocks_per_seq;

  float qv[kQueriesPerWarp][kPerLane], acc[kQueriesPerWarp][kPerLane];
  kernels::SoftmaxState st[kQueriesPerWarp];
#pragma unroll
  for (int a = 0; a < kQueriesPerWarp; ++a) {
    const int i = warp * kQueriesPerWarp + a;
    const float* qt = q + (int64_t(q0 + first + i) * s.n_heads + h) * hd;
    st[a] = kernels::softmax_empty();
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int d = lane + 32 * j;
      qv[a][j] = i < nq && d < hd ? qt[d] : 0.0f;
      acc[a][j] = 0.0f;
    }
  }
  const int end = past + first + nq;  // the tile's last query sees keys 0..end-1
  for (int k0 = 0; k0 < end; k0 += kPrefillKeys) {
    const int nk = min(kPrefillKeys, end - k0);
    for (int e = threadIdx.x; e < nk * hd; e += blockDim.x) {
      const int j = e / hd, d = e % hd, key = k0 + j;
      const int64_t slot = int64_t(table[key / s.block_size]) * s.block_size + key % s.block_size;
      const int64_t at = slot * kvw + int64_t(kvh) * hd + d;
      ks[j][d] = Kv::load(key_cache, at);
      vs[j][d] = Kv::load(value_cache, at);
    }
    __syncthreads();
#pragma unroll
    for (int a = 0; a < kQueriesPerWarp; ++a) {
      const int i = warp * kQueriesPerWarp + a;
      if (i >= nq) continue;                               // the same for the whole warp
      const int seen = min(nk, past + first + i - k0 + 1);  // keys of this tile the query sees
      for (int j = 0; j < seen; ++j) {
        float dot = 0.0f;
#pragma unroll
        for (int jj = 0; jj < kPerLane; ++jj) {
          const int d = lane + 32 * jj;
          if (d < hd) dot += qv[a][jj] * ks[j][d];
        }
        float w;
        const float rescale = kernels::softmax_add(&st[a], warp_sum(dot) * s.scale, &w);
#pragma unroll
        for (int jj = 0; jj < kPerLane; ++jj) {
          const int d = lane + 32 * jj;
          if (d < hd) acc[a][jj] = acc[a][jj] * rescale + w * vs[j][d];
        }
      }
    }
    __syncthreads();  // the tile is read before the next one overwrites it
  }
#pragma unroll
  for (int a = 0; a < kQueriesPerWarp; ++a) {
    const int i = warp * kQueriesPerWarp + a;
    if (i >= nq) continue;
    float* o = out + (int64_t(q0 + first + i) * s.n_heads + h) * hd;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int d = lane + 32 * j;
      if (d < hd) o[d] = kernels::softmax_finish(st[a], acc[a][j]);
    }
  }
}

}  // namespace

void prefill_attention(float* out, const float* q, const void* key_cache, const void* value_cache, kernels::KvDType type,
                       const kernels::AttentionMetadata& meta, const Shape& s, cudaStream_t stream) {
  const int tiles = (meta.max_query_len + kPrefillQueries - 1) / kPrefillQueries;
  const dim3 grid(unsigned(meta.num_requests) * unsigned(tiles), unsigned(s.n_heads));
  dispatch_kv(type, [&](auto kv) {
    using Kv = decltype(kv);
    prefill_attention_kernel<Kv><<<grid, kPrefillWarps * 32, 0, stream>>>(
        out, q, static_cast<const typename Kv::T*>(key_cache), static_cast<const typename Kv::T*>(value_cache), s, tiles);
  });
}

}  // namespace pagedchat::cuda
