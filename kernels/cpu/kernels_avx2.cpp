// The AVX2 + FMA kernel table: gemm_impl.inc, attention_impl.inc and rowwise_impl.inc over the
// two-register V of simd_avx2.h. Only used after runtime dispatch found AVX2 and FMA.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_layout.h"

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/cpu/simd_avx2.h"

namespace pagedchat::cpu {
namespace isa_avx2 {
namespace {
#define PC_TARGET PC_TARGET_AVX2
#define PC_UNROLL PC_FORCED_UNROLL
// 16 ymm registers: 6 rows x 1 panel (2 registers each) = 12 accumulators.
constexpr int kGemmMR = 6, kGemmNV = 1, kBf16MR = 4, kBf16NV = 1;
constexpr int kQuantMaxRows = 4;
constexpr int kQuantPanels = 2;
using Q = QOps;
constexpr int kGemmSmallAcc = 0, kBf16SmallAcc = 0;  // no single-tile path for 7-16 rows
#include "kernels/cpu/attention_impl.inc"
#include "kernels/cpu/gemm_impl.inc"
#include "kernels/cpu/quant_impl.inc"
#include "kernels/cpu/rowwise_impl.inc"
#undef PC_TARGET
#undef PC_UNROLL
}  // namespace
}  // namespace isa_avx2

const IsaKernels* avx2_kernels() {
  using namespace isa_avx2;
  static const IsaKernels k = [] {
    IsaKernels t;
    t.isa = Isa::kAvx2;
    t.gemm_f32 = gemm_f32_entry;
    t.gemm_bf16 = gemm_bf16_emulated_entry;
    t.gemm_f16 = gemm_f16_entry;
    set_quant_entries(t);
    t.prepare_bf16 = prepare_bf16_floats;
    t.gemm_mr = kGemmMR;
    t.gemm_nv = kGemmNV;
    t.attention = attention_entry;
    set_rowwise_entries(t);
    return t;
  }();
  return &k;
}

}  // namespace pagedchat::cpu
#else
namespace pagedchat::cpu {
const IsaKernels* avx2_kernels() { return nullptr; }
}  // namespace pagedchat::cpu
#endif
