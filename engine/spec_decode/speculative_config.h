// SpeculativeConfig: how the engine proposes draft tokens for speculative decoding (vLLM's
// --speculative-config, spelled as vLLM spells it: a JSON object with "method",
// "num_speculative_tokens", "prompt_lookup_max", "prompt_lookup_min").
//
// Speculative decoding proposes up to num_speculative_tokens tokens per running request, verifies
// them in the next step's forward (the request's last token and its drafts, one query chunk), and
// keeps the drafts the target's own sampling agrees with (LLMEngine's verify_drafts). The step
// order follows vLLM v1's speculative decoding (THIRD_PARTY_NOTICES); docs/architecture.md.
#pragma once

#include <string>

namespace pagedchat {

struct SpeculativeConfig {
  enum class Method {
    kNone,        ///< no speculation
    kNgram,       ///< prompt lookup: the tokens that followed the last n tokens earlier in the context
    kOracle,      ///< benchmarks only: RequestOptions::oracle_token_ids, the continuation a first run gave
    kDraftModel,  ///< a smaller model with the same vocabulary proposes greedily
                  ///< (engine/spec_decode/draft_model_proposer.h)
    kMtp,         ///< the model's own multi-token-prediction block (engine/spec_decode/mtp_proposer.h)
  };
  /// Most draft tokens one request verifies per step (num_speculative_tokens' upper limit).
  static constexpr int kMaxSpeculativeTokens = 16;

  Method method = Method::kNone;
  int num_speculative_tokens = 0;  ///< 1 .. kMaxSpeculativeTokens when method != kNone
  int prompt_lookup_max = 5;       ///< ngram: the longest suffix n-gram matched
  int prompt_lookup_min = 2;       ///< ngram: the shortest suffix n-gram matched (>= 1, <= max)
  /// draft_model: the draft model's file or folder (required). With another method (not from
  /// JSON: the app's Engine settings): also loaded, for requests that ask for it
  /// (RequestOptions::speculative_method); one that fails to load is a warning, not an error.
  std::string model;
  /// Cut drafts that do not pay in a compute-bound batch (engine/spec_decode/batch_draft_budget.h;
  /// JSON "fit_to_batch", our extension of vLLM's keys). Off: every proposed draft is verified.
  bool fit_to_batch = true;
  /// Also load the model's MTP block when it has one, whatever `method` is, and make it the
  /// proposer of requests that do not choose another (RequestOptions::speculative_method: the
  /// app's panes and its server; `method` stays the fallback). Not a JSON key.
  bool mtp_if_available = false;

  bool enabled() const { return method != Method::kNone; }
  /// Throws std::invalid_argument naming the option when the fields are out of range.
  void validate() const;
  /// "ngram", "oracle", "draft_model", "mtp" or "none".
  std::string method_name() const;
  /// The same for any method.
  static std::string method_name(Method m);
};

/// Parses vLLM's --speculative-config JSON. An empty string or "{}" is no speculation. Errors
/// (std::invalid_argument) name the field: a method this build does not have ("eagle" ...: not
/// yet), an unknown key, a number out of range, "model" missing for draft_model or given for
/// another method, JSON that does not parse.
SpeculativeConfig parse_speculative_config(const std::string& json);

}  // namespace pagedchat
