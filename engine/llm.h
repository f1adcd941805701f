// LLM: the offline API in the shape of vLLM's quick start (vllm/entrypoints/llm.py):
//   pagedchat::LLM llm({.model = "Meta-Llama-3.1-8B", .dtype = pagedchat::WeightDType::kBFloat16});
//   auto outputs = llm.generate("Hello, my name is");  // outputs[0].outputs[0].text
// (examples/quickstart.cpp is that program.)
#pragma once

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

#include "engine/llm_engine.h"

namespace pagedchat {

class LLM {
 public:
  /// Throws std::runtime_error as LLMEngine's constructor does.
  explicit LLM(const EngineConfig& config);

  /// The sampling parameters generate() uses when none are given, as vLLM's
  /// LLM.get_default_sampling_params(): SamplingParams' defaults overridden by what the model's
  /// generation_config.json sets (temperature, top_p, top_k, min_p, repetition_penalty,
  /// max_new_tokens -> max_tokens). Unlike vLLM, `"do_sample": false` makes the defaults greedy
  /// (temperature 0), as transformers' generate() treats that model: its author asked for greedy
  /// decoding, and the sampling values written beside it are then unused.
  SamplingParams get_default_sampling_params() const;

  /// One prompt (a std::string, a string literal), with the default sampling parameters
  /// (get_default_sampling_params()) or `params`: the quick start's `llm.generate(prompt)`.
  /// Returns one finished RequestOutput. Throws as below. (A template so that a braced list,
  /// `generate({"a", "b"}, params)`, still means several prompts.)
  template <typename Prompt>
  requires std::convertible_to<const Prompt&, std::string_view> std::vector<RequestOutput> generate(
      const Prompt& prompt) {
    return generate(std::vector<std::string>{std::string(std::string_view(prompt))}, get_default_sampling_params());
  }
  template <typename Prompt>
  requires std::convertible_to<const Prompt&, std::string_view> std::vector<RequestOutput> generate(
      const Prompt& prompt, const SamplingParams& params) {
    return generate(std::vector<std::string>{std::string(std::string_view(prompt))}, params);
  }
  /// Every prompt with the default sampling parameters (get_default_sampling_params()).
  std::vector<RequestOutput> generate(const std::vector<std::string>& prompts);

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
