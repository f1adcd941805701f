// Llama 1/2/3.x, Mistral, TinyLlama and llama2.c models (GGUF "llama"; transformers
// LlamaForCausalLM, MistralForCausalLM). llama.cpp's converters permute Hugging Face's q/k rows so
// GGUF files rotate interleaved pairs (rope type NORM); biases on q/k/v and o are optional
// (attention_bias); Llama 3.1's frequency scaling may come as rope_freqs.weight divisors.
// Mistral's config.json may name a sliding_window; one a sequence can reach is refused.
// Sources: transformers modeling_llama.py, configuration_mistral.py; llama.cpp b4747
// src/llama-model.cpp (LLM_ARCH_LLAMA).
#include <cstdint>

#include <nlohmann/json.hpp>

#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

// Mistral (MistralConfig.sliding_window): full attention only while no sequence exceeds the window.
void llama_hf_hparams(const HfKeys& k, ModelConfig& c) {
  if (!k.has("sliding_window")) return;
  const int64_t w = *k.get_int("sliding_window", 0, INT64_MAX);
  if (w < c.max_seq_len)
    k.fail("sliding_window " + std::to_string(w) + " is smaller than max_position_embeddings " +
           std::to_string(c.max_seq_len) + ": sliding-window attention is not implemented");
}

void llama_hf_write(const ModelConfig&, nlohmann::json& config) { config["mlp_bias"] = false; }

}  // namespace

const ModelFamily kLlamaFamily = [] {
  ModelFamily f;
  f.gguf_name = "llama";
  f.hf_classes = {{"LlamaForCausalLM", "llama", false, true}, {"MistralForCausalLM", "mistral"}};
  f.description = "Llama";
  f.rope_style = RopeStyle::kInterleaved;
  f.qkv_bias = TensorRule::kOptional;
  f.out_bias = TensorRule::kOptional;
  f.rope_freqs = true;
  f.hf_hparams = llama_hf_hparams;
  f.hf_write_config = llama_hf_write;
  return f;
}();

}  // namespace pagedchat
