// Runtime CPU-feature dispatch. The build stays portable (no -march): each kernel family is
// compiled for several instruction sets with __attribute__((target(...))) and the best one the
// running CPU (and OS) supports is chosen once, at backend construction.
#pragma once

namespace pagedchat::cpu {

/// Instruction-set levels the CPU kernels are built for, in increasing order.
enum class Isa {
  kScalar = 0,      ///< portable C++ (std::fma: same results as the vector paths for F32 GEMM)
  kAvx2 = 1,        ///< AVX2 + FMA + F16C (Haswell, Zen)
  kAvx512 = 2,      ///< AVX-512 F/BW/VL (Skylake-SP, Ice Lake, Zen 4)
  kAvx512Vnni = 3,  ///< AVX-512 plus AVX512-VNNI vpdpbusd (Cascade Lake, Ice Lake, Zen 4)
  kAvx512Bf16 = 4,  ///< AVX-512 VNNI plus AVX512-BF16 vdpbf16ps (Cooper Lake, Sapphire Rapids, Zen 4)
};
// kAvx512Vnni differs from kAvx512 only in the quantized GEMMs (vpdpbusd instead of vpmaddubsw +
// vpmaddwd; the same integers, so the same bits).
// kAvx512Bf16 differs from kAvx512Vnni only in the bfloat16 GEMM: vdpbf16ps instead of two FMAs
// per pair; it rounds the activations to bfloat16 (the FMA version keeps them float32) and adds
// the odd product of a pair first, so its results differ. On Sapphire Rapids the FMA version measured faster
// (110M pp512 ~1230 vs ~930 tokens/s, 16-sequence decode ~520 vs ~475, single-stream equal), so
// it is opt-in: default_isa() stops at kAvx512Vnni unless $PAGEDCHAT_CPU_ISA=avx512bf16.

/// "scalar", "avx2", "avx512", "avx512vnni" or "avx512bf16".
const char* isa_name(Isa isa);

/// The best level this CPU supports (cpuid and OS state, via __builtin_cpu_supports).
Isa detect_isa();

/// The level backends use: $PAGEDCHAT_CPU_ISA when it names a level this CPU supports (so tests
/// and benchmarks can exercise the fallbacks on a machine that has everything, or opt into
/// vdpbf16ps), else detect_isa() capped at kAvx512Vnni (see above). The name is matched without
/// regard to case (AVX2 = avx2). An unknown or unsupported value is ignored with a warning on stderr.
Isa default_isa();

/// Whether `isa` can run here (false for a level above detect_isa()).
bool isa_supported(Isa isa);

}  // namespace pagedchat::cpu
