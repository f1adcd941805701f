#include "kernels/cpu/cpu_features.h"

#include <strings.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace pagedchat::cpu {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx512Vnni:
      return "avx512vnni";
    case Isa::kAvx512Bf16:
      return "avx512bf16";
  }
  return "?";
}

Isa detect_isa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // F16C (vcvtph2ps) comes with every AVX2 CPU; checked anyway, the float16 GEMM needs it. By
  // CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c".
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const bool vnni = avx512 && __builtin_cpu_supports("avx512vnni");
  if (vnni && __builtin_cpu_supports("avx512bf16")) return Isa::kAvx512Bf16;
  if (vnni) return Isa::kAvx512Vnni;
  if (avx512) return Isa::kAvx512;
  if (avx2) return Isa::kAvx2;
#endif
  return Isa::kScalar;
}

bool isa_supported(Isa isa) { return int(isa) <= int(detect_isa()); }

Isa default_isa() {
  static const Isa isa = [] {
    const Isa best = detect_isa();
    const Isa preferred = best == Isa::kAvx512Bf16 ? Isa::kAvx512Vnni : best;
    const char* env = std::getenv("PAGEDCHAT_CPU_ISA");
    if (!env || !*env) return preferred;
    for (Isa i : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kAvx512Bf16})
      if (strcasecmp(env, isa_name(i)) == 0) {  // AVX2 as avx2
        if (int(i) <= int(best)) return i;
        std::fprintf(stderr, "pagedchat: warning: PAGEDCHAT_CPU_ISA=%s is not supported by this CPU; using %s\n", env,
                     isa_name(preferred));
        return preferred;
      }
    std::fprintf(stderr,
                 "pagedchat: warning: PAGEDCHAT_CPU_ISA=%s is not one of scalar, avx2, avx512, avx512vnni, avx512bf16; "
                 "using %s\n",
                 env, isa_name(preferred));
    return preferred;
  }();
  return isa;
}

}  // namespace pagedchat::cpu
