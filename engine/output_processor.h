// Output processing of sampled tokens (vLLM's v1 OutputProcessor + StopChecker): appends the
// token, detokenizes it, applies stop tokens and stop strings, max_tokens and max_model_len, and
// builds the RequestOutput of a request group in the shape its output_kind asks for.
#pragma once

#include <span>

#include "engine/config.h"
#include "engine/core/request.h"
#include "engine/sample/sampler.h"

namespace pagedchat {

class OutputProcessor {
 public:
  OutputProcessor(const ModelConfig& model, int max_model_len, const Tokenizer* tokenizer)
      : model_(model), max_model_len_(max_model_len), tokenizer_(tokenizer) {}

  /// Token ids that must not be sampled yet (EOS and stop_token_ids before min_tokens).
  std::span<const int> masked_ids(const Request& r);
  /// Appends a sampled token to the sequence; sets finish_reason/stop_reason when it ends.
  void append_token(Request& r, const SampleResult& s);
  /// Marks an unfinished sequence aborted; `why` (non-empty when the engine ends it because it
  /// cannot go on) becomes its CompletionOutput::error.
  void abort(Request& r, std::string why = {});
  /// The output of a group; advances what was reported (kDelta).
  RequestOutput make_output(RequestGroup& g);
  /// True when the group has something to report.
  bool has_news(const RequestGroup& g) const;

 private:
  void finish(Request& r, FinishReason reason);
  /// r.draft_text_spans within the releasable text from byte `from_char` on, relative to it.
  static std::vector<std::pair<size_t, size_t>> draft_spans(const Request& r, size_t from_char);

  const ModelConfig& model_;
  int max_model_len_;
  const Tokenizer* tokenizer_;
  std::vector<int> masked_;
};

}  // namespace pagedchat
