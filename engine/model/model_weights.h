// The weights of a decoder-only transformer (Llama, Qwen2, Qwen3 families), whatever file they came
// from: matrices in their file's own type (WeightTensor: F32, F16, BF16 or a ggml quantization),
// norms and biases as float32 vectors; they live in a memory-mapped file or in buffers the loader
// owns.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/config.h"
#include "engine/loader/mapped_file.h"
#include "kernels/quant/dtype.h"

namespace pagedchat {

/// A row-major weight matrix as its file stores it: rows of `dtype` values (kernels/quant/dtype.h;
/// a row of n values is dtype_row_bytes(dtype, n) bytes) at `data`, any alignment. The shape comes
/// from the ModelConfig. Null data = absent. A float pointer converts to an F32 tensor.
struct WeightTensor {
  const void* data = nullptr;
  kernels::DType dtype = kernels::DType::kF32;

  WeightTensor() = default;
  WeightTensor(const float* p) : data(p) {}  // NOLINT: implicit, float32 is the common case
  WeightTensor(const void* p, kernels::DType t) : data(p), dtype(t) {}
  explicit operator bool() const { return data != nullptr; }
  bool operator==(const WeightTensor&) const = default;
  /// The data as floats; throws std::logic_error unless dtype is F32.
  const float* f32() const;
  /// Bytes of `n` values (n a multiple of the type's block size).
  std::size_t bytes(std::size_t n) const { return kernels::dtype_row_bytes(dtype, int64_t(n)); }
};

/// The float32 values of the first n elements of t (dequantized; n a multiple of its block size).
std::vector<float> to_float(const WeightTensor& t, std::size_t n);

/// The experts of a mixture-of-experts layer (ModelConfig::moe), each a gated MLP: per expert e,
/// gate[e] / up[e] [expert_intermediate_size, hidden_size] and down[e] [hidden_size,
/// expert_intermediate_size] (views into the file's 3-D *_exps tensors, whose experts are
/// consecutive slices); router [num_experts, hidden_size] (ffn_gate_inp, float32 in every file).
struct MoeWeights {
  WeightTensor router;
  std::vector<WeightTensor> gate, up, down;
  /// The shared expert (MoeConfig::shared_expert_intermediate_size > 0; Qwen3.5-MoE's *_shexp):
  /// shared_gate / shared_up [S, H], shared_down [H, S]; shared_gate_inp [H] scores its sigmoid
  /// gate per token (MoeConfig::shared_expert_gated). Absent otherwise.
  WeightTensor shared_gate, shared_up, shared_down;
  const float* shared_gate_inp = nullptr;
  /// MoeConfig::biases (gpt-oss): router_bias [num_experts]; per expert e gate_bias[e] / up_bias[e]
  /// [expert_intermediate_size] and down_bias[e] [hidden_size] (rows of the file's 2-D *_exps.bias).
  const float* router_bias = nullptr;
  std::vector<const float*> gate_bias, up_bias, down_bias;
  /// MoeConfig::parallel_dense (Gemma 4): router_scale [H] (ffn_gate_inp.scale: the router's
  /// input is rms_norm(x)·router_scale / sqrt(H)), expert_scale [num_experts] (ffn_down_exps.scale,
  /// null: 1), and the norms pre_norm_2 (the experts' input), post_norm_1 (dense output),
  /// post_norm_2 (experts' output), each [H].
  const float* router_scale = nullptr;
  const float* expert_scale = nullptr;
  const float *pre_norm_2 = nullptr, *post_norm_1 = nullptr, *post_norm_2 = nullptr;
};

/// A Gated DeltaNet layer's own tensors (LinearAttentionConfig; GGUF names in brackets; K =
/// key_dim, V = value_dim, C = conv_dim = 2K + V, Hv = num_v_heads, H = hidden_size): in_proj_qkv
/// [C, H] (attn_qkv: rows q | k | v), in_proj_z [V, H] (attn_gate: the output gate), in_proj_b
/// [Hv, H] (ssm_beta: write strength before its sigmoid), in_proj_a [Hv, H] (ssm_alpha), conv1d
/// [C, conv_kernel] (ssm_conv1d, per channel its taps oldest first), dt_bias [Hv] (ssm_dt.bias),
/// a [Hv] (ssm_a = -exp(A_log), negative), norm [head_v_dim] (ssm_norm), out_proj [H, V] (ssm_out).
struct GatedDeltaNetWeights {
  WeightTensor in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, out_proj;
  const float* conv1d = nullptr;
  const float* dt_bias = nullptr;
  const float* a = nullptr;
  const float* norm = nullptr;
};

/// One transformer layer. Matrices are WeightTensors, vectors float32. Shapes (rows x cols,
/// row-major, H = hidden_size, I = the layer's intermediate size, hd = its head_dim, n_kv_heads
/// its KV heads: ModelConfig::layer_head_dim and friends): q_proj [n_heads*hd, H],
/// k_proj / v_proj [n_kv_heads*hd, H], o_proj [H, n_heads*hd], gate_proj / up_proj [I, H],
/// down_proj [H, I], norms [H]. Optional (null when the config does not use them): attn_norm /
/// ffn_norm (config.pre_norm), post_attention_norm / post_ffw_norm (config.post_norm), bq
/// [n_heads*hd], bk / bv [n_kv_heads*hd] (config.attention_qkv_bias; a null one of them counts as
/// zero), bo [H] (config.attention_out_bias), q_norm / k_norm [hd] (config.qk_norm); the dense MLP
/// or `moe` (the layer's LayerSpec::moe). Fused file tensors (Phi-3's attn_qkv and gate+up) are
/// split into views here, so the forward sees one layout. A layer that reads another layer's KV
/// (LayerSpec::kv_source_layer) has no k_proj, v_proj, k_norm, bk or bv; a file's layer without
/// its own V projection (Gemma 4's attention_k_eq_v) gives v_proj == k_proj. With ModelConfig::attn_output_gate,
/// q_proj is [2*n_heads*hd, H]: per head h, hd query rows then hd gate rows (Qwen3.5's
/// interleaved layout, as both GGUF and Hugging Face files store it).
struct LayerWeights {
  const float* attn_norm = nullptr;
  WeightTensor q_proj;
  WeightTensor k_proj;
  WeightTensor v_proj;
  WeightTensor o_proj;
  const float* bq = nullptr;
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  const float* sinks = nullptr;  ///< [n_heads] attention-sink logits (config.attention_sinks)
  const float* post_attention_norm = nullptr;
  const float* ffn_norm = nullptr;
  WeightTensor gate_proj;
  WeightTensor down_proj;
  WeightTensor up_proj;
  MoeWeights moe;
  const float* post_ffw_norm = nullptr;
  /// A Gated DeltaNet layer (LayerSpec::mixer) has these instead of q/k/v/o_proj.
  GatedDeltaNetWeights linear_attn;
  /// Per-layer embeddings (ModelConfig::per_layer_input_size P > 0; Gemma 4's inp_gate, proj,
  /// post_norm): per_layer_gate [P, H], per_layer_proj [H, P], per_layer_post_norm [H].
  WeightTensor per_layer_gate, per_layer_proj;
  const float* per_layer_post_norm = nullptr;
  /// [1]: the residual stream is multiplied by it after the layer (Gemma 4's layer_output_scale); null: 1.
  const float* output_scale = nullptr;
};

/// A multi-token-prediction block (ModelConfig::nextn_predict_layers; Qwen3.5's MTP, DeepSeek's
/// NextN): a decoder layer fed with [enorm(embedding(token)) | hnorm(hidden)] · eh_proj^T. Kept for
/// speculative decoding; the main forward does not run it.
struct MtpWeights {
  LayerWeights layer;
  WeightTensor eh_proj;                     ///< [H, 2H]; absent in some checkpoints
  const float* enorm = nullptr;             ///< [H]
  const float* hnorm = nullptr;             ///< [H]
  const float* shared_head_norm = nullptr;  ///< [H] or null
};

/// The weights of a decoder-only transformer (see ModelConfig).
struct ModelWeights {
  WeightTensor token_embedding;  ///< [vocab, hidden_size]
  std::vector<LayerWeights> layers;
  const float* final_norm = nullptr;  ///< [hidden_size]
  WeightTensor lm_head;               ///< [vocab, hidden_size]; == token_embedding when tied
  std::vector<MtpWeights> mtp;        ///< [ModelConfig::nextn_predict_layers]
  /// Per-layer embeddings (ModelConfig::per_layer_input_size P > 0, L = n_layers; Gemma 4):
  /// per_layer_token_embedding [vocab, L*P] (read a row per token in its file's type, like the
  /// token embedding), per_layer_model_proj [L*P, H], per_layer_proj_norm [P].
  WeightTensor per_layer_token_embedding, per_layer_model_proj;
  const float* per_layer_proj_norm = nullptr;
};

/// A loaded model: its shape, its weights and whatever keeps them alive.
struct LoadedModel {
  ModelConfig config;
  ModelWeights weights;
  std::vector<std::unique_ptr<MappedFile>> files;        ///< mappings weights point into
  std::vector<std::vector<float>> buffers;               ///< weights converted or built in memory
  std::vector<std::vector<unsigned char>> byte_buffers;  ///< typed weights copied out of a file

  /// A new owned float32 buffer of n values (stable address).
  float* allocate(std::size_t n) {
    buffers.emplace_back(n);
    return buffers.back().data();
  }
  /// A new owned buffer of n bytes (stable address).
  unsigned char* allocate_bytes(std::size_t n) {
    byte_buffers.emplace_back(n);
    return byte_buffers.back().data();
  }
  /// Owned bytes that only packing reads: weight matrices rewritten into a file type the backends
  /// pack (gpt-oss's MXFP4 experts from a Hugging Face folder, reordered into GGUF's blocks).
  /// release_packed() drops their pages once they are packed, as a mapped file's.
  std::vector<std::vector<unsigned char>> pack_sources;
  unsigned char* allocate_pack_source(std::size_t n) {
    pack_sources.emplace_back(n);
    return pack_sources.back().data();
  }
  /// Releases the whole pages of [p, p + n) inside a mapped file or a pack source (madvise
  /// MADV_DONTNEED): called for a matrix's source once the backend has packed it. A pack source's
  /// released pages read as zeros afterwards; nothing reads them again.
  void release_packed(const void* p, std::size_t n) const;
  /// Bytes of weights held: owned buffers plus mapped files (whether their pages are resident or
  /// not).
  std::size_t resident_bytes() const {
    std::size_t n = 0;
    for (const auto& b : buffers) n += b.size() * sizeof(float);
    for (const auto& b : byte_buffers) n += b.size();
    for (const auto& b : pack_sources) n += b.size();
    for (const auto& f : files) n += f->size();
    return n;
  }
};

}  // namespace pagedchat
