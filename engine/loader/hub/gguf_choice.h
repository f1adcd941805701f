// Which GGUF of a repository to download: the models it holds (split files joined, projectors and
// importance matrices left out), their quantization read from the file name, whether each fits
// this machine's memory, and the one to recommend (llama.cpp's -hf default: Q4_K_M). The label rule
// is huggingface.js's (parseGGUFQuantLabel); THIRD_PARTY_NOTICES, 4a.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/loader/hub/hf_hub.h"

namespace pagedchat::hub {

/// One model of a GGUF repository: one file, or the parts of a split one (NAME-00001-of-0000N.gguf,
/// in order; the first is what the engine opens).
struct GgufModel {
  std::string quant;  ///< as the file name spells it, upper case ("Q4_K_M", "UD-Q4_K_XL", "BF16"); "" if none
  std::vector<HubFile> parts;
  std::uint64_t size = 0;  ///< all parts
  bool fits = false;       ///< fits_in_memory(size)
  bool recommended = false;
  const std::string& first_path() const { return parts.front().path; }
};

/// The quantization label in a GGUF file name (its last one: "Qwen3-8B-Q4_K_M.gguf" -> "Q4_K_M",
/// "Model-UD-Q4_K_XL-00001-of-00002.gguf" -> "UD-Q4_K_XL", "gpt-oss-20b-MXFP4.gguf" -> "MXFP4",
/// "x-f16.gguf" -> "F16"); "" when there is none. Upper case.
std::string gguf_quant_of(const std::string& file_name);

/// True when a model of `bytes` fits this machine: its size plus a fifth (KV cache, work space)
/// within `available` bytes (default: MemAvailable of /proc/meminfo, else physical memory).
bool fits_in_memory(std::uint64_t bytes, std::optional<std::uint64_t> available = std::nullopt);

/// The repository's GGUF models, smallest first, with `recommended` set on one: Q4_K_M (then
/// Q4_K_S, Q5_K_M, Q8_0, as llama.cpp's preference) if one fits, else the largest that fits, else
/// the smallest. Files named mmproj* (vision projectors) or *imatrix* are not models. Empty when
/// the repository holds no GGUF.
std::vector<GgufModel> gguf_models(const HubRepo& repo, std::optional<std::uint64_t> available = std::nullopt);

/// The model `tag` names ("Q4_K_M", "q8_0", a file name, or "" for the recommended one),
/// matched whole and case-insensitively against the quantization labels, then against file
/// names. Throws std::invalid_argument naming the repository's labels when none matches, or
/// when the repository has no GGUF.
const GgufModel& choose_gguf(const std::vector<GgufModel>& models, const std::string& repo, const std::string& tag);

/// The files of a Hugging Face (safetensors) repository the engine reads: config.json,
/// generation_config.json, tokenizer files, chat_template.jinja, *.safetensors and their index.
std::vector<HubFile> hf_folder_files(const HubRepo& repo);

}  // namespace pagedchat::hub
