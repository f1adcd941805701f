// LLM: the offline API in the shape of vLLM's quick start:
//   pagedchat::LLM llm({.model = "stories260K"});
//   auto outs = llm.generate({"Once upon a time"}, params);  // outs[0].outputs[0].text
#pragma once

#include <string>
#include <vector>

#include "engine/llm_engine.h"

namespace pagedchat {

class LLM {
 public:
  /// Throws std::runtime_error as LLMEngine's constructor does.
  explicit LLM(const EngineConfig& config);

  /// Submits every prompt at once (one batch) and steps until all finish. Returns one finished
  /// RequestOutput per prompt, in prompt order (cumulative text). Throws std::invalid_argument as
  /// LLMEngine::add_request does (no request is left running).
  std::vector<RequestOutput> generate(const std::vector<std::string>& prompts, const SamplingParams& params);
  std::vector<RequestOutput> generate(const std::vector<std::vector<int>>& prompt_token_ids,
                                      const SamplingParams& params);

  LLMEngine& engine() { return engine_; }

 private:
  LLMEngine engine_;
  long long next_id_ = 0;
};

}  // namespace pagedchat
