// Sampler: picks the next token from one row of logits under a request's SamplingParams.
// Greedy = argmax (the first maximum, as llama2.c's run.c); otherwise temperature scaling, top-k,
// top-p (nucleus, Holtzman et al. 2019) and one draw from the request's own RNG, so a seeded
// request yields the same tokens whatever batch it runs in.
#pragma once

#include <random>
#include <vector>

#include "engine/sampling_params.h"

namespace pagedchat {

class Sampler {
 public:
  /// logits: [vocab] float32 (not modified). Returns a token id in [0, vocab).
  int sample(const float* logits, int vocab, const SamplingParams& params, std::mt19937_64& rng);

 private:
  std::vector<float> probs_;
  std::vector<int> order_;
};

}  // namespace pagedchat
