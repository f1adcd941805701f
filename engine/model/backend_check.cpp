#include "engine/model/backend_check.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "engine/loader/random_model.h"
#include "engine/model/decoder_model.h"
#include "kernels/backend_factory.h"

namespace pagedchat {

namespace {

// The paths checked: float32 weights and cache (rounding only), then the one users run on a GPU
// by default ("auto": bfloat16 weights and KV cache, activations rounded to bfloat16 for the
// GEMMs). The CPU runs the same types; its bfloat16 GEMM may keep float32 activations, hence the
// looser bound (a wrong kernel gives errors of order 1).
struct CheckedPath {
  const char* name;
  WeightDType weights;
  kernels::KvDType cache;
  double tolerance;
};
constexpr CheckedPath kPaths[] = {
    {"float32", WeightDType::kFloat32, kernels::KvDType::kFloat32, 1e-3},
    {"bfloat16", WeightDType::kBFloat16, kernels::KvDType::kBFloat16, 3e-2},
};

// The two steps: prompts of 600 and 37 tokens, then one decode token each.
std::vector<ForwardBatch> check_steps(int block_size, int vocab) {
  const int lens[2] = {600, 37};
  const int blocks_per_seq = (lens[0] + 1 + block_size - 1) / block_size;
  std::vector<ForwardBatch> steps(2);
  for (int step = 0; step < 2; ++step) {
    ForwardBatch& b = steps[step];
    b.max_blocks_per_seq = blocks_per_seq;
    b.query_start_loc.push_back(0);
    for (int r = 0; r < 2; ++r) {
      const int start = step == 0 ? 0 : lens[r], end = step == 0 ? lens[r] : lens[r] + 1;
      for (int pos = start; pos < end; ++pos) {
        b.input_ids.push_back((pos * 7919 + r * 104729) % vocab);
        b.positions.push_back(pos);
        // Request r owns blocks [r * blocks_per_seq, (r + 1) * blocks_per_seq), reversed, so
        // block ids are not in position order.
        const int block = r * blocks_per_seq + (blocks_per_seq - 1 - pos / block_size);
        b.slot_mapping.push_back(int64_t(block) * block_size + pos % block_size);
      }
      b.query_start_loc.push_back(int(b.input_ids.size()));
      b.seq_lens.push_back(end);
      for (int i = 0; i < blocks_per_seq; ++i) b.block_tables.push_back(r * blocks_per_seq + (blocks_per_seq - 1 - i));
      b.logits_indices.push_back(int(b.input_ids.size()) - 1);
    }
  }
  return steps;
}

std::vector<std::vector<float>> run(kernels::Backend& backend, const LoadedModel& m,
                                    const std::vector<ForwardBatch>& steps, int block_size, const CheckedPath& path) {
  DecoderModel model(m.config, m.weights, backend, path.weights);
  const int blocks = 2 * steps[0].max_blocks_per_seq;
  KVCache cache(m.config, blocks, block_size, path.cache, &backend);
  std::vector<std::vector<float>> out;
  for (const ForwardBatch& b : steps) {
    out.emplace_back();
    model.forward(b, cache, out.back());
  }
  return out;
}

}  // namespace

std::string check_backend_agrees(kernels::Backend& backend, int num_threads) {
  try {
    const LoadedModel m = make_random_model(
        "random:dim=256,hidden_dim=512,n_layers=2,n_heads=4,n_kv_heads=2,vocab_size=512,max_seq_len=1024,seed=7");
    const int block_size = 16;
    const auto steps = check_steps(block_size, m.config.vocab_size);
    auto reference = kernels::make_backend({"cpu", num_threads});
    const int V = m.config.vocab_size;
    for (const CheckedPath& path : kPaths) {
      const auto want = run(*reference, m, steps, block_size, path);
      const auto got = run(backend, m, steps, block_size, path);
      double worst = 0.0;
      for (std::size_t s = 0; s < want.size(); ++s)
        for (std::size_t row = 0; row < want[s].size() / V; ++row) {
          double d = 0.0, n = 0.0;
          for (int i = 0; i < V; ++i) {
            const double a = got[s][row * V + i], b = want[s][row * V + i];
            d += (a - b) * (a - b);
            n += b * b;
          }
          const double rel = std::sqrt(d / std::max(n, 1e-30));
          if (!(rel <= worst)) worst = std::isnan(rel) ? INFINITY : rel;
        }
      if (worst <= path.tolerance) continue;
      char buf[300];
      std::snprintf(buf, sizeof buf,
                    "the %s backend disagrees with the CPU on a test model with %s weights and KV cache (relative "
                    "logit error %.3g, allowed %.0e)",
                    backend.name(), path.name, worst, path.tolerance);
      return buf;
    }
    return {};
  } catch (const std::exception& e) {
    return std::string("the ") + backend.name() + " backend failed on a test model: " + e.what();
  }
}

}  // namespace pagedchat
