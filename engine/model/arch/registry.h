// The model registry: every family the engine runs, looked up by its GGUF or Hugging Face name.
// Each family is defined in its own file under engine/model/arch/ (llama.cpp: Llama and Mistral;
// qwen.cpp: Qwen2, Qwen3, Qwen3-MoE; gemma3.cpp; phi3.cpp; smollm3.cpp; exaone4.cpp; qwen35.cpp: Qwen3.5 / 3.6 dense
// and MoE; gpt_oss.cpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/model/arch/family.h"

namespace pagedchat {

/// Every registered family, in a stable order.
const std::vector<const ModelFamily*>& model_families();
/// The family whose GGUF general.architecture is `name`, or null.
const ModelFamily* find_family_by_gguf_name(std::string_view name);
/// The family whose Hugging Face class (config.json "architectures") is `name`, or null.
const ModelFamily* find_family_by_hf_name(std::string_view name);
/// The transformers class `name` (a config.json "architectures" entry) and its family; nulls when
/// no family has it.
std::pair<const ModelFamily*, const HfClass*> find_hf_class(std::string_view name);
/// The transformers class whose config's model_type is `model_type`, and its family; nulls when none.
std::pair<const ModelFamily*, const HfClass*> find_hf_class_by_model_type(std::string_view model_type);
/// "llama, qwen2, ..." — the GGUF names, for error messages.
std::string supported_gguf_architectures();
/// "LlamaForCausalLM, MistralForCausalLM, ..." — the transformers classes, for error messages
/// (the ...ForConditionalGeneration ones read pictures too: engine/vision/hf_vision.h).
std::string supported_hf_architectures();

// The families (each defined in its own file).
extern const ModelFamily kLlamaFamily;
extern const ModelFamily kQwen2Family;
extern const ModelFamily kQwen3Family;
extern const ModelFamily kQwen3VlFamily;
extern const ModelFamily kQwen3MoeFamily;
extern const ModelFamily kQwen3VlMoeFamily;
extern const ModelFamily kGemma3Family;
extern const ModelFamily kPhi3Family;
extern const ModelFamily kSmolLM3Family;
extern const ModelFamily kGptOssFamily;
extern const ModelFamily kGemma4Family;
extern const ModelFamily kExaone4Family;
extern const ModelFamily kQwen35Family;
extern const ModelFamily kQwen35MoeFamily;

}  // namespace pagedchat
