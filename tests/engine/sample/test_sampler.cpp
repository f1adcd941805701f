// Sampler and SamplingParams: vLLM v1 semantics (logit_bias, masks, penalties, greedy, temperature,
// min_p, top_k, top_p, raw logprobs, one RNG draw per sampled token) and validate().
#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/sample/sampler.h"

using namespace pagedchat;

namespace {

SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0.0f;
  return p;
}

// Samples `draws` times (fixed seed) and returns the count per token.
std::vector<int> histogram(Sampler& s, const std::vector<float>& logits, const SamplingParams& p, int draws,
                           uint64_t seed = 7, std::vector<int> masked = {}) {
  std::mt19937_64 rng(seed);
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) {
    const int t = s.sample(logits.data(), int(logits.size()), p, {}, {}, masked, rng).token;
    if (t < 0 || t >= int(logits.size())) return {};
    ++counts[t];
  }
  return counts;
}

// softmax(logits / t) in double.
std::vector<double> softmax(const std::vector<float>& logits, double t = 1.0) {
  double mx = -INFINITY;
  for (float x : logits) mx = std::max(mx, double(x));
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp((double(logits[i]) - mx) / t);
  for (double& x : p) x /= sum;
  return p;
}

std::vector<float> random_logits(int vocab, uint64_t seed, float lo = -8.0f, float hi = 8.0f) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(vocab));
  for (float& x : v) x = d(g);
  return v;
}

// Ids sorted by descending value, ties by lower id.
std::vector<int> ranking(const std::vector<double>& v) {
  std::vector<int> ids(v.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return v[a] > v[b]; });
  return ids;
}

int greedy_token(Sampler& s, const std::vector<float>& logits, const SamplingParams& p, std::vector<int> prompt = {},
                 std::vector<int> output = {}, std::vector<int> masked = {}) {
  std::mt19937_64 rng(1);
  return s.sample(logits.data(), int(logits.size()), p, prompt, output, masked, rng).token;
}

}  // namespace

class TestSampler : public QObject {
  Q_OBJECT
 private slots:
  void greedyTieLowestId() {
    Sampler s;
    const std::vector<float> logits{1.0f, 3.0f, 3.0f, 2.0f, 3.0f};
    std::mt19937_64 rng(5), untouched(5);
    QCOMPARE(s.sample(logits.data(), 5, greedy(), {}, {}, {}, rng).token, 1);
    QVERIFY(rng == untouched);  // greedy draws nothing
    SamplingParams tiny = greedy();
    tiny.temperature = 5e-6f;  // below vLLM's 1e-5 epsilon: still greedy
    QCOMPARE(s.sample(logits.data(), 5, tiny, {}, {}, {}, rng).token, 1);
    QVERIFY(rng == untouched);
    QCOMPARE(s.sample(logits.data(), 5, greedy(), rng), 1);  // old overload
  }

  void repetitionPenalty() {
    Sampler s;
    SamplingParams p = greedy();
    p.repetition_penalty = 2.0f;
    // Positive logit of a prompt token is divided: {2, 1.5, -1} -> {1, 1.5, -1}.
    const std::vector<float> a{2.0f, 1.5f, -1.0f};
    QCOMPARE(greedy_token(s, a, greedy(), {0}), 0);
    QCOMPARE(greedy_token(s, a, p, {0}), 1);
    QCOMPARE(s.processed_logits()[0], 1.0f);
    QCOMPARE(s.processed_logits()[1], 1.5f);
    QCOMPARE(s.processed_logits()[2], -1.0f);
    // Negative logit of an output token is multiplied: {-1, -0.8, -2} -> {-1, -1.6, -2}.
    const std::vector<float> b{-1.0f, -0.8f, -2.0f};
    QCOMPARE(greedy_token(s, b, greedy(), {}, {1}), 1);
    QCOMPARE(greedy_token(s, b, p, {}, {1}), 0);
    QCOMPARE(s.processed_logits()[1], -1.6f);
    // Applied once per distinct token, however often it occurs in prompt and output:
    // {2, 0.9} -> {1, 0.9} (twice would give 0.5 and flip the argmax).
    const std::vector<float> c{2.0f, 0.9f};
    QCOMPARE(greedy_token(s, c, p, {0, 0}, {0, 0}), 0);
    QCOMPARE(s.processed_logits()[0], 1.0f);
    // Below 1 it encourages repetition: {1, 1.5} with rp 0.5 on token 0 -> {2, 1.5}.
    p.repetition_penalty = 0.5f;
    QCOMPARE(greedy_token(s, {1.0f, 1.5f}, p, {0}), 0);
    QCOMPARE(s.processed_logits()[0], 2.0f);
  }

  void frequencyAndPresencePenalties() {
    Sampler s;
    const std::vector<float> logits{1.0f, 0.0f};
    const std::vector<int> out{0, 0};  // token 0 generated twice
    SamplingParams p = greedy();
    // frequency: 1 - 2f; the tie at f = 0.5 goes to the lower id, above it token 1 wins.
    p.frequency_penalty = 0.5f;
    QCOMPARE(greedy_token(s, logits, p, {}, out), 0);
    QCOMPARE(s.processed_logits()[0], 0.0f);
    p.frequency_penalty = 0.51f;
    QCOMPARE(greedy_token(s, logits, p, {}, out), 1);
    // frequency counts the output only, never the prompt.
    p.frequency_penalty = 2.0f;
    QCOMPARE(greedy_token(s, logits, p, {0, 0, 0}, {}), 0);
    QCOMPARE(s.processed_logits()[0], 1.0f);
    // presence: 1 - p, once however often the token occurs.
    p = greedy();
    p.presence_penalty = 1.0f;
    QCOMPARE(greedy_token(s, logits, p, {}, out), 0);
    QCOMPARE(s.processed_logits()[0], 0.0f);
    p.presence_penalty = 1.01f;
    QCOMPARE(greedy_token(s, logits, p, {}, out), 1);
    p.presence_penalty = 0.6f;  // per occurrence it would be 1 - 1.2 < 0
    QCOMPARE(greedy_token(s, logits, p, {}, out), 0);
    QCOMPARE(greedy_token(s, logits, p, {0}, {}), 0);  // prompt-only: no presence penalty
    QCOMPARE(s.processed_logits()[0], 1.0f);
    // Both: 1 - 2 * 0.25 - 0.5 = 0 (tie -> 0); 1 - 2 * 0.26 - 0.5 < 0 -> 1.
    p.frequency_penalty = 0.25f;
    p.presence_penalty = 0.5f;
    QCOMPARE(greedy_token(s, logits, p, {}, out), 0);
    p.frequency_penalty = 0.26f;
    QCOMPARE(greedy_token(s, logits, p, {}, out), 1);
    // A negative penalty favours repetition: 0 - (-1.5) = 1.5 > 1.
    p = greedy();
    p.presence_penalty = -1.5f;
    QCOMPARE(greedy_token(s, logits, p, {}, {1}), 1);
    QCOMPARE(s.processed_logits()[1], 1.5f);
    // Penalty state does not leak into the next call.
    QCOMPARE(greedy_token(s, logits, greedy(), {}, {}), 0);
    QCOMPARE(s.processed_logits()[1], 0.0f);
  }

  void logitBias() {
    Sampler s;
    SamplingParams p = greedy();
    p.logit_bias = {{2, 1.5f}};
    QCOMPARE(greedy_token(s, {1.0f, 0.5f, 0.0f}, greedy()), 0);
    QCOMPARE(greedy_token(s, {1.0f, 0.5f, 0.0f}, p), 2);
    QCOMPARE(s.processed_logits()[2], 1.5f);
    // Clamped to [-100, 100]: unclamped these would flip the argmax.
    p.logit_bias = {{1, -1000.0f}};
    QCOMPARE(greedy_token(s, {0.0f, 200.0f}, p), 1);
    QCOMPARE(s.processed_logits()[1], 100.0f);
    p.logit_bias = {{0, 1000.0f}};
    QCOMPARE(greedy_token(s, {0.0f, 150.0f}, p), 1);
    QCOMPARE(s.processed_logits()[0], 100.0f);
    // Added before penalties: (-1 + 3) / 4 = 0.5 > 0 (penalty first would give -1 * 4 + 3 = -1).
    p.logit_bias = {{0, 3.0f}};
    p.repetition_penalty = 4.0f;
    QCOMPARE(greedy_token(s, {-1.0f, 0.0f}, p, {0}), 0);
    QCOMPARE(s.processed_logits()[0], 0.5f);
  }

  void maskedIdsNeverChosen() {
    Sampler s;
    const std::vector<float> logits{5.0f, 1.0f, 0.0f, 4.5f};
    QCOMPARE(greedy_token(s, logits, greedy(), {}, {}, {0, 3}), 1);
    SamplingParams p = greedy();
    p.logit_bias = {{0, 100.0f}};  // bias comes before the mask
    p.repetition_penalty = 0.5f;   // and penalties after it cannot lift -inf
    QCOMPARE(greedy_token(s, logits, p, {0}, {}, {0, 3}), 1);
    QVERIFY(std::isinf(s.processed_logits()[0]) && s.processed_logits()[0] < 0);
    SamplingParams t;  // temperature 1
    const auto h = histogram(s, logits, t, 200, 3, {0, 3});
    QVERIFY(!h.empty());
    QCOMPARE(h[0], 0);
    QCOMPARE(h[3], 0);
    QCOMPARE(h[1] + h[2], 200);
    // Every token masked: an error, not a silent pick.
    std::mt19937_64 rng(1);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             s.sample(logits.data(), 4, t, {}, {}, std::vector<int>{0, 1, 2, 3}, rng));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             s.sample(logits.data(), 4, greedy(), {}, {}, std::vector<int>{0, 1, 2, 3}, rng));
    // A model whose logits are NaN is named as such (not as a request that masked everything).
    const std::vector<float> nans(4, NAN);
    for (const SamplingParams& q : {greedy(), t}) {
      try {
        s.sample(nans.data(), 4, q, {}, {}, {}, rng);
        QFAIL("sampled from NaN logits");
      } catch (const std::runtime_error& e) {
        QVERIFY2(std::string(e.what()).find("NaN logits (4 of 4)") != std::string::npos, e.what());
      }
    }
  }

  // allowed_token_ids (vLLM): every other token is -inf before the penalties; with the engine's
  // masks the two restrict together; a sampled draw only ever lands on an allowed id.
  void allowedTokenIds() {
    Sampler s;
    const std::vector<float> logits{5.0f, 1.0f, 0.0f, 4.5f, 3.0f};
    SamplingParams p = greedy();
    p.allowed_token_ids = {2, 4, 1};
    QCOMPARE(greedy_token(s, logits, p), 4);
    QVERIFY(std::isinf(s.processed_logits()[0]) && s.processed_logits()[0] < 0);
    QCOMPARE(s.processed_logits()[4], 3.0f);
    p.logit_bias = {{2, 10.0f}, {0, 100.0f}};  // a bias does not lift a token that is not allowed
    QCOMPARE(greedy_token(s, logits, p), 2);
    QCOMPARE(greedy_token(s, logits, p, {}, {}, {2}), 4);  // with a mask: what both allow
    p.logit_bias.clear();
    p.repetition_penalty = 0.5f;  // penalties after it cannot lift -inf
    QCOMPARE(greedy_token(s, logits, p, {0, 3}), 4);
    SamplingParams t;  // temperature 1
    t.allowed_token_ids = {1, 2};
    const auto h = histogram(s, logits, t, 300);
    QVERIFY(!h.empty());
    QCOMPARE(h[1] + h[2], 300);
    QVERIFY(h[1] > h[2]);  // e^1 : e^0
    // The next call without the list samples everything again (no state left behind).
    QCOMPARE(greedy_token(s, logits, greedy()), 0);
    // Allowed ids all masked: an error, not a silent pick.
    std::mt19937_64 rng(1);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, s.sample(logits.data(), 5, t, {}, {}, std::vector<int>{1, 2}, rng));
  }

  void truncationKeepsOnlyTheTop() {
    Sampler s;
    const std::vector<float> logits{0.0f, 0.5f, 1.0f, 0.2f};  // top is id 2; id 1 has e^-0.5 = 0.607 of it
    SamplingParams p;
    p.min_p = 0.7f;
    auto h = histogram(s, logits, p, 200);
    QCOMPARE(h[2], 200);
    p = SamplingParams{};
    p.top_k = 1;
    h = histogram(s, logits, p, 200);
    QCOMPARE(h[2], 200);
    p = SamplingParams{};
    p.top_p = 1e-6f;
    h = histogram(s, logits, p, 200);
    QCOMPARE(h[2], 200);
    // min_p 0.6 lets id 1 (0.607) in but not ids 3 (0.449) and 0 (0.368).
    p = SamplingParams{};
    p.min_p = 0.6f;
    h = histogram(s, logits, p, 400);
    QCOMPARE(h[0] + h[3], 0);
    QVERIFY(h[1] > 0 && h[2] > h[1]);
    // min_p is relative to the distribution after temperature: at T = 0.5 id 1 has e^-1 = 0.37.
    p.temperature = 0.5f;
    h = histogram(s, logits, p, 200);
    QCOMPARE(h[2], 200);
  }

  void temperatureMatchesSoftmax() {
    Sampler s;
    const std::vector<float> logits{1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
    for (float t : {0.7f, 1.0f, 2.0f}) {
      SamplingParams p;
      p.temperature = t;
      const int draws = 20000;
      const auto h = histogram(s, logits, p, draws, 1234);
      const auto ref = softmax(logits, t);
      double max_diff = 0;
      for (size_t i = 0; i < ref.size(); ++i) max_diff = std::max(max_diff, std::abs(h[i] / double(draws) - ref[i]));
      QVERIFY2(max_diff < 0.02, qPrintable(QString("T=%1 max abs diff %2").arg(t).arg(max_diff)));
    }
  }

  void topKTwo() {
    Sampler s;
    const std::vector<float> logits{0.0f, 2.0f, 1.0f, 1.9f};  // top two: ids 1 and 3
    SamplingParams p;
    p.top_k = 2;
    const int draws = 4000;
    auto h = histogram(s, logits, p, draws);
    QCOMPARE(h[0] + h[2], 0);
    const double expect1 = 1.0 / (1.0 + std::exp(-0.1));  // renormalised over {1, 3}
    QVERIFY(std::abs(h[1] / double(draws) - expect1) < 0.03);
    // Equal logits: the lower ids are kept.
    h = histogram(s, {1.0f, 1.0f, 1.0f, 1.0f}, p, 400);
    QCOMPARE(h[2] + h[3], 0);
    QVERIFY(h[0] > 0 && h[1] > 0);
    // top_k >= vocab is off.
    p.top_k = 10;
    h = histogram(s, logits, p, 2000);
    QVERIFY(h[0] > 0 && h[2] > 0);
  }

  void topPIsOverTheTopKRenormalisedMass() {
    // probs 0.4, 0.3, 0.2, 0.1. top_p 0.75 alone keeps {0, 1, 2} (0.4 + 0.3 < 0.75); after top_k = 3
    // the renormalised 0.444 + 0.333 >= 0.75 keeps {0, 1} (vLLM's apply_top_k_top_p).
    Sampler s;
    const std::vector<float> logits{std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
    SamplingParams p;
    p.top_p = 0.75f;
    auto h = histogram(s, logits, p, 2000);
    QCOMPARE(h[3], 0);
    QVERIFY(h[0] > 0 && h[1] > 0 && h[2] > 0);
    p.top_k = 3;
    h = histogram(s, logits, p, 2000);
    QCOMPARE(h[2] + h[3], 0);
    QVERIFY(h[0] > 0 && h[1] > 0);
    // Renormalised within the nucleus: 0.4 / 0.7.
    QVERIFY(std::abs(h[0] / 2000.0 - 0.4 / 0.7) < 0.04);
  }

  void largeVocabTruncation() {
    // Exercises the nth_element / lazily sorted paths against a reference full sort.
    Sampler s;
    const int vocab = 5000;
    const auto logits = random_logits(vocab, 99);
    const auto ref = softmax(logits);
    const auto order = ranking(ref);
    SamplingParams p;
    p.top_k = 5;
    auto h = histogram(s, logits, p, 2000);
    const std::set<int> top5(order.begin(), order.begin() + 5);
    for (int i = 0; i < vocab; ++i)
      if (h[i]) QVERIFY2(top5.count(i), qPrintable(QString("token %1 outside the top 5").arg(i)));
    QVERIFY(h[order[0]] > 0);
    // Nucleus of 0.9: reference prefix computed in double.
    p = SamplingParams{};
    p.top_p = 0.9f;
    double cum = 0;
    int n = 0;
    while (cum < 0.9) cum += ref[order[n++]];
    std::set<int> nucleus(order.begin(), order.begin() + n);
    h = histogram(s, logits, p, 4000);
    int outside = 0;
    for (int i = 0; i < vocab; ++i)
      if (h[i] && !nucleus.count(i)) outside += h[i];
    QCOMPARE(outside, 0);
    QVERIFY(n > 64);  // the nucleus spans several lazily sorted chunks
    // Empirical mass of the first 64 within tolerance of the renormalised reference.
    double ref64 = 0;
    int got64 = 0;
    for (int i = 0; i < 64; ++i) ref64 += ref[order[i]], got64 += h[order[i]];
    QVERIFY(std::abs(got64 / 4000.0 - ref64 / cum) < 0.03);
    // A large top_k (selected with nth_element, unsorted) followed by top_p over its renormalised
    // mass, with min_p as well: the nucleus of the top 1500.
    p = SamplingParams{};
    p.top_k = 1500;
    p.top_p = 0.8f;
    p.min_p = 1e-6f;
    double mass1500 = 0;
    for (int i = 0; i < 1500; ++i) mass1500 += ref[order[i]];
    double pmax = ref[order[0]];
    cum = 0;
    n = 0;
    while (cum < 0.8 * mass1500) cum += ref[order[n++]];
    QVERIFY(ref[order[n - 1]] >= 1e-6 * pmax);  // min_p does not cut into this nucleus
    nucleus = std::set<int>(order.begin(), order.begin() + n);
    h = histogram(s, logits, p, 4000);
    outside = 0;
    for (int i = 0; i < vocab; ++i)
      if (h[i] && !nucleus.count(i)) outside += h[i];
    QCOMPARE(outside, 0);
    got64 = 0;
    for (int i = 0; i < 64; ++i) got64 += h[order[i]];
    QVERIFY(std::abs(got64 / 4000.0 - ref64 / cum) < 0.03);
  }

  void logprobsAreRaw() {
    Sampler s;
    const int vocab = 1000;
    const auto logits = random_logits(vocab, 42, -10.0f, 10.0f);
    // Double-precision log-softmax reference.
    double mx = -INFINITY;
    for (float x : logits) mx = std::max(mx, double(x));
    double sum = 0;
    for (float x : logits) sum += std::exp(double(x) - mx);
    std::vector<double> ref(vocab);
    for (int i = 0; i < vocab; ++i) ref[i] = double(logits[i]) - mx - std::log(sum);
    const auto order = ranking(ref);
    auto rank_of = [&](int t) { return int(std::find(order.begin(), order.end(), t) - order.begin()) + 1; };

    SamplingParams p;
    p.temperature = 0.8f;
    p.top_k = 50;
    p.logprobs = 5;
    p.repetition_penalty = 1.3f;
    p.frequency_penalty = 0.7f;
    p.presence_penalty = 0.4f;
    p.logit_bias = {{order[0], -50.0f}, {order[900], 30.0f}};
    const std::vector<int> prompt{order[1], order[2], 7};
    const std::vector<int> output{order[3], order[3], 11};
    std::mt19937_64 rng(3);
    for (int it = 0; it < 50; ++it) {
      const SampleResult r = s.sample(logits.data(), vocab, p, prompt, output, {}, rng);
      QVERIFY(std::abs(r.logprob - ref[r.token]) < 1e-5);
      QCOMPARE(r.rank, rank_of(r.token));
      QCOMPARE(int(r.top_logprobs.size()), 5);
      for (int i = 0; i < 5; ++i) {
        QCOMPARE(r.top_logprobs[i].first, order[i]);  // unaffected by bias and penalties
        QVERIFY(std::abs(r.top_logprobs[i].second - ref[order[i]]) < 1e-5);
        if (i) QVERIFY(r.top_logprobs[i].second <= r.top_logprobs[i - 1].second);
      }
    }
    // Greedy with a bias that makes a low-ranked token win: its raw logprob and rank are reported.
    SamplingParams g = greedy();
    g.logprobs = 3;
    g.logit_bias = {{order[900], 100.0f}};
    SampleResult r = s.sample(logits.data(), vocab, g, {}, {}, {}, rng);
    QCOMPARE(r.token, order[900]);
    QCOMPARE(r.rank, 901);
    QVERIFY(std::abs(r.logprob - ref[order[900]]) < 1e-5);
    QCOMPARE(r.top_logprobs.front().first, order[0]);
    // logprobs = 0: the sampled token's logprob and rank only.
    g.logprobs = 0;
    r = s.sample(logits.data(), vocab, g, {}, {}, {}, rng);
    QVERIFY(r.top_logprobs.empty());
    QCOMPARE(r.rank, 901);
    // Unset: nothing computed.
    g.logprobs.reset();
    r = s.sample(logits.data(), vocab, g, {}, {}, {}, rng);
    QVERIFY(r.top_logprobs.empty());
    QCOMPARE(r.rank, 0);
    QCOMPARE(r.logprob, 0.0f);
    // Ties: top-N by lower id; the rank counts every token >= (vLLM's batched_count_greater_than).
    const std::vector<float> tie{0.0f, 2.0f, 1.0f, 2.0f};
    g = greedy();
    g.logprobs = 4;
    r = s.sample(tie.data(), 4, g, {}, {}, {}, rng);
    QCOMPARE(r.token, 1);
    QCOMPARE(r.rank, 2);
    QCOMPARE(r.top_logprobs[0].first, 1);
    QCOMPARE(r.top_logprobs[1].first, 3);
    QCOMPARE(r.top_logprobs[2].first, 2);
    QCOMPARE(r.top_logprobs[3].first, 0);
  }

  void seedsAndOneDrawPerToken() {
    Sampler s;
    const int vocab = 1000;
    const auto logits = random_logits(vocab, 5, -4.0f, 4.0f);
    std::vector<SamplingParams> settings(5);
    settings[1].top_p = 0.9f;
    settings[2].top_k = 50;
    settings[2].temperature = 0.6f;
    settings[3].min_p = 0.05f;
    settings[3].top_p = 0.5f;
    settings[3].top_k = 300;
    settings[4].presence_penalty = 1.0f;
    settings[4].logprobs = 2;
    const std::vector<int> out{1, 2, 3};
    for (const SamplingParams& p : settings) {
      std::mt19937_64 a(42), b(42), c(43), shadow(42);
      std::vector<int> sa, sb, sc;
      for (int i = 0; i < 100; ++i) {
        sa.push_back(s.sample(logits.data(), vocab, p, {}, out, {}, a).token);
        shadow();  // exactly one 64-bit draw per sampled token
        QVERIFY(a == shadow);
        // Another request's sampling in between (same Sampler) must not matter.
        std::mt19937_64 other(i);
        s.sample(logits.data(), vocab, settings[1], {}, {}, {}, other);
        sb.push_back(s.sample(logits.data(), vocab, p, {}, out, {}, b).token);
        sc.push_back(s.sample(logits.data(), vocab, p, {}, out, {}, c).token);
      }
      QVERIFY(sa == sb);
      QVERIFY(sa != sc);
    }
  }

  void validateRejectsBadValues() {
    SamplingParams ok;
    ok.validate();
    ok.stop = {"\n\n", "User:"};
    ok.stop_token_ids = {2};
    ok.logprobs = 20;
    ok.logit_bias = {{5, 1e9f}, {6, -INFINITY}};  // clamped when applied
    ok.min_tokens = ok.max_tokens;
    ok.presence_penalty = -2.0f;
    ok.frequency_penalty = 2.0f;
    ok.top_k = -1;
    ok.n = 64;
    ok.validate();

    struct Case {
      const char* field;
      std::function<void(SamplingParams&)> set;
    };
    const std::vector<Case> cases{
        {"n", [](SamplingParams& p) { p.n = 0; }},
        {"n", [](SamplingParams& p) { p.n = 65; }},
        {"temperature", [](SamplingParams& p) { p.temperature = -0.1f; }},
        {"temperature", [](SamplingParams& p) { p.temperature = NAN; }},
        {"top_p", [](SamplingParams& p) { p.top_p = 0.0f; }},
        {"top_p", [](SamplingParams& p) { p.top_p = 1.5f; }},
        {"top_k", [](SamplingParams& p) { p.top_k = -2; }},
        {"min_p", [](SamplingParams& p) { p.min_p = -0.1f; }},
        {"min_p", [](SamplingParams& p) { p.min_p = 1.1f; }},
        {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = 2.5f; }},
        {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = -2.01f; }},
        {"frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = -3.0f; }},
        {"frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = NAN; }},
        {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = 0.0f; }},
        {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = -1.0f; }},
        {"max_tokens", [](SamplingParams& p) { p.max_tokens = 0; }},
        {"min_tokens", [](SamplingParams& p) { p.min_tokens = -1; }},
        {"min_tokens", [](SamplingParams& p) { p.min_tokens = p.max_tokens + 1; }},
        {"stop[1]",
         [](SamplingParams& p) {
           p.stop = {"a", ""};
         }},
        {"stop_token_ids[0]", [](SamplingParams& p) { p.stop_token_ids = {-1}; }},
        {"logprobs", [](SamplingParams& p) { p.logprobs = -1; }},
        {"logprobs", [](SamplingParams& p) { p.logprobs = 21; }},
        {"logit_bias",
         [](SamplingParams& p) {
           p.logit_bias = {{-3, 1.0f}};
         }},
        {"logit_bias[4]",
         [](SamplingParams& p) {
           p.logit_bias = {{4, NAN}};
         }},
        {"allowed_token_ids[1]",
         [](SamplingParams& p) {
           p.allowed_token_ids = {3, -2};
         }},
    };
    for (const Case& c : cases) {
      SamplingParams p;
      c.set(p);
      try {
        p.validate();
        QFAIL(qPrintable(QString("validate() accepted a bad %1").arg(c.field)));
      } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        QVERIFY2(msg.find(std::string(c.field) + " must be") != std::string::npos, e.what());
        QVERIFY2(msg.find(", got ") != std::string::npos, e.what());
      }
    }
    // The message carries the value and the range.
    SamplingParams p;
    p.presence_penalty = 2.5f;
    try {
      p.validate();
      QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(QString(e.what()), QString("invalid sampling params: presence_penalty must be in [-2, 2], got 2.5"));
    }
    // A value just past the range is shown as itself, not rounded onto the bound ("got 1").
    p = SamplingParams{};
    p.top_p = 1.0000001f;
    try {
      p.validate();
      QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).endsWith("got 1.0000001"), e.what());
    }
  }

  void validateForVocab() {
    SamplingParams p;
    p.logit_bias = {{0, 1.0f}, {99, -1.0f}};
    p.stop_token_ids = {0, 99};
    p.validate_for_vocab(100);
    p.logit_bias[100] = 1.0f;
    try {
      p.validate_for_vocab(100);
      QFAIL("accepted an out-of-vocab logit_bias id");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("logit_bias") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("100") != std::string::npos, e.what());
    }
    p.logit_bias.erase(100);
    p.stop_token_ids.push_back(100);
    try {
      p.validate_for_vocab(100);
      QFAIL("accepted an out-of-vocab stop token id");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("stop_token_ids[2]") != std::string::npos, e.what());
    }
    p.stop_token_ids.pop_back();
    p.allowed_token_ids = {5, 100};
    try {
      p.validate_for_vocab(100);
      QFAIL("accepted an out-of-vocab allowed token id");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("allowed_token_ids[1]") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, SamplingParams{}.validate_for_vocab(0));
  }
};

QTEST_GUILESS_MAIN(TestSampler)
#include "test_sampler.moc"
