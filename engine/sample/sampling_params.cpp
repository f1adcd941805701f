#include "engine/sample/sampling_params.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace pagedchat {

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& rule, const std::string& got) {
  throw std::invalid_argument("invalid sampling params: " + field + " must be " + rule + ", got " + got);
}

template <typename T>
std::string str(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    // The shortest form that reads back as this value (0.5, not 0.500000; a top_p of 1.0000001
    // that rounded to the float above 1 is shown as 1.0000001, not as "1").
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  } else {
    std::ostringstream os;
    os << v;
    return os.str();
  }
}

}  // namespace

void SamplingParams::validate() const {
  // Every comparison is written so that NaN fails it.
  if (!(n >= 1 && n <= 64)) fail("n", "in [1, 64]", str(n));
  if (structured_outputs && structured_outputs->count() != 1)
    throw std::invalid_argument("structured_outputs: exactly one of json, json_object, regex and choice must be set");
  if (!(std::isfinite(temperature) && temperature >= 0.0f))
    fail("temperature", "a finite number >= 0 (0 = greedy)", str(temperature));
  if (!(top_p > 0.0f && top_p <= 1.0f)) fail("top_p", "in (0, 1]", str(top_p));
  if (top_k < -1) fail("top_k", "-1 or 0 (off) or >= 1", str(top_k));
  if (!(min_p >= 0.0f && min_p <= 1.0f)) fail("min_p", "in [0, 1]", str(min_p));
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f))
    fail("presence_penalty", "in [-2, 2]", str(presence_penalty));
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f))
    fail("frequency_penalty", "in [-2, 2]", str(frequency_penalty));
  if (!(std::isfinite(repetition_penalty) && repetition_penalty > 0.0f))
    fail("repetition_penalty", "> 0 (1 = off)", str(repetition_penalty));
  if (max_tokens < 1) fail("max_tokens", ">= 1", str(max_tokens));
  if (min_tokens < 0 || min_tokens > max_tokens)
    fail("min_tokens", "in [0, max_tokens=" + str(max_tokens) + "]", str(min_tokens));
  for (size_t i = 0; i < stop.size(); ++i)
    if (stop[i].empty()) fail("stop[" + str(i) + "]", "a non-empty string", "\"\"");
  for (size_t i = 0; i < stop_token_ids.size(); ++i)
    if (stop_token_ids[i] < 0) fail("stop_token_ids[" + str(i) + "]", "a token id >= 0", str(stop_token_ids[i]));
  if (logprobs && (*logprobs < 0 || *logprobs > 20)) fail("logprobs", "in [0, 20]", str(*logprobs));
  for (size_t i = 0; i < allowed_token_ids.size(); ++i)
    if (allowed_token_ids[i] < 0)
      fail("allowed_token_ids[" + str(i) + "]", "a token id >= 0", str(allowed_token_ids[i]));
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) fail("logit_bias", "keyed by token ids >= 0", "id " + str(id));
    if (std::isnan(bias)) fail("logit_bias[" + str(id) + "]", "a number (clamped to [-100, 100])", "NaN");
  }
}

void SamplingParams::validate_for_vocab(int vocab) const {
  if (vocab < 1) throw std::invalid_argument("invalid vocabulary size " + str(vocab) + " (must be >= 1)");
  const std::string range = "in [0, " + str(vocab - 1) + "] (vocab size " + str(vocab) + ")";
  for (const auto& [id, bias] : logit_bias)
    if (id < 0 || id >= vocab) fail("logit_bias", "keyed by token ids " + range, "id " + str(id));
  for (size_t i = 0; i < allowed_token_ids.size(); ++i)
    if (allowed_token_ids[i] < 0 || allowed_token_ids[i] >= vocab)
      fail("allowed_token_ids[" + str(i) + "]", "a token id " + range, str(allowed_token_ids[i]));
  for (size_t i = 0; i < stop_token_ids.size(); ++i)
    if (stop_token_ids[i] < 0 || stop_token_ids[i] >= vocab)
      fail("stop_token_ids[" + str(i) + "]", "a token id " + range, str(stop_token_ids[i]));
}

}  // namespace pagedchat
