// RequestOutput / CompletionOutput: what the engine reports (vLLM's vllm/outputs.py).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "engine/finish_reason.h"

namespace pagedchat {

/// Log-probability of one token (vLLM's Logprob): from the raw logits' log-softmax.
struct Logprob {
  float logprob = 0.0f;
  int rank = 0;               ///< 1 = most likely under the raw logits
  std::string decoded_token;  ///< the token's piece (sentencepiece "▁" shown as a space)
};

/// Why a completion stopped with FinishReason::kStop: nothing (EOS), the stop string, or the
/// stop token id.
using StopReason = std::variant<std::monostate, std::string, int>;

/// Timings of a request, seconds on the monotonic clock (std::chrono::steady_clock).
struct RequestMetrics {
  double arrival_time = 0;
  double first_scheduled_time = 0;  ///< 0 until scheduled
  double first_token_time = 0;      ///< 0 until the first token
  double last_token_time = 0;
  double finished_time = 0;             ///< 0 until finished
  double time_to_first_token = 0;       ///< first_token_time - arrival_time (TTFT)
  double mean_inter_token_latency = 0;  ///< mean gap between tokens after the first (ITL)
  int num_cached_tokens = 0;            ///< prompt tokens found in the prefix cache
  int num_preemptions = 0;
  int num_generation_tokens = 0;
  /// Speculative decoding (first completion): steps that verified drafts, draft tokens verified,
  /// and of those the tokens accepted. Mean accepted length = 1 + accepted / drafts (vLLM's).
  /// Its drafts' proposer (SpeculativeConfig::method_name(): "ngram", "mtp", ...); "" for none.
  std::string spec_method;
  int num_spec_drafts = 0;
  int num_spec_draft_tokens = 0;
  int num_spec_accepted_tokens = 0;
};

/// One completion of a request. With RequestOutputKind::kDelta, `text`, `token_ids` and
/// `logprobs` hold only what is new since the previous report; otherwise they are cumulative.
struct CompletionOutput {
  int index = 0;
  std::string text;  ///< UTF-8; never ends inside a multi-byte sequence
  std::vector<int> token_ids;
  std::optional<double> cumulative_logprob;                     ///< set when logprobs were requested
  std::optional<std::vector<std::map<int, Logprob>>> logprobs;  ///< per token: top-N and the sampled one
  std::optional<FinishReason> finish_reason;                    ///< set once finished
  StopReason stop_reason;
  /// With finish_reason "abort": why the engine ended this completion itself (its sampling
  /// restrictions leave no token: allowed_token_ids against a grammar or min_tokens, a grammar
  /// that allows nothing next); empty for any other end. The server answers it as a 400.
  std::string error;
  /// Byte ranges [first, second) of `text` whose tokens were speculative drafts the target model
  /// accepted (proposed by the drafter, verified by the target), in order; with kDelta, offsets
  /// into this delta's `text`. A token's range is the text that appeared when it was appended
  /// (a detokenizer that holds bytes back shifts it by those bytes). Empty without speculation.
  std::vector<std::pair<size_t, size_t>> draft_spans;
  bool finished() const { return finish_reason.has_value(); }
};

/// What step() returns for one request that made progress (or finished) in that step.
struct RequestOutput {
  std::string request_id;
  std::string prompt;                 ///< the prompt text (empty when given as token ids)
  std::vector<int> prompt_token_ids;  ///< BOS included when the model expects it
  std::vector<CompletionOutput> outputs;
  bool finished = false;
  int num_cached_tokens = 0;           ///< prompt tokens taken from the prefix cache
  int num_computed_prompt_tokens = 0;  ///< prompt tokens processed so far (prefill progress)
  RequestMetrics metrics;
};

}  // namespace pagedchat
