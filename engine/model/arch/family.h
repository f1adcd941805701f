// ModelFamily: everything the engine knows about one family of models, in one place (as vLLM keeps
// a family in vllm/model_executor/models/<family>.py): its names in GGUF (general.architecture)
// and in Hugging Face configs (architectures), its RoPE layout, which tensors its layers have, and
// the rules that turn its hyperparameters into per-layer specs (sliding windows, layers without
// RoPE, experts). The loaders (engine/loader/gguf, engine/loader/hf) read the common keys and
// tensors and ask the family for the rest (gguf_hparams, hf_hparams; the Hugging Face writer:
// hf_write_config); the forward (engine/model/decoder_model.h) runs every family from the
// resulting ModelConfig. Adding a family: docs/architecture.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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

/// The keys of a Hugging Face config.json as the family's hooks (and engine/loader/hf/hf_config.cpp)
/// read them: `values` is the text model's object (config.json itself, or its text_config for a
/// multimodal class). Null counts as absent. Errors are std::runtime_error "'<file>': <what>",
/// naming the key. Defined in engine/loader/hf/hf_config.cpp.
struct HfKeys {
  const nlohmann::json& values;
  const std::string& file;        ///< the path, for errors
  std::string_view architecture;  ///< the transformers class (LlamaForCausalLM, ...); "" when none
  /// Whether `key` is there and not null.
  bool has(const char* key) const;
  /// The optional integer `key`, which must lie in [lo, hi].
  std::optional<int64_t> get_int(const char* key, int64_t lo, int64_t hi) const;
  /// The optional finite number `key`.
  std::optional<double> get_number(const char* key) const;
  /// The optional boolean `key`.
  std::optional<bool> get_bool(const char* key) const;
  /// The keys of `object` (a value inside `values`, such as rope_scaling), with the same file.
  HfKeys nested(const nlohmann::json& object) const { return {object, file, architecture}; }
  /// Throws std::runtime_error "'<file>': <what>".
  [[noreturn]] void fail(const std::string& what) const;
};

/// One transformers class whose checkpoints a family computes.
struct HfClass {
  std::string_view name;        ///< its config.json "architectures" entry: "LlamaForCausalLM"
  std::string_view model_type;  ///< its config's model_type (names the class when "architectures" is absent)
  /// Where the text model's keys are: config.json itself (false), or its "text_config" object
  /// (true: a multimodal class whose text part alone is loaded, Gemma3ForConditionalGeneration).
  bool text_config = false;
  /// The config's attention_bias switches on q/k/v and o_proj biases (LlamaConfig, Qwen3Config).
  bool attention_bias = false;
};

/// One family. Static data plus hooks; see engine/model/arch/registry.h for the list.
struct ModelFamily {
  std::string_view gguf_name;  ///< general.architecture
  /// Its transformers classes; the first is the one the Hugging Face writer writes.
  std::vector<HfClass> hf_classes;
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
  /// attention.head_count_kv and feed_forward_length may be per-layer arrays (Gemma 4): the common
  /// loader then takes their largest entries and gguf_hparams sets the layers' own (LayerSpec).
  bool per_layer_shapes = false;
  /// attn_v: kOptional = a layer without it uses its K projection as V (Gemma 4's attention_k_eq_v).
  TensorRule v_proj = TensorRule::kRequired;
  /// layer_output_scale.weight [1] per layer (Gemma 4): the residual stream times it after the layer.
  TensorRule layer_output_scale = TensorRule::kNever;
  /// The pre-norm of the feed-forward is this tensor (Qwen3.5 calls it post_attention_norm).
  std::string_view ffn_norm_name = "ffn_norm";
  bool attn_output_gate = false;  ///< attn_q holds [q_h | gate_h] per head (ModelConfig::attn_output_gate)
  bool linear_attention = false;  ///< Gated DeltaNet layers (attn_qkv, attn_gate, ssm_*) where the spec says
  bool mtp = false;               ///< nextn_predict_layers MTP blocks after the main layers
  MlpActivation activation = MlpActivation::kSilu;
  /// Tokens that end a reply when the vocabulary has them, besides its EOS (gpt-oss's Harmony:
  /// <|return|> ends the answer, <|call|> a tool call; its <|end|> only ends a message).
  std::vector<std::string_view> end_of_generation_tokens;
  /// Family-specific hyperparameters and per-layer rules, after the common keys are read into
  /// `c` (hidden_size, heads, head_dim, rope_theta, norm_eps, n_layers, ...). May refuse (fail()).
  void (*gguf_hparams)(const GgufKeys& keys, ModelConfig& c) = nullptr;

  // Hugging Face config.json (engine/loader/hf/hf_config.cpp reads the common keys, then asks these).
  /// Defaults of the family's config class for keys config.json leaves out (a JSON object: Gemma
  /// 3's text_config omits most), filled in before anything is read. Empty: none.
  std::string_view hf_defaults;
  /// head_dim when config.json gives none (Qwen3Config's 128); 0: hidden_size / num_attention_heads.
  int hf_head_dim = 0;
  /// Keys hf_hparams reads (or deliberately ignores) itself, which the common parser then neither
  /// reads nor refuses: rope_scaling, partial_rotary_factor, layer_types, hidden_act, num_experts,
  /// num_local_experts.
  std::vector<std::string_view> hf_own_keys;
  /// Added to every RMSNorm weight of a checkpoint at load and subtracted when writing one
  /// (Gemma stores w for its (1 + w) norms). 0 for most.
  float hf_norm_weight_offset = 0.0f;
  /// Family-specific config.json keys and per-layer rules, after the common keys are read into `c`
  /// (shape, head_dim, rope_theta and rope_scaling, norm_eps, biases, norms, activation). May
  /// refuse (fail()).
  void (*hf_hparams)(const HfKeys& keys, ModelConfig& c) = nullptr;
  /// Adds the family's keys to the config.json the Hugging Face writer composes for `c` (which
  /// holds the common keys of the first hf_classes entry). parse_hf_config must read back `c`.
  void (*hf_write_config)(const ModelConfig& c, nlohmann::json& config) = nullptr;
  /// Whether hf_hparams reads `key` itself (hf_own_keys).
  bool hf_owns(std::string_view key) const {
    for (std::string_view k : hf_own_keys)
      if (k == key) return true;
    return false;
  }
};

/// The family's required `prefix` attention.sliding_window (gemma3, gemma4, gpt-oss): refuses a
/// missing key or a window outside [1, 2^24] by name.
int gguf_sliding_window(const GgufKeys& keys);

/// The MoE keys of a GGUF family (`prefix` expert_count, expert_used_count and
/// expert_feed_forward_length, the last defaulting to the dense width) into c.moe, softmax before
/// top-k, renormalised; refuses a missing count or a top-k outside [1, count] by name. Defined in
/// engine/model/arch/qwen.cpp (Qwen3-MoE and Qwen3.5-MoE).
void gguf_expert_hparams(const GgufKeys& keys, ModelConfig& c);

/// config.json's layer_types as sliding flags, one per layer ("sliding_attention" true,
/// "full_attention" false); nullopt when absent. A list of another length or another kind of
/// layer is refused by name. Defined in engine/loader/hf/hf_config.cpp (Gemma 3, Gemma 4, gpt-oss).
std::optional<std::vector<bool>> hf_sliding_layers(const HfKeys& keys, int n_layers);

/// The leading int(head_dim * partial_rotary_factor) dims of each head rotate (config.json's
/// partial_rotary_factor, else `default_factor`) into c.rotary_dim (0 when the whole head
/// rotates); a factor outside (0, 1] or an odd or < 2 count is refused by name. Defined in
/// engine/loader/hf/hf_config.cpp (Phi-3, Qwen3.5).
void hf_partial_rotary(const HfKeys& keys, ModelConfig& c, double default_factor);

/// M-RoPE pairs per component (text, height, width) from config.json's rope_scaling or
/// rope_parameters .mrope_section (a fourth entry must be 0), else `sections`, into
/// c.mrope_sections; refuses a RoPE type other than default / mrope and sections that rotate more
/// pairs than c.rotary_dims() / 2. Defined in engine/model/arch/qwen.cpp (Qwen3-VL, Qwen3.5).
void hf_mrope_sections(const HfKeys& keys, ModelConfig& c, std::array<int64_t, 3> sections);

// Helpers of the hf_write_config hooks (engine/loader/hf/hf_writer.cpp).
/// The shortest decimal that reads back as `f`, as a double (1e-5f is written 1e-05, not
/// 9.99999974737875e-06).
double hf_short_double(float f);
/// The window of the model's sliding layers (the last one's when they differ); 0 when none slides.
int hf_sliding_window(const ModelConfig& c);
/// config.json's layer_types: "sliding_attention" or "full_attention" per layer.
nlohmann::json hf_layer_types(const ModelConfig& c);

}  // namespace pagedchat
