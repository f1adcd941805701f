// What a model file or folder is, read from its headers without loading its weights: for the
// app's model dialog and `pagedchat-cli info`-style listings.
#pragma once

#include <cstdint>
#include <string>

namespace pagedchat {

/// A model's facts as its files state them. Unknown numbers are 0, unknown texts "".
struct ModelSummary {
  std::string format;          ///< "gguf", "huggingface", "llama2.c"
  std::string architecture;    ///< GGUF general.architecture, the HF class, or "llama" (llama2.c)
  bool supported = false;      ///< the engine has this architecture (engine/model/arch/registry.h)
  uint64_t size_bytes = 0;     ///< on disk: the file, every split of a split GGUF, a folder's weights
  uint64_t n_params = 0;       ///< parameters: the tensors' element counts summed
  std::string quantization;    ///< llama.cpp's file-type name (Q4_K_M, Q8_0, BF16, ...) or the weights' dtype
  int64_t context_length = 0;  ///< the positions the model was trained for
  std::string chat_template;   ///< the built-in family its template writes (chatml, llama3, ...),
                               ///< "custom" for one we do not recognise, "" when it carries none
};

/// Reads `path` (a .gguf file, a Hugging Face folder or a file in one, a llama2.c checkpoint or
/// its folder) as the loader would find it. Reads headers only: a GGUF file's metadata and tensor
/// table, config.json and the safetensors headers, a llama2.c header. Throws std::runtime_error
/// naming the path when it is none of these or its header is damaged.
ModelSummary summarize_model(const std::string& path);

/// llama.cpp's name of GGUF general.file_type `ftype` (enum llama_ftype: 0 "F32", 1 "F16",
/// 2 "Q4_0", 15 "Q4_K_M", 32 "BF16", 38 "MXFP4_MOE", ...; the 1024 "guessed" flag ignored);
/// "" for a value it does not name.
std::string gguf_file_type_name(int64_t ftype);

}  // namespace pagedchat
