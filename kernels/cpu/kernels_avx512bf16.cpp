// The AVX512-BF16 kernel table: the AVX512-VNNI table with its BF16 GEMM replaced by vdpbf16ps
// tiles (two multiply-adds per lane per instruction, bfloat16 activations: unlike the other
// tables' BF16 GEMM, which keeps the activations float32, so the results differ). Only used after runtime
// dispatch found AVX512-BF16.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/isa_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/cpu/simd_avx512.h"

#define PC_TARGET_AVX512BF16 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512bf16,avx2,fma,f16c")))

namespace pagedchat::cpu {
namespace isa_avx512bf16 {
namespace {
using V = isa_avx512::V;
#define PC_TARGET PC_TARGET_AVX512BF16
#define PC_UNROLL PC_FORCED_UNROLL
constexpr int kGemmMR = 6, kGemmNV = 4, kBf16MR = 4, kBf16NV = 4;
constexpr int kGemmSmallAcc = 24, kBf16SmallAcc = 16;
#include "kernels/cpu/gemm_impl.inc"

// x rows: bfloat16 bits (uint16), pairs read as one 32-bit broadcast. Per pair and lane,
// vdpbf16ps adds the odd product, then the even one (each rounded, denormals flushed).
template <int MR, int NV>
PC_TARGET void tile_bf16_native(int kc, const void* xp, int64_t ldx, const void* wp, int64_t ps, float* out,
                                int64_t ldo, int last_valid, bool accumulate) {
  const uint16_t* x = static_cast<const uint16_t*>(xp);
  const uint16_t* w = static_cast<const uint16_t*>(wp);
  V c[MR][NV];
  tile_init<MR, NV>(c, out, ldo, last_valid, accumulate);
  for (int kk = 0; kk < kc; kk += 2) {
    __m512i b[NV];
    PC_UNROLL
    for (int v = 0; v < NV; ++v) __builtin_prefetch(w + v * ps + (kk + 2 * kPrefetchK) * kPanel);
    PC_UNROLL
    for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_si512(w + v * ps + kk * kPanel);
    PC_UNROLL
    for (int t = 0; t < MR; ++t) {
      int32_t pair;
      std::memcpy(&pair, x + t * ldx + kk, sizeof pair);
      const __m512i a = _mm512_set1_epi32(pair);
      PC_UNROLL
      for (int v = 0; v < NV; ++v) c[t][v].v = _mm512_dpbf16_ps(c[t][v].v, (__m512bh)a, (__m512bh)b[v]);
    }
  }
  tile_store<MR, NV>(c, out, ldo, last_valid);
}

struct Bf16NativeTiles {
  template <int M, int N>
  static TileFn get() {
    return &tile_bf16_native<M, N>;
  }
};

constexpr int kNativeMR = 6, kNativeNV = 4;

void gemm_bf16_native_entry(const GemmArgs& a, int p0, int p1, int t0, int t1) {
  gemm_dispatch<Bf16NativeTiles, kNativeMR, kNativeNV, 24, uint16_t, uint16_t>(a, p0, p1, t0, t1);
}

// x rows -> kp bfloat16 each (round to nearest even, as kernels::float_to_bf16 for non-NaN),
// zero padded.
PC_TARGET void prepare_bf16_bits(void* dst, const float* x, int T, int k, int kp) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  for (int t = 0; t < T; ++t) {
    const float* xr = x + int64_t(t) * k;
    uint16_t* o = d + int64_t(t) * kp;
    int i = 0;
    for (; i < k; i += 16) {
      const int n = k - i < 16 ? k - i : 16;
      const V r = V::round_bf16(V::load_n(xr + i, n));
      const __m256i h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(r.v), 16));
      _mm256_mask_storeu_epi16(o + i, __mmask16((1u << n) - 1u), h);
    }
    for (i = k; i < kp; ++i) o[i] = 0;
  }
}
#undef PC_TARGET
#undef PC_UNROLL
}  // namespace
}  // namespace isa_avx512bf16

const IsaKernels* avx512bf16_kernels() {
  static const IsaKernels k = [] {
    const IsaKernels* base = avx512vnni_kernels();
    IsaKernels t = *base;
    t.isa = Isa::kAvx512Bf16;
    t.gemm_bf16 = isa_avx512bf16::gemm_bf16_native_entry;
    t.prepare_bf16 = isa_avx512bf16::prepare_bf16_bits;
    t.bf16_native = true;
    return t;
  }();
  return &k;
}

}  // namespace pagedchat::cpu
#else
namespace pagedchat::cpu {
const IsaKernels* avx512bf16_kernels() { return nullptr; }
}  // namespace pagedchat::cpu
#endif
