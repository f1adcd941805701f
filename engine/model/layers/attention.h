// Attention: the self-attention block of every family, over the paged KV cache (vLLM's
// LlamaAttention / Qwen3Attention with its Attention layer):
//
//   qkv = h · [Wq; Wk; Wv]^T (+ [bq; bk; bv])      one stacked linear; biases: Qwen2
//   q, k heads: rms_norm(head)·q/k_norm            qk_norm (Qwen3, Gemma 3, EXAONE 4), before RoPE
//   v heads: rms_norm(head) without weight          v_norm (Gemma 4)
//   RoPE(q), RoPE(k) over rotary_dim dims          inv_freq per layer; null: NoPE (SmolLM3, EXAONE 4)
//   k, v -> the layer's paged cache (slot_mapping of its KV-cache group); a shared-KV layer
//           (Gemma 4) projects only q and reads what its source layer wrote
//   a = softmax(q·k · scale) · v                   GQA; sliding_window: keys a query sees (Gemma 3);
//                                                  sinks: one more logit per head in the softmax (gpt-oss)
//   a *= sigmoid(h · Wgate^T)                      output_gate (Qwen3.5, Qwen3-Next)
//   out = a · Wo^T (+ bo)
//
// The options are the layer's (a LayerSpec and the model's shape); the norms around the block
// (pre / post) belong to the decoder layer (engine/model/decoder_model.h). Sources: transformers'
// modeling_llama.py (LlamaAttention), modeling_qwen3.py, modeling_gemma3.py.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/layers/layer_common.h"
#include "engine/model/model_weights.h"

namespace pagedchat::layers {

/// The shape and options of one attention block.
struct AttentionOptions {
  int hidden_size = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  int rotary_dim = 0;                ///< leading dims of a head that RoPE rotates (== head_dim: all)
  bool neox = true;                  ///< RoPE pairs (i, i + rotary_dim/2); false: adjacent pairs (GGUF llama)
  const double* inv_freq = nullptr;  ///< [rotary_dim / 2] in backend memory, alive as long as the layer; null: no RoPE
  bool qkv_bias = false;             ///< q/k/v biases (absent ones zero)
  float norm_eps = 1e-6f;            ///< of the q/k norms
  float scale = 0.0f;                ///< of q·k; 0 = 1 / sqrt(head_dim)
  int sliding_window = 0;            ///< 0 = full causal attention
  /// Qwen3.5's output gate: w.q_proj is [2*n_heads*hd, H] with per head hd query rows then hd
  /// gate rows; the attention output is multiplied by sigmoid(h · gate^T) before o_proj.
  bool output_gate = false;
  /// gpt-oss: LayerWeights::sinks [n_heads] join each head's softmax (kernels::AttentionSpec::sinks).
  bool sinks = false;
  /// Gemma 4: a weightless RMSNorm of each V head before the cache (kernels::QkvSpec::v_norm).
  bool v_norm = false;
  /// Elements of a cache row (ModelConfig::kv_cache_width()); 0 = n_kv_heads * head_dim.
  int kv_row_width = 0;
  /// The layer reads K/V another layer wrote (LayerSpec::kv_source_layer): only q is projected
  /// (w.k_proj / v_proj and k_norm are not used), nothing is written to the cache.
  bool shared_kv = false;
  /// Interleaved M-RoPE sections (ModelConfig::mrope_sections): used when forward() is given
  /// M-RoPE positions.
  std::array<int, 3> mrope_sections{};
};

/// A paged KV cache layer as the block reads and writes it.
struct KvCacheLayer {
  void* key = nullptr;
  void* value = nullptr;
  kernels::KvDType dtype = kernels::KvDType::kFloat32;
  const int64_t* slot_mapping = nullptr;             ///< [T] cache slot of each token (its group's)
  const kernels::AttentionMetadata* meta = nullptr;  ///< its group's block tables and lengths
};

class Attention {
 public:
  /// Packs w's q/k/v (one stacked matrix) and o_proj as `packer` says and places its q/k norms
  /// and biases in backend memory. Throws std::invalid_argument naming `where` + the tensor when a
  /// matrix's rows are not whole blocks of its type.
  Attention(WeightPacker& packer, const LayerWeights& w, const AttentionOptions& opt, const std::string& where);
  /// out [T, hidden] = the block's output for h [T, hidden] (out may alias h); writes the T
  /// tokens' K and V into `cache` at their slots first, so a token attends to itself and to the
  /// earlier tokens of its request. Intermediates live in `ws`.
  /// `mrope_positions`: null, or [T, 3] (t, h, w) positions that RoPE uses instead of
  /// `positions` (ForwardBatch::mrope_positions, in backend memory).
  void forward(kernels::Backend& ops, Workspace& ws, float* out, const float* h, const int* positions,
               const KvCacheLayer& cache, int T, const int* mrope_positions = nullptr);
  std::size_t packed_bytes() const { return qkv_->bytes + o_proj_->bytes + (gate_ ? gate_->bytes : 0); }

 private:
  AttentionOptions opt_;
  std::unique_ptr<kernels::PackedWeights> qkv_, o_proj_, gate_;  // gate_: output_gate only
  std::vector<float> qkv_bias_;  // [bq; bk; bv] on the host (what bias_ designates on the CPU)
  const float *bias_ = nullptr, *q_norm_ = nullptr, *k_norm_ = nullptr, *bo_ = nullptr, *sinks_ = nullptr;
  Placed placed_;
};

}  // namespace pagedchat::layers
