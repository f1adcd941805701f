#include "kernels/cpu/isa_kernels.h"

#include <cstdlib>
#include <cstring>

namespace pagedchat::cpu {

bool avx512_weight_kernels_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("PAGEDCHAT_AVX512_WEIGHT_KERNELS");
    return e && std::strcmp(e, "1") == 0;
  }();
  return on;
}

void use_avx2_weight_kernels(IsaKernels& t) {
  const IsaKernels* a = avx2_kernels();
  if (!a || avx512_weight_kernels_enabled()) return;
  t.gemm_bf16 = a->gemm_bf16;
  t.prepare_bf16 = a->prepare_bf16;
  t.bf16_native = a->bf16_native;
  t.gemm_f16 = a->gemm_f16;
  for (int i = 0; i < kNumDTypes; ++i) t.gemm_q[i] = a->gemm_q[i];
}

const IsaKernels& isa_kernels(Isa isa) {
  const IsaKernels* k = nullptr;
  switch (isa) {
    case Isa::kAvx512Bf16: k = avx512bf16_kernels(); break;
    case Isa::kAvx512Vnni: k = avx512vnni_kernels(); break;
    case Isa::kAvx512: k = avx512_kernels(); break;
    case Isa::kAvx2: k = avx2_kernels(); break;
    case Isa::kScalar: break;
  }
  return k ? *k : scalar_kernels();
}

}  // namespace pagedchat::cpu
