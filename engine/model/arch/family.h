// ModelFamily: everything the engine knows about one family of models, in one place (as vLLM keeps
// a family in vllm/model_executor/models/<family>.py): its names in GGUF (general.architecture)
// and in Hugging Face configs (architectures), its RoPE layout, which tensors its layers have, and
// the rules that turn its hyperparameters into per-layer specs (sliding windows, layers without
// RoPE, experts). The loaders (engine/loader/gguf, engine/loader/hf) read the common keys and
// tensors and ask the family for the rest; the forward (engine/model/decoder_model.h) runs every
// family from the resulting ModelConfig. Adding a family: docs/architecture.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"

namespace pagedchat {

class GgufFile;

/// Whether a family's layers carry a tensor: never, optionally (absent = zero) or always.
enum class TensorRule { kNever, kOptional, kRequired };

/// The keys of one family's GGUF metadata as the family's hooks read them: `prefix` is
/// "<general.architecture>." (llama.cpp's LLM_KV names follow it).
struct GgufKeys {
  const GgufFile& file;
  std::string prefix;
  /// The optional integer `prefix + key`.
  std::optional<int64_t> get_int(const std::string& key) const;
  /// The optional float `prefix + key`.
  std::optional<double> get_float(const std::string& key) const;
  /// The optional per-layer array `prefix + key` (bool, int or float elements; a scalar is
  /// repeated n times). Throws std::runtime_error when its length is not n.
  std::optional<std::vector<int64_t>> get_per_layer(const std::string& key, int n) const;
  /// Throws std::runtime_error "'<file>': <what>".
  [[noreturn]] void fail(const std::string& what) const;
};

/// One family. Static data plus hooks; see engine/model/arch/registry.h for the list.
struct ModelFamily {
  std::string_view gguf_name;                ///< general.architecture
  std::vector<std::string_view> hf_names;    ///< config.json "architectures" entries
  std::string_view description;              ///< for messages: "Gemma 3"
  RopeStyle rope_style = RopeStyle::kNeox;   ///< GGUF layout (HF files are always neox)
  TensorRule qkv_bias = TensorRule::kNever;  ///< attn_{q,k,v}.bias
  TensorRule out_bias = TensorRule::kNever;  ///< attn_output.bias
  bool qk_norm = false;                      ///< attn_q_norm / attn_k_norm per head
  bool pre_norm = true;                      ///< attn_norm, ffn_norm
  bool post_norm = false;                    ///< post_attention_norm, post_ffw_norm
  bool fused_qkv = false;                    ///< attn_qkv [q | k | v] instead of attn_q/k/v (Phi-3)
  bool fused_gate_up = false;                ///< ffn_up [gate | up] without ffn_gate (Phi-3)
  bool rope_freqs = false;                   ///< rope_freqs.weight allowed (Llama 3.1 divisors)
  bool longrope = false;                     ///< rope_factors_long / _short (Phi-3 LongRoPE)
  bool moe = false;                          ///< *_exps expert tensors and a router on every layer
  MlpActivation activation = MlpActivation::kSilu;
  /// Family-specific hyperparameters and per-layer rules, after the common keys are read into
  /// `c` (hidden_size, heads, head_dim, rope_theta, norm_eps, n_layers, ...). May refuse (fail()).
  void (*gguf_hparams)(const GgufKeys& keys, ModelConfig& c) = nullptr;
};

}  // namespace pagedchat
