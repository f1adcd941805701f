#include "engine/loader/gguf/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace pagedchat {
namespace {

// Sane limits, far past real models (a few thousand tensors, a few dozen keys, 256K-token
// vocabularies), small enough that nothing derived from them can overflow.
constexpr uint64_t kMaxTensors = 1u << 20;
constexpr uint64_t kMaxKv = 1u << 20;
constexpr uint64_t kMaxKeyBytes = 1u << 16;
constexpr uint64_t kMaxTensorNameBytes = 1u << 10;
constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;
constexpr uint64_t kMaxArrayElements = 1u << 24;  // all arrays together (bounds memory: ~32 B each)
constexpr uint64_t kMaxAlignment = 1u << 30;
constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw std::runtime_error("'" + file + "' is not a valid GGUF file: " + what);
}

// Bounds-checked little-endian reads over the file bytes.
class Cursor {
 public:
  Cursor(const uint8_t* data, std::size_t size, const std::string& file) : p_(data), size_(size), file_(file) {}
  std::size_t pos() const { return pos_; }
  std::size_t left() const { return size_ - pos_; }

  void need(uint64_t n, const std::string& what) const {
    if (n > left())
      fail(file_, "truncated: " + what + " at offset " + std::to_string(pos_) + " needs " + std::to_string(n) +
                      " bytes, only " + std::to_string(left()) + " left");
  }
  template <typename T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));  // x86/ARM hosts are little-endian, as the format
    pos_ += sizeof(T);
    return v;
  }
  /// Charges `n` array elements against the whole file's budget.
  void count_elements(uint64_t n, const std::string& what) {
    if (n > kMaxArrayElements - elements_)
      fail(file_, what + ": more than " + std::to_string(kMaxArrayElements) + " array elements in the metadata");
    elements_ += n;
  }
  std::string string(const std::string& what, uint64_t max_len) {
    const uint64_t n = read<uint64_t>(what + " length");
    if (n > left())  // past the end of the file: said as such before any limit
      fail(file_, "truncated or corrupt: " + what + " length " + std::to_string(n) + " at offset " +
                      std::to_string(pos_) + " is past the end of the file (" + std::to_string(left()) +
                      " bytes left)");
    if (n > max_len)
      fail(file_, what + " length " + std::to_string(n) + " exceeds the limit of " + std::to_string(max_len));
    std::string s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const uint8_t* p_;
  std::size_t size_;
  std::size_t pos_ = 0;
  uint64_t elements_ = 0;
  const std::string& file_;
};

// Smallest encoding of one element of each type: bounds an array's length by the bytes left.
uint64_t min_bytes(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kString:
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    case GgufType::kArray:
      return 12;  // element type + count
  }
  return 0;
}

bool known_type(uint32_t t) { return t <= uint32_t(GgufType::kFloat64); }

// Reads `n` elements of `type` into `v` (whose vectors match `type`).
void read_elements(Cursor& c, GgufType type, uint64_t n, GgufValue& v, const std::string& what, const std::string& file,
                   int depth);

GgufValue read_array(Cursor& c, const std::string& what, const std::string& file, int depth) {
  if (depth > kMaxArrayDepth) fail(file, what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
  GgufValue v;
  v.type = GgufType::kArray;
  const uint32_t et = c.read<uint32_t>(what + " element type");
  if (!known_type(et)) fail(file, what + ": unknown array element type " + std::to_string(et));
  v.elem_type = GgufType(et);
  const uint64_t n = c.read<uint64_t>(what + " array length");
  if (n > c.left() / min_bytes(v.elem_type))
    fail(file, what + ": array of " + std::to_string(n) + " " + gguf_type_name(v.elem_type) +
                   " values cannot fit in the " + std::to_string(c.left()) + " bytes left (truncated or corrupt file)");
  c.count_elements(n, what);
  read_elements(c, v.elem_type, n, v, what, file, depth + 1);
  return v;
}

void read_elements(Cursor& c, GgufType type, uint64_t n, GgufValue& v, const std::string& what, const std::string& file,
                   int depth) {
  auto each = [&](auto&& fn) {
    for (uint64_t i = 0; i < n; ++i) fn();
  };
  switch (type) {
    case GgufType::kUint8:
      v.uints.reserve(n);
      each([&] { v.uints.push_back(c.read<uint8_t>(what)); });
      break;
    case GgufType::kUint16:
      v.uints.reserve(n);
      each([&] { v.uints.push_back(c.read<uint16_t>(what)); });
      break;
    case GgufType::kUint32:
      v.uints.reserve(n);
      each([&] { v.uints.push_back(c.read<uint32_t>(what)); });
      break;
    case GgufType::kUint64:
      v.uints.reserve(n);
      each([&] { v.uints.push_back(c.read<uint64_t>(what)); });
      break;
    case GgufType::kBool:
      v.uints.reserve(n);
      each([&] {
        const uint8_t b = c.read<uint8_t>(what);
        if (b > 1) fail(file, what + ": bool value " + std::to_string(b) + " is neither 0 nor 1");
        v.uints.push_back(b);
      });
      break;
    case GgufType::kInt8:
      v.ints.reserve(n);
      each([&] { v.ints.push_back(c.read<int8_t>(what)); });
      break;
    case GgufType::kInt16:
      v.ints.reserve(n);
      each([&] { v.ints.push_back(c.read<int16_t>(what)); });
      break;
    case GgufType::kInt32:
      v.ints.reserve(n);
      each([&] { v.ints.push_back(c.read<int32_t>(what)); });
      break;
    case GgufType::kInt64:
      v.ints.reserve(n);
      each([&] { v.ints.push_back(c.read<int64_t>(what)); });
      break;
    case GgufType::kFloat32:
      v.floats.reserve(n);
      each([&] { v.floats.push_back(c.read<float>(what)); });
      break;
    case GgufType::kFloat64:
      v.floats.reserve(n);
      each([&] { v.floats.push_back(c.read<double>(what)); });
      break;
    case GgufType::kString:
      v.strings.reserve(n);
      each([&] { v.strings.push_back(c.string(what, c.left())); });
      break;
    case GgufType::kArray:
      v.arrays.reserve(n);
      each([&] { v.arrays.push_back(read_array(c, what, file, depth)); });
      break;
  }
}

bool checked_mul(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

}  // namespace

std::string gguf_type_name(GgufType type) {
  static const char* const names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                                      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  const uint32_t t = uint32_t(type);
  return t < std::size(names) ? names[t] : "type " + std::to_string(t);
}

std::size_t GgufValue::size() const {
  return uints.size() + ints.size() + floats.size() + strings.size() + arrays.size();
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07;
    } else
      return false;
    if (s.size() - i <= n) return false;  // n continuation bytes must follow
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

bool is_gguf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in && in.read(magic, 4) && std::memcmp(magic, kMagic, 4) == 0;
}

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.name_ = path;
  f.mapping_ = std::make_unique<MappedFile>(path);  // throws naming the path
  f.data_ = f.mapping_->data();
  f.size_ = f.mapping_->size();
  f.parse_all();
  return f;
}

GgufFile GgufFile::parse(const uint8_t* data, std::size_t size, const std::string& name) {
  GgufFile f;
  f.name_ = name;
  f.data_ = data;
  f.size_ = size;
  f.parse_all();
  return f;
}

void GgufFile::parse_all() {
  const std::string& file = name_;
  Cursor c(data_, size_, file);
  c.need(4, "magic");
  if (std::memcmp(data_, kMagic, 4) != 0) fail(file, "bad magic (the file does not start with \"GGUF\")");
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  if (version_ == 1)
    throw std::runtime_error("'" + file +
                             "' is GGUF version 1, which is not supported (only versions 2 and 3): "
                             "convert it again with a current llama.cpp");
  if (version_ != 2 && version_ != 3) {
    const bool swapped = version_ == 0x02000000u || version_ == 0x03000000u;
    fail(file, "unsupported GGUF version " + std::to_string(version_) +
                   (swapped ? " (a big-endian file? only little-endian files are supported)" : " (supported: 2, 3)"));
  }
  const uint64_t n_tensors = c.read<uint64_t>("tensor count");
  const uint64_t n_kv = c.read<uint64_t>("metadata count");
  if (n_tensors > kMaxTensors || n_tensors > c.left() / 24)  // a tensor info takes at least 24 bytes
    fail(file, "tensor count " + std::to_string(n_tensors) + " cannot fit in the " + std::to_string(c.left()) +
                   " bytes left (truncated or corrupt file)");
  if (n_kv > kMaxKv || n_kv > c.left() / 13)  // a key-value pair takes at least 13 bytes
    fail(file, "metadata count " + std::to_string(n_kv) + " cannot fit in the " + std::to_string(c.left()) +
                   " bytes left (truncated or corrupt file)");

  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string where = "metadata entry " + std::to_string(i);
    std::string key = c.string(where + " key", kMaxKeyBytes);
    if (key.empty()) fail(file, where + " has an empty key");
    if (!is_valid_utf8(key)) fail(file, where + " has a key that is not valid UTF-8");
    if (kv_.count(key)) fail(file, "key '" + key + "' appears twice");
    const std::string what = "key '" + key + "'";
    const uint32_t t = c.read<uint32_t>(what + " value type");
    if (!known_type(t)) fail(file, what + " has unknown value type " + std::to_string(t));
    GgufValue v;
    if (GgufType(t) == GgufType::kArray) {
      v = read_array(c, what, file, 1);
    } else {
      v.type = v.elem_type = GgufType(t);
      read_elements(c, v.type, 1, v, what, file, 1);
    }
    kv_.emplace(std::move(key), std::move(v));
  }

  if (const GgufValue* a = find("general.alignment")) {
    if (a->type != GgufType::kUint32)
      fail(file, "key 'general.alignment' has type " + gguf_type_name(a->type) + ", expected uint32");
    alignment_ = a->uints[0];
    if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0 || alignment_ > kMaxAlignment)
      fail(file, "key 'general.alignment' is " + std::to_string(alignment_) + ", not a power of two up to 2^30");
  }

  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = c.string("tensor " + std::to_string(i) + " name", kMaxTensorNameBytes);
    if (t.name.empty() || !is_valid_utf8(t.name))
      fail(file, "tensor " + std::to_string(i) + " has an empty name or one that is not valid UTF-8");
    if (tensor_index_.count(t.name)) fail(file, "tensor '" + t.name + "' appears twice");
    const std::string what = "tensor '" + t.name + "'";
    const uint32_t n_dims = c.read<uint32_t>(what + " n_dims");
    if (n_dims < 1 || n_dims > kMaxDims)
      fail(file, what + " has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    t.n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = c.read<uint64_t>(what + " shape");
      if (ne > uint64_t(INT64_MAX) || !checked_mul(t.n_elements, ne, t.n_elements) ||
          t.n_elements > uint64_t(INT64_MAX))
        fail(file, what + " has too many elements (shape overflows)");
      t.ne.push_back(ne);
    }
    const uint32_t type = c.read<uint32_t>(what + " type");
    const GgmlTypeInfo info = ggml_type_info(type);
    if (!info.name) fail(file, what + " has unknown ggml type " + std::to_string(type));
    t.type = GgmlType(type);
    if (t.ne[0] % info.block_elems != 0)
      fail(file, what + " has rows of " + std::to_string(t.ne[0]) + " values, not a multiple of the " + info.name +
                     " block size " + std::to_string(info.block_elems));
    if (!checked_mul(t.n_elements / info.block_elems, info.block_bytes, t.n_bytes))
      fail(file, what + " has too many bytes (size overflows)");
    t.offset = c.read<uint64_t>(what + " offset");
    if (t.offset % alignment_ != 0)
      fail(file, what + " data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                     std::to_string(alignment_));
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  // The data section starts at the next multiple of the alignment after the tensor infos.
  data_offset_ = (uint64_t(c.pos()) + alignment_ - 1) / alignment_ * alignment_;
  if (!tensors_.empty() && data_offset_ > size_)
    fail(file, "truncated: the data section would start at offset " + std::to_string(data_offset_) +
                   ", past the end (" + std::to_string(size_) + " bytes)");
  const uint64_t data_bytes = data_offset_ <= size_ ? size_ - data_offset_ : 0;
  for (const auto& t : tensors_)
    if (t.offset > data_bytes || t.n_bytes > data_bytes - t.offset)
      fail(file, "tensor '" + t.name + "' data [" + std::to_string(t.offset) + ", +" + std::to_string(t.n_bytes) +
                     ") lies outside the " + std::to_string(data_bytes) + "-byte data section (truncated file?)");
  std::vector<const GgufTensorInfo*> by_offset;
  for (const auto& t : tensors_)
    if (t.n_bytes > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i - 1]->offset + by_offset[i - 1]->n_bytes > by_offset[i]->offset)
      fail(file, "tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' overlap");
}

const GgufValue* GgufFile::find(const std::string& key) const {
  const auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

namespace {
[[noreturn]] void wrong_type(const std::string& file, const std::string& key, const GgufValue& v, const char* want) {
  std::string got = gguf_type_name(v.type);
  if (v.is_array()) got += " of " + gguf_type_name(v.elem_type);
  throw std::runtime_error("'" + file + "': key '" + key + "' has type " + got + ", expected " + want);
}
}  // namespace

std::optional<int64_t> GgufFile::get_int(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->is_array() || v->type == GgufType::kString || v->type == GgufType::kFloat32 || v->type == GgufType::kFloat64)
    wrong_type(name_, key, *v, "an integer");
  if (!v->ints.empty()) return v->ints[0];
  if (v->uints[0] > uint64_t(INT64_MAX))
    throw std::runtime_error("'" + name_ + "': key '" + key + "' value " + std::to_string(v->uints[0]) +
                             " is out of range");
  return int64_t(v->uints[0]);
}

std::optional<double> GgufFile::get_float(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_array() && !v->floats.empty()) return v->floats[0];
  if (v->is_array() || v->type == GgufType::kString || v->type == GgufType::kBool)
    wrong_type(name_, key, *v, "a number");
  return double(*get_int(key));
}

std::optional<bool> GgufFile::get_bool(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::kBool) wrong_type(name_, key, *v, "bool");
  return v->uints[0] != 0;
}

std::optional<std::string> GgufFile::get_string(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::kString) wrong_type(name_, key, *v, "string");
  if (!is_valid_utf8(v->strings[0]))
    throw std::runtime_error("'" + name_ + "': key '" + key + "' is not valid UTF-8 text");
  return v->strings[0];
}

const GgufValue* GgufFile::get_array(const std::string& key, GgufType elem) const {
  const GgufValue* v = find(key);
  if (!v) return nullptr;
  if (!v->is_array() || v->elem_type != elem) wrong_type(name_, key, *v, ("array of " + gguf_type_name(elem)).c_str());
  return v;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace pagedchat
