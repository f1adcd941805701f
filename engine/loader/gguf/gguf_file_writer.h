// The GGUF v3 container, written: header, metadata key/values, tensor infos and tensor data
// (ggml's docs/gguf.md: little-endian, strings as u64 length + bytes, tensor data aligned to
// general.alignment = 32 by default). What goes into a model file is gguf_writer.h's business.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "kernels/quant/dtype.h"

namespace pagedchat {

/// The metadata section being built, in the order the keys are added.
class GgufMetaWriter {
 public:
  void kv_u32(const std::string& k, uint32_t v);
  void kv_i32(const std::string& k, int32_t v);
  void kv_f32(const std::string& k, float v);
  void kv_bool(const std::string& k, bool v);
  void kv_str(const std::string& k, const std::string& v);
  void kv_strings(const std::string& k, const std::vector<std::string>& v);
  void kv_f32s(const std::string& k, const std::vector<float>& v);
  void kv_i32s(const std::string& k, const std::vector<int32_t>& v);
  /// `v` as read by GgufFile, in its own types (copying a key from one file to another).
  void kv_value(const std::string& k, const GgufValue& v);
  /// True when `k` was added already.
  bool has(const std::string& k) const;

  const std::string& bytes() const { return s_; }
  uint64_t count() const { return keys_.size(); }

 private:
  void key(const std::string& k, GgufType t);
  void value(const GgufValue& v, GgufType t, std::size_t i);
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    s_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& v);
  std::string s_;
  std::vector<std::string> keys_;
};

/// One tensor to write: `rows` rows of `cols` float32 values (rows == 0: a vector of `cols`),
/// converted to `type` (F32, F16 or Q8_0) row by row; output row r is src + row_order[r] * cols
/// (row_order empty: r). Instead of `src`, `typed_src` may hold the rows in another type
/// (`src_dtype`: F16, BF16, a ggml quantization; rows of dtype_row_bytes(src_dtype, cols) bytes),
/// dequantized one row at a time while writing, so no float32 copy of the matrix is made.
/// Instead of one source, `parts` may give the rows in pieces: part i holds `rows` rows of its
/// `dtype` at `data`, and the parts follow each other (a fused matrix written from separate ones,
/// the experts of a 3-D tensor each from its own matrix); their rows add up to the tensor's and
/// row_order is then unused. `experts` > 0 makes a 3-D tensor of `experts` matrices [rows, cols]
/// (GGUF ne = {cols, rows, experts}; the sources hold experts * rows rows).
struct GgufTensorOut {
  struct Part {
    const void* data = nullptr;
    kernels::DType dtype = kernels::DType::kF32;
    uint64_t rows = 0;
  };
  std::string name;
  const float* src = nullptr;
  uint64_t rows = 0, cols = 0;
  GgmlType type = GgmlType::F32;
  std::vector<uint64_t> row_order;
  const void* typed_src = nullptr;
  kernels::DType src_dtype = kernels::DType::kF32;
  std::vector<Part> parts{};
  uint64_t experts = 0;
};

/// Writes a GGUF v3 file: `meta`, then `tensors` in order, each at a 32-byte aligned offset. The
/// file appears at `path` only when complete (written to path + ".tmp", then renamed). Throws
/// std::runtime_error naming the path (cannot create, write or rename; a value Q8_0 cannot hold,
/// naming the tensor and row; `stop` requested, checked between rows). Whatever it throws, the
/// ".tmp" file is removed.
void write_gguf_file(const std::string& path, const GgufMetaWriter& meta, const std::vector<GgufTensorOut>& tensors,
                     std::stop_token stop = {});

/// The file write_gguf_file(path, …) writes before renaming it to `path`: path + ".tmp".
inline std::string gguf_staging_file(const std::string& path) { return path + ".tmp"; }

/// Tensor `t` of the open file `f`, to be written again as it is: its name, shape (experts
/// included) and type, the data read in place from `f` (which must outlive the write). Throws
/// std::runtime_error for a type dtype_of does not know.
GgufTensorOut gguf_tensor_copy(const GgufFile& f, const GgufTensorInfo& t);

}  // namespace pagedchat
