// DecoderModel: the one forward of every supported family (Llama 2/3, Mistral, Qwen2/2.5, Qwen3),
// batched and paged, over the op interface (kernels/ops.h). What the families differ in comes
// from ModelConfig, not from a copy of this code (as vLLM's llama.py serves its relatives):
//
//   x = embedding(ids)
//   per layer:  h = rms_norm(x) · [Wq; Wk; Wv]^T          one stacked linear
//               (+ [bq; bk; bv])                          attention_qkv_bias (Qwen2)
//               q, k heads: rms_norm(head) * q/k_norm     qk_norm (Qwen3), before RoPE
//               RoPE(q), RoPE(k) with inv_freq            rope_style, rope_theta, rope_scaling,
//                                                         rope_freq_factors (engine/model/rope_frequencies.h)
//               k, v -> paged cache; a = softmax(q·k / sqrt(head_dim)) · v   (GQA)
//               x += a · Wo^T (+ bo)                      attention_out_bias
//               x += W2 · (silu(W1 · rms_norm(x)) * (W3 · rms_norm(x)))      SwiGLU
//   logits = rms_norm(x) · Wcls^T                         tied to the embedding or not
//
// Sources: llama2.c's run.c; transformers' modeling_llama.py, modeling_qwen2.py,
// modeling_qwen3.py; llama.cpp's build_llama / build_qwen2 graphs (src/llama.cpp). Residual adds
// are fused with the next RMSNorm; the classifier runs only for the tokens whose logits are
// wanted. The weight matrices are packed once, at construction, in the backend's layout, each in
// its file's type unless the WeightDType policy says otherwise (quantized weights stay quantized:
// the kernels compute on them); biases and norms stay float32.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/model/forward_batch.h"
#include "engine/model/kv_cache.h"
#include "engine/model/model_weights.h"
#include "engine/model/weight_dtype.h"
#include "kernels/ops.h"

namespace pagedchat {

class DecoderModel {
 public:
  /// Called with the bytes of each matrix once it is packed, and of the embedding table at the
  /// end: the model does not need them resident (the loader drops the file's pages; embedding()
  /// reads the table's rows in place again as tokens need them).
  using PackedCallback = std::function<void(const void* data, std::size_t bytes)>;

  /// Packs the matrices of `weights` for `backend` as `dtype` says; `weights` must stay alive
  /// (the embedding table, norms and biases are read in place). Throws std::invalid_argument when
  /// the weights do not fit the config (a layer count that differs, a missing tensor, an optional
  /// tensor the config does not use, bad RoPE frequency factors, a matrix whose rows are not whole
  /// blocks of its type), naming the layer and the tensor.
  DecoderModel(const ModelConfig& config, const ModelWeights& weights, kernels::Backend& backend,
               WeightDType dtype = WeightDType::kAuto, const PackedCallback& packed = {});

  /// Runs the batch, writing K/V of its tokens into `cache` (in the backend's memory); fills
  /// `logits` (host memory) with [logits_indices.size(), vocab_size] float32 rows. The batch's
  /// arrays are copied into the backend's memory first (a memcpy on the CPU).
  void forward(const ForwardBatch& batch, KVCache& cache, std::vector<float>& logits);

  const ModelConfig& config() const { return config_; }
  WeightDType weight_dtype() const { return weight_dtype_; }
  /// Bytes of the packed weight copies.
  std::size_t packed_bytes() const;
  /// The packed types in use and how many matrices have each, e.g. "q4_K x 115, q6_K x 30".
  const std::string& packed_types() const { return packed_types_; }
  /// The RoPE inverse frequencies in use ([head_dim / 2], radians per position).
  const std::vector<double>& rope_inv_freq() const { return inv_freq_; }

 private:
  struct PackedLayer {
    std::unique_ptr<kernels::PackedWeights> qkv, wo, gate_up, down;
    std::vector<float> qkv_bias;  // [bq; bk; bv] (absent parts zero), empty without q/k/v biases
    // The layer's norms and biases in the backend's memory (Backend::place; null when absent).
    const float *rms_att = nullptr, *rms_ffn = nullptr, *q_norm = nullptr, *k_norm = nullptr, *bo = nullptr,
                *qkv_bias_placed = nullptr;
  };
  kernels::QkvSpec qkv_spec(int layer) const;
  // `host` [n] as backend memory for the model's lifetime (null stays null).
  template <typename T>
  const T* place(const T* host, std::size_t n);
  // An activation buffer of at least `n` elements of T, grown (never shrunk) in backend memory.
  template <typename T>
  T* workspace(std::unique_ptr<kernels::Buffer>& buf, std::size_t n);
  // A step input copied into backend memory.
  template <typename T>
  const T* upload(std::unique_ptr<kernels::Buffer>& buf, const std::vector<T>& host);

  const ModelConfig config_;
  const ModelWeights weights_;
  kernels::Backend& ops_;
  WeightDType weight_dtype_;
  std::string packed_types_;
  std::vector<double> inv_freq_;
  std::vector<PackedLayer> layers_;
  std::unique_ptr<kernels::PackedWeights> classifier_;
  std::vector<std::unique_ptr<kernels::Buffer>> placed_;  // what place() copied
  const double* inv_freq_placed_ = nullptr;
  const float* rms_final_ = nullptr;
  const void* embedding_ = nullptr;  // the token-embedding table as embedding() reads it
  kernels::DType embedding_dtype_ = kernels::DType::kF32;
  // Activations and the step's inputs in backend memory, grown to the largest batch seen (no
  // per-step allocation afterwards).
  std::unique_ptr<kernels::Buffer> x_, xb_, qkv_, q_, att_, gate_up_, hb_, sel_, logits_;
  std::unique_ptr<kernels::Buffer> ids_, positions_, slots_, query_start_, seq_lens_, block_tables_, logit_rows_;
};

}  // namespace pagedchat
