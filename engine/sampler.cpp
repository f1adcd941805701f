#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pagedchat {

int Sampler::sample(const float* logits, int vocab, const SamplingParams& p, std::mt19937_64& rng) {
  if (p.temperature < 1e-5f) {
    int best = 0;
    for (int i = 1; i < vocab; ++i)
      if (logits[i] > logits[best]) best = i;
    return best;
  }
  // Softmax of logits / temperature.
  probs_.resize(vocab);
  float maxv = logits[0];
  for (int i = 1; i < vocab; ++i) maxv = std::max(maxv, logits[i]);
  double sum = 0.0;
  for (int i = 0; i < vocab; ++i) {
    probs_[i] = std::exp((logits[i] - maxv) / p.temperature);
    sum += probs_[i];
  }
  for (int i = 0; i < vocab; ++i) probs_[i] = float(probs_[i] / sum);

  // Candidates sorted by probability (ties by id, so the order is deterministic).
  order_.resize(vocab);
  std::iota(order_.begin(), order_.end(), 0);
  int keep = vocab;
  if (p.top_k > 0) keep = std::min(keep, p.top_k);
  auto by_prob = [&](int a, int b) { return probs_[a] > probs_[b] || (probs_[a] == probs_[b] && a < b); };
  if (keep < vocab || p.top_p < 1.0f) {
    std::sort(order_.begin(), order_.end(), by_prob);
    if (p.top_p < 1.0f) {
      double cum = 0.0;
      int n = 0;
      while (n < keep) {
        cum += probs_[order_[n++]];
        if (cum >= p.top_p) break;  // smallest set whose mass reaches top_p
      }
      keep = std::max(1, n);
    }
  }
  double mass = 0.0;
  for (int i = 0; i < keep; ++i) mass += probs_[order_[i]];
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng) * mass;
  double cdf = 0.0;
  for (int i = 0; i < keep; ++i) {
    cdf += probs_[order_[i]];
    if (u < cdf) return order_[i];
  }
  return order_[keep - 1];
}

}  // namespace pagedchat
