// V: 16 float lanes in plain C++ (the scalar fallback of the CPU kernels). Every operation is the
// IEEE operation the vector versions (simd_avx2.h, simd_avx512.h) perform lane by lane — std::fma
// for fused multiply-add, the same reduction tree, the same exp polynomial — so kernels written
// against V give bitwise the same results on every instruction set.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/ops.h"
#include "kernels/quant/dtype.h"

#define PC_TARGET_SCALAR

namespace pagedchat::cpu::isa_scalar {

struct V {
  float v[16];
  /// How many V values fit in the vector registers (as AVX2: it only steers loop blocking).
  static constexpr int kRegisters = 8;

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
    for (int i = 0; i < n; ++i) r.v[i] = kernels::fp16_to_fp32(p[i]);
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
  /// c - a * b, one rounding (fma(-a, b, c)).
  static V fnma(V a, V b, V c) {
    for (int i = 0; i < 16; ++i) c.v[i] = std::fma(-a.v[i], b.v[i], c.v[i]);
    return c;
  }
#define PC_SCALAR_BINOP(name, expr)             \
  static V name(V a, V b) {                     \
    for (int i = 0; i < 16; ++i) a.v[i] = expr; \
    return a;                                   \
  }
  PC_SCALAR_BINOP(add, a.v[i] + b.v[i])
  PC_SCALAR_BINOP(sub, a.v[i] - b.v[i])
  PC_SCALAR_BINOP(mul, a.v[i] * b.v[i])
  PC_SCALAR_BINOP(div, a.v[i] / b.v[i])
  PC_SCALAR_BINOP(max, a.v[i] > b.v[i] ? a.v[i] : b.v[i])
  PC_SCALAR_BINOP(min, a.v[i] < b.v[i] ? a.v[i] : b.v[i])
  static V abs(V a) {
    for (float& x : a.v) x = std::fabs(x);
    return a;
  }
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
  /// 16 IEEE binary16 values widened (exact).
  static V load_f16(const uint16_t* p) {
    V r;
    for (int i = 0; i < 16; ++i) r.v[i] = kernels::fp16_to_fp32(p[i]);
    return r;
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

// The integer side of the quantized GEMM (quant_impl.inc). QB: 64 bytes, 4 per lane (lane r =
// bytes 4r..4r+3, one output row of a panel); QI: 16 int32 lanes. Every operation is exact.
struct QB {
  uint8_t b[64];
};
struct QI {
  int32_t v[16];
};
struct QOps {
  static QB load(const uint8_t* p) {
    QB r;
    std::memcpy(r.b, p, 64);
    return r;
  }
  static QB andc(QB a, uint8_t c) {
    for (auto& x : a.b) x &= c;
    return a;
  }
  static QB or_(QB a, QB b) {
    for (int i = 0; i < 64; ++i) a.b[i] |= b.b[i];
    return a;
  }
  /// Shifts of each 32-bit lane.
  template <int S>
  static QB shl(QB a) {
    for (int l = 0; l < 16; ++l) {
      uint32_t u;
      std::memcpy(&u, a.b + 4 * l, 4);
      u <<= S;
      std::memcpy(a.b + 4 * l, &u, 4);
    }
    return a;
  }
  template <int S>
  static QB shr(QB a) {
    for (int l = 0; l < 16; ++l) {
      uint32_t u;
      std::memcpy(&u, a.b + 4 * l, 4);
      u >>= S;
      std::memcpy(a.b + 4 * l, &u, 4);
    }
    return a;
  }
  static QB lo4(QB a) { return andc(a, 0x0F); }
  static QB hi4(QB a) { return andc(shr<4>(a), 0x0F); }
  /// Per byte: tab[a] (a in 0..15: the bytes of lo4 / hi4), a 16-entry table lookup (pshufb).
  static QB lut16(QB a, const uint8_t* tab) {
    for (auto& x : a.b) x = tab[x & 15];
    return a;
  }
  /// Whether dot_u is exact for bytes above 127 (no int16 saturation): then quant_impl.inc keeps
  /// 4-bit types' high nibbles in place and divides their sum by 16 with sra4.
  static constexpr bool kHiInPlace = true;
  /// No int16 stage (see simd_avx2.h): quant_impl.inc sums words with dot_u.
  static constexpr bool kI16Sums = false;
  /// Arithmetic shift right by 4 of each lane (exact on multiples of 16).
  static QI sra4(QI a) {
    for (auto& x : a.v) x >>= 4;
    return a;
  }
  static QI izero() {
    QI r;
    for (auto& x : r.v) x = 0;
    return r;
  }
  /// acc + per lane sum_b w[b] * x[b]: w unsigned bytes, x the 4 signed bytes of the word x4.
  static QI dot_u(QI acc, QB w, int32_t x4) {
    int8_t x[4];
    std::memcpy(x, &x4, 4);
    for (int l = 0; l < 16; ++l)
      for (int b = 0; b < 4; ++b) acc.v[l] += int32_t(w.b[4 * l + b]) * x[b];
    return acc;
  }
  /// The same with signed weights, prepared by prep_s8; fin_s8 finishes a group's sum.
  static QB prep_s8(QB w) { return w; }
  static QI dot_s(QI acc, QB w, int32_t x4) {
    int8_t x[4];
    std::memcpy(x, &x4, 4);
    for (int l = 0; l < 16; ++l)
      for (int b = 0; b < 4; ++b) acc.v[l] += int32_t(int8_t(w.b[4 * l + b])) * x[b];
    return acc;
  }
  static QI fin_s8(QI s, int32_t) { return s; }
  static QI iadd(QI a, QI b) {
    for (int i = 0; i < 16; ++i) a.v[i] += b.v[i];
    return a;
  }
  static QI isub(QI a, int32_t c) {
    for (auto& x : a.v) x -= c;
    return a;
  }
  static V to_float(QI a) {
    V r;
    for (int i = 0; i < 16; ++i) r.v[i] = float(a.v[i]);
    return r;
  }
  /// 16 little-endian binary16 / uint8 / int8 values as floats (exact).
  static V load_h16(const uint8_t* p) {
    V r;
    for (int i = 0; i < 16; ++i) r.v[i] = kernels::fp16_to_fp32(uint16_t(p[2 * i] | (p[2 * i + 1] << 8)));
    return r;
  }
  static V load_u8f(const uint8_t* p) {
    V r;
    for (int i = 0; i < 16; ++i) r.v[i] = float(p[i]);
    return r;
  }
  static V load_i8f(const uint8_t* p) {
    V r;
    for (int i = 0; i < 16; ++i) r.v[i] = float(int8_t(p[i]));
    return r;
  }
  /// 16 E8M0 exponent bytes as E8M0_HALF floats, 2^(e - 128) (kernels::e8m0_half_to_fp32, exact).
  static V load_e8m0_half(const uint8_t* p) {
    V r;
    for (int i = 0; i < 16; ++i) r.v[i] = kernels::e8m0_half_to_fp32(p[i]);
    return r;
  }
  /// Rounds 16 floats (|a| < 128) to the nearest integer, ties to even (std::nearbyint in the
  /// default rounding mode), stores them as int8 in dst[0..15] and returns their sum.
  static int32_t round_i8(V a, int8_t* dst) {
    int32_t sum = 0;
    for (int i = 0; i < 16; ++i) {
      const int q = int(std::nearbyint(a.v[i]));
      dst[i] = int8_t(q);
      sum += q;
    }
    return sum;
  }
};

}  // namespace pagedchat::cpu::isa_scalar
