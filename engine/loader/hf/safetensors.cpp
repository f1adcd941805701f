#include "engine/loader/hf/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace pagedchat {
namespace {

struct DtypeInfo {
  const char* name;
  StDtype dtype;
  std::size_t size;
};
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", StDtype::kBool, 1},      {"U8", StDtype::kU8, 1},          {"I8", StDtype::kI8, 1},
    {"F8_E5M2", StDtype::kF8E5M2, 1}, {"F8_E4M3", StDtype::kF8E4M3, 1}, {"I16", StDtype::kI16, 2},
    {"U16", StDtype::kU16, 2},        {"F16", StDtype::kF16, 2},        {"BF16", StDtype::kBF16, 2},
    {"I32", StDtype::kI32, 4},        {"U32", StDtype::kU32, 4},        {"F32", StDtype::kF32, 4},
    {"F64", StDtype::kF64, 8},        {"I64", StDtype::kI64, 8},        {"U64", StDtype::kU64, 8},
};

const DtypeInfo& info(StDtype d) {
  for (const auto& i : kDtypes)
    if (i.dtype == d) return i;
  throw std::logic_error("unknown StDtype");
}

using load::brief;
using load::fail_in;

StTensor parse_entry(const std::string& file, const std::string& name, const json& e, const uint8_t* buffer,
                     uint64_t buffer_size) {
  const std::string t = "tensor '" + name + "'";
  if (!e.is_object()) fail_in(file, t + ": entry is not a JSON object");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!e.contains(key)) fail_in(file, t + ": entry lacks \"" + key + "\"");
  StTensor out;
  out.name = name;
  out.file = file;

  const json& dt = e["dtype"];
  if (!dt.is_string()) fail_in(file, t + ": dtype " + brief(dt) + " is not a string");
  const std::string dts = dt.get<std::string>();
  const DtypeInfo* di = nullptr;
  for (const auto& i : kDtypes)
    if (dts == i.name) di = &i;
  if (!di) fail_in(file, t + ": unknown dtype '" + dts + "' (supported: F32, F16, BF16)");
  out.dtype = di->dtype;

  const json& shape = e["shape"];
  if (!shape.is_array()) fail_in(file, t + ": shape " + brief(shape) + " is not an array");
  if (shape.size() > 8) fail_in(file, t + ": shape has " + std::to_string(shape.size()) + " dimensions");
  uint64_t n = 1;
  for (const json& d : shape) {
    if (!d.is_number_unsigned()) fail_in(file, t + ": shape " + brief(shape) + " holds " + brief(d) + ", not a size");
    const uint64_t v = d.get<uint64_t>();
    if (__builtin_mul_overflow(n, v, &n)) fail_in(file, t + ": shape " + brief(shape) + " overflows");
    out.shape.push_back(v);
  }
  out.num_elements = n;
  if (__builtin_mul_overflow(n, uint64_t(di->size), &out.nbytes))
    fail_in(file, t + ": shape " + brief(shape) + " overflows");

  const json& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    fail_in(file, t + ": data_offsets " + brief(off) + " is not [begin, end]");
  const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
  if (begin > end)
    fail_in(file, t + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] are reversed");
  if (end > buffer_size)
    fail_in(file, t + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                      "] run past the end of the data (" + std::to_string(buffer_size) +
                      " bytes): the file is truncated or corrupt");
  if (end - begin != out.nbytes)
    fail_in(file, t + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] hold " +
                      std::to_string(end - begin) + " bytes, but shape " + brief(shape) + " of " + dts + " needs " +
                      std::to_string(out.nbytes));
  out.data = buffer + begin;
  return out;
}

}  // namespace

const char* dtype_name(StDtype d) { return info(d).name; }
std::size_t dtype_size(StDtype d) { return info(d).size; }
bool supported(StDtype d) { return d == StDtype::kF32 || d == StDtype::kF16 || d == StDtype::kBF16; }

std::map<std::string, StTensor> parse_safetensors(const uint8_t* data, std::size_t size, const std::string& name) {
  if (size < 8)
    fail_in(name, "truncated: " + std::to_string(size) + " bytes, shorter than the 8-byte safetensors header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  if (n > kMaxSafetensorsHeader)
    fail_in(name, "header length " + std::to_string(n) + " exceeds " + std::to_string(kMaxSafetensorsHeader) +
                      " bytes: not a safetensors file");
  if (n > size - 8)
    fail_in(name, "truncated: the header needs " + std::to_string(n) + " bytes after the length, the file has " +
                      std::to_string(size - 8));
  const std::string_view header_text(reinterpret_cast<const char*>(data + 8), std::size_t(n));
  if (load::json_nesting_depth(header_text, load::kMaxJsonDepth) > load::kMaxJsonDepth)
    fail_in(name, "the safetensors header nests arrays and objects deeper than " + std::to_string(load::kMaxJsonDepth) +
                      " levels");
  json header;
  try {
    header = json::parse(header_text.begin(), header_text.end());
  } catch (const json::exception& e) {
    fail_in(name, std::string("the safetensors header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail_in(name, "the safetensors header is not a JSON object");

  const uint8_t* buffer = data + 8 + n;
  const uint64_t buffer_size = size - 8 - n;
  std::map<std::string, StTensor> tensors;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") continue;
    tensors.emplace(key, parse_entry(name, key, value, buffer, buffer_size));
  }

  // No two non-empty ranges may share a byte.
  std::vector<const StTensor*> byPos;
  for (const auto& [k, t] : tensors)
    if (t.nbytes > 0) byPos.push_back(&t);
  std::sort(byPos.begin(), byPos.end(), [](const StTensor* a, const StTensor* b) { return a->data < b->data; });
  for (std::size_t i = 1; i < byPos.size(); ++i) {
    const StTensor* prev = byPos[i - 1];
    const StTensor* cur = byPos[i];
    if (cur->data < prev->data + prev->nbytes)
      fail_in(name, "tensor '" + cur->name + "' overlaps tensor '" + prev->name + "' (data_offsets from " +
                        std::to_string(cur->data - buffer) + " and " + std::to_string(prev->data - buffer) + ")");
  }
  return tensors;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: mant * 2^-24
      const float v = std::ldexp(float(mant), -24);
      std::memcpy(&bits, &v, 4);
      bits |= sign;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x0040);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

void to_float32(const StTensor& t, float* out) {
  const uint8_t* p = t.data;
  switch (t.dtype) {
    case StDtype::kF32:
      std::memcpy(out, p, t.nbytes);
      return;
    case StDtype::kF16:
      for (uint64_t i = 0; i < t.num_elements; ++i) out[i] = f16_to_f32(uint16_t(p[2 * i] | (p[2 * i + 1] << 8)));
      return;
    case StDtype::kBF16:
      for (uint64_t i = 0; i < t.num_elements; ++i) out[i] = bf16_to_f32(uint16_t(p[2 * i] | (p[2 * i + 1] << 8)));
      return;
    default:
      throw std::runtime_error("tensor '" + t.name + "' in '" + t.file + "' has dtype " + dtype_name(t.dtype) +
                               "; only F32, F16 and BF16 are supported");
  }
}

void SafetensorsSet::add_file(const std::string& path) {
  files_.push_back(std::make_unique<MappedFile>(path));
  const MappedFile& f = *files_.back();
  for (auto& [name, t] : parse_safetensors(f.data(), f.size(), path)) {
    auto [it, fresh] = tensors_.emplace(name, t);
    if (!fresh) fail_in(path, "tensor '" + name + "' is also in '" + it->second.file + "'");
  }
}

SafetensorsSet SafetensorsSet::open_file(const std::string& path) {
  SafetensorsSet s;
  s.source_ = path;
  s.add_file(path);
  return s;
}

SafetensorsSet SafetensorsSet::open_folder(const std::string& dir) {
  std::error_code ec;
  const fs::path d(dir);
  const fs::path single = d / "model.safetensors", index = d / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    SafetensorsSet s;
    s.source_ = index.string();
    std::ifstream in(index, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) fail_in(s.source_, "cannot read the file");
    const json j = load::parse_json(ss.str(), s.source_);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object() || j["weight_map"].empty())
      fail_in(s.source_, "no \"weight_map\" object mapping tensor names to shard files");
    std::map<std::string, std::string> wanted;  // tensor -> shard
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : j["weight_map"].items()) {
      if (!shard.is_string())
        fail_in(s.source_, "weight_map maps '" + tensor + "' to " + brief(shard) + ", not a file name");
      const std::string file = shard.get<std::string>();
      if (file.empty() || file.find('/') != std::string::npos || file.find('\\') != std::string::npos || file == "." ||
          file == "..")
        fail_in(s.source_, "weight_map maps '" + tensor + "' to '" + file + "', not a file name in the folder");
      wanted[tensor] = file;
      shards.insert(file);
    }
    for (const auto& shard : shards) {
      const fs::path p = d / shard;
      if (!fs::is_regular_file(p, ec)) fail_in(s.source_, "shard '" + shard + "' is missing from '" + dir + "'");
      s.add_file(p.string());
    }
    for (const auto& [tensor, shard] : wanted) {
      const StTensor* t = s.find(tensor);
      if (!t || fs::path(t->file).filename() != shard)
        fail_in(s.source_, "weight_map puts tensor '" + tensor + "' in '" + shard + "', which does not hold it");
    }
    return s;
  }
  if (fs::exists(single, ec)) return open_file(single.string());
  std::string hint;
  if (fs::exists(d / "pytorch_model.bin", ec) || fs::exists(d / "pytorch_model.bin.index.json", ec))
    hint = " (PyTorch .bin checkpoints are not supported: convert them to safetensors)";
  throw std::runtime_error("no model.safetensors or model.safetensors.index.json in '" + dir + "'" + hint);
}

const StTensor* SafetensorsSet::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace pagedchat
