// Microbenchmark of linear() per packed weight type (not a test; built only on request:
// `make pagedchat_bench_quant`). For a 2048 x 5632 matrix (n x k, a 1B model's ffn_down) prints
// T = 1 as GB/s of packed weights streamed (decode is memory-bound), and T = 16 and T = 128 as
// GFLOP/s-equivalent (2 n k T per call). Several copies of the matrix, cycled, keep the working
// set beyond the last-level cache. Each figure is given twice: by wall time, and by the process's
// CPU time (cpu=...: what the rate would be on a machine where the threads were never preempted;
// with 1 thread, the single core's rate) — on a loaded machine the second is the meaningful one.
// Usage: pagedchat_bench_quant [threads] [isa] [type...] (types by dtype_name: q4_0, mxfp4, ...)
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/ops.h"

using namespace pagedchat;
using kernels::DType;

namespace {

// $PAGEDCHAT_BENCH_QUANT_MB: the working set cycled through (default 1024 MB: beyond the last-level
// cache, which holds 480 MB on some Xeons of the pool — the earlier 256 MB default measured the
// L3 there); a small one such as 1 keeps a single copy cache-resident, to see the kernels'
// compute ceiling.
std::size_t working_set_bytes() {
  const char* mb = std::getenv("PAGEDCHAT_BENCH_QUANT_MB");
  return (mb ? std::size_t(std::max(1, std::atoi(mb))) : std::size_t(1024)) << 20;
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// $PAGEDCHAT_BENCH_QUANT_MOE: a mixture-of-experts step at the Qwen3-30B-A3B shape instead (128
// experts of [1536, 2048], 16 tokens routed to 8 random experts each, a fresh routing per call):
// the touched experts' GB/s, by one grouped_linear and by one linear() per expert. Set to
// "E,n,k,top_k" for another shape (gpt-oss-20b: 32,2880,2880,4; the rows of one expert must fit the
// random 2048 x 5632 source). $PAGEDCHAT_BENCH_QUANT_MB sizes the layers cycled through.
void bench_experts(kernels::Backend& be, const std::vector<uint8_t>& w, DType src, DType t, std::mt19937& rng) {
  int E = 128, n = 1536, k = 2048, top_k = 8;
  const int tokens = 16;
  if (const char* shape = std::getenv("PAGEDCHAT_BENCH_QUANT_MOE"); shape && std::strchr(shape, ','))
    std::sscanf(shape, "%d,%d,%d,%d", &E, &n, &k, &top_k);
  const std::size_t row_bytes = kernels::dtype_row_bytes(src, 5632);
  // Layers of E experts, each step routed in the next layer, until the layers pass
  // working_set_bytes() (a model's experts never stay in the last-level cache).
  const std::size_t budget = working_set_bytes();
  std::vector<std::unique_ptr<kernels::PackedWeights>> experts;
  std::size_t total = 0;
  while (experts.empty() || (total < budget && experts.size() < std::size_t(E) * 64)) {
    for (int e = 0; e < E; ++e) {
      // Rows of the random 5632-wide source, reinterpreted as [n, k] rows (same bytes per block).
      const kernels::WeightPart part{w.data() + (std::size_t(e) % 8) * row_bytes * 64, n, src, t};
      experts.push_back(be.pack_weights({&part, 1}, k));
      total += experts.back()->bytes;
    }
  }
  const int layers = int(experts.size()) / E;
  std::printf("  %d layers of %d experts (%.0f MB)", layers, E, total / 1e6);
  std::vector<float> x(std::size_t(tokens) * top_k * k, 0.5f), out(std::size_t(tokens) * top_k * n);
  for (int mode = 0; mode < 2; ++mode) {
    double sec = 0, touched = 0;
    int calls = 0;
    while (sec < 1.0) {
      std::vector<int> count(E, 0);
      for (int tok = 0; tok < tokens; ++tok) {
        std::vector<int> ids(E);
        for (int e = 0; e < E; ++e) ids[e] = e;
        std::shuffle(ids.begin(), ids.end(), rng);
        for (int j = 0; j < top_k; ++j) ++count[ids[j]];
      }
      std::vector<const kernels::PackedWeights*> group;
      std::vector<int> offsets{0};
      const std::size_t layer = std::size_t(calls % layers) * E;
      for (int e = 0; e < E; ++e)
        if (count[e] > 0) {
          group.push_back(experts[layer + e].get());
          offsets.push_back(offsets.back() + count[e]);
          touched += double(experts[layer + e]->bytes);
        }
      const double t0 = now_s();
      if (mode == 0) {
        be.grouped_linear(out.data(), x.data(), group, offsets.data());
      } else {
        for (std::size_t g = 0; g < group.size(); ++g)
          be.linear(out.data() + std::size_t(offsets[g]) * n, x.data() + std::size_t(offsets[g]) * k, *group[g],
                    offsets[g + 1] - offsets[g]);
      }
      sec += now_s() - t0;
      ++calls;
    }
    std::printf("  %s %6.1f GB/s of touched experts (%.2f ms per step)", mode == 0 ? "grouped" : "per-expert",
                touched / sec / 1e9, 1e3 * sec / calls);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  cpu::Isa isa = cpu::default_isa();
  if (argc > 2)
    for (cpu::Isa i :
         {cpu::Isa::kScalar, cpu::Isa::kAvx2, cpu::Isa::kAvx512, cpu::Isa::kAvx512Vnni, cpu::Isa::kAvx512Bf16})
      if (std::strcmp(argv[2], cpu::isa_name(i)) == 0) isa = i;
  std::vector<DType> types = {DType::kQ4_K, DType::kQ6_K, DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0,
                              DType::kQ5_1, DType::kQ5_K, DType::kF16,  DType::kBF16, DType::kF32};
  if (argc > 3) {
    types.clear();
    for (int a = 3; a < argc; ++a)
      for (DType t : kernels::kAllDTypes)
        if (std::strcmp(argv[a], kernels::dtype_name(t)) == 0) types.push_back(t);
  }
  auto be = cpu::make_cpu_backend(threads, isa);
  const int n = 2048, k = 5632;
  std::printf("isa %s, %d threads, n=%d k=%d\n", cpu::isa_name(cpu::backend_isa(*be)), be->num_threads(), n, k);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(size_t(128) * k), out(size_t(128) * n);
  for (auto& v : x) v = nd(rng);
  for (DType t : types) {
    const DType src = kernels::dtype_is_quantized(t) ? t : DType::kF32;
    std::vector<uint8_t> w(kernels::dtype_row_bytes(src, k) * n);
    if (src == DType::kF32) {
      float* f = reinterpret_cast<float*>(w.data());
      for (size_t i = 0; i < w.size() / 4; ++i) f[i] = nd(rng) * 0.02f;
    } else {
      for (auto& b : w) b = uint8_t(rng());
      const int be_bytes = kernels::dtype_block_bytes(t);
      const int doff = t == DType::kQ6_K ? 208 : 0;
      for (size_t off = 0; off < w.size(); off += be_bytes) {
        if (t == DType::kMXFP4) {  // E8M0 byte: 2^-7 (values up to 6 * 2^-7)
          w[off] = 120;
          continue;
        }
        const uint16_t h = kernels::fp32_to_fp16(0.01f);
        w[off + doff] = uint8_t(h), w[off + doff + 1] = uint8_t(h >> 8);
        if (t == DType::kQ4_1 || t == DType::kQ5_1 || t == DType::kQ4_K || t == DType::kQ5_K)
          w[off + 2] = uint8_t(h), w[off + 3] = uint8_t(h >> 8);
      }
    }
    const kernels::WeightPart part{w.data(), n, src, t};
    if (std::getenv("PAGEDCHAT_BENCH_QUANT_MOE")) {
      bench_experts(*be, w, src, t, rng);
      continue;
    }
    std::vector<std::unique_ptr<kernels::PackedWeights>> mats;
    std::size_t total = 0;
    const std::size_t budget = working_set_bytes();
    while ((mats.empty() || total < budget) && mats.size() < 512) {
      mats.push_back(be->pack_weights({&part, 1}, k));
      total += mats.back()->bytes;
    }
    const std::size_t bytes = mats[0]->bytes;
    std::printf("%-5s %6.2f MB packed (%.3f bits/weight):", kernels::dtype_name(t), bytes / 1e6,
                8.0 * bytes / (double(n) * k));
    // $PAGEDCHAT_BENCH_QUANT_T: only this T (repeated $PAGEDCHAT_BENCH_QUANT_REPS times, default 1).
    std::vector<int> sizes = {1, 16, 128};
    if (const char* only = std::getenv("PAGEDCHAT_BENCH_QUANT_T")) {
      const char* reps = std::getenv("PAGEDCHAT_BENCH_QUANT_REPS");
      sizes.assign(reps ? std::max(1, std::atoi(reps)) : 1, std::atoi(only));
    }
    for (int T : sizes) {
      auto run = [&](int i) { be->linear(out.data(), x.data(), *mats[i % mats.size()], T); };
      for (int i = 0; i < int(mats.size()); ++i) run(i);  // warm up
      auto cpu_now = [] {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return ts.tv_sec + ts.tv_nsec * 1e-9;
      };
      int iters = 0;
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_now();
      double sec = 0;
      while (sec < 0.5 || iters < 3) {
        run(iters++);
        sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      const double per = sec / iters, cpu_per = (cpu_now() - c0) / iters / be->num_threads();
      if (T == 1)
        std::printf("  T=1 %6.1f GB/s (cpu=%5.1f)", bytes / per / 1e9, bytes / cpu_per / 1e9);
      else
        std::printf("  T=%d %6.1f GFLOP/s (cpu=%5.1f)", T, 2.0 * n * k * T / per / 1e9,
                    2.0 * n * k * T / cpu_per / 1e9);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  return 0;
}
