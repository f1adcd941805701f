// The JSON files of a Hugging Face model folder: config.json (the model's shape),
// tokenizer_config.json (special tokens, chat template) and generation_config.json (sampling
// defaults). Field names and defaults follow transformers' LlamaConfig / MistralConfig /
// Qwen2Config / Qwen3Config, modeling_rope_utils.py, PreTrainedTokenizerBase and GenerationConfig.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/loader/model_loader.h"

namespace pagedchat {

/// What config.json says, as the engine uses it.
struct HfModelConfig {
  ModelConfig config;        ///< shape, family options, rope (kNeox), eps, max_seq_len (soft), tie, bos/eos ids
  std::string architecture;  ///< the transformers class: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
                             ///< Qwen3ForCausalLM
  bool has_bos_id = false;   ///< bos_token_id was given (else config.bos_id is transformers' default 1)
  bool has_eos_id = false;   ///< eos_token_id was given (else config.eos_id is transformers' default 2)
};

/// Parses config.json text; `name` (the path) prefixes every error. Accepted architectures:
/// LlamaForCausalLM, MistralForCausalLM (config.architecture "llama"), Qwen2ForCausalLM ("qwen2":
/// q/k/v biases), Qwen3ForCausalLM ("qwen3": q_norm/k_norm) — else model_type llama / mistral /
/// qwen2 / qwen3 when architectures is absent; anything else (MoE and vision classes too) is
/// refused naming it. Required keys: hidden_size, intermediate_size, num_hidden_layers,
/// num_attention_heads, vocab_size, rms_norm_eps, max_position_embeddings (all missing ones are
/// named in one error). Optional: num_key_value_heads (= heads), head_dim (= hidden/heads; Qwen3:
/// 128 as Qwen3Config; must be even and positive, checked against the tensors by the loader),
/// rope_theta (10000), rope_scaling (null, "default", "linear" {factor}, "llama3" {factor,
/// low_freq_factor, high_freq_factor, original_max_position_embeddings}; rope_type or type; other
/// types such as dynamic, yarn, longrope are refused by name), tie_word_embeddings (false),
/// attention_bias (Llama, Qwen3: q/k/v and o biases), bos_token_id (1), eos_token_id (2; an int
/// or a list: the first is eos_id, the rest extra_eos_ids), hidden_act ("silu" only). Refused:
/// mlp_bias true, quantization_config, partial_rotary_factor != 1, num_experts /
/// num_local_experts > 0, layer_types other than full_attention, and sliding windows that some
/// layer uses (Llama/Mistral: sliding_window below max_position_embeddings; Qwen2/Qwen3:
/// use_sliding_window with max_window_layers below num_hidden_layers). max_position_embeddings
/// becomes a soft max_seq_len; rope_style is kNeox; stop_on_bos false. Throws
/// std::runtime_error naming the file and the key.
HfModelConfig parse_hf_config(const std::string& json_text, const std::string& name);

/// tokenizer_config.json, the fields the engine uses.
struct HfTokenizerConfig {
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  std::string bos_token, eos_token, unk_token;  ///< piece text ("<s>"); empty when absent
  std::string chat_template;                    ///< a string, or the "default" entry of a [{name, template}] list
};

/// Parses tokenizer_config.json text. Special tokens may be strings or {"content": ...} objects
/// (AddedToken). Throws std::runtime_error naming the file and the key when a field has the
/// wrong type or the text is not a JSON object.
HfTokenizerConfig parse_tokenizer_config(const std::string& json_text, const std::string& name);

/// generation_config.json, the fields the engine uses.
struct HfGenerationConfig {
  SamplingDefaults defaults;  ///< temperature, top_p, top_k, min_p, repetition_penalty, max_new_tokens, do_sample
  std::vector<int> eos_ids;   ///< eos_token_id (int or list), empty when absent
  std::optional<int> bos_id;
};

/// Parses generation_config.json text (null values count as absent; see SamplingDefaults for
/// do_sample). Throws std::runtime_error naming the file and the key for a wrong type or a value
/// outside what SamplingParams accepts (temperature >= 0, top_p in (0, 1], top_k >= -1,
/// min_p in [0, 1], repetition_penalty > 0, max_new_tokens >= 1).
HfGenerationConfig parse_generation_config(const std::string& json_text, const std::string& name);

/// Reads a whole (small) text file; throws std::runtime_error naming it when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace pagedchat
