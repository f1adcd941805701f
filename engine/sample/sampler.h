// Sampler: picks the next token from one row of logits under a request's SamplingParams, in the
// order of vLLM v1's vllm/v1/sample/sampler.py:
//   1. raw logprobs (log-softmax of the unmodified logits), when params.logprobs is set;
//   2. logit_bias added (each value clamped to [-100, 100]);
//   3. masked_ids set to -inf (the engine passes EOS and stop_token_ids while the output is
//      shorter than min_tokens), and every token outside `allowed` (a structured output's
//      grammar: GrammarMatcher::fill_next_token_bitmask);
//   4. penalties (vllm/model_executor/layers/utils.py apply_penalties): repetition_penalty over
//      tokens in the prompt or the output, then frequency_penalty * count and presence_penalty
//      for tokens in the output;
//   5. greedy argmax if temperature < 1e-5 (first maximum wins, as llama2.c's run.c; no RNG draw);
//      otherwise logits / temperature, softmax, min_p, top_k, top_p over the renormalised
//      remainder (vllm/v1/sample/ops/topk_topp_sampler.py), and exactly ONE uniform double
//      drawn from the request's own RNG (inverse CDF), so a seeded request yields the same
//      tokens whatever batch it runs in.
// Ties are broken by lower token id everywhere (argmax, top_k, top_p, top-N logprobs). top_k uses a
// heap partial sort (k <= 1024) or nth_element, top_p a weighted quickselect: no full sort.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine/sample/sampling_params.h"

namespace pagedchat {

/// One sampled token and, when params.logprobs is set, its log-probabilities under the RAW logits
/// (vLLM's default logprobs_mode "raw_logprobs": before bias, masks, penalties and temperature).
struct SampleResult {
  int token = 0;      ///< the sampled token id, in [0, vocab)
  float logprob = 0;  ///< log-softmax of the raw logits at `token`; 0 when params.logprobs is unset
  int rank = 0;       ///< 1-based rank of `token` among the raw logits (1 = most likely): the number
                      ///< of tokens whose raw logit is >= its own (vLLM's rule, so ties share the
                      ///< worse rank); 0 when params.logprobs is unset
  std::vector<std::pair<int, float>> top_logprobs;  ///< the params.logprobs most likely (token id,
                                                    ///< raw logprob), descending, ties by lower id;
                                                    ///< empty if params.logprobs is unset or 0
};

/// No token can be drawn for one request: its restrictions (masks, allowed_token_ids, a grammar)
/// leave none. LLMEngine ends that request ("abort"), not the step. (NaN logits are the model's
/// failure: a std::runtime_error that fails the step, so the error is shown.)
class NoTokenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Sampler {
 public:
  /// logits: [vocab] float32, not modified. prompt_ids / output_ids: the request's prompt and its
  /// generated tokens so far (penalties). masked_ids: tokens that must not be chosen. Ids outside
  /// [0, vocab) in these spans, and logit_bias keys outside it, are ignored (validate_for_vocab()
  /// rejects the latter up front). `allowed`: null, or a bitmask of (vocab + 63) / 64 words (bit
  /// id % 64 of word id / 64) of the only tokens that may be chosen. Throws std::invalid_argument
  /// if vocab < 1 and std::runtime_error if every token is masked (all logits -inf or NaN after
  /// processing). Allocates nothing per call once its buffers have grown to `vocab`, except the
  /// returned top_logprobs (params.logprobs entries).
  SampleResult sample(const float* logits, int vocab, const SamplingParams& params, std::span<const int> prompt_ids,
                      std::span<const int> output_ids, std::span<const int> masked_ids, std::mt19937_64& rng,
                      const uint64_t* allowed = nullptr);

  /// Old entry point (no penalties context, no masks): sample(...).token with empty spans.
  /// Kept until LLMEngine switches to the overload above.
  int sample(const float* logits, int vocab, const SamplingParams& params, std::mt19937_64& rng);

  /// The logits of the last sample() call after bias, masks and penalties (before temperature):
  /// [vocab] floats, valid until the next call. For tests and debugging.
  std::span<const float> processed_logits() const { return {work_.data(), size_t(last_vocab_)}; }

 private:
  int select_nucleus(int* ord, int m, double target) const;

  std::vector<float> work_;          // [vocab] logits after bias, masks, penalties
  std::vector<double> probs_;        // [vocab] exp((l - max) / T), set for the candidates only
  std::vector<int> order_;           // candidate ids (top-N logprobs scratch, then sampling)
  std::vector<int> counts_;          // [vocab] occurrences in the output; all zero between calls
  std::vector<unsigned char> seen_;  // [vocab] in prompt or output; all zero between calls
  int last_vocab_ = 0;
};

}  // namespace pagedchat
