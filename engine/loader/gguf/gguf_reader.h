// GgufFile: a parsed GGUF file (versions 2 and 3) — its metadata, its tensor infos and where each
// tensor's bytes lie in the memory-mapped file.
//
// Format source: ggml's docs/gguf.md. Layout (all little-endian): "GGUF" magic, uint32 version,
// uint64 tensor count, uint64 metadata count; metadata as (string key, uint32 value type, value);
// tensor infos as (string name, uint32 n_dims, uint64 ne[n_dims], uint32 ggml type, uint64 offset);
// padding to general.alignment (default 32); tensor data, each offset relative to that start.
// Strings are a uint64 byte length then the bytes (no terminator). ne[0] varies fastest, so a
// row-major [rows, cols] matrix has ne = {cols, rows}.
//
// Everything read from the file is checked before use: counts and lengths against the bytes left
// and against sane limits, element counts for overflow, tensor data inside the file, aligned and
// not overlapping, keys and tensor names valid UTF-8 and unique. Every failure is a
// std::runtime_error naming the file and the key or tensor concerned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/mapped_file.h"

namespace pagedchat {

/// GGUF metadata value types (gguf.md, enum gguf_metadata_value_type).
enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
/// "uint32", "string", "array", ... ("type N" for ids outside the enum).
std::string gguf_type_name(GgufType type);

/// One metadata value. A scalar is stored as an array of one element: its values live in the one
/// vector that matches its type — `uints` (unsigned integers and bool), `ints` (signed integers),
/// `floats` (float32/float64), `strings` (raw bytes, not yet checked for UTF-8) or `arrays`
/// (elements of a nested array).
struct GgufValue {
  GgufType type = GgufType::kUint8;       ///< kArray for arrays
  GgufType elem_type = GgufType::kUint8;  ///< the element type (== type for scalars)
  std::vector<uint64_t> uints;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<GgufValue> arrays;

  bool is_array() const { return type == GgufType::kArray; }
  /// Number of elements (1 for a scalar).
  std::size_t size() const;
};

/// One tensor's description; its bytes are GgufFile::tensor_data().
struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> ne;  ///< 1..4 dims, ne[0] fastest-varying
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;  ///< relative to the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
};

class GgufFile {
 public:
  /// Maps and parses `path`. Throws std::runtime_error naming the path and the problem.
  static GgufFile open(const std::string& path);
  /// Parses `size` bytes at `data` (not copied: they must outlive the result); `name` stands for
  /// the file in error messages. For tests and the fuzzer.
  static GgufFile parse(const uint8_t* data, std::size_t size, const std::string& name);

  GgufFile(GgufFile&&) noexcept = default;
  GgufFile& operator=(GgufFile&&) noexcept = default;

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  ///< file offset of the data section
  std::size_t file_size() const { return size_; }

  /// Metadata in key order.
  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  /// The value of `key`, or null when absent.
  const GgufValue* find(const std::string& key) const;

  // Typed getters: std::nullopt when `key` is absent; std::runtime_error naming the file and the key
  // when it holds another type (or an integer out of range, or a string that is not UTF-8).
  /// Any integer type (and bool), as int64.
  std::optional<int64_t> get_int(const std::string& key) const;
  /// float32/float64, or an integer.
  std::optional<double> get_float(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  /// A string that must be valid UTF-8 (it is used as text).
  std::optional<std::string> get_string(const std::string& key) const;
  /// An array whose elements are `elem` (null when absent).
  const GgufValue* get_array(const std::string& key, GgufType elem) const;

  /// Tensor infos in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  /// The tensor named `name`, or null.
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  /// First byte of `t`'s data (t.n_bytes bytes, inside the file; aligned as general.alignment says).
  const uint8_t* tensor_data(const GgufTensorInfo& t) const { return data_ + data_offset_ + t.offset; }

  /// True while this object owns the file's mapping (open(), before take_mapping()).
  bool mapped() const { return mapping_ != nullptr; }
  /// Hands over the mapping opened by open() (null after parse()); tensor_data() pointers stay
  /// valid while the returned MappedFile lives.
  std::unique_ptr<MappedFile> take_mapping() { return std::move(mapping_); }

 private:
  GgufFile() = default;
  void parse_all();

  std::string name_;
  std::unique_ptr<MappedFile> mapping_;
  const uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, std::size_t> tensor_index_;
};

/// True when `path` is a regular file that starts with the GGUF magic.
bool is_gguf_file(const std::string& path);
/// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool is_valid_utf8(std::string_view s);

}  // namespace pagedchat
