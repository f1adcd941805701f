#include "engine/loader/gguf/dequant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace pagedchat {
namespace {

constexpr uint32_t kQK = 32;     // QK4_0 == QK8_0 (ggml-common.h)
constexpr uint32_t kQK_K = 256;  // super-block of the k-quants (ggml-common.h)

struct TypeRow {
  uint32_t id;
  GgmlTypeInfo info;
};
// Block sizes from ggml-common.h's static_asserts on each block struct.
constexpr TypeRow kTypes[] = {
    {0, {"f32", 1, 4}},          {1, {"f16", 1, 2}},          {2, {"q4_0", 32, 18}},
    {3, {"q4_1", 32, 20}},       {6, {"q5_0", 32, 22}},       {7, {"q5_1", 32, 24}},
    {8, {"q8_0", 32, 34}},       {9, {"q8_1", 32, 36}},       {10, {"q2_K", 256, 84}},
    {11, {"q3_K", 256, 110}},    {12, {"q4_K", 256, 144}},    {13, {"q5_K", 256, 176}},
    {14, {"q6_K", 256, 210}},    {15, {"q8_K", 256, 292}},    {16, {"iq2_xxs", 256, 66}},
    {17, {"iq2_xs", 256, 74}},   {18, {"iq3_xxs", 256, 98}},  {19, {"iq1_s", 256, 50}},
    {20, {"iq4_nl", 32, 18}},    {21, {"iq3_s", 256, 110}},   {22, {"iq2_s", 256, 82}},
    {23, {"iq4_xs", 256, 136}},  {24, {"i8", 1, 1}},          {25, {"i16", 1, 2}},
    {26, {"i32", 1, 4}},         {27, {"i64", 1, 8}},         {28, {"f64", 1, 8}},
    {29, {"iq1_m", 256, 56}},    {30, {"bf16", 1, 2}},        {34, {"tq1_0", 256, 54}},
    {35, {"tq2_0", 256, 66}},
};

uint16_t load_u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
void store_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v & 0xFF);
  p[1] = uint8_t(v >> 8);
}
float load_half(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }

// block_q4_0 { ggml_half d; uint8_t qs[16]; }: value j (< 16) is low nibble of qs[j], value j + 16
// the high nibble; x = (q - 8) * d.
void dequant_q4_0(const uint8_t* b, float* y) {
  const float d = load_half(b);
  const uint8_t* qs = b + 2;
  for (uint32_t j = 0; j < kQK / 2; ++j) {
    y[j] = float(int(qs[j] & 0x0F) - 8) * d;
    y[j + kQK / 2] = float(int(qs[j] >> 4) - 8) * d;
  }
}

// block_q8_0 { ggml_half d; int8_t qs[32]; }: x = q * d.
void dequant_q8_0(const uint8_t* b, float* y) {
  const float d = load_half(b);
  for (uint32_t j = 0; j < kQK; ++j) y[j] = float(int8_t(b[2 + j])) * d;
}

// get_scale_min_k4 (ggml-quants.c): 8 six-bit scales and 8 six-bit mins packed in 12 bytes.
void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// block_q4_K { ggml_half d; ggml_half dmin; uint8_t scales[12]; uint8_t qs[128]; }: 8 sub-blocks of
// 32; each 64 values use 32 bytes of qs, low nibbles first; x = d * sc * q - dmin * m.
void dequant_q4_K(const uint8_t* b, float* y) {
  const float d = load_half(b), dmin = load_half(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  int is = 0;
  for (uint32_t j = 0; j < kQK_K; j += 64) {
    uint8_t sc, m;
    scale_min_k4(is, scales, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(is + 1, scales, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
    q += 32;
    is += 2;
  }
}

// block_q6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; ggml_half d; }: 6-bit values
// (low 4 bits in ql, high 2 bits in qh) minus 32, times d * scales[one per 16 values].
void dequant_q6_K(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = load_half(b + 208);
  for (uint32_t n = 0; n < kQK_K; n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * float(sc[is + 0]) * float(q1);
      y[l + 32] = d * float(sc[is + 2]) * float(q2);
      y[l + 64] = d * float(sc[is + 4]) * float(q3);
      y[l + 96] = d * float(sc[is + 6]) * float(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
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

bool can_dequantize(GgmlType type) {
  switch (type) {
    case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::Q8_0:
    case GgmlType::Q4_0: case GgmlType::Q4_K: case GgmlType::Q6_K:
      return true;
    default:
      return false;
  }
}

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    const float v = std::ldexp(float(mant), -24);  // zero or subnormal: mant * 2^-24, exact
    return sign ? -v : v;
  }
  if (exp == 31) bits = sign | 0x7F800000u | (mant << 13);  // inf / NaN
  else bits = sign | ((exp + 112) << 23) | (mant << 13);    // rebias 15 -> 127
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t fp32_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return uint16_t(sign | 0x7E00 | ((ax >> 13) & 0x3FF));  // NaN stays NaN
  if (ax >= 0x477FF000u) return uint16_t(sign | 0x7C00);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {                                  // below 2^-14: subnormal half
    float a;
    std::memcpy(&a, &ax, sizeof a);
    return uint16_t(sign | uint16_t(std::nearbyint(a * 16777216.0f)));  // units of 2^-24, RNE
  }
  const uint32_t r = ax - (112u << 23) + 0xFFFu + ((ax >> 13) & 1u);  // round to nearest even
  return uint16_t(sign | (r >> 13));
}

float bf16_to_fp32(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::size_t ggml_row_bytes(GgmlType type, uint64_t n) {
  const GgmlTypeInfo t = ggml_type_info(uint32_t(type));
  if (!t.name) throw std::invalid_argument("unknown ggml type " + std::to_string(uint32_t(type)));
  if (n % t.block_elems != 0)
    throw std::invalid_argument(std::to_string(n) + " values are not a whole number of " + t.name + " blocks of " +
                                std::to_string(t.block_elems));
  return std::size_t(n / t.block_elems * t.block_bytes);
}

void dequantize(GgmlType type, const void* src, float* dst, uint64_t n) {
  if (!can_dequantize(type))
    throw std::invalid_argument("cannot dequantize ggml type " + ggml_type_name(uint32_t(type)));
  const std::size_t bytes = ggml_row_bytes(type, n);
  const uint8_t* p = static_cast<const uint8_t*>(src);
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, p, bytes);
      return;
    case GgmlType::F16:
      for (uint64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(load_u16(p + 2 * i));
      return;
    case GgmlType::BF16:
      for (uint64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(load_u16(p + 2 * i));
      return;
    case GgmlType::Q8_0:
      for (uint64_t b = 0; b < n / kQK; ++b) dequant_q8_0(p + b * 34, dst + b * kQK);
      return;
    case GgmlType::Q4_0:
      for (uint64_t b = 0; b < n / kQK; ++b) dequant_q4_0(p + b * 18, dst + b * kQK);
      return;
    case GgmlType::Q4_K:
      for (uint64_t b = 0; b < n / kQK_K; ++b) dequant_q4_K(p + b * 144, dst + b * kQK_K);
      return;
    case GgmlType::Q6_K:
      for (uint64_t b = 0; b < n / kQK_K; ++b) dequant_q6_K(p + b * 210, dst + b * kQK_K);
      return;
    default:
      break;
  }
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
