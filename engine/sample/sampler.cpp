#include "engine/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace pagedchat {

namespace {

constexpr float kSamplingEps = 1e-5f;    // vLLM's _SAMPLING_EPS: below it, temperature means greedy
constexpr float kMaxLogitBias = 100.0f;  // OpenAI API range, clamped as vLLM's OpenAI server does
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

bool valid_id(int id, int vocab) { return id >= 0 && id < vocab; }

// Sort key of a raw logit for the top-N logprobs: NaN sorts last (a strict weak order).
float key(float x) { return std::isnan(x) ? kNegInf : x; }

// No token can be drawn: the model's own logits were NaN (a broken or overflowing model: the
// step's failure, std::runtime_error), or the request's restrictions (masks, allowed ids, a
// grammar) left none (NoTokenError: that request's end only).
[[noreturn]] void no_token(const float* logits, int vocab) {
  int nan = 0;
  for (int i = 0; i < vocab; ++i) nan += std::isnan(logits[i]) ? 1 : 0;
  if (nan > 0)
    throw std::runtime_error("Sampler::sample: the model produced NaN logits (" + std::to_string(nan) + " of " +
                             std::to_string(vocab) +
                             "): its weights or activations are not finite; no token can be sampled");
  throw NoTokenError(
      "no token satisfies this request's restrictions (allowed_token_ids, min_tokens before a stop, "
      "the structured output's grammar): every token is masked");
}

}  // namespace

// Weighted quickselect: rearranges ord[0, m) so that ord[0, n) holds the n most likely candidates
// (in partition order, not sorted) where n is the smallest count whose mass reaches `target`.
// Expected O(m); deterministic (median-of-three pivots, no randomness).
int Sampler::select_nucleus(int* ord, int m, double target) const {
  const float* w = work_.data();
  const double* pr = probs_.data();
  auto better = [w](int a, int b) { return w[a] > w[b] || (w[a] == w[b] && a < b); };
  int lo = 0, hi = m;
  double before = 0.0;  // mass of ord[0, lo), all more likely than anything in ord[lo, hi); < target
  while (hi - lo > 1) {
    int a = ord[lo], b = ord[lo + (hi - lo) / 2], c = ord[hi - 1];
    if (better(b, a)) std::swap(a, b);
    if (better(c, b)) std::swap(b, c);
    if (better(b, a)) std::swap(a, b);
    const int pivot = b;  // median of three
    int* split = std::partition(ord + lo, ord + hi, [&](int x) { return better(x, pivot); });
    std::iter_swap(split, std::find(split, ord + hi, pivot));  // pivot right after the better ones
    const int pos = int(split - ord);
    double left = 0.0;
    for (int i = lo; i < pos; ++i) left += pr[ord[i]];
    if (before + left >= target) {
      hi = pos;  // the nucleus ends inside the better part (non-empty: before < target)
    } else if (before + left + pr[pivot] >= target) {
      return pos + 1;
    } else {
      before += left + pr[pivot];
      lo = pos + 1;
    }
  }
  return std::max(1, hi);  // one candidate left (or rounding ran past the end): take it
}

int Sampler::sample(const float* logits, int vocab, const SamplingParams& params, std::mt19937_64& rng) {
  return sample(logits, vocab, params, {}, {}, {}, rng).token;
}

SampleResult Sampler::sample(const float* logits, int vocab, const SamplingParams& p, std::span<const int> prompt_ids,
                             std::span<const int> output_ids, std::span<const int> masked_ids, std::mt19937_64& rng,
                             const uint64_t* allowed) {
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
      for (int i = 0; i < n; ++i) result.top_logprobs.emplace_back(order_[i], float(double(logits[order_[i]]) - log_z));
    }
  }

  // 2. logit_bias, 3. masks.
  float* w = work_.data();
  std::copy(logits, logits + vocab, w);
  for (const auto& [id, bias] : p.logit_bias)
    if (valid_id(id, vocab) && !std::isnan(bias)) w[id] += std::clamp(bias, -kMaxLogitBias, kMaxLogitBias);
  for (int id : masked_ids)
    if (valid_id(id, vocab)) w[id] = kNegInf;
  if (allowed)
    for (int id = 0; id < vocab; ++id)
      if (!((allowed[id >> 6] >> (id & 63)) & 1)) w[id] = kNegInf;
  if (!p.allowed_token_ids.empty()) {  // keep these ids' values, -inf elsewhere
    for (int id : p.allowed_token_ids)
      if (valid_id(id, vocab)) seen_[id] = 1;
    for (int id = 0; id < vocab; ++id)
      if (!seen_[id]) w[id] = kNegInf;
    for (int id : p.allowed_token_ids)
      if (valid_id(id, vocab)) seen_[id] = 0;
  }

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
    if (token < 0) no_token(logits, vocab);
  } else {
    // 5b. Random sampling. Candidates: finite logits that pass min_p. With the softmax of
    // logits / T left unnormalised, the most likely token has probability 1, so min_p's threshold
    // (min_p * max prob) becomes the logit threshold max + T * log(min_p).
    float maxv = kNegInf;
    for (int i = 0; i < vocab; ++i)
      if (w[i] > maxv) maxv = w[i];
    if (maxv == kNegInf) no_token(logits, vocab);
    const double t = p.temperature;
    const double thr = p.min_p > 0.0f ? double(maxv) + t * std::log(double(p.min_p)) : -HUGE_VAL;
    int* ord = order_.data();
    int m = 0;  // candidates ord[0, m), in id order
    for (int i = 0; i < vocab; ++i)
      if (w[i] > kNegInf && double(w[i]) >= thr) ord[m++] = i;  // NaN fails both
    if (m == 0) throw std::runtime_error("Sampler::sample: no token can be sampled");

    // Most likely first; equal logits: lower id first. A strict total order on candidates.
    auto better = [w](int a, int b) { return w[a] > w[b] || (w[a] == w[b] && a < b); };
    bool sorted = false;  // ord[0, m) in `better` order?
    if (p.top_k > 0 && p.top_k < m) {
      const int k = p.top_k;
      if (k <= 1024) {
        std::partial_sort(ord, ord + k, ord + m, better);  // heap select: ~one comparison per token
        sorted = true;
      } else {
        std::nth_element(ord, ord + k - 1, ord + m, better);
      }
      m = k;
    }
    // Softmax numerators of the survivors only (min_p and top_k never need them).
    double* pr = probs_.data();
    double total = 0.0;
    for (int i = 0; i < m; ++i) total += pr[ord[i]] = std::exp((double(w[ord[i]]) - double(maxv)) / t);

    // top_p over the renormalised survivors: the smallest most-likely set whose mass reaches
    // top_p * total (vLLM masks tokens whose ascending cumulative mass is <= 1 - top_p).
    int kept = m;
    if (p.top_p < 1.0f) {
      const double target = double(p.top_p) * total;
      if (sorted) {
        double cum = 0.0;
        int n = 0;
        while (n < m) {
          cum += pr[ord[n++]];
          if (cum >= target) break;
        }
        kept = n;
      } else {
        kept = select_nucleus(ord, m, target);
      }
    }
    // One uniform draw, inverse CDF over the kept candidates in their (deterministic) order.
    double kept_mass = 0.0;
    for (int i = 0; i < kept; ++i) kept_mass += pr[ord[i]];
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
