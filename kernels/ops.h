// The op interface the model forward is written against. Two implementations: cpu/ (always) and
// cuda/ (when built with nvcc; filled by the CUDA backend issue). All tensors are dense row-major
// float32; "T" is the number of tokens in the flattened batch (prefill and decode tokens mixed).
// Formulas follow llama2.c's run.c (karpathy/llama2.c) and vLLM's csrc/ kernels.
#pragma once

#include <cstdint>
#include <memory>

namespace pagedchat::kernels {

/// Where each token of a flattened batch reads its context from the paged KV cache.
/// Request r owns tokens [query_start_loc[r], query_start_loc[r+1]); after this step its context is
/// seq_lens[r] tokens long, so its token j (0-based in the step) sits at position
/// seq_lens[r] - query_len_r + j and attends to positions 0..that (causal).
struct AttentionMetadata {
  const int* query_start_loc = nullptr;  ///< [num_requests + 1]
  const int* seq_lens = nullptr;         ///< [num_requests]
  const int* block_tables = nullptr;     ///< [num_requests * max_blocks_per_seq], block ids
  int max_blocks_per_seq = 0;
  int num_requests = 0;
  int block_size = 0;                    ///< tokens per KV block
};

/// The op interface. Methods never throw; callers validate shapes.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual int num_threads() const = 0;

  /// out[T, dim] = table[ids[t], :].
  virtual void embedding(float* out, const float* table, const int* ids, int T, int dim) = 0;
  /// RMSNorm: out = weight * x / sqrt(mean(x^2) + eps), per row of x[T, dim].
  virtual void rms_norm(float* out, const float* x, const float* weight, int T, int dim, float eps) = 0;
  /// out[T, n] = x[T, k] · w[n, k]^T. Each output element is reduced in the same order whatever T
  /// is, so a request's results do not depend on what else is in the batch (batch invariance).
  virtual void matmul(float* out, const float* x, const float* w, int T, int n, int k) = 0;
  /// Rotary embedding (RoFormer, Su et al. 2021): pair i of every head rotates by angle
  /// pos * theta^(-2i/head_dim). Interleaved pairs (x[2i], x[2i+1]) as llama2.c and Meta's Llama,
  /// or with `neox` the halves (x[i], x[i + head_dim/2]) as Hugging Face checkpoints.
  /// q: [T, n_heads*head_dim], k: [T, n_kv_heads*head_dim], in place.
  virtual void rotary_embedding(float* q, float* k, const int* positions, int T, int n_heads, int n_kv_heads,
                                int head_dim, float theta, bool neox) = 0;
  /// Writes k, v [T, kv_width] into the caches [num_slots, kv_width] at slot_mapping[t]
  /// (slot = block_id * block_size + offset); a negative slot marks padding and is skipped.
  virtual void reshape_and_cache(const float* k, const float* v, float* key_cache, float* value_cache,
                                 const int64_t* slot_mapping, int T, int kv_width) = 0;
  /// Causal grouped-query attention over the paged cache (softmax(q·k / sqrt(head_dim)) · v); query
  /// head h reads KV head h / (n_heads / n_kv_heads). out, q: [T, n_heads*head_dim].
  virtual void paged_attention(float* out, const float* q, const float* key_cache, const float* value_cache,
                               const AttentionMetadata& meta, int n_heads, int n_kv_heads, int head_dim) = 0;
  /// SwiGLU: out = silu(gate) * up, silu(x) = x / (1 + exp(-x)); all [T, hidden].
  virtual void silu_and_mul(float* out, const float* gate, const float* up, int T, int hidden) = 0;
  /// x[n] += y[n].
  virtual void add(float* x, const float* y, int64_t n) = 0;
};

/// The threaded CPU implementation; num_threads <= 0 means all hardware threads.
std::unique_ptr<Backend> make_cpu_backend(int num_threads);

}  // namespace pagedchat::kernels
