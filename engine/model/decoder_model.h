// DecoderModel: the one forward of every supported family (Llama 2/3, Mistral, Qwen2/2.5, Qwen3,
// Qwen3-MoE, Qwen3.5, Gemma 3/4, gpt-oss, Phi-3/4-mini, SmolLM3, EXAONE 4), batched and paged, over the op interface
// (kernels/ops.h). What the families differ in comes from ModelConfig and its per-layer specs
// (LayerSpec), not from a copy of this code (as vLLM's llama.py serves its relatives; each
// family's entry in engine/model/arch/ says how its file maps onto these options):
//
//   x = embedding(ids) * embedding_scale                  Gemma: sqrt(hidden_size)
//   per layer l (spec = config.layer(l)):
//     h = pre_norm ? rms_norm(x)·attn_norm : x            EXAONE 4: post-norm only
//     (attention block: engine/model/layers/attention.h; or, on a recurrent layer, the
//      Gated DeltaNet mixer of engine/model/layers/gated_delta_net.h with its state slot)
//     qkv = h · [Wq; Wk; Wv]^T (+ [bq; bk; bv])           one stacked linear; biases: Qwen2
//     q, k heads: rms_norm(head)·q/k_norm                 qk_norm (Qwen3, Gemma 3, EXAONE 4), before RoPE;
//                                                         v_norm: weightless on v (Gemma 4); a layer
//                                                         with kv_source_layer projects only q and
//                                                         reads that layer's cache (Gemma 4); head
//                                                         size, KV heads, MLP width per layer
//     RoPE(q), RoPE(k) over rotary_dim dims, base         spec.use_rope (NoPE: SmolLM3, EXAONE 4),
//       spec.rope_theta, scaling folded into inv_freq    spec.rope_theta (Gemma 3 local 10000),
//                                                         rotary_dim (Phi-4-mini partial rotary)
//     k, v -> paged cache of the layer's KV-cache group
//     a = softmax(q·k · scale) · v (GQA)                  scale: attention_scale or 1/sqrt(head_dim),
//                                                         × rope_attn_factor on rotated layers;
//                                                         spec.sliding_window; sinks (gpt-oss)
//     o = a · Wo^T (+ bo);  post_norm: o = rms_norm(o)·post_attention_norm
//     x += o
//     h = pre_norm ? rms_norm(x)·ffn_norm : x
//     y = down(act(gate(h)) * up(h))                      act: SiLU, GELU-tanh (Gemma) or the
//                                                         clamped SwiGLU (gpt-oss)
//       Gemma 4's MoE layers run both: y = rms(dense)·n1 + rms(experts)·n2 (MoeConfig::parallel_dense)
//       or, when spec.moe, the mixture of experts:       router softmax, top-k, renormalised (or
//       y = sum_e w_e · down_e(act(gate_e(h)) * up_e(h))  top-k then softmax; biases: gpt-oss),
//                                                         tokens grouped per expert (one GEMM each)
//     post_norm: y = rms_norm(y)·post_ffw_norm;  x += y
//     per-layer embeddings (Gemma 4 E2B/E4B, P = per_layer_input_size, computed once per step:
//       pl = (rms_norm(x0·Wpl per layer, eps·hidden)·pl_norm + pl_table[id]·sqrt(P)) / sqrt(2)):
//       x += rms_norm(proj(gelu_tanh(x·gate) * pl[l]))·post_norm
//     x *= output_scale                                   Gemma 4's layer_output_scale
//   logits = rms_norm(x)·final_norm · lm_head^T           tied to the embedding or not;
//                                                         final_logit_softcap: c·tanh(logits / c)
//
// Sources: llama2.c's run.c; transformers' modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py,
// modeling_qwen3_moe.py, modeling_gemma3.py, modeling_phi3.py, modeling_smollm3.py,
// modeling_exaone4.py; llama.cpp's build_llama / build_qwen2 graphs and ik_llama.cpp's
// src/graphs/build_*.cpp (for the GGUF conventions). For pre-norm-only models the residual adds
// are fused with the next RMSNorm; the classifier runs only for the tokens whose logits are
// wanted. The weight matrices are packed once, at construction, in the backend's layout, each in
// its file's type unless the WeightDType policy says otherwise (quantized weights stay quantized:
// the kernels compute on them); biases and norms stay float32.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/config.h"
#include "engine/model/forward_batch.h"
#include "engine/model/kv_cache.h"
#include "engine/model/layers/attention.h"
#include "engine/model/layers/gated_delta_net.h"
#include "engine/model/layers/gated_mlp.h"
#include "engine/model/layers/moe_mlp.h"
#include "engine/model/model_weights.h"
#include "engine/model/weight_dtype.h"
#include "kernels/ops.h"

namespace pagedchat {

/// The ops `c` needs beyond a plain Llama (sliding windows, NoPE, experts, ...), for
/// Backend::supports: a backend without one of them cannot run the model.
std::vector<kernels::OpFeature> model_op_features(const ModelConfig& c);

class DecoderModel;

/// What makes the model an MTP head (speculative decoding; engine/spec_decode/mtp_proposer.h):
/// its input is x = eh_proj · [rms_norm(embedding(id))·enorm | rms_norm(h)·hnorm] with h the
/// batch's input_hidden row (ik_llama.cpp's build_mtp_input; DeepSeek-V3's MTP module), and it
/// reads the token embedding and the classifier of `target` (same backend) instead of packing
/// its own. The block's eh_proj [H, 2H] must hold whole quantization blocks in each half.
struct MtpInput {
  const MtpWeights* block = nullptr;
  const DecoderModel* target = nullptr;
};

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
  /// With `mtp`, the model is that MTP head (its weights' token_embedding and lm_head are the
  /// target's, not packed again).
  DecoderModel(const ModelConfig& config, const ModelWeights& weights, kernels::Backend& backend,
               WeightDType dtype = WeightDType::kAuto, const PackedCallback& packed = {}, const MtpInput& mtp = {});

  /// Runs the batch, writing K/V of its tokens into `cache` (in the backend's memory); fills
  /// `logits` (host memory) with [logits_indices.size(), vocab_size] float32 rows. The batch's
  /// arrays are copied into the backend's memory first (a memcpy on the CPU). `abandon`
  /// (optional) is asked after each layer's attention and after its feed-forward: true stops the
  /// forward there and returns false, with the layers before it having written their K/V (and
  /// recurrent layers their state and the batch's state saves) for the batch's tokens, the
  /// others not, and `logits` unchanged. Returns true when the forward ran to the end.
  bool forward(const ForwardBatch& batch, KVCache& cache, std::vector<float>& logits,
               const std::function<bool()>& abandon = {});

  /// The last forward's hidden states of the batch's hidden_indices tokens: [hidden_indices.size(),
  /// hidden_size] float32, host memory (the final norm applied, as the classifier reads them).
  const std::vector<float>& hidden() const { return hidden_; }

  const ModelConfig& config() const { return config_; }
  WeightDType weight_dtype() const { return weight_dtype_; }
  /// Bytes of the packed weight copies.
  std::size_t packed_bytes() const;
  /// The packed types in use and how many matrices have each, e.g. "q4_K x 115, q6_K x 30".
  const std::string& packed_types() const { return packed_types_; }
  /// The RoPE inverse frequencies of the layers whose base is config.rope_theta ([rotary_dims / 2],
  /// radians per position).
  const std::vector<double>& rope_inv_freq() const { return inv_freq_; }

 private:
  struct PackedLayer {
    LayerSpec spec;
    std::unique_ptr<layers::Attention> attention;      // attention layers
    std::unique_ptr<layers::GatedDeltaNet> delta_net;  // recurrent layers (LayerSpec::mixer)
    std::unique_ptr<layers::GatedMlp> mlp;             // dense layers
    std::unique_ptr<layers::MoeMlp> moe;               // mixture-of-experts layers
    // The layer's norms in the backend's memory (Backend::place; null when absent).
    const float *attn_norm = nullptr, *ffn_norm = nullptr, *post_attention_norm = nullptr, *post_ffw_norm = nullptr;
    // Per-layer embeddings (ModelConfig::per_layer_input_size): gate [P, H], proj [H, P], norm [H].
    std::unique_ptr<kernels::PackedWeights> per_layer_gate, per_layer_proj;
    const float* per_layer_post_norm = nullptr;
    float output_scale = 1.0f;  // LayerWeights::output_scale
    // MoeConfig::parallel_dense (Gemma 4): the router's input norm weight (scale / sqrt(hidden))
    // and the norms around the experts; `mlp` is then the dense MLP beside `moe`.
    const float *router_norm = nullptr, *pre_norm_2 = nullptr, *post_norm_1 = nullptr, *post_norm_2 = nullptr;
  };
  // An MTP head's eh_proj halves, norms (MtpInput).
  void pack_mtp_input(layers::WeightPacker& packer, const MtpWeights& m);
  // y [T, hidden] = the layer's feed-forward of h [T, hidden] (dense gated MLP or experts; y
  // must not alias h for experts).
  void feed_forward(PackedLayer& pl, float* y, const float* h, int T);
  // Gemma 4's MoE layer: y = rms_norm(dense(h))·post_norm_1 + rms_norm(experts(rms_norm(x)·
  // pre_norm_2))·post_norm_2, the router scoring rms_norm(x)·router_norm (MoeConfig::parallel_dense).
  void dense_and_experts(PackedLayer& pl, float* y, const float* h, const float* x, int T);
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
  using RopeKey = std::tuple<double, bool, int>;        // base, scaled, rotated dims
  std::map<RopeKey, const double*> inv_freq_by_theta_;  // placed
  std::deque<std::vector<double>> inv_freq_tables_;     // what they point to
  std::deque<std::vector<float>> host_vectors_;         // vectors built here and placed (kept alive: see place())
  std::vector<PackedLayer> layers_;
  std::unique_ptr<kernels::PackedWeights> classifier_;
  const kernels::PackedWeights* classifier_ref_ = nullptr;  // classifier_ or an MTP head's target's
  // An MTP head's input (MtpInput): eh_proj's halves over the embedding and over the hidden
  // state (their rows copied out of the file's [H, 2H] rows, kept: the CPU may pack in place),
  // the two norms.
  std::unique_ptr<kernels::PackedWeights> eh_embed_, eh_hidden_;
  std::vector<std::vector<unsigned char>> eh_halves_;
  const float *enorm_ = nullptr, *hnorm_ = nullptr;
  std::unique_ptr<kernels::Buffer> input_hidden_, hidden_rows_, hidden_sel_;
  std::vector<float> hidden_;
  std::vector<std::unique_ptr<kernels::Buffer>> placed_;  // what place() copied
  const float* final_norm_ = nullptr;
  const void* embedding_ = nullptr;  // the token-embedding table as embedding() reads it
  kernels::DType embedding_dtype_ = kernels::DType::kF32;
  // Per-layer embeddings (Gemma 4): the table as embedding() reads it, the projection, its norm.
  const void* per_layer_embedding_ = nullptr;
  kernels::DType per_layer_embedding_dtype_ = kernels::DType::kF32;
  std::unique_ptr<kernels::PackedWeights> per_layer_model_proj_;
  const float* per_layer_proj_norm_ = nullptr;
  // Activations and the step's inputs in backend memory, grown to the largest batch seen (no
  // per-step allocation afterwards).
  std::unique_ptr<kernels::Buffer> x_, xb_, sel_, logits_, ffn_, per_layer_, per_layer_rows_, per_layer_gate_;
  std::unique_ptr<kernels::Buffer> expert_in_, router_in_, expert_out_;  // dense_and_experts
  layers::Workspace ws_;  // the attention blocks', MLPs' and experts' intermediates
  std::unique_ptr<kernels::Buffer> ids_, positions_, slots_, query_start_, seq_lens_, block_tables_, logit_rows_,
      key_ends_, key_begins_, mrope_positions_, deepstack_, per_layer_ids_;
  std::vector<float> deepstack_host_;    // the step's deepstack features, gathered (forward())
  std::vector<int> per_layer_ids_host_;  // the step's ids with embedding inputs' replaced (per-layer rows)
  std::vector<std::unique_ptr<kernels::Buffer>> group_slots_, group_tables_;  // KV-cache groups 1..
  std::vector<kernels::DeltaNetSequence> delta_seqs_;                         // per request, rebuilt per layer
};

}  // namespace pagedchat
