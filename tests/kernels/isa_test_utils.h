// Helpers of the CPU kernel tests that run every instruction-set level: the levels this machine
// runs, and normally distributed test vectors.
#pragma once

#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"

namespace isatest {

/// Every instruction-set level this CPU runs, scalar first.
inline std::vector<pagedchat::cpu::Isa> supportedIsas() {
  using pagedchat::cpu::Isa;
  std::vector<Isa> v;
  for (auto i : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kAvx512Bf16})
    if (pagedchat::cpu::isa_supported(i)) v.push_back(i);
  return v;
}

/// n values from N(0, sd).
inline std::vector<float> randomVec(std::size_t n, std::mt19937& rng, float sd = 1.0f) {
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace isatest
