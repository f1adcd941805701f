// Resolving what the user named as "the model": a checkpoint file, or a folder holding one
// llama2.c checkpoint and one sentencepiece tokenizer.
#pragma once

#include <string>

namespace pagedchat {

struct ModelFiles {
  std::string checkpoint;  ///< llama2.c .bin
  std::string tokenizer;   ///< sentencepiece .model
};

/// Resolves `model` (file or folder) and the optional explicit `tokenizer`. In a folder, the
/// checkpoint is the one .bin whose header is a valid llama2.c checkpoint (llama2.c tokenizer
/// .bin files are skipped); the tokenizer is `tokenizer`, else the one .model beside the
/// checkpoint. Throws std::runtime_error naming the path and what is missing or ambiguous.
ModelFiles resolve_model_files(const std::string& model, const std::string& tokenizer);

}  // namespace pagedchat
