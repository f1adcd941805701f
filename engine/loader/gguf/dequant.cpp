// quantize_q8_0 computes what ggml's quantize_row_q8_0_ref computes (MIT; THIRD_PARTY_NOTICES).
#include "engine/loader/gguf/dequant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace pagedchat {
namespace {

constexpr uint32_t kQK = 32;  // QK8_0 (ggml-common.h)

struct TypeRow {
  uint32_t id;
  GgmlTypeInfo info;
};
// Block sizes from ggml-common.h's static_asserts on each block struct.
constexpr TypeRow kTypes[] = {
    {0, {"f32", 1, 4}},         {1, {"f16", 1, 2}},         {2, {"q4_0", 32, 18}},      {3, {"q4_1", 32, 20}},
    {6, {"q5_0", 32, 22}},      {7, {"q5_1", 32, 24}},      {8, {"q8_0", 32, 34}},      {9, {"q8_1", 32, 36}},
    {10, {"q2_K", 256, 84}},    {11, {"q3_K", 256, 110}},   {12, {"q4_K", 256, 144}},   {13, {"q5_K", 256, 176}},
    {14, {"q6_K", 256, 210}},   {15, {"q8_K", 256, 292}},   {16, {"iq2_xxs", 256, 66}}, {17, {"iq2_xs", 256, 74}},
    {18, {"iq3_xxs", 256, 98}}, {19, {"iq1_s", 256, 50}},   {20, {"iq4_nl", 32, 18}},   {21, {"iq3_s", 256, 110}},
    {22, {"iq2_s", 256, 82}},   {23, {"iq4_xs", 256, 136}}, {24, {"i8", 1, 1}},         {25, {"i16", 1, 2}},
    {26, {"i32", 1, 4}},        {27, {"i64", 1, 8}},        {28, {"f64", 1, 8}},        {29, {"iq1_m", 256, 56}},
    {30, {"bf16", 1, 2}},       {34, {"tq1_0", 256, 54}},   {35, {"tq2_0", 256, 66}},   {39, {"mxfp4", 32, 17}},
};

void store_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v & 0xFF);
  p[1] = uint8_t(v >> 8);
}

}  // namespace

GgmlTypeInfo ggml_type_info(uint32_t type) {
  for (const auto& t : kTypes)
    if (t.id == type) return t.info;
  return {};
}

std::string ggml_type_name(uint32_t type) {
  const GgmlTypeInfo t = ggml_type_info(type);
  return t.name ? std::string(t.name) : "type " + std::to_string(type);
}

std::optional<kernels::DType> dtype_of(GgmlType type) {
  using kernels::DType;
  switch (type) {
    case GgmlType::F32:
      return DType::kF32;
    case GgmlType::F16:
      return DType::kF16;
    case GgmlType::BF16:
      return DType::kBF16;
    case GgmlType::Q4_0:
      return DType::kQ4_0;
    case GgmlType::Q4_1:
      return DType::kQ4_1;
    case GgmlType::Q5_0:
      return DType::kQ5_0;
    case GgmlType::Q5_1:
      return DType::kQ5_1;
    case GgmlType::Q8_0:
      return DType::kQ8_0;
    case GgmlType::Q4_K:
      return DType::kQ4_K;
    case GgmlType::Q5_K:
      return DType::kQ5_K;
    case GgmlType::Q6_K:
      return DType::kQ6_K;
    case GgmlType::MXFP4:
      return DType::kMXFP4;
    case GgmlType::IQ4_NL:
      return DType::kIQ4_NL;
    case GgmlType::IQ4_XS:
      return DType::kIQ4_XS;
    default:
      return std::nullopt;
  }
}

bool can_dequantize(GgmlType type) { return dtype_of(type).has_value(); }

float fp16_to_fp32(uint16_t h) { return kernels::fp16_to_fp32(h); }
uint16_t fp32_to_fp16(float f) { return kernels::fp32_to_fp16(f); }
float bf16_to_fp32(uint16_t h) { return kernels::bf16_to_float(h); }

std::size_t ggml_row_bytes(GgmlType type, uint64_t n) {
  const GgmlTypeInfo t = ggml_type_info(uint32_t(type));
  if (!t.name) throw std::invalid_argument("unknown ggml type " + std::to_string(uint32_t(type)));
  if (n % t.block_elems != 0)
    throw std::invalid_argument(std::to_string(n) + " values are not a whole number of " + t.name + " blocks of " +
                                std::to_string(t.block_elems));
  return std::size_t(n / t.block_elems * t.block_bytes);
}

void dequantize(GgmlType type, const void* src, float* dst, uint64_t n) {
  const std::optional<kernels::DType> t = dtype_of(type);
  if (!t) throw std::invalid_argument("cannot dequantize ggml type " + ggml_type_name(uint32_t(type)));
  kernels::dequantize_row(*t, src, dst, int64_t(n));
}

void quantize_f16(const float* src, void* dst, uint64_t n) {
  uint8_t* p = static_cast<uint8_t*>(dst);
  for (uint64_t i = 0; i < n; ++i) store_u16(p + 2 * i, fp32_to_fp16(src[i]));
}

void quantize_q8_0(const float* src, void* dst, uint64_t n) {
  if (n % kQK != 0) throw std::invalid_argument("Q8_0 needs a multiple of 32 values, got " + std::to_string(n));
  uint8_t* p = static_cast<uint8_t*>(dst);
  for (uint64_t b = 0; b < n / kQK; ++b, src += kQK, p += 34) {
    float amax = 0.0f;
    for (uint32_t j = 0; j < kQK; ++j) {
      if (!std::isfinite(src[j]))
        throw std::invalid_argument("Q8_0: value " + std::to_string(b * kQK + j) + " is not finite");
      amax = std::max(amax, std::fabs(src[j]));
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(p, fp32_to_fp16(d));
    for (uint32_t j = 0; j < kQK; ++j) p[2 + j] = uint8_t(int8_t(std::round(src[j] * id)));
  }
}

}  // namespace pagedchat
