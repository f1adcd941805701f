// Reading safetensors files (Hugging Face's tensor format), one file or a sharded set.
//
// Format (github.com/huggingface/safetensors, README "Format"): an unsigned 64-bit little-endian
// header length N; N bytes of UTF-8 JSON, an object mapping each tensor name to
// {"dtype": "F32"|"F16"|"BF16"|..., "shape": [d0, d1, ...], "data_offsets": [begin, end]} plus an
// optional "__metadata__" object (ignored here); then the byte buffer. Offsets are relative to the
// start of the byte buffer, `end` exclusive; tensors are row-major (C order), little-endian.
// Sharded checkpoints add model.safetensors.index.json: {"weight_map": {tensor name: shard file}}.
//
// Every number in a header is checked before it is used (the file is treated as hostile): the
// header length against the file and a 100 MB cap, each shape's element count and byte size
// against overflow, each data_offsets range against the buffer and against shape x dtype size,
// and the ranges against each other (no overlaps). Errors are std::runtime_error naming the file
// and, where there is one, the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/loader/mapped_file.h"

namespace pagedchat {

/// Element types of the safetensors format. Only kF32, kF16 and kBF16 can be converted to
/// float32 (see supported()); the others are parsed (so their ranges are checked) but refused by
/// name when a loader asks for their values.
enum class StDtype { kBool, kU8, kI8, kF8E5M2, kF8E4M3, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64 };

/// The format's name of a dtype ("F32", "BF16", ...).
const char* dtype_name(StDtype d);
/// Bytes per element.
std::size_t dtype_size(StDtype d);
/// True for the dtypes to_float32() converts: F32, F16, BF16.
bool supported(StDtype d);

/// One tensor of a parsed safetensors file; `data` points into the bytes parse_safetensors() was
/// given (valid while they are).
struct StTensor {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<uint64_t> shape;    ///< outermost first; empty for a scalar
  uint64_t num_elements = 0;      ///< product of shape (1 for a scalar)
  const uint8_t* data = nullptr;  ///< first byte of the tensor
  uint64_t nbytes = 0;            ///< num_elements * dtype_size(dtype)
  std::string file;               ///< the file (or name) it came from, for error messages
};

/// Largest accepted JSON header: the reference implementation's limit.
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

/// Parses the safetensors image [data, data + size). `name` (usually the file path) prefixes
/// every error. Returns the tensors by name (the "__metadata__" entry is skipped). Throws
/// std::runtime_error when the image is truncated, the header length is absurd, the header is not
/// a JSON object, an entry lacks or mistypes dtype/shape/data_offsets, a dtype is not a
/// safetensors dtype, a range leaves the buffer, is reversed or disagrees with shape x dtype, or
/// two ranges overlap.
std::map<std::string, StTensor> parse_safetensors(const uint8_t* data, std::size_t size, const std::string& name);

/// Writes the float32 values of `t` (F32 copied, F16/BF16 widened) to `out` (t.num_elements
/// floats). Throws std::runtime_error naming the tensor and file for any other dtype.
void to_float32(const StTensor& t, float* out);

/// IEEE half -> float (exact, including subnormals, infinities and NaN).
float f16_to_f32(uint16_t h);
/// bfloat16 -> float (exact).
float bf16_to_f32(uint16_t b);
/// float -> bfloat16 by round-to-nearest-even (NaN stays a quiet NaN with its sign).
uint16_t f32_to_bf16(float f);

/// The tensors of a Hugging Face checkpoint folder: model.safetensors, or the shards listed by
/// model.safetensors.index.json. The files stay memory-mapped while this object (or whoever
/// took them with release_files()) lives.
class SafetensorsSet {
 public:
  /// Opens the checkpoint in folder `dir`. Throws std::runtime_error naming the folder when it
  /// has neither model.safetensors nor model.safetensors.index.json (mentioning a PyTorch .bin
  /// when there is one), naming the index when it is malformed (no weight_map object, a shard
  /// name that is not a plain file name, a tensor mapped to a shard that lacks it), naming a
  /// missing shard, and as parse_safetensors() for every shard (each one is checked, used or not).
  static SafetensorsSet open_folder(const std::string& dir);
  /// Opens one .safetensors file (errors as parse_safetensors()).
  static SafetensorsSet open_file(const std::string& path);

  /// The tensor called `name`, or nullptr.
  const StTensor* find(const std::string& name) const;
  /// Every tensor by name.
  const std::map<std::string, StTensor>& tensors() const { return tensors_; }
  /// What was opened, for error messages ("dir/model.safetensors" or "dir/model.safetensors.index.json").
  const std::string& source() const { return source_; }
  /// Hands over the mappings (their tensors' `data` stay valid as long as the mappings live).
  std::vector<std::unique_ptr<MappedFile>> release_files() { return std::move(files_); }

 private:
  void add_file(const std::string& path);
  std::string source_;
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::map<std::string, StTensor> tensors_;
};

}  // namespace pagedchat
