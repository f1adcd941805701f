#include "kernels/quant/dtype.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/float16_math.h"
#include "kernels/quant/block_decode.h"

namespace pagedchat::kernels {
namespace {

struct Info {
  const char* name;
  int elems, bytes;
};
// Sizes from ggml-common.h's static_asserts on each block struct.
constexpr Info kInfo[] = {
    {"f32", 1, 4},      {"f16", 1, 2},     {"bf16", 1, 2},     {"q4_0", 32, 18},     {"q4_1", 32, 20},
    {"q5_0", 32, 22},   {"q5_1", 32, 24},  {"q8_0", 32, 34},   {"q4_K", 256, 144},   {"q5_K", 256, 176},
    {"q6_K", 256, 210}, {"mxfp4", 32, 17}, {"iq4_nl", 32, 18}, {"iq4_xs", 256, 136},
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == sizeof(kAllDTypes) / sizeof(kAllDTypes[0]));

const Info& info(DType t) { return kInfo[int(t)]; }

uint16_t load_u16(const uint8_t* p) { return load_le16(p); }

// The float value of every code of a decoded block: y = step_g * (q - zero) (+ offset_g), with a
// step (and an offset) per group of `group` values. The products and sums are single IEEE
// float32 operations in this order (no fused multiply-add: kernels/CMakeLists.txt), which is
// what GGUF readers compute: d (q - zero) for Q4_0 / Q5_0 / Q8_0; d q + m for Q4_1 / Q5_1;
// (d sc) q - dmin mn for Q4_K / Q5_K (the offset is -(dmin mn): x + (-y) is x - y, bit for bit);
// (d sc) (q - 32) for Q6_K.
struct Affine {
  int group = 32, zero = 0;
  bool has_offset = false;
  float step[16] = {}, offset[16] = {};
};

Affine affine_of(DType t, const DecodedBlock& b) {
  const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
  Affine a;
  switch (t) {
    case DType::kQ4_0:
    case DType::kQ5_0:
      a.zero = t == DType::kQ4_0 ? 8 : 16;
      a.step[0] = d;
      break;
    case DType::kQ8_0:
      a.step[0] = d;
      break;
    case DType::kQ4_1:
    case DType::kQ5_1:
      a.step[0] = d;
      a.offset[0] = m;
      a.has_offset = true;
      break;
    case DType::kQ4_K:
    case DType::kQ5_K:
      for (int g = 0; g < 8; ++g) {
        a.step[g] = d * float(b.sc[g]);
        a.offset[g] = -(m * float(b.mn[g]));
      }
      a.has_offset = true;
      break;
    case DType::kQ6_K:
      a.group = 16;
      a.zero = 32;
      for (int g = 0; g < 16; ++g) a.step[g] = d * float(b.sc6[g]);
      break;
    default:
      throw std::invalid_argument(std::string(dtype_name(t)) + " is not a block quantization");
  }
  return a;
}

void dequantize_block(DType t, const uint8_t* src, float* y) {
  DecodedBlock b;
  decode_block(t, src, b);
  if (t == DType::kMXFP4) {  // ggml's dequantize_row_mxfp4: kvalues_mxfp4[q] * E8M0_HALF(e), one product
    const float d = e8m0_half_to_fp32(b.e);
    for (int v = 0; v < 32; ++v) y[v] = float(kMxfp4Values[b.q[v]]) * d;
    return;
  }
  if (t == DType::kIQ4_NL || t == DType::kIQ4_XS) {
    // ggml's dequantize_row_iq4_nl / _iq4_xs: the group's scale (d, or d * (ls - 32) as one
    // float product) times the table value.
    const float d = fp16_to_fp32(b.d);
    for (int g = 0; g < b.groups; ++g) {
      const float dl = t == DType::kIQ4_XS ? d * float(int(b.sc[g]) - 32) : d;
      for (int v = 32 * g; v < 32 * g + 32; ++v) y[v] = dl * float(kIq4nlValues[b.q[v]]);
    }
    return;
  }
  const Affine a = affine_of(t, b);
  const int n = dtype_block_elems(t);
  for (int v = 0; v < n; ++v) {
    const int g = v / a.group;
    y[v] = float(b.q[v] - a.zero) * a.step[g];
    if (a.has_offset) y[v] = y[v] + a.offset[g];
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

float e8m0_half_to_fp32(uint8_t e) {
  const uint32_t bits = e8m0_half_bits(e);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

bool mxfp4_row_valid(const void* row, int64_t n, int64_t* bad_block) {
  const int64_t blocks = int64_t(dtype_row_bytes(DType::kMXFP4, n) / 17);
  const uint8_t* p = static_cast<const uint8_t*>(row);
  for (int64_t b = 0; b < blocks; ++b)
    if (p[17 * b] == 0xFF) {
      if (bad_block) *bad_block = b;
      return false;
    }
  return true;
}

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  const std::size_t bytes = dtype_row_bytes(t, n);
  const uint8_t* p = static_cast<const uint8_t*>(src);
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
    default:
      break;
  }
  const int be = dtype_block_bytes(t), ne = dtype_block_elems(t);
  for (int64_t b = 0; b < n / ne; ++b) dequantize_block(t, p + b * be, dst + b * ne);
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
