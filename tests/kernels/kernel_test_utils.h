// Helpers of the kernel feature tests (test_kernel_features, test_kernel_gemma4): float64
// error measures, bitwise comparison, and a backend that runs Backend's default ops.
#pragma once

#include <QtGlobal>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "isa_test_utils.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ops.h"

namespace kerneltest {

using namespace pagedchat;
using namespace pagedchat::kernels;
using isatest::supportedIsas;

/// n values from N(0, sd).
inline std::vector<float> randn(std::size_t n, std::mt19937& rng, float sd = 1.0f) {
  return isatest::randomVec(n, rng, sd);
}

/// The same floats, bit for bit.
inline bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// Largest |a - b| / (atol + |b|) over the elements (NaN wins); PAGEDCHAT_TEST_VERBOSE says where.
inline double worst(const std::vector<float>& a, const std::vector<double>& b, double atol) {
  double w = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(double(a[i]) - b[i]) / (atol + std::fabs(b[i]));
    if (!(e <= w)) {
      w = e;
      at = i;
    }
  }
  if (qEnvironmentVariableIsSet("PAGEDCHAT_TEST_VERBOSE") && !a.empty())
    qInfo("worst at %zu: %.9g vs %.9g", at, double(a[at]), b[at]);
  return w;
}

/// Only the pure virtual ops (forwarded to the CPU backend): the others run Backend's defaults.
struct Defaults final : Backend {
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  const char* name() const override { return "defaults"; }
  int num_threads() const override { return 1; }
  void embedding(float* o, const void* t, DType d, const int* ids, int T, int dim) override {
    cpu->embedding(o, t, d, ids, T, dim);
  }
  void rms_norm(float* o, const float* x, const float* w, int T, int dim, float eps) override {
    cpu->rms_norm(o, x, w, T, dim, eps);
  }
  void matmul(float* o, const float* x, const float* w, int T, int n, int k) override { cpu->matmul(o, x, w, T, n, k); }
  void rotary_embedding(float* q, float* k, const int* p, int T, int h, int kvh, const RopeSpec& r) override {
    cpu->rotary_embedding(q, k, p, T, h, kvh, r);
  }
  void reshape_and_cache(const float* k, const float* v, void* kc, void* vc, KvDType t, const int64_t* s, int T,
                         int w) override {
    cpu->reshape_and_cache(k, v, kc, vc, t, s, T, w);
  }
  void paged_attention(float* o, const float* q, const void* kc, const void* vc, KvDType t, const AttentionMetadata& m,
                       const AttentionSpec& s) override {
    cpu->paged_attention(o, q, kc, vc, t, m, s);
  }
  void silu_and_mul(float* o, const float* g, const float* u, int T, int h) override {
    cpu->silu_and_mul(o, g, u, T, h);
  }
  void add(float* x, const float* y, int64_t n) override { cpu->add(x, y, n); }
};

}  // namespace kerneltest
