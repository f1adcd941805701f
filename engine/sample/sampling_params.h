// SamplingParams: how one request samples its tokens (names and meaning follow vLLM's
// vllm/sampling_params.py). Validated on construction of a request (validate(), then
// validate_for_vocab() once the model's vocabulary size is known).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pagedchat {

/// What LLMEngine::step() reports for a request (vLLM's RequestOutputKind).
enum class RequestOutputKind {
  kCumulative,  ///< every output holds the whole text/token ids so far
  kDelta,       ///< every output holds only what is new since the previous one
  kFinalOnly,   ///< one output, when the request finishes
};

/// A structured output (vLLM's StructuredOutputsParams; OpenAI's response_format): the output
/// must be a JSON text valid against `json` (a JSON Schema, as JSON text), any JSON object
/// (`json_object`), a match of `regex`, or one of `choice`. At most one is set. Compiled to a
/// grammar when the request is added (engine/sample/structured/); a schema or pattern it cannot
/// compile is an std::invalid_argument naming the keyword.
struct StructuredOutputsParams {
  std::optional<std::string> json;
  std::optional<std::string> regex;
  std::optional<std::vector<std::string>> choice;
  bool json_object = false;
  /// How many of the four are set.
  int count() const {
    return int(json.has_value()) + int(regex.has_value()) + int(choice.has_value()) + int(json_object);
  }
};

/// Per-request sampling settings. Defaults are vLLM's defaults except max_tokens (16, as vLLM's
/// SamplingParams class; its OpenAI server fills in the remaining context instead).
struct SamplingParams {
  /// Number of output sequences to generate for the prompt; in [1, 64].
  int n = 1;

  /// Softmax temperature; >= 0. Below 1e-5 sampling is greedy (argmax, first maximum wins) and
  /// top_p, top_k and min_p are ignored.
  float temperature = 1.0f;

  /// Nucleus sampling: keep the smallest set of most likely tokens whose probability mass
  /// (after min_p and top_k, renormalised) reaches top_p; in (0, 1], 1 = off.
  float top_p = 1.0f;

  /// Keep only the k most likely tokens (ties broken by lower id); -1 or 0 = off, else >= 1.
  int top_k = 0;

  /// Drop tokens whose probability is below min_p times the most likely token's; in [0, 1],
  /// 0 = off. Applied after temperature.
  float min_p = 0.0f;

  /// Subtracted once from the logit of every token that already occurs in the output
  /// (> 0 favours new tokens, < 0 favours repetition); in [-2, 2], 0 = off.
  float presence_penalty = 0.0f;

  /// Subtracted from a token's logit once per occurrence of that token in the output; in [-2, 2],
  /// 0 = off.
  float frequency_penalty = 0.0f;

  /// For every token present in the prompt or the output: a positive logit is divided by it, a
  /// negative one multiplied (> 1 discourages repetition, < 1 encourages it); > 0, 1 = off.
  float repetition_penalty = 1.0f;

  /// Per-request RNG seed; same seed => same tokens, alone or batched. Unset = random seed.
  std::optional<uint64_t> seed{};

  /// Most generated tokens per output sequence (>= 1).
  int max_tokens = 16;

  /// Fewest generated tokens before EOS or a stop_token_ids token may be produced (the engine
  /// masks them until then); in [0, max_tokens].
  int min_tokens = 0;

  /// Keep generating past EOS (benchmarks). stop_token_ids still stop the request.
  bool ignore_eos = false;

  /// Strings that end generation when they appear in the output text; the matched string is
  /// left out of the output unless include_stop_str_in_output. Each must be non-empty.
  std::vector<std::string> stop{};

  /// Token ids that end generation when sampled (in addition to EOS). Each in [0, vocab).
  std::vector<int> stop_token_ids{};

  /// Whether the text of a matched `stop` string is kept in the output.
  bool include_stop_str_in_output = false;

  /// Unset = no logprobs. Otherwise the log-probability (and rank) of each sampled token under
  /// the raw logits, plus the `logprobs` most likely alternatives; in [0, 20].
  std::optional<int> logprobs{};

  /// Token id -> value added to that token's logit before penalties. Ids in [0, vocab) (checked by
  /// validate_for_vocab). Values are clamped to [-100, 100] when applied (as vLLM's OpenAI server
  /// and the OpenAI API do); NaN is rejected.
  std::map<int, float> logit_bias{};
  /// When not empty, only these token ids may be sampled (every other logit is -inf before the
  /// penalties, as vLLM's allowed_token_ids); ids in [0, vocab) (validate_for_vocab).
  std::vector<int> allowed_token_ids{};
  /// Constrains the output to a grammar (see StructuredOutputsParams); none when unset.
  std::optional<StructuredOutputsParams> structured_outputs{};

  /// How LLMEngine::step() reports this request.
  RequestOutputKind output_kind = RequestOutputKind::kCumulative;

  /// Throws std::invalid_argument naming the bad field, its value and the allowed range.
  void validate() const;

  /// Checks the token ids in logit_bias, allowed_token_ids and stop_token_ids against a vocabulary of `vocab`
  /// tokens; throws std::invalid_argument naming the field, the id and the allowed range.
  void validate_for_vocab(int vocab) const;
};

}  // namespace pagedchat
