// Llama 1/2/3.x, Mistral, TinyLlama and llama2.c models (GGUF "llama"; transformers
// LlamaForCausalLM, MistralForCausalLM). llama.cpp's converters permute Hugging Face's q/k rows so
// GGUF files rotate interleaved pairs (rope type NORM); biases on q/k/v and o are optional
// (attention_bias); Llama 3.1's frequency scaling may come as rope_freqs.weight divisors.
// Sources: transformers modeling_llama.py; llama.cpp b4747 src/llama-model.cpp (LLM_ARCH_LLAMA).
#include "engine/model/arch/registry.h"

namespace pagedchat {

const ModelFamily kLlamaFamily = [] {
  ModelFamily f;
  f.gguf_name = "llama";
  f.hf_names = {"LlamaForCausalLM", "MistralForCausalLM"};
  f.description = "Llama";
  f.rope_style = RopeStyle::kInterleaved;
  f.qkv_bias = TensorRule::kOptional;
  f.out_bias = TensorRule::kOptional;
  f.rope_freqs = true;
  return f;
}();

}  // namespace pagedchat
