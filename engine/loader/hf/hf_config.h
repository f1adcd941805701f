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
  std::string architecture;  ///< the transformers class (LlamaForCausalLM, ...: ModelFamily::hf_classes)
  bool has_bos_id = false;   ///< bos_token_id was given (else config.bos_id is transformers' default 1)
  bool has_eos_id = false;   ///< eos_token_id was given (else config.eos_id is transformers' default 2)
  /// Added to every RMSNorm weight at load: Gemma's checkpoints store w for a norm that multiplies
  /// by (1 + w) (Gemma3RMSNorm), which the engine (and GGUF) holds as the multiplier itself. 0 else.
  float norm_weight_offset = 0.0f;
  /// A ...ForConditionalGeneration class (Gemma 3, Gemma 4, Qwen3-VL): the text model
  /// (config.json's text_config, with the top level's special token ids, tie_word_embeddings
  /// where text_config has none, and vision_config beside it) is loaded from the language_model
  /// tensors; the image side is skipped (engine/vision/hf_vision.h reads it).
  bool multimodal = false;
};

/// Parses config.json text; `name` (the path) prefixes every error. The classes and what each
/// family reads come from the model registry: the common keys are read here, then the family's
/// ModelFamily::hf_hparams (engine/model/arch/<family>.cpp) reads its own. Accepted architectures
/// (else model_type when architectures is absent), each mapped to the ModelConfig its GGUF file
/// gives (rope_style is always kNeox, Hugging Face's rotate-half rows):
///   LlamaForCausalLM, MistralForCausalLM ("llama"), Qwen2ForCausalLM ("qwen2": q/k/v biases),
///   Qwen3ForCausalLM ("qwen3": q_norm/k_norm), Exaone4ForCausalLM ("exaone4"; sliding_window,
///   layer_types / sliding_window_pattern);
///   Qwen3MoeForCausalLM ("qwen3moe"): num_experts (or num_local_experts), num_experts_per_tok (at
///     most the expert count), moe_intermediate_size, norm_topk_prob (false), decoder_sparse_step
///     (1) and mlp_only_layers ([]) say which layers are mixtures of experts (the others dense MLPs
///     of intermediate_size; when every layer is, intermediate_size is 0 as in GGUF);
///   Gemma3ForCausalLM (model_type gemma3_text) and the text part of Gemma3ForConditionalGeneration
///     (text_config, with Gemma3TextConfig's defaults for what it leaves out): sliding_window on the
///     layers layer_types marks "sliding_attention" (else sliding_window_pattern, 6: every 6th layer
///     global), local RoPE base rope_local_base_freq (10000) unscaled, global rope_theta with
///     rope_scaling, attention_scale query_pre_attn_scalar^-0.5 (0 when that is head_dim),
///     embedding_scale sqrt(hidden_size), GELU-tanh (hidden_activation gelu_pytorch_tanh),
///     sandwich norms with (1 + w) weights (norm_weight_offset 1), final_logit_softcapping;
///   Phi3ForCausalLM ("phi3"): partial_rotary_factor -> rotary_dim, rope_scaling longrope (or su)
///     {short_factor, long_factor} with original_max_position_embeddings (rope_scaling's, else the
///     config's, else 4096) as rope_long_threshold and the attention factor (attention_factor, else
///     sqrt(1 + ln(s) / ln(original)) with s = max_position_embeddings / original when s > 1) squared
///     as rope_attn_factor; a sliding_window below max_position_embeddings on every layer;
///   SmolLM3ForCausalLM ("smollm3"): RoPE on layer l iff no_rope_layers[l] is 1 (else every
///     no_rope_layer_interval-th layer, 4, has none);
///   Qwen3VLForConditionalGeneration's text_config ("qwen3vl"): Qwen3's keys, M-RoPE sections from
///     rope_scaling (or rope_parameters) mrope_section ([24, 20, 20]), one deepstack layer per
///     vision_config.deepstack_visual_indexes entry.
/// transformers 5's rope_parameters ({rope_theta, rope_type, ...}, per layer type for Gemma 3) is
/// read as rope_theta / rope_scaling / rope_local_base_freq where those are absent.
/// Anything else (other MoE and vision classes too) is refused naming it. Required keys:
/// hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, vocab_size, rms_norm_eps,
/// max_position_embeddings (all missing ones are named in one error; Gemma 3 takes transformers'
/// defaults; Qwen3-MoE needs intermediate_size only for dense layers). Optional: num_key_value_heads
/// (= heads), head_dim (= hidden/heads; Qwen3: 128 as Qwen3Config; must be even and positive,
/// checked against the tensors by the loader), rope_theta (10000), rope_scaling (null, "default",
/// "linear" {factor}, "llama3" {factor, low_freq_factor, high_freq_factor,
/// original_max_position_embeddings}; rope_type or type; other types such as dynamic, yarn are
/// refused by name, longrope outside Phi-3 too), tie_word_embeddings (false; Gemma 3: true),
/// attention_bias (Llama, Qwen3, Qwen3-MoE, SmolLM3: q/k/v and o biases), bos_token_id (1),
/// eos_token_id (2; an int or a list: the first is eos_id, the rest extra_eos_ids), hidden_act
/// ("silu" only; Gemma 3 reads hidden_activation). Refused: mlp_bias true, quantization_config,
/// partial_rotary_factor != 1 outside Phi-3, experts outside Qwen3-MoE, layer_types other than
/// full_attention and sliding_attention (and sliding ones outside Gemma 3 and EXAONE 4), sliding
/// windows that some layer uses outside Gemma 3, Phi-3 and EXAONE 4 (Llama/Mistral: sliding_window
/// below max_position_embeddings; Qwen: use_sliding_window with max_window_layers below
/// num_hidden_layers), Gemma's attn_logit_softcapping. max_position_embeddings becomes a soft
/// max_seq_len; stop_on_bos false. Throws std::runtime_error naming the file and the key.
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
