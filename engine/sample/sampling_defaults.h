// The sampling defaults a model ships with (Hugging Face generation_config.json) and how they
// become a request's SamplingParams, as vLLM's get_default_sampling_params() /
// ModelConfig.get_diff_sampling_param() apply them: a field the model sets replaces the engine's
// default; a field the request sets explicitly wins over both.
#pragma once

#include <optional>

#include "engine/sample/sampling_params.h"

namespace pagedchat {

/// Sampling defaults of a model (generation_config.json). Unset = the engine's own default.
struct SamplingDefaults {
  std::optional<float> temperature;
  std::optional<float> top_p;
  std::optional<int> top_k;
  std::optional<float> min_p;
  std::optional<float> repetition_penalty;
  std::optional<int> max_new_tokens;  ///< SamplingParams::max_tokens
  /// transformers' do_sample: false = greedy decoding (the sampling values beside it unused).
  /// vLLM ignores this key; PagedChat follows transformers, whose generate() defines the file's
  /// meaning, so a model published for greedy decoding is decoded greedily.
  std::optional<bool> do_sample;
  bool empty() const {
    return !temperature && !top_p && !top_k && !min_p && !repetition_penalty && !max_new_tokens && !do_sample;
  }
};

/// The SamplingParams fields a caller set explicitly (CLI options given, API fields present):
/// these keep their value; the others take the model's default.
struct SamplingFieldsSet {
  bool temperature = false;
  bool top_p = false;
  bool top_k = false;
  bool min_p = false;
  bool repetition_penalty = false;
  bool max_tokens = false;
};

/// Writes the model's defaults `d` into the fields of `params` not in `set`. `do_sample` false
/// sets temperature 0 (greedy) unless the caller set the temperature. Never throws; the values
/// were range-checked when generation_config.json was parsed.
void apply_sampling_defaults(const SamplingDefaults& d, SamplingParams& params, const SamplingFieldsSet& set = {});

}  // namespace pagedchat
