// The AVX-512 kernel table: gemm_impl.inc, attention_impl.inc and rowwise_impl.inc over the
// one-register V of simd_avx512.h. Only used after runtime dispatch found AVX-512 F/BW/VL.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_layout.h"

#if defined(__x86_64__) || defined(__i386__)
#include "kernels/cpu/simd_avx512.h"

namespace pagedchat::cpu {
namespace isa_avx512 {
namespace {
#define PC_TARGET PC_TARGET_AVX512
#define PC_UNROLL PC_FORCED_UNROLL
// 32 zmm registers: 6 rows x 4 panels = 24 accumulators + 4 weight vectors + 1 broadcast. The
// emulated BF16 tile needs two weight vectors per panel: 4 x 4. For 7-16 rows, one tile of all
// rows with up to 24 (F32) or 16 (BF16) accumulators.
constexpr int kGemmMR = 6, kGemmNV = 4, kBf16MR = 4, kBf16NV = 4;
constexpr int kQuantMaxRows = 8;
constexpr int kQuantPanels = 4;
using Q = QOps;
constexpr int kGemmSmallAcc = 24, kBf16SmallAcc = 16;
#include "kernels/cpu/attention_impl.inc"
#include "kernels/cpu/gemm_impl.inc"
#include "kernels/cpu/quant_impl.inc"
#include "kernels/cpu/rowwise_impl.inc"
#undef PC_TARGET
#undef PC_UNROLL
}  // namespace
}  // namespace isa_avx512

const IsaKernels* avx512_kernels() {
  using namespace isa_avx512;
  static const IsaKernels k = [] {
    IsaKernels t;
    t.isa = Isa::kAvx512;
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
const IsaKernels* avx512_kernels() { return nullptr; }
}  // namespace pagedchat::cpu
#endif
