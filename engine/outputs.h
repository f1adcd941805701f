// RequestOutput / CompletionOutput: what the engine reports (vLLM's vllm/outputs.py).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pagedchat {

/// One completion of a request. With RequestOutputKind::kDelta, `text` and `token_ids` hold only
/// what is new since the previous report; otherwise they are cumulative.
struct CompletionOutput {
  int index = 0;
  std::string text;                 ///< UTF-8; never ends inside a multi-byte sequence
  std::vector<int> token_ids;
  std::optional<std::string> finish_reason;  ///< "stop", "length" or "abort" once finished
};

/// What step() returns for one request that made progress (or finished) in that step.
struct RequestOutput {
  std::string request_id;
  std::string prompt;               ///< the prompt text (empty when given as token ids)
  std::vector<int> prompt_token_ids;  ///< BOS included when the model expects it
  std::vector<CompletionOutput> outputs;
  bool finished = false;
  int num_computed_prompt_tokens = 0;  ///< prompt tokens processed so far (prefill progress)
};

}  // namespace pagedchat
