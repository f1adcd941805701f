#include "kernels/cpu/cpu_features.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace pagedchat::cpu {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx512Bf16: return "avx512bf16";
  }
  return "?";
}

Isa detect_isa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  if (avx512 && __builtin_cpu_supports("avx512bf16")) return Isa::kAvx512Bf16;
  if (avx512) return Isa::kAvx512;
  if (avx2) return Isa::kAvx2;
#endif
  return Isa::kScalar;
}

bool isa_supported(Isa isa) { return int(isa) <= int(detect_isa()); }

Isa default_isa() {
  static const Isa isa = [] {
    const Isa best = detect_isa();
    const Isa preferred = best == Isa::kAvx512Bf16 ? Isa::kAvx512 : best;
    const char* env = std::getenv("PAGEDCHAT_CPU_ISA");
    if (!env || !*env) return preferred;
    for (Isa i : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Bf16})
      if (std::strcmp(env, isa_name(i)) == 0) {
        if (int(i) <= int(best)) return i;
        std::fprintf(stderr, "pagedchat: warning: PAGEDCHAT_CPU_ISA=%s is not supported by this CPU; using %s\n", env,
                     isa_name(preferred));
        return preferred;
      }
    std::fprintf(stderr, "pagedchat: warning: PAGEDCHAT_CPU_ISA=%s is not one of scalar, avx2, avx512, avx512bf16; using %s\n",
                 env, isa_name(preferred));
    return preferred;
  }();
  return isa;
}

}  // namespace pagedchat::cpu
