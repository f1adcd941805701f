// Writing a loaded model as a Hugging Face folder (every family of engine/model/arch; for Llama what
// transformers' convert_llama_weights_to_hf.py produces): config.json, model.safetensors, tokenizer.model,
// tokenizer_config.json, generation_config.json.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "engine/loader/hf/safetensors.h"
#include "engine/model/model_weights.h"

namespace pagedchat {

/// One tensor to write: `data` holds num_elements(shape) * dtype_size(dtype) little-endian bytes.
struct StTensorOut {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<uint64_t> shape;
  const void* data = nullptr;
};

/// Writes a safetensors file holding `tensors` in the given order: the JSON header (with
/// "__metadata__": {"format": "pt"}) is padded with spaces so the data starts 8-byte aligned.
/// Throws std::invalid_argument for duplicate names and std::runtime_error naming `path` when it
/// cannot be written.
void write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors);

/// Writes `model` as a Hugging Face folder `dir` (created if needed; files in it overwritten):
/// config.json (the transformers class of config.architecture: LlamaForCausalLM, Qwen2ForCausalLM,
/// Qwen3ForCausalLM, Qwen3MoeForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM, SmolLM3ForCausalLM,
/// Exaone4ForCausalLM; head_dim, rope_scaling linear/llama3 — Phi-3: longrope with its short and
/// long factors, original_max_position_embeddings and attention_factor —, attention_bias,
/// tie_word_embeddings = model.config.shared_classifier, and per family what says which layer is
/// what: Gemma 3's sliding_window, layer_types (and sliding_window_pattern when periodic),
/// rope_local_base_freq, query_pre_attn_scalar; Qwen3-MoE's expert keys and mlp_only_layers;
/// Phi-3's partial_rotary_factor and sliding_window; SmolLM3's no_rope_layers; EXAONE 4's
/// sliding_window and layer_types), model.safetensors (transformers' tensor names and [out, in]
/// shapes: biases and q/k norms as the family has them, a bias the config declares but the model
/// lacks written as zeros; Phi-3's fused qkv_proj and gate_up_proj; experts as
/// mlp.experts.E.*_proj; Gemma's norm weights as w for its (1 + w); lm_head.weight only when the
/// classifier is not shared), generation_config.json (bos/eos ids) and the tokenizer: a
/// sentencepiece `tokenizer_path` (.model) is copied as tokenizer.model with a LlamaTokenizer
/// tokenizer_config.json (the model's bos/eos/unk pieces); a tokenizer.json path is copied with the
/// tokenizer_config.json beside it; "" writes no tokenizer files. `dtype` is "f32" or "bf16"
/// (round-to-nearest-even). Matrices are converted one row at a time while writing.
/// For a model with interleaved RoPE (llama2.c, GGUF llama / smollm3) the rows of every q_proj and
/// k_proj (weights and biases) are permuted per head as convert_llama_weights_to_hf.py's `permute`
/// does (view(heads, head_dim/2, 2, in).transpose(1, 2)), so the folder computes the same function
/// with rotate-half RoPE; a model already in rotate-half layout is written as it is.
/// `dir` must not exist or be an empty folder (refused by name otherwise: files already there would
/// be read with the new ones, and the source may be among them); the files are written into a
/// staging folder beside it (`dir`.partial-PID) and moved into place once all are written (a
/// symlink is followed; an empty folder keeps its owner and mode).
/// config.json is read back (parse_hf_config) before anything is written: what it would not give
/// back (a per-layer arrangement, scale or RoPE parameter no key holds) is refused by name.
/// Throws std::invalid_argument for another dtype, std::runtime_error naming the folder for what
/// config.json cannot express (GGUF rope_freqs without scaling parameters, an o_proj bias on
/// Qwen2, ...), and naming the file that cannot be read or written.
/// `stop`: a request to stop (the CLI's Ctrl+C), checked between tensors: std::runtime_error, and
/// the staging folder is removed.
void write_hf_folder(const LoadedModel& model, const std::string& tokenizer_path, const std::string& dir,
                     const std::string& dtype, std::stop_token stop = {});

/// The staging folder write_hf_folder(…, dir, …) writes into in this process (`dir` resolved
/// through symlinks, + ".partial-PID"), for a caller that must remove it when the process is
/// ended before the writer can (a second Ctrl+C).
std::string hf_staging_folder(const std::string& dir);

}  // namespace pagedchat
