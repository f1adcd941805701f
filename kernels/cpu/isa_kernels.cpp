#include "kernels/cpu/isa_kernels.h"

namespace pagedchat::cpu {

const IsaKernels& isa_kernels(Isa isa) {
  const IsaKernels* k = nullptr;
  switch (isa) {
    case Isa::kAvx512Bf16:
      k = avx512bf16_kernels();
      break;
    case Isa::kAvx512Vnni:
      k = avx512vnni_kernels();
      break;
    case Isa::kAvx512:
      k = avx512_kernels();
      break;
    case Isa::kAvx2:
      k = avx2_kernels();
      break;
    case Isa::kScalar:
      break;
  }
  return k ? *k : scalar_kernels();
}

}  // namespace pagedchat::cpu
