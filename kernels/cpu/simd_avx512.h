// V: 16 float lanes in one AVX-512 register. Same operations, lane by lane, as simd_scalar.h (see
// there); every function carries the target attribute, so this header is only included by the
// kernels_avx512*.cpp translation units, and only called after runtime dispatch chose AVX-512.
#pragma once

#include <immintrin.h>

#include <cstdint>

#define PC_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define PC_TARGET_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))

namespace pagedchat::cpu::isa_avx512 {

struct V {
  __m512 v;
  /// How many V values fit in the vector registers (32 zmm registers).
  static constexpr int kRegisters = 32;

  PC_TARGET_AVX512 static inline V zero() { return {_mm512_setzero_ps()}; }
  PC_TARGET_AVX512 static inline V set1(float x) { return {_mm512_set1_ps(x)}; }
  PC_TARGET_AVX512 static inline V load(const float* p) { return {_mm512_loadu_ps(p)}; }
  PC_TARGET_AVX512 static inline __mmask16 mask(int n) { return __mmask16((1u << n) - 1u); }
  PC_TARGET_AVX512 static inline V load_n(const float* p, int n) { return {_mm512_maskz_loadu_ps(mask(n), p)}; }
  /// The first n (0..16) bfloat16 (bits) from p widened to float (exact), the others 0.
  PC_TARGET_AVX512 static inline V load_bf16_n(const uint16_t* p, int n) {
    const __m512i u = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask(n), p));
    return {_mm512_castsi512_ps(_mm512_slli_epi32(u, 16))};
  }
  /// The first n (0..16) binary16 (bits) from p widened to float (exact), the others 0.
  PC_TARGET_AVX512 static inline V load_f16_n(const uint16_t* p, int n) {
    return {_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask(n), p))};
  }
  PC_TARGET_AVX512 inline void store(float* p) const { _mm512_storeu_ps(p, v); }
  PC_TARGET_AVX512 inline void store_n(float* p, int n) const { _mm512_mask_storeu_ps(p, mask(n), v); }
  PC_TARGET_AVX512 static inline V fma(V a, V b, V c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
  /// c - a * b, one rounding.
  PC_TARGET_AVX512 static inline V fnma(V a, V b, V c) { return {_mm512_fnmadd_ps(a.v, b.v, c.v)}; }
  PC_TARGET_AVX512 static inline V add(V a, V b) { return {_mm512_add_ps(a.v, b.v)}; }
  PC_TARGET_AVX512 static inline V sub(V a, V b) { return {_mm512_sub_ps(a.v, b.v)}; }
  PC_TARGET_AVX512 static inline V mul(V a, V b) { return {_mm512_mul_ps(a.v, b.v)}; }
  PC_TARGET_AVX512 static inline V div(V a, V b) { return {_mm512_div_ps(a.v, b.v)}; }
  PC_TARGET_AVX512 static inline V max(V a, V b) { return {_mm512_max_ps(a.v, b.v)}; }
  PC_TARGET_AVX512 static inline V min(V a, V b) { return {_mm512_min_ps(a.v, b.v)}; }
  PC_TARGET_AVX512 static inline V abs(V a) { return {_mm512_abs_ps(a.v)}; }
  // Tree (i, i+8), (i, i+4), (i, i+2), (i, i+1), as simd_scalar.h.
  PC_TARGET_AVX512 static inline __m128 fold16(__m512 a, bool is_max) {
    const __m256 lo = _mm512_castps512_ps256(a);
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1));
    const __m256 s8 = is_max ? _mm256_max_ps(lo, hi) : _mm256_add_ps(lo, hi);
    const __m128 l4 = _mm256_castps256_ps128(s8), h4 = _mm256_extractf128_ps(s8, 1);
    return is_max ? _mm_max_ps(l4, h4) : _mm_add_ps(l4, h4);
  }
  PC_TARGET_AVX512 static inline float reduce_add(V a) {
    __m128 s = fold16(a.v, false);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  /// Lane p = reduce_add(a[p]), bitwise: the same tree for all 16 vectors at once (31 shuffles
  /// and 15 adds instead of 16 horizontal reductions). Level by level: (i, i+8) with 256-bit
  /// halves of vector pairs (p, p+8); (i, i+4) with 128-bit quarters of pairs (p, p+4); (i, i+2)
  /// and (i, i+1) within 128-bit lanes; a final permutation restores the order of p.
  PC_TARGET_AVX512 static inline V reduce_add16(const V* a) {
    __m512 c[8], d[4], e[2];
    for (int p = 0; p < 8; ++p)
      c[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[p].v, a[p + 8].v, 0x44),
                           _mm512_shuffle_f32x4(a[p].v, a[p + 8].v, 0xEE));
    for (int p = 0; p < 4; ++p)
      d[p] = _mm512_add_ps(_mm512_shuffle_f32x4(c[p], c[p + 4], 0x88), _mm512_shuffle_f32x4(c[p], c[p + 4], 0xDD));
    for (int p = 0; p < 2; ++p)
      e[p] = _mm512_add_ps(_mm512_shuffle_ps(d[p], d[p + 2], 0x44), _mm512_shuffle_ps(d[p], d[p + 2], 0xEE));
    const __m512 f = _mm512_add_ps(_mm512_shuffle_ps(e[0], e[1], 0x88), _mm512_shuffle_ps(e[0], e[1], 0xDD));
    // f's lane i holds vector {0,2,1,3,8,10,9,11,4,6,5,7,12,14,13,15}[i]: the same map puts it back.
    return {_mm512_permutexvar_ps(_mm512_setr_epi32(0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15), f)};
  }
  PC_TARGET_AVX512 static inline float reduce_max(V a) {
    __m128 s = fold16(a.v, true);
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  PC_TARGET_AVX512 static inline void load_bf16_pairs(const uint16_t* p, V& even, V& odd) {
    const __m512i u = _mm512_loadu_si512(p);
    even.v = _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
    odd.v = _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32(int(0xffff0000u))));
  }
  PC_TARGET_AVX512 static inline V load_f16(const uint16_t* p) {
    return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
  }
  PC_TARGET_AVX512 static inline V round_bf16(V a) {
    const __m512i u = _mm512_castps_si512(a.v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
    return {_mm512_castsi512_ps(_mm512_and_si512(r, _mm512_set1_epi32(int(0xffff0000u))))};
  }
  PC_TARGET_AVX512 static inline V exp(V a) {
    const __m512 x0 = a.v;
    __m512 x = _mm512_min_ps(_mm512_max_ps(x0, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.0f));
    x = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x0, x0, _CMP_UNORD_Q), x0);  // NaN stays NaN
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    const __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(e));
    return {_mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x0, _mm512_set1_ps(-87.3f), _CMP_NLT_UQ), y)};
  }
};

// The integer side of the quantized GEMM, as simd_scalar.h's QOps (see there), one zmm each.
// QOps: AVX-512 BW, vpmaddubsw then vpmaddwd by 1 (no saturation, see simd_avx2.h); Q8_0 with
// |w| x (x negated where w < 0). QOpsVnni: vpdpbusd; Q8_0 weights offset to w + 128 (unsigned)
// and 128 * sum(x) subtracted after the group.
struct QB {
  __m512i v;
};
struct QI {
  __m512i v;
};
struct QOps {
  PC_TARGET_AVX512 static inline QB load(const uint8_t* p) { return {_mm512_loadu_si512(p)}; }
  PC_TARGET_AVX512 static inline QB andc(QB a, uint8_t c) { return {_mm512_and_si512(a.v, _mm512_set1_epi8(char(c)))}; }
  PC_TARGET_AVX512 static inline QB or_(QB a, QB b) { return {_mm512_or_si512(a.v, b.v)}; }
  template <int S>
  PC_TARGET_AVX512 static inline QB shl(QB a) {
    return {_mm512_slli_epi32(a.v, S)};
  }
  template <int S>
  PC_TARGET_AVX512 static inline QB shr(QB a) {
    return {_mm512_srli_epi32(a.v, S)};
  }
  PC_TARGET_AVX512 static inline QB lo4(QB a) { return andc(a, 0x0F); }
  PC_TARGET_AVX512 static inline QB hi4(QB a) { return andc(shr<4>(a), 0x0F); }
  /// Per byte: tab[a] (a in 0..15), vpshufb with the table in all four 128-bit lanes.
  PC_TARGET_AVX512 static inline QB lut16(QB a, const uint8_t* tab) {
    return {_mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab))), a.v)};
  }
  /// vpmaddubsw saturates int16 pairs: bytes must stay below 128 (see simd_scalar.h).
  static constexpr bool kHiInPlace = false;
  /// No int16 stage (see simd_avx2.h): quant_impl.inc sums words with dot_u.
  static constexpr bool kI16Sums = false;
  PC_TARGET_AVX512 static inline QI sra4(QI a) { return {_mm512_srai_epi32(a.v, 4)}; }
  PC_TARGET_AVX512 static inline QI izero() { return {_mm512_setzero_si512()}; }
  PC_TARGET_AVX512 static inline QI dot_u(QI acc, QB w, int32_t x4) {
    const __m512i p = _mm512_maddubs_epi16(w.v, _mm512_set1_epi32(x4));
    return {_mm512_add_epi32(acc.v, _mm512_madd_epi16(p, _mm512_set1_epi16(1)))};
  }
  PC_TARGET_AVX512 static inline QB prep_s8(QB w) { return w; }
  PC_TARGET_AVX512 static inline QI dot_s(QI acc, QB w, int32_t x4) {
    const __m512i x = _mm512_set1_epi32(x4);
    const __m512i sx = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w.v), _mm512_setzero_si512(), x);
    const __m512i p = _mm512_maddubs_epi16(_mm512_abs_epi8(w.v), sx);
    return {_mm512_add_epi32(acc.v, _mm512_madd_epi16(p, _mm512_set1_epi16(1)))};
  }
  PC_TARGET_AVX512 static inline QI fin_s8(QI s, int32_t) { return s; }
  PC_TARGET_AVX512 static inline QI iadd(QI a, QI b) { return {_mm512_add_epi32(a.v, b.v)}; }
  PC_TARGET_AVX512 static inline QI isub(QI a, int32_t c) { return {_mm512_sub_epi32(a.v, _mm512_set1_epi32(c))}; }
  PC_TARGET_AVX512 static inline V to_float(QI a) { return {_mm512_cvtepi32_ps(a.v)}; }
  PC_TARGET_AVX512 static inline V load_h16(const uint8_t* p) {
    return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
  }
  PC_TARGET_AVX512 static inline V load_u8f(const uint8_t* p) {
    return {_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))))};
  }
  PC_TARGET_AVX512 static inline V load_i8f(const uint8_t* p) {
    return {_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))))};
  }
  /// 16 E8M0 exponent bytes as E8M0_HALF floats, 2^(e - 128), exact (kernels::e8m0_half_bits):
  /// vscalefps 1.0 * 2^(e - 128), one rounding of an exact power of two, subnormals (e = 0, 1)
  /// included (the kernels run without FTZ / DAZ).
  PC_TARGET_AVX512 static inline V load_e8m0_half(const uint8_t* p) {
    const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m512 x = _mm512_cvtepi32_ps(_mm512_sub_epi32(e, _mm512_set1_epi32(128)));
    return {_mm512_scalef_ps(_mm512_set1_ps(1.0f), x)};
  }
  /// Rounds 16 floats (|a| < 128) to the nearest integer, ties to even (std::nearbyint in the
  /// default rounding mode), stores them as int8 in dst[0..15] and returns their sum.
  PC_TARGET_AVX512 static inline int32_t round_i8(V a, int8_t* dst) {
    const __m512i q = _mm512_cvtps_epi32(a.v);  // MXCSR: nearest even
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm512_cvtepi32_epi8(q));
    const __m256i s8 = _mm256_add_epi32(_mm512_castsi512_si256(q), _mm512_extracti64x4_epi64(q, 1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
  }
};
struct QOpsVnni : QOps {
  static constexpr bool kHiInPlace = true;  // vpdpbusd sums into int32 without saturation
  PC_TARGET_AVX512VNNI static inline QI dot_u(QI acc, QB w, int32_t x4) {
    return {_mm512_dpbusd_epi32(acc.v, w.v, _mm512_set1_epi32(x4))};
  }
  PC_TARGET_AVX512VNNI static inline QB prep_s8(QB w) { return {_mm512_xor_si512(w.v, _mm512_set1_epi8(char(0x80)))}; }
  PC_TARGET_AVX512VNNI static inline QI dot_s(QI acc, QB w, int32_t x4) {
    return {_mm512_dpbusd_epi32(acc.v, w.v, _mm512_set1_epi32(x4))};
  }
  PC_TARGET_AVX512VNNI static inline QI fin_s8(QI s, int32_t xsum) {
    return {_mm512_sub_epi32(s.v, _mm512_set1_epi32(128 * xsum))};
  }
};

}  // namespace pagedchat::cpu::isa_avx512
