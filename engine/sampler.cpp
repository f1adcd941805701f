#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace pagedchat {

namespace {

constexpr float kSamplingEps = 1e-5f;  // vLLM's _SAMPLING_EPS: below it, temperature means greedy
constexpr float kMaxLogitBias = 100.0f;  // OpenAI API range, clamped as vLLM's OpenAI server does
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

bool valid_id(int id, int vocab) { return id >= 0 && id < vocab; }

// Sort key of a raw logit for the top-N logprobs: NaN sorts last (a strict weak order).
float key(float x) { return std::isnan(x) ? kNegInf : x; }

}  // namespace

int Sampler::sample(const float* logits, int vocab, const SamplingParams& params, std::mt19937_64& rng) {
  return sample(logits, vocab, params, {}, {}, {}, rng).token;
}

SampleResult Sampler::sample(const float* logits, int vocab, const SamplingParams& p,
                             std::span<const int> prompt_ids, std::span<const int> output_ids,
                             std::span<const int> masked_ids, std::mt19937_64& rng) {
  if (vocab < 1) throw std::invalid_argument("Sampler::sample: vocab must be >= 1, got " + std::to_string(vocab));
  SampleResult result;
  const size_t V = size_t(vocab);
  if (work_.size() < V) {
    work_.resize(V);
    probs_.resize(V);
    order_.resize(V);
    counts_.resize(V, 0);
    seen_.resize(V, 0);
  }
  last_vocab_ = vocab;

  // 1. Top-N raw logprobs (the sampled token's own logprob and rank come at the end).
  double log_z = 0.0;
  if (p.logprobs) {
    double maxr = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < vocab; ++i)
      if (logits[i] > maxr) maxr = logits[i];
    double sum = 0.0;
    for (int i = 0; i < vocab; ++i) sum += std::exp(double(logits[i]) - maxr);
    log_z = maxr + std::log(sum);
    const int n = std::min(*p.logprobs, vocab);
    if (n > 0) {
      std::iota(order_.begin(), order_.begin() + vocab, 0);
      auto by_raw = [&](int a, int b) {
        const float ka = key(logits[a]), kb = key(logits[b]);
        return ka > kb || (ka == kb && a < b);
      };
      std::partial_sort(order_.begin(), order_.begin() + n, order_.begin() + vocab, by_raw);
      result.top_logprobs.reserve(size_t(n));
      for (int i = 0; i < n; ++i)
        result.top_logprobs.emplace_back(order_[i], float(double(logits[order_[i]]) - log_z));
    }
  }

  // 2. logit_bias, 3. masks.
  float* w = work_.data();
  std::copy(logits, logits + vocab, w);
  for (const auto& [id, bias] : p.logit_bias)
    if (valid_id(id, vocab) && !std::isnan(bias)) w[id] += std::clamp(bias, -kMaxLogitBias, kMaxLogitBias);
  for (int id : masked_ids)
    if (valid_id(id, vocab)) w[id] = kNegInf;

  // 4. Penalties. seen_ / counts_ are left all-zero again afterwards (touching only these ids).
  if (p.repetition_penalty != 1.0f) {
    const float rp = p.repetition_penalty;
    auto penalise = [&](std::span<const int> ids) {
      for (int id : ids)
        if (valid_id(id, vocab) && !seen_[id]) {
          seen_[id] = 1;
          w[id] = w[id] > 0.0f ? w[id] / rp : w[id] * rp;
        }
    };
    penalise(prompt_ids);
    penalise(output_ids);
    for (int id : prompt_ids)
      if (valid_id(id, vocab)) seen_[id] = 0;
    for (int id : output_ids)
      if (valid_id(id, vocab)) seen_[id] = 0;
  }
  if (p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f) {
    for (int id : output_ids)
      if (valid_id(id, vocab)) ++counts_[id];
    for (int id : output_ids)
      if (valid_id(id, vocab) && counts_[id] > 0) {
        w[id] -= p.frequency_penalty * float(counts_[id]);
        w[id] -= p.presence_penalty;
        counts_[id] = 0;  // each distinct id once
      }
  }

  // 5a. Greedy: the first maximum.
  int token = -1;
  if (p.temperature < kSamplingEps) {
    float best = kNegInf;
    for (int i = 0; i < vocab; ++i)
      if (w[i] > best) best = w[i], token = i;
    if (token < 0) throw std::runtime_error("Sampler::sample: every token is masked (all logits -inf or NaN)");
  } else {
    // 5b. Softmax of logits / temperature, unnormalised: the most likely token has probability 1,
    // so min_p's threshold (min_p * max prob) is min_p itself.
    float maxv = kNegInf;
    for (int i = 0; i < vocab; ++i)
      if (w[i] > maxv) maxv = w[i];
    if (maxv == kNegInf) throw std::runtime_error("Sampler::sample: every token is masked (all logits -inf or NaN)");
    const double t = p.temperature;
    const double min_p = p.min_p;
    double* pr = probs_.data();
    int* ord = order_.data();
    int m = 0;           // candidates, in id order: probability > 0 and >= min_p
    double total = 0.0;  // their mass
    for (int i = 0; i < vocab; ++i) {
      const double q = std::exp((double(w[i]) - double(maxv)) / t);  // NaN logits give NaN: dropped
      pr[i] = q;
      if (q > 0.0 && q >= min_p) {
        ord[m++] = i;
        total += q;
      }
    }

    auto by_prob = [pr](int a, int b) { return pr[a] > pr[b] || (pr[a] == pr[b] && a < b); };
    int sorted = 0;  // ord[0, sorted) holds the `sorted` most likely candidates of ord[0, end), in order
    auto sort_prefix = [&](int upto, int end) {
      if (upto <= sorted) return;
      if (upto < end) std::nth_element(ord + sorted, ord + upto, ord + end, by_prob);
      std::sort(ord + sorted, ord + upto, by_prob);
      sorted = upto;
    };

    if (m == 0) throw std::runtime_error("Sampler::sample: no token has a finite probability");

    // top_k (after min_p; both keep a most-likely prefix, so their order does not matter).
    int k = m;
    if (p.top_k > 0 && p.top_k < m) {
      k = p.top_k;
      sort_prefix(k, m);
      total = 0.0;
      for (int i = 0; i < k; ++i) total += pr[ord[i]];
    }
    // top_p over the renormalised survivors: the smallest most-likely prefix whose mass reaches
    // top_p. Sorted lazily in growing chunks, so a small nucleus costs O(vocab), not a full sort.
    int kept = k;
    double kept_mass = total;
    if (p.top_p < 1.0f) {
      const double target = double(p.top_p) * total;
      double cum = 0.0;
      int n = 0;
      while (n < k) {
        if (n == sorted) sort_prefix(std::min(k, std::max(2 * sorted, sorted + 64)), k);
        cum += pr[ord[n++]];
        if (cum >= target) break;
      }
      kept = std::max(1, n);
      kept_mass = cum;
    }
    // One uniform draw, inverse CDF over the kept candidates (in sorted order when a filter sorted
    // them, else in id order; either way deterministic).
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng) * kept_mass;
    double cdf = 0.0;
    token = ord[kept - 1];
    for (int i = 0; i < kept; ++i) {
      cdf += pr[ord[i]];
      if (u < cdf) {
        token = ord[i];
        break;
      }
    }
  }
  result.token = token;

  if (p.logprobs) {
    result.logprob = float(double(logits[token]) - log_z);
    const float x = logits[token];
    int rank = 0;
    for (int i = 0; i < vocab; ++i) rank += logits[i] >= x;
    result.rank = std::max(1, rank);  // a NaN raw logit compares false everywhere
  }
  return result;
}

}  // namespace pagedchat
