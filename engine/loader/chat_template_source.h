// Where a model's own chat template comes from, read without loading its weights.
#pragma once

#include <string>

#include "engine/loader/hf/hf_config.h"

namespace pagedchat {

/// The chat template (Jinja text) of a Hugging Face folder: tokenizer_config.json's
/// "chat_template" (`tc`, already parsed), else chat_template.jinja, else chat_template.json
/// ({"chat_template": "..."}), as newer transformers versions save it; "" when none. Throws
/// std::runtime_error naming the file when chat_template.json is not valid.
std::string hf_folder_chat_template(const std::string& dir, const HfTokenizerConfig& tc);

/// The chat template text a model carries: a GGUF file's tokenizer.chat_template, a Hugging Face
/// folder's (hf_folder_chat_template; also when `path` is its config.json, tokenizer.json or a
/// .safetensors file), "" for a llama2.c checkpoint or a sentencepiece .model. Throws
/// std::runtime_error naming the file for a file that cannot be read.
std::string read_model_chat_template(const std::string& path);

}  // namespace pagedchat
