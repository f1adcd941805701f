// The AVX512-VNNI kernel table: the AVX-512 table with its quantized GEMMs (quant_impl.inc)
// rebuilt over QOpsVnni (vpdpbusd: four u8 x s8 products and the int32 add in one instruction).
// The integers are the same as vpmaddubsw + vpmaddwd give, so the results are bitwise the same.
// Only used after runtime dispatch found AVX512-VNNI.
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
namespace isa_avx512vnni {
namespace {
using V = isa_avx512::V;
using QB = isa_avx512::QB;
using QI = isa_avx512::QI;
using Q = isa_avx512::QOpsVnni;
#define PC_TARGET PC_TARGET_AVX512VNNI
#define PC_UNROLL PC_FORCED_UNROLL
constexpr int kQuantMaxRows = 8;
constexpr int kQuantPanels = 4;
#include "kernels/cpu/quant_impl.inc"
#undef PC_TARGET
#undef PC_UNROLL
}  // namespace
}  // namespace isa_avx512vnni

const IsaKernels* avx512vnni_kernels() {
  static const IsaKernels k = [] {
    IsaKernels t = *avx512_kernels();
    t.isa = Isa::kAvx512Vnni;
    isa_avx512vnni::set_quant_entries(t);
    return t;
  }();
  return &k;
}

}  // namespace pagedchat::cpu
#else
namespace pagedchat::cpu {
const IsaKernels* avx512vnni_kernels() { return nullptr; }
}  // namespace pagedchat::cpu
#endif
