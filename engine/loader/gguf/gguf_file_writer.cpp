#include "engine/loader/gguf/gguf_file_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "engine/loader/gguf/quantize.h"

namespace pagedchat {

namespace {
constexpr uint64_t kAlignment = 32;  // GGUF_DEFAULT_ALIGNMENT
}

void GgufMetaWriter::str(const std::string& v) {
  put<uint64_t>(v.size());
  s_ += v;
}

void GgufMetaWriter::key(const std::string& k, GgufType t) {
  if (has(k)) throw std::logic_error("GGUF key '" + k + "' written twice");
  keys_.push_back(k);
  str(k);
  put<uint32_t>(uint32_t(t));
}

bool GgufMetaWriter::has(const std::string& k) const { return std::find(keys_.begin(), keys_.end(), k) != keys_.end(); }

void GgufMetaWriter::kv_u32(const std::string& k, uint32_t v) {
  key(k, GgufType::kUint32);
  put(v);
}
void GgufMetaWriter::kv_i32(const std::string& k, int32_t v) {
  key(k, GgufType::kInt32);
  put(v);
}
void GgufMetaWriter::kv_f32(const std::string& k, float v) {
  key(k, GgufType::kFloat32);
  put(v);
}
void GgufMetaWriter::kv_bool(const std::string& k, bool v) {
  key(k, GgufType::kBool);
  put<uint8_t>(v ? 1 : 0);
}
void GgufMetaWriter::kv_str(const std::string& k, const std::string& v) {
  key(k, GgufType::kString);
  str(v);
}

void GgufMetaWriter::kv_strings(const std::string& k, const std::vector<std::string>& v) {
  key(k, GgufType::kArray);
  put<uint32_t>(uint32_t(GgufType::kString));
  put<uint64_t>(v.size());
  for (const std::string& x : v) str(x);
}

void GgufMetaWriter::kv_f32s(const std::string& k, const std::vector<float>& v) {
  key(k, GgufType::kArray);
  put<uint32_t>(uint32_t(GgufType::kFloat32));
  put<uint64_t>(v.size());
  for (float x : v) put(x);
}

void GgufMetaWriter::kv_i32s(const std::string& k, const std::vector<int32_t>& v) {
  key(k, GgufType::kArray);
  put<uint32_t>(uint32_t(GgufType::kInt32));
  put<uint64_t>(v.size());
  for (int32_t x : v) put(x);
}

// Element i of a scalar (or flat array) value of type t.
void GgufMetaWriter::value(const GgufValue& v, GgufType t, std::size_t i) {
  switch (t) {
    case GgufType::kUint8:
      put<uint8_t>(uint8_t(v.uints.at(i)));
      break;
    case GgufType::kBool:
      put<uint8_t>(uint8_t(v.uints.at(i)));
      break;
    case GgufType::kUint16:
      put<uint16_t>(uint16_t(v.uints.at(i)));
      break;
    case GgufType::kUint32:
      put<uint32_t>(uint32_t(v.uints.at(i)));
      break;
    case GgufType::kUint64:
      put<uint64_t>(v.uints.at(i));
      break;
    case GgufType::kInt8:
      put<int8_t>(int8_t(v.ints.at(i)));
      break;
    case GgufType::kInt16:
      put<int16_t>(int16_t(v.ints.at(i)));
      break;
    case GgufType::kInt32:
      put<int32_t>(int32_t(v.ints.at(i)));
      break;
    case GgufType::kInt64:
      put<int64_t>(v.ints.at(i));
      break;
    case GgufType::kFloat32:
      put<float>(float(v.floats.at(i)));
      break;
    case GgufType::kFloat64:
      put<double>(v.floats.at(i));
      break;
    case GgufType::kString:
      str(v.strings.at(i));
      break;
    case GgufType::kArray: {
      const GgufValue& a = v.arrays.at(i);
      put<uint32_t>(uint32_t(a.elem_type));
      put<uint64_t>(a.size());
      for (std::size_t j = 0; j < a.size(); ++j) value(a, a.elem_type, j);
      break;
    }
  }
}

void GgufMetaWriter::kv_value(const std::string& k, const GgufValue& v) {
  key(k, v.type);
  if (!v.is_array()) {
    value(v, v.type, 0);
    return;
  }
  put<uint32_t>(uint32_t(v.elem_type));
  put<uint64_t>(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) value(v, v.elem_type, i);
}

void write_gguf_file(const std::string& path, const GgufMetaWriter& meta, const std::vector<GgufTensorOut>& tensors,
                     std::stop_token stop) {
  std::string head = "GGUF";
  auto put64 = [&](uint64_t v) { head.append(reinterpret_cast<const char*>(&v), 8); };
  auto put32 = [&](uint32_t v) { head.append(reinterpret_cast<const char*>(&v), 4); };
  put32(3);
  put64(tensors.size());
  put64(meta.count());
  head += meta.bytes();
  std::vector<uint64_t> offsets, sizes;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    const uint64_t n_bytes = ggml_row_bytes(t.type, t.cols) * (t.rows ? t.rows : 1) * (t.experts ? t.experts : 1);
    offsets.push_back(offset);
    sizes.push_back(n_bytes);
    put64(t.name.size());
    head += t.name;
    put32(t.experts ? 3 : t.rows ? 2 : 1);
    put64(t.cols);  // ne[0]: the fastest-varying dimension
    if (t.rows || t.experts) put64(t.rows ? t.rows : 1);
    if (t.experts) put64(t.experts);
    put32(uint32_t(t.type));
    put64(offset);
    offset = (offset + n_bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  head.resize((head.size() + kAlignment - 1) / kAlignment * kAlignment, '\0');

  const std::string tmp = gguf_staging_file(path);
  std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot create '" + tmp + "': " + std::strerror(errno));
  // Whatever ends the write early (an error, a stop asked for) takes the partial file with it.
  struct PartialFile {
    std::ofstream& f;
    const std::string& tmp;
    bool done = false;
    ~PartialFile() {
      if (done) return;
      f.close();
      std::remove(tmp.c_str());
    }
  } partial{f, tmp};
  auto fail = [&](const std::string& why) { throw std::runtime_error(why); };
  f.write(head.data(), std::streamsize(head.size()));
  uint64_t written = 0;
  std::vector<uint8_t> row;
  std::vector<float> converted;  // one row of a typed_src tensor
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const GgufTensorOut& t = tensors[i];
    f.write(std::string(offsets[i] - written, '\0').data(), std::streamsize(offsets[i] - written));
    row.resize(ggml_row_bytes(t.type, t.cols));
    const std::size_t typed_row_bytes = t.typed_src ? kernels::dtype_row_bytes(t.src_dtype, int64_t(t.cols)) : 0;
    const uint64_t n_rows = (t.rows ? t.rows : 1) * (t.experts ? t.experts : 1);
    std::size_t part = 0;
    uint64_t part_first = 0;  // the tensor row where parts[part] begins
    for (uint64_t r = 0; r < n_rows; ++r) {
      if (stop.stop_requested()) fail("'" + path + "': stopped before it was complete; nothing was written");
      const uint64_t sr = t.row_order.empty() ? r : t.row_order[r];
      const float* src = t.src ? t.src + sr * t.cols : nullptr;
      if (!t.parts.empty()) {
        while (part < t.parts.size() && r >= part_first + t.parts[part].rows) part_first += t.parts[part++].rows;
        if (part == t.parts.size()) throw std::logic_error("GGUF tensor '" + t.name + "': its parts hold too few rows");
        const GgufTensorOut::Part& pt = t.parts[part];
        const uint8_t* row_src = static_cast<const uint8_t*>(pt.data) +
                                 (r - part_first) * kernels::dtype_row_bytes(pt.dtype, int64_t(t.cols));
        converted.resize(t.cols);
        kernels::dequantize_row(pt.dtype, row_src, converted.data(), int64_t(t.cols));
        src = converted.data();
      } else if (t.typed_src) {
        converted.resize(t.cols);
        kernels::dequantize_row(t.src_dtype, static_cast<const uint8_t*>(t.typed_src) + sr * typed_row_bytes,
                                converted.data(), int64_t(t.cols));
        src = converted.data();
      }
      switch (t.type) {
        case GgmlType::F32:
          std::memcpy(row.data(), src, row.size());
          break;
        case GgmlType::F16:
          quantize_f16(src, row.data(), t.cols);
          break;
        case GgmlType::Q8_0:
        case GgmlType::Q5_0:
        case GgmlType::Q4_K:
        case GgmlType::Q6_K:
          try {
            if (t.type == GgmlType::Q8_0) quantize_q8_0(src, row.data(), t.cols);
            if (t.type == GgmlType::Q5_0) quantize_q5_0(src, row.data(), t.cols);
            if (t.type == GgmlType::Q4_K) quantize_q4_k(src, row.data(), t.cols);
            if (t.type == GgmlType::Q6_K) quantize_q6_k(src, row.data(), t.cols);
          } catch (const std::invalid_argument& e) {
            fail("'" + path + "': tensor '" + t.name + "' row " + std::to_string(r) + ": " + e.what());
          }
          break;
        default:
          throw std::logic_error("unexpected GGUF output type");
      }
      f.write(reinterpret_cast<const char*>(row.data()), std::streamsize(row.size()));
    }
    written = offsets[i] + sizes[i];
  }
  f.close();
  if (!f) throw std::runtime_error("cannot write '" + tmp + "' (disk full?)");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(err));
  }
  partial.done = true;
}

GgufTensorOut gguf_tensor_copy(const GgufFile& f, const GgufTensorInfo& t) {
  const std::optional<kernels::DType> dt = dtype_of(t.type);
  if (!dt) throw std::runtime_error("tensor " + t.name + ": a type this writer cannot copy");
  GgufTensorOut o;
  o.name = t.name;
  o.cols = t.ne[0];
  o.rows = t.ne.size() > 1 ? t.ne[1] : 0;
  o.experts = t.ne.size() > 2 ? t.ne[2] : 0;
  o.type = t.type;
  o.typed_src = f.tensor_data(t);
  o.src_dtype = *dt;
  return o;
}

}  // namespace pagedchat
