// The portable kernel table: gemm_impl.inc, attention_impl.inc and rowwise_impl.inc over the
// plain-C++ V of simd_scalar.h. Bitwise the same float32 results as the vector tables.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/quant_layout.h"
#include "kernels/cpu/simd_scalar.h"

namespace pagedchat::cpu {
namespace isa_scalar {
namespace {
#define PC_TARGET PC_TARGET_SCALAR
// No forced unrolling: the scalar V is already a 16-iteration loop per operation.
#define PC_UNROLL
constexpr int kGemmMR = 4, kGemmNV = 1, kBf16MR = 4, kBf16NV = 1;
constexpr int kQuantMaxRows = 4;
constexpr int kQuantPanels = 1;
using Q = QOps;
constexpr int kGemmSmallAcc = 0, kBf16SmallAcc = 0;  // no single-tile path for 7-16 rows
#include "kernels/cpu/attention_impl.inc"
#include "kernels/cpu/gemm_impl.inc"
#include "kernels/cpu/quant_impl.inc"
#include "kernels/cpu/rowwise_impl.inc"
#undef PC_TARGET
#undef PC_UNROLL
}  // namespace
}  // namespace isa_scalar

const IsaKernels& scalar_kernels() {
  using namespace isa_scalar;
  static const IsaKernels k = [] {
    IsaKernels t;
    t.isa = Isa::kScalar;
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
  return k;
}

}  // namespace pagedchat::cpu
