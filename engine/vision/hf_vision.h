// The image side of a Hugging Face folder (Gemma3ForConditionalGeneration,
// Gemma4ForConditionalGeneration, Qwen3VLForConditionalGeneration,
// Qwen3_5ForConditionalGeneration and its MoE class: config.json with a
// vision_config, the vision tower and projector in the folder's safetensors beside the text
// model), turned into the clip-format projector that VisionEncoder reads: the GGUF image
// llama.cpp's converter (convert_hf_to_gguf.py, its Gemma3VisionModel, Gemma 4 vision and
// Qwen3VLVisionModel classes; keys and tensor names as gguf-py's constants) would write for the
// folder with --mmproj, built in memory, so a folder runs images without a separate mmproj file.
// Tensors keep their dtype (F32, F16 or BF16) and bytes except where the converter changes them:
// Gemma 3's projector norm gets its "1 +" folded in, Gemma 4's patch projection is reordered from
// (ky, kx, channel) inputs to the convolution's (channel, ky, kx), Qwen3-VL's Conv3d becomes one
// kernel per frame (v.patch_embd.weight, v.patch_embd.weight.1) and its deepstack mergers are
// named by the vision block they follow (vision_config.deepstack_visual_indexes; Qwen3.5's tower
// is Qwen3-VL's without them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pagedchat {

/// Whether `dir` (a Hugging Face folder) describes an image side this engine runs: config.json's
/// "architectures" names Gemma3ForConditionalGeneration, Gemma4ForConditionalGeneration,
/// Qwen3VLForConditionalGeneration, Qwen3_5ForConditionalGeneration or
/// Qwen3_5MoeForConditionalGeneration and it has a "vision_config" object. False for anything else, an unreadable or
/// malformed config included (loading the model reports those).
bool hf_folder_has_vision(const std::string& dir);

/// Why a folder whose config.json names one of those classes reads no images: "" when it has a
/// vision_config object (hf_folder_has_vision), names another class or cannot be read; else a
/// sentence for the load's warnings (its vision_config is null or absent, so only the text model
/// is loaded — transformers would build a default tower the folder may not hold).
std::string hf_folder_vision_gap(const std::string& dir);

/// The folder's vision tower and projector as the bytes of a clip-format projector GGUF
/// (GgufFile::parse reads them; VisionEncoder::open does, given the folder). Reads config.json
/// (vision_config, the text model's hidden_size, Gemma 3's mm_tokens_per_image),
/// preprocessor_config.json when present (Gemma 3's and Qwen3-VL's image_mean / image_std; the
/// pixel limits are the engine's, as for an mmproj file) and the safetensors. Holds the tower's
/// bytes once more while VisionEncoder packs them.
/// Every vision tensor is checked against the config's shape before it is used, and a tensor
/// under the image side's prefixes that none of the classes' names accounts for is refused.
/// Throws std::runtime_error naming the folder, and the tensor and its file where one is at fault
/// (missing, misshaped, of an unsupported dtype, unknown), or the config key.
std::vector<uint8_t> hf_vision_projector(const std::string& dir);

}  // namespace pagedchat
