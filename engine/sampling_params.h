// SamplingParams: how one request samples its tokens (names and meaning follow vLLM's
// vllm/sampling_params.py). Validated on construction of a request (validate()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pagedchat {

/// What LLMEngine::step() reports for a request (vLLM's RequestOutputKind).
enum class RequestOutputKind {
  kCumulative,  ///< every output holds the whole text/token ids so far
  kDelta,       ///< every output holds only what is new since the previous one
  kFinalOnly,   ///< one output, when the request finishes
};

/// Per-request sampling settings.
struct SamplingParams {
  float temperature = 1.0f;   ///< 0 = greedy (argmax); must be >= 0
  float top_p = 1.0f;         ///< nucleus mass in (0, 1]
  int top_k = 0;              ///< 0 or -1 = off; else keep the k most likely tokens
  std::optional<uint64_t> seed;  ///< per-request RNG seed; same seed => same tokens, alone or batched
  int max_tokens = 16;        ///< most generated tokens (>= 1)
  bool ignore_eos = false;    ///< keep generating past EOS (benchmarks)
  RequestOutputKind output_kind = RequestOutputKind::kCumulative;

  /// Throws std::invalid_argument naming the bad field and its allowed range.
  void validate() const;
};

}  // namespace pagedchat
