// bfloat16 and IEEE binary16 conversions as host/device helpers: the same bit operations as the
// CPU's float_to_bf16 / bf16_to_float / fp32_to_fp16 / fp16_to_fp32 (kernels/quant/dtype.h:
// round to nearest even, NaN kept NaN, overflow to inf, subnormals exact), so KV-cache and weight
// values written on a GPU are bitwise those of the CPU (tests/kernels/test_host_device_math.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/host_device.h"

namespace pagedchat::kernels {

PC_HOST_DEVICE inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

PC_HOST_DEVICE inline float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// float32 -> bfloat16 bits, round to nearest even; a NaN stays a (quiet) NaN.
PC_HOST_DEVICE inline uint16_t bf16_from_float(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

/// bfloat16 bits -> the float32 they hold (exact).
PC_HOST_DEVICE inline float float_from_bf16(uint16_t b) { return bits_float(uint32_t(b) << 16); }

/// float32 -> binary16 bits, round to nearest even; >= 65520 in magnitude -> inf; NaN stays NaN.
PC_HOST_DEVICE inline uint16_t fp16_from_float(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
  if (ax < 0x38800000u) return uint16_t(sign | uint16_t(rintf(bits_float(ax) * 16777216.0f)));  // units of 2^-24
  const uint32_t r = ax - (112u << 23) + 0xfffu + ((ax >> 13) & 1u);
  return uint16_t(sign | (r >> 13));
}

/// binary16 bits -> float32, exact (a signalling NaN comes back quiet).
PC_HOST_DEVICE inline float float_from_fp16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = float(mant) * (1.0f / 16777216.0f);  // mant * 2^-24, exact
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0u));
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace pagedchat::kernels
