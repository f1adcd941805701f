// FinishReason: why a completion ended (vLLM's finish_reason); text only at the edges (JSON, CLI, SQLite).
#pragma once

#include <optional>
#include <string_view>

namespace pagedchat {

enum class FinishReason {
  kStop,    ///< EOS, a stop token id or a stop string
  kLength,  ///< max_tokens or the model's context length reached
  kAbort,   ///< aborted (by the client, a failed step or shutdown)
};

/// Every reason, in declaration order.
inline constexpr FinishReason kFinishReasons[] = {FinishReason::kStop, FinishReason::kLength, FinishReason::kAbort};

/// The OpenAI/vLLM text of `r`: "stop", "length" or "abort". Never fails.
constexpr std::string_view to_string(FinishReason r) {
  switch (r) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "abort";
  }
  return "abort";  // not reached: every enumerator is handled above
}

/// The reason whose text (as to_string writes it, case-sensitive) is `s`; nullopt for any other text.
constexpr std::optional<FinishReason> parse_finish_reason(std::string_view s) {
  for (FinishReason r : kFinishReasons)
    if (to_string(r) == s) return r;
  return std::nullopt;
}

}  // namespace pagedchat
