#include "kernels/quant/dtype.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/float16_math.h"
#include "kernels/quant/block_fields.h"

namespace pagedchat::kernels {
namespace {

constexpr int kQK = 32;     // QK4_0 == QK4_1 == QK5_0 == QK5_1 == QK8_0 (ggml-common.h)
constexpr int kQK_K = 256;  // super-block of the K-quants

struct Info {
  const char* name;
  int elems, bytes;
};
// Sizes from ggml-common.h's static_asserts on each block struct.
constexpr Info kInfo[] = {
    {"f32", 1, 4},    {"f16", 1, 2},    {"bf16", 1, 2},     {"q4_0", 32, 18},   {"q4_1", 32, 20},   {"q5_0", 32, 22},
    {"q5_1", 32, 24}, {"q8_0", 32, 34}, {"q4_K", 256, 144}, {"q5_K", 256, 176}, {"q6_K", 256, 210},
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == sizeof(kAllDTypes) / sizeof(kAllDTypes[0]));

const Info& info(DType t) { return kInfo[int(t)]; }

using block_fields::scale_min_k4;
uint16_t load_u16(const uint8_t* p) { return block_fields::u16(p); }
uint32_t load_u32(const uint8_t* p) { return block_fields::u32(p); }
float load_half(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }

// block_q4_0 { half d; uint8 qs[16]; }: value j (< 16) is the low nibble of qs[j], j + 16 the high
// one; x = (q - 8) * d.
void dequant_q4_0(const uint8_t* b, float* y) {
  const float d = load_half(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = float(int(qs[j] & 0x0F) - 8) * d;
    y[j + kQK / 2] = float(int(qs[j] >> 4) - 8) * d;
  }
}

// block_q4_1 { half d; half m; uint8 qs[16]; }: x = q * d + m.
void dequant_q4_1(const uint8_t* b, float* y) {
  const float d = load_half(b), m = load_half(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = float(qs[j] & 0x0F) * d + m;
    y[j + kQK / 2] = float(qs[j] >> 4) * d + m;
  }
}

// block_q5_0 { half d; uint8 qh[4]; uint8 qs[16]; }: bit j of qh (little-endian uint32) is the
// fifth bit of value j; x = (q - 16) * d.
void dequant_q5_0(const uint8_t* b, float* y) {
  const float d = load_half(b);
  const uint32_t qh = load_u32(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < kQK / 2; ++j) {
    const int h0 = int((qh >> j) << 4 & 0x10), h1 = int(qh >> (j + 12) & 0x10);
    y[j] = float(int((qs[j] & 0x0F) | h0) - 16) * d;
    y[j + kQK / 2] = float(int((qs[j] >> 4) | h1) - 16) * d;
  }
}

// block_q5_1 { half d; half m; uint8 qh[4]; uint8 qs[16]; }: x = q * d + m.
void dequant_q5_1(const uint8_t* b, float* y) {
  const float d = load_half(b), m = load_half(b + 2);
  const uint32_t qh = load_u32(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < kQK / 2; ++j) {
    const int h0 = int((qh >> j) << 4 & 0x10), h1 = int(qh >> (j + 12) & 0x10);
    y[j] = float((qs[j] & 0x0F) | h0) * d + m;
    y[j + kQK / 2] = float((qs[j] >> 4) | h1) * d + m;
  }
}

// block_q8_0 { half d; int8 qs[32]; }: x = q * d.
void dequant_q8_0(const uint8_t* b, float* y) {
  const float d = load_half(b);
  for (int j = 0; j < kQK; ++j) y[j] = float(int8_t(b[2 + j])) * d;
}

// block_q4_K { half d; half dmin; uint8 scales[12]; uint8 qs[128]; }: 8 sub-blocks of 32; each 64
// values use 32 bytes of qs, low nibbles first; x = d * sc * q - dmin * m.
void dequant_q4_K(const uint8_t* b, float* y) {
  const float d = load_half(b), dmin = load_half(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  for (int j = 0, is = 0; j < kQK_K; j += 64, q += 32, is += 2) {
    uint8_t sc, m;
    scale_min_k4(is, scales, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(is + 1, scales, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
  }
}

// block_q5_K { half d; half dmin; uint8 scales[12]; uint8 qh[32]; uint8 qs[128]; }: as q4_K with a
// fifth bit per value in qh (bit 2i of qh[l] for the low nibbles of the i-th 64, bit 2i+1 for
// the high ones).
void dequant_q5_K(const uint8_t* b, float* y) {
  const float d = load_half(b), dmin = load_half(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* ql = b + 48;
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0, is = 0; j < kQK_K; j += 64, ql += 32, is += 2, u1 <<= 2, u2 <<= 2) {
    uint8_t sc, m;
    scale_min_k4(is, scales, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(is + 1, scales, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
  }
}

// block_q6_K { uint8 ql[128]; uint8 qh[64]; int8 scales[16]; half d; }: 6-bit values (low 4 bits
// in ql, high 2 bits in qh) minus 32, times d * scales[one per 16 values].
void dequant_q6_K(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = load_half(b + 208);
  for (int n = 0; n < kQK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
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
  }
}

}  // namespace

const char* dtype_name(DType t) { return info(t).name; }
int dtype_block_elems(DType t) { return info(t).elems; }
int dtype_block_bytes(DType t) { return info(t).bytes; }
bool dtype_is_quantized(DType t) { return info(t).elems > 1; }

std::size_t dtype_row_bytes(DType t, int64_t n) {
  const Info& i = info(t);
  if (n < 0 || n % i.elems != 0)
    throw std::invalid_argument(std::to_string(n) + " values are not a whole number of " + i.name + " blocks of " +
                                std::to_string(i.elems));
  return std::size_t(n / i.elems) * std::size_t(i.bytes);
}

// One implementation of the conversions for the CPU and the GPU: kernels/float16_math.h.
float fp16_to_fp32(uint16_t h) { return float_from_fp16(h); }
uint16_t fp32_to_fp16(float f) { return fp16_from_float(f); }
uint16_t float_to_bf16(float x) { return bf16_from_float(x); }
float bf16_to_float(uint16_t b) { return float_from_bf16(b); }

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  const std::size_t bytes = dtype_row_bytes(t, n);
  const uint8_t* p = static_cast<const uint8_t*>(src);
  const int be = dtype_block_bytes(t), ne = dtype_block_elems(t);
  void (*block)(const uint8_t*, float*) = nullptr;
  switch (t) {
    case DType::kF32:
      std::memcpy(dst, p, bytes);
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(load_u16(p + 2 * i));
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(load_u16(p + 2 * i));
      return;
    case DType::kQ4_0:
      block = dequant_q4_0;
      break;
    case DType::kQ4_1:
      block = dequant_q4_1;
      break;
    case DType::kQ5_0:
      block = dequant_q5_0;
      break;
    case DType::kQ5_1:
      block = dequant_q5_1;
      break;
    case DType::kQ8_0:
      block = dequant_q8_0;
      break;
    case DType::kQ4_K:
      block = dequant_q4_K;
      break;
    case DType::kQ5_K:
      block = dequant_q5_K;
      break;
    case DType::kQ6_K:
      block = dequant_q6_K;
      break;
  }
  for (int64_t b = 0; b < n / ne; ++b) block(p + b * be, dst + b * ne);
}

void dequantize_row_as(DType from, DType to, const void* src, float* dst, int64_t n) {
  dequantize_row(from, src, dst, n);
  if (to == from) return;
  if (to == DType::kBF16)
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(float_to_bf16(dst[i]));
  else if (to == DType::kF16)
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(fp32_to_fp16(dst[i]));
  else if (to != DType::kF32)
    throw std::invalid_argument(std::string("a ") + dtype_name(from) + " matrix cannot be stored as " + dtype_name(to));
}

}  // namespace pagedchat::kernels
