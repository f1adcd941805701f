// Runtime CPU-feature dispatch. The build stays portable (no -march): each kernel family is
// compiled for several instruction sets with __attribute__((target(...))) and the best one the
// running CPU (and OS) supports is chosen once, at backend construction.
#pragma once

namespace pagedchat::cpu {

/// Instruction-set levels the CPU kernels are built for, in increasing order.
enum class Isa {
  kScalar = 0,      ///< portable C++ (std::fma: same results as the vector paths for F32 GEMM)
  kAvx2 = 1,        ///< AVX2 + FMA (Haswell, Zen)
  kAvx512 = 2,      ///< AVX-512 F/BW/VL (Skylake-SP, Ice Lake, Zen 4)
  kAvx512Bf16 = 3,  ///< AVX-512 plus AVX512-BF16 vdpbf16ps (Cooper Lake, Sapphire Rapids, Zen 4)
};

/// "scalar", "avx2", "avx512" or "avx512bf16".
const char* isa_name(Isa isa);

/// The best level this CPU supports (cpuid and OS state, via __builtin_cpu_supports).
Isa detect_isa();

/// detect_isa(), lowered to $PAGEDCHAT_CPU_ISA when that names a lower level (so tests and
/// benchmarks can exercise the fallbacks on a machine that has everything). An unknown or
/// unsupported value is ignored with a warning on stderr.
Isa default_isa();

/// Whether `isa` can run here (false for a level above detect_isa()).
bool isa_supported(Isa isa);

}  // namespace pagedchat::cpu
