// Loading a Hugging Face folder (Llama, Mistral, Qwen2, Qwen3, Qwen3-MoE, Gemma 3, Phi-3, SmolLM3,
// EXAONE 4; see parse_hf_config): config.json, model.safetensors (or shards with
// model.safetensors.index.json), tokenizer.model, and optionally tokenizer_config.json,
// generation_config.json, chat_template.jinja.
#pragma once

#include <string>

#include "engine/loader/hf/hf_config.h"
#include "engine/loader/model_loader.h"

namespace pagedchat {

/// The Hugging Face folder `path` names, or "" when it names none: `path` itself when it is a
/// folder holding config.json, model.safetensors or model.safetensors.index.json; its parent when
/// it is config.json, a .safetensors file or the index inside such a folder. (A folder with
/// weights but no config.json is taken, so that loading it reports the missing config.json.)
std::string hf_folder_of(const std::string& path);

/// Loads the weights of folder `dir` for the shape in `cfg` (transformers' tensor names:
/// model.embed_tokens.weight [vocab, hidden], model.layers.N.input_layernorm.weight [hidden],
/// self_attn.q_proj [heads*head_dim, hidden], k_proj/v_proj [kv_heads*head_dim, hidden],
/// o_proj [hidden, heads*head_dim], post_attention_layernorm [hidden], mlp.gate_proj/up_proj
/// [intermediate, hidden], mlp.down_proj [hidden, intermediate], model.norm.weight [hidden];
/// with attention_qkv_bias self_attn.{q,k,v}_proj.bias, with attention_out_bias o_proj.bias, with
/// qk_norm self_attn.{q,k}_norm.weight [head_dim]; lm_head.weight [vocab, hidden] unless
/// tie_word_embeddings (then the embedding is the classifier and a stored lm_head is ignored, as
/// vLLM does). Per family (engine/model/arch/registry.h): post-norm blocks (EXAONE 4) have
/// post_attention_layernorm / post_feedforward_layernorm instead, sandwich ones (Gemma 3) both
/// plus input_layernorm / pre_feedforward_layernorm; Phi-3's fused self_attn.qkv_proj [q | k | v]
/// and mlp.gate_up_proj [gate | up] become views of their parts; a mixture-of-experts layer has
/// the router mlp.gate.weight [num_experts, hidden] (its rows must be num_experts: refused by
/// name otherwise) and mlp.experts.E.{gate,up,down}_proj.weight. cfg.norm_weight_offset is added
/// to every norm weight (Gemma's 1 + w). A ...ForConditionalGeneration folder (cfg.multimodal:
/// Gemma 3, Gemma 4, Qwen3-VL) holds the text model under language_model.model.* (or
/// model.language_model.*); its image side (vision_tower.*, multi_modal_projector.*,
/// embed_vision.*, visual.*, with or without "model."; Gemma 4's audio tower) is skipped here and
/// read by engine/vision/hf_vision.h. F32 tensors aligned to 4 bytes
/// are used in the mapping; F16/BF16 matrices stay in their type, in place; vectors of another
/// type (and norms with an offset) are converted to owned float32 buffers. Throws
/// std::runtime_error naming the tensor and its file for a missing tensor (lm_head of an untied
/// model too), a wrong shape, an unsupported dtype, or a tensor nothing uses (a bias the config
/// does not declare, experts, ...; RoPE inv_freq buffers and integer/bool buffers such as
/// position_ids are skipped), and as SafetensorsSet::open_folder() for the files themselves.
LoadedModel load_hf_weights(const std::string& dir, const HfModelConfig& cfg);

/// Loads the whole folder: config.json (parse_hf_config), the weights (load_hf_weights), the
/// sentencepiece tokenizer (`tokenizer` when non-empty, else dir/tokenizer.model; a folder with
/// only tokenizer.json is refused, naming the missing tokenizer.model), the chat template
/// (tokenizer_config.json, else chat_template.jinja, else chat_template.json) and the sampling
/// defaults of generation_config.json. bos/eos ids come from config.json, else
/// generation_config.json, else the tokenizer; eos ids listed in generation_config.json are added
/// to extra_eos_ids. format = "huggingface", path = dir. Throws std::runtime_error naming the file.
ModelBundle load_hf_folder(const std::string& dir, const std::string& tokenizer);

}  // namespace pagedchat
