// load_model: opens whatever the user named as the model (a llama2.c checkpoint, a GGUF file, a
// Hugging Face folder, or "random:SHAPE") and returns its weights, its tokenizer and its chat
// template, ready for the engine.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/config.h"
#include "engine/model/model_weights.h"
#include "engine/sample/sampling_defaults.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

struct ModelBundle {
  LoadedModel model;
  std::unique_ptr<Tokenizer> tokenizer;  ///< null for random: models without --tokenizer
  std::string chat_template;             ///< the model's template text (Jinja) when the files carry one
  std::string format;                    ///< "llama2.c", "gguf", "huggingface", "random"
  std::string path;                      ///< the file or folder loaded
  /// generation_config.json's sampling defaults (Hugging Face folders; empty for other formats),
  /// applied with apply_sampling_defaults() as vLLM's get_default_sampling_params.
  SamplingDefaults generation_defaults;
};

/// Throws std::runtime_error naming both when `tokenizer` does not fit a model with
/// `model_vocab_size` embedding rows: equal sizes, or with `allow_padding` (Hugging Face
/// config.json vocab_size) a tokenizer smaller by padding rows (at most size/16 + 1024, as Qwen
/// pads); never larger.
void check_vocab_sizes(const Tokenizer& tokenizer, int model_vocab_size, const std::string& model_path,
                       bool allow_padding);

/// Detects the format of config.model and loads it (tokenizer from config.tokenizer when given).
/// The tokenizer must fit the embedding rows (check_vocab_sizes; padding rows allowed for Hugging
/// Face folders and for a tokenizer named in config.tokenizer, never for a GGUF file's own).
/// Throws std::runtime_error naming the file and the problem; std::invalid_argument for bad specs.
ModelBundle load_model(const EngineConfig& config);

}  // namespace pagedchat
