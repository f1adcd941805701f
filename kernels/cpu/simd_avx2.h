// V: 16 float lanes in two AVX2 registers (lanes 0-7 in lo, 8-15 in hi). Same operations, lane by
// lane, as simd_scalar.h (see there); only included by kernels_avx2.cpp and only called after
// runtime dispatch chose AVX2 + FMA (+ F16C, which every AVX2 CPU has).
#pragma once

#include <immintrin.h>

#include <cstdint>

#define PC_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace pagedchat::cpu::isa_avx2 {

struct V {
  __m256 lo, hi;
  /// How many V values fit in the vector registers (16 ymm registers hold 8).
  static constexpr int kRegisters = 8;

  PC_TARGET_AVX2 static inline V zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  PC_TARGET_AVX2 static inline V set1(float x) {
    const __m256 s = _mm256_set1_ps(x);
    return {s, s};
  }
  PC_TARGET_AVX2 static inline V load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  PC_TARGET_AVX2 static inline __m256i mask8(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  PC_TARGET_AVX2 static inline V load_n(const float* p, int n) {
    return {_mm256_maskload_ps(p, mask8(n)), _mm256_maskload_ps(p + 8, mask8(n - 8))};
  }
  /// 8 uint16 from p, the lanes from n (0..8) on 0; never reads past p + n.
  PC_TARGET_AVX2 static inline __m128i load_u16_8n(const uint16_t* p, int n) {
    if (n >= 8) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if (n <= 0) return _mm_setzero_si128();
    alignas(16) uint16_t t[8] = {};
    for (int i = 0; i < n; ++i) t[i] = p[i];
    return _mm_load_si128(reinterpret_cast<const __m128i*>(t));
  }
  /// 16 uint16 from p, the lanes from n (0..16) on 0; never reads past p + n. Whole halves (head
  /// sizes that are multiples of 8) are plain loads.
  PC_TARGET_AVX2 static inline __m256i load_u16_n(const uint16_t* p, int n) {
    if (n >= 16) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm256_set_m128i(load_u16_8n(p + 8, n - 8), load_u16_8n(p, n));
  }
  /// The first n (0..16) bfloat16 (bits) from p widened to float (exact), the others 0.
  PC_TARGET_AVX2 static inline V load_bf16_n(const uint16_t* p, int n) {
    const __m256i u = load_u16_n(p, n);
    const __m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(u)),
                  hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(u, 1));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(lo, 16)), _mm256_castsi256_ps(_mm256_slli_epi32(hi, 16))};
  }
  /// The first n (0..16) binary16 (bits) from p widened to float (exact, F16C), the others 0.
  PC_TARGET_AVX2 static inline V load_f16_n(const uint16_t* p, int n) {
    const __m256i u = load_u16_n(p, n);
    return {_mm256_cvtph_ps(_mm256_castsi256_si128(u)), _mm256_cvtph_ps(_mm256_extracti128_si256(u, 1))};
  }
  PC_TARGET_AVX2 inline void store(float* p) const {
    _mm256_storeu_ps(p, lo);
    _mm256_storeu_ps(p + 8, hi);
  }
  PC_TARGET_AVX2 inline void store_n(float* p, int n) const {
    _mm256_maskstore_ps(p, mask8(n), lo);
    _mm256_maskstore_ps(p + 8, mask8(n - 8), hi);
  }
  PC_TARGET_AVX2 static inline V fma(V a, V b, V c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
  }
  /// c - a * b, one rounding.
  PC_TARGET_AVX2 static inline V fnma(V a, V b, V c) {
    return {_mm256_fnmadd_ps(a.lo, b.lo, c.lo), _mm256_fnmadd_ps(a.hi, b.hi, c.hi)};
  }
  PC_TARGET_AVX2 static inline V add(V a, V b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  PC_TARGET_AVX2 static inline V sub(V a, V b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
  PC_TARGET_AVX2 static inline V mul(V a, V b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  PC_TARGET_AVX2 static inline V div(V a, V b) { return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)}; }
  PC_TARGET_AVX2 static inline V max(V a, V b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
  PC_TARGET_AVX2 static inline V min(V a, V b) { return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)}; }
  PC_TARGET_AVX2 static inline V abs(V a) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    return {_mm256_andnot_ps(sign, a.lo), _mm256_andnot_ps(sign, a.hi)};
  }
  // Tree (i, i+8), (i, i+4), (i, i+2), (i, i+1), as simd_scalar.h.
  PC_TARGET_AVX2 static inline float reduce_add(V a) {
    const __m256 s8 = _mm256_add_ps(a.lo, a.hi);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  /// Lane p = reduce_add(a[p]), bitwise.
  PC_TARGET_AVX2 static inline V reduce_add16(const V* a) {
    alignas(32) float r[16];
    for (int p = 0; p < 16; ++p) r[p] = reduce_add(a[p]);
    return load(r);
  }
  PC_TARGET_AVX2 static inline float reduce_max(V a) {
    const __m256 s8 = _mm256_max_ps(a.lo, a.hi);
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  PC_TARGET_AVX2 static inline void load_bf16_pairs(const uint16_t* p, V& even, V& odd) {
    const __m256i mask = _mm256_set1_epi32(int(0xffff0000u));
    const __m256i u0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i u1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
    even = {_mm256_castsi256_ps(_mm256_slli_epi32(u0, 16)), _mm256_castsi256_ps(_mm256_slli_epi32(u1, 16))};
    odd = {_mm256_castsi256_ps(_mm256_and_si256(u0, mask)), _mm256_castsi256_ps(_mm256_and_si256(u1, mask))};
  }
  PC_TARGET_AVX2 static inline V load_f16(const uint16_t* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
  }
  PC_TARGET_AVX2 static inline __m256 round_bf16_8(__m256 a) {
    const __m256i u = _mm256_castps_si256(a);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
    return _mm256_castsi256_ps(_mm256_and_si256(r, _mm256_set1_epi32(int(0xffff0000u))));
  }
  PC_TARGET_AVX2 static inline V round_bf16(V a) { return {round_bf16_8(a.lo), round_bf16_8(a.hi)}; }
  PC_TARGET_AVX2 static inline __m256 exp8(__m256 x0) {
    __m256 x = _mm256_min_ps(_mm256_max_ps(x0, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.0f));
    x = _mm256_blendv_ps(x, x0, _mm256_cmp_ps(x0, x0, _CMP_UNORD_Q));  // NaN stays NaN
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693359375f), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    return _mm256_and_ps(y, _mm256_cmp_ps(x0, _mm256_set1_ps(-87.3f), _CMP_NLT_UQ));
  }
  PC_TARGET_AVX2 static inline V exp(V a) { return {exp8(a.lo), exp8(a.hi)}; }
};

// The integer side of the quantized GEMM, as simd_scalar.h's QOps (see there): rows 0-7 in lo,
// 8-15 in hi. dot_u: vpmaddubsw (u8 x s8 pairs to int16; the weights are at most 63, so a pair
// is at most 2 * 63 * 127 and never saturates) then vpmaddwd by 1. dot_s (Q8_0): |w| x sign(x, w)
// (|w| <= 128 fits u8; a pair is at most 2 * 128 * 127 = 32512).
struct QB {
  __m256i lo, hi;
};
struct QI {
  __m256i lo, hi;
};
struct QOps {
  PC_TARGET_AVX2 static inline QB load(const uint8_t* p) {
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32))};
  }
  PC_TARGET_AVX2 static inline QB andc(QB a, uint8_t c) {
    const __m256i m = _mm256_set1_epi8(char(c));
    return {_mm256_and_si256(a.lo, m), _mm256_and_si256(a.hi, m)};
  }
  PC_TARGET_AVX2 static inline QB or_(QB a, QB b) { return {_mm256_or_si256(a.lo, b.lo), _mm256_or_si256(a.hi, b.hi)}; }
  template <int S>
  PC_TARGET_AVX2 static inline QB shl(QB a) {
    return {_mm256_slli_epi32(a.lo, S), _mm256_slli_epi32(a.hi, S)};
  }
  template <int S>
  PC_TARGET_AVX2 static inline QB shr(QB a) {
    return {_mm256_srli_epi32(a.lo, S), _mm256_srli_epi32(a.hi, S)};
  }
  PC_TARGET_AVX2 static inline QB lo4(QB a) { return andc(a, 0x0F); }
  PC_TARGET_AVX2 static inline QB hi4(QB a) { return andc(shr<4>(a), 0x0F); }
  /// Per byte: tab[a] (a in 0..15), vpshufb with the table in both 128-bit lanes.
  PC_TARGET_AVX2 static inline QB lut16(QB a, const uint8_t* tab) {
    const __m256i t = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab)));
    return {_mm256_shuffle_epi8(t, a.lo), _mm256_shuffle_epi8(t, a.hi)};
  }
  /// vpmaddubsw saturates int16 pairs: bytes must stay below 128 (see simd_scalar.h).
  static constexpr bool kHiInPlace = false;
  PC_TARGET_AVX2 static inline QI sra4(QI a) { return {_mm256_srai_epi32(a.lo, 4), _mm256_srai_epi32(a.hi, 4)}; }
  PC_TARGET_AVX2 static inline QI izero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
  PC_TARGET_AVX2 static inline __m256i dot8(__m256i acc, __m256i w, __m256i x) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1)));
  }
  PC_TARGET_AVX2 static inline QI dot_u(QI acc, QB w, int32_t x4) {
    const __m256i x = _mm256_set1_epi32(x4);
    return {dot8(acc.lo, w.lo, x), dot8(acc.hi, w.hi, x)};
  }
  /// Whether quant_impl.inc may add vpmaddubsw's int16 pair sums of several words (QH, dot16,
  /// add16) before one vpmaddwd widens them (widen_add): a run of n words is exact while
  /// n * 2 * max(w) * 127 <= 32767 (the caller bounds n), and saves a vpmaddwd and turns a
  /// vpaddd into a vpaddw per word.
  static constexpr bool kI16Sums = true;
  struct QH {
    __m256i lo, hi;
  };
  /// Per int16 lane: w[2i] * x[2i] + w[2i+1] * x[2i+1] (w unsigned bytes, x the signed bytes of x4).
  PC_TARGET_AVX2 static inline QH dot16(QB w, int32_t x4) {
    const __m256i x = _mm256_set1_epi32(x4);
    return {_mm256_maddubs_epi16(w.lo, x), _mm256_maddubs_epi16(w.hi, x)};
  }
  PC_TARGET_AVX2 static inline QH add16(QH a, QH b) {
    return {_mm256_add_epi16(a.lo, b.lo), _mm256_add_epi16(a.hi, b.hi)};
  }
  /// acc + the int16 pairs of h summed into their int32 lane.
  PC_TARGET_AVX2 static inline QI widen_add(QI acc, QH h) {
    const __m256i one = _mm256_set1_epi16(1);
    return {_mm256_add_epi32(acc.lo, _mm256_madd_epi16(h.lo, one)),
            _mm256_add_epi32(acc.hi, _mm256_madd_epi16(h.hi, one))};
  }
  PC_TARGET_AVX2 static inline QB prep_s8(QB w) { return w; }
  PC_TARGET_AVX2 static inline QI dot_s(QI acc, QB w, int32_t x4) {
    const __m256i x = _mm256_set1_epi32(x4);
    return {dot8(acc.lo, _mm256_abs_epi8(w.lo), _mm256_sign_epi8(x, w.lo)),
            dot8(acc.hi, _mm256_abs_epi8(w.hi), _mm256_sign_epi8(x, w.hi))};
  }
  PC_TARGET_AVX2 static inline QI fin_s8(QI s, int32_t) { return s; }
  PC_TARGET_AVX2 static inline QI iadd(QI a, QI b) {
    return {_mm256_add_epi32(a.lo, b.lo), _mm256_add_epi32(a.hi, b.hi)};
  }
  PC_TARGET_AVX2 static inline QI isub(QI a, int32_t c) {
    const __m256i v = _mm256_set1_epi32(c);
    return {_mm256_sub_epi32(a.lo, v), _mm256_sub_epi32(a.hi, v)};
  }
  PC_TARGET_AVX2 static inline V to_float(QI a) { return {_mm256_cvtepi32_ps(a.lo), _mm256_cvtepi32_ps(a.hi)}; }
  PC_TARGET_AVX2 static inline V load_h16(const uint8_t* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
  }
  PC_TARGET_AVX2 static inline V load_u8f(const uint8_t* p) {
    return {_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))),
            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8))))};
  }
  PC_TARGET_AVX2 static inline V load_i8f(const uint8_t* p) {
    return {_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))),
            _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8))))};
  }
  /// 8 E8M0 bytes (the low 8 of b) as E8M0_HALF float bits: (e - 1) << 23 for e >= 2, else
  /// 0x00200000 << e (kernels::e8m0_half_bits).
  PC_TARGET_AVX2 static inline __m256 e8m0_half8(__m128i b) {
    const __m256i e = _mm256_cvtepu8_epi32(b);
    const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
    const __m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(sub, normal, _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1))));
  }
  /// 16 E8M0 exponent bytes as E8M0_HALF floats, 2^(e - 128), exact.
  PC_TARGET_AVX2 static inline V load_e8m0_half(const uint8_t* p) {
    return {e8m0_half8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))),
            e8m0_half8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8)))};
  }
  /// Rounds 16 floats (|a| < 128) to the nearest integer, ties to even (std::nearbyint in the
  /// default rounding mode), stores them as int8 in dst[0..15] and returns their sum.
  PC_TARGET_AVX2 static inline int32_t round_i8(V a, int8_t* dst) {
    const __m256i lo = _mm256_cvtps_epi32(a.lo), hi = _mm256_cvtps_epi32(a.hi);  // MXCSR: nearest even
    // packs works per 128-bit half: lo0-3 hi0-3 lo4-7 hi4-7, put back in order by the permute.
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                     _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
    const __m256i s8 = _mm256_add_epi32(lo, hi);
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
  }
};

}  // namespace pagedchat::cpu::isa_avx2
