// V: 16 float lanes in plain C++ (the scalar fallback of the CPU kernels). Every operation is the
// IEEE operation the vector versions (simd_avx2.h, simd_avx512.h) perform lane by lane — std::fma
// for fused multiply-add, the same reduction tree, the same exp polynomial — so kernels written
// against V give bitwise the same results on every instruction set.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/ops.h"

#define PC_TARGET_SCALAR

namespace pagedchat::cpu::isa_scalar {

struct V {
  float v[16];

  static V zero() { return set1(0.0f); }
  static V set1(float x) {
    V r;
    for (int i = 0; i < 16; ++i) r.v[i] = x;
    return r;
  }
  static V load(const float* p) {
    V r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  /// The first n (0..16) lanes from p, the others 0.
  static V load_n(const float* p, int n) {
    V r = zero();
    for (int i = 0; i < n; ++i) r.v[i] = p[i];
    return r;
  }
  /// The first n (0..16) bfloat16 (bits) from p widened to float (exact), the others 0.
  static V load_bf16_n(const uint16_t* p, int n) {
    V r = zero();
    for (int i = 0; i < n; ++i) {
      const uint32_t u = uint32_t(p[i]) << 16;
      std::memcpy(&r.v[i], &u, 4);
    }
    return r;
  }
  /// The first n (0..16) binary16 (bits) from p widened to float (exact, as vcvtph2ps), the others 0.
  static V load_f16_n(const uint16_t* p, int n) {
    V r = zero();
    for (int i = 0; i < n; ++i) r.v[i] = kernels::fp16_to_float(p[i]);
    return r;
  }
  void store(float* p) const { std::memcpy(p, v, sizeof v); }
  void store_n(float* p, int n) const {
    for (int i = 0; i < n; ++i) p[i] = v[i];
  }
  /// a * b + c, one rounding.
  static V fma(V a, V b, V c) {
    for (int i = 0; i < 16; ++i) c.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
    return c;
  }
#define PC_SCALAR_BINOP(name, expr)            \
  static V name(V a, V b) {                    \
    for (int i = 0; i < 16; ++i) a.v[i] = expr; \
    return a;                                  \
  }
  PC_SCALAR_BINOP(add, a.v[i] + b.v[i])
  PC_SCALAR_BINOP(sub, a.v[i] - b.v[i])
  PC_SCALAR_BINOP(mul, a.v[i] * b.v[i])
  PC_SCALAR_BINOP(div, a.v[i] / b.v[i])
  PC_SCALAR_BINOP(max, a.v[i] > b.v[i] ? a.v[i] : b.v[i])
#undef PC_SCALAR_BINOP
  /// Lanes added as the tree (i, i+8), (i, i+4), (i, i+2), (i, i+1).
  static float reduce_add(V a) {
    for (int w = 8; w >= 1; w /= 2)
      for (int i = 0; i < w; ++i) a.v[i] += a.v[i + w];
    return a.v[0];
  }
  /// Lane p = reduce_add(a[p]), bitwise (the same tree for each).
  static V reduce_add16(const V* a) {
    V r;
    for (int p = 0; p < 16; ++p) r.v[p] = reduce_add(a[p]);
    return r;
  }
  static float reduce_max(V a) {
    for (int w = 8; w >= 1; w /= 2)
      for (int i = 0; i < w; ++i) a.v[i] = a.v[i] > a.v[i + w] ? a.v[i] : a.v[i + w];
    return a.v[0];
  }
  /// 16 bfloat16 pairs (32 bits each: low half the even element) as two float vectors.
  static void load_bf16_pairs(const uint16_t* p, V& even, V& odd) {
    for (int i = 0; i < 16; ++i) {
      const uint32_t e = uint32_t(p[2 * i]) << 16, o = uint32_t(p[2 * i + 1]) << 16;
      std::memcpy(&even.v[i], &e, 4);
      std::memcpy(&odd.v[i], &o, 4);
    }
  }
  /// Each lane rounded to the nearest bfloat16 (ties to even), as a float.
  static V round_bf16(V a) {
    for (int i = 0; i < 16; ++i) {
      uint32_t u;
      std::memcpy(&u, &a.v[i], 4);
      u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
      std::memcpy(&a.v[i], &u, 4);
    }
    return a;
  }
  /// exp(x): Cephes' expf polynomial (about 1 ulp); 0 below -87.3, exp(88) above 88.
  static V exp(V x) {
    for (int i = 0; i < 16; ++i) x.v[i] = exp1(x.v[i]);
    return x;
  }
  static float exp1(float x) {
    if (x != x) return x;  // NaN
    const bool under = x < -87.3f;
    x = x > 88.0f ? 88.0f : (x < -87.3f ? -87.3f : x);
    const float n = std::nearbyint(x * 1.44269504088896341f);
    float r = std::fma(n, -0.693359375f, x);
    r = std::fma(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = std::fma(p, r, 1.3981999507e-3f);
    p = std::fma(p, r, 8.3334519073e-3f);
    p = std::fma(p, r, 4.1665795894e-2f);
    p = std::fma(p, r, 1.6666665459e-1f);
    p = std::fma(p, r, 5.0000001201e-1f);
    const float r2 = r * r;
    p = std::fma(p, r2, r) + 1.0f;
    const uint32_t bits = uint32_t(int32_t(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, 4);
    return under ? 0.0f : p * scale;
  }
};

}  // namespace pagedchat::cpu::isa_scalar
