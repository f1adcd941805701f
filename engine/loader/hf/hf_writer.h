// Writing a loaded model as a Hugging Face Llama folder (what transformers'
// convert_llama_weights_to_hf.py produces): config.json, model.safetensors, tokenizer.model,
// tokenizer_config.json, generation_config.json.
#pragma once

#include <cstdint>
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
/// config.json (LlamaForCausalLM, tie_word_embeddings = model.config.shared_classifier),
/// model.safetensors (transformers' tensor names and [out, in] shapes; lm_head.weight only when
/// the classifier is not shared), tokenizer.model (a copy of `tokenizer_model_path`; skipped when
/// it is empty), tokenizer_config.json (LlamaTokenizer with the model's bos/eos/unk pieces) and
/// generation_config.json (bos/eos ids). `dtype` is "f32" or "bf16" (round-to-nearest-even).
/// For a model with interleaved RoPE (llama2.c, GGUF) the rows of every q_proj and k_proj are
/// permuted per head as convert_llama_weights_to_hf.py's `permute` does
/// (view(heads, head_dim/2, 2, in).transpose(1, 2)), so the folder computes the same function
/// with rotate-half RoPE; a model already in rotate-half layout is written as it is.
/// Throws std::invalid_argument for another dtype, std::runtime_error naming the file that
/// cannot be read or written.
void write_hf_folder(const LoadedModel& model, const std::string& tokenizer_model_path, const std::string& dir,
                     const std::string& dtype);

}  // namespace pagedchat
