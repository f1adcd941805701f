// GenerationDefaults: the sampling settings a model ships with (Hugging Face
// generation_config.json, transformers' GenerationConfig), and how a request's SamplingParams
// start from them (vLLM's LLM.get_default_sampling_params / ModelConfig.get_diff_sampling_param).
#pragma once

#include <optional>

#include "engine/sample/sampling_params.h"

namespace pagedchat {

/// What generation_config.json sets of the fields vLLM takes from it (repetition_penalty,
/// temperature, top_k, top_p, min_p, max_new_tokens), plus do_sample. A field is set only when
/// the file names it with a non-null value: transformers' own class defaults (top_k 50, ...) are
/// not applied, as vLLM uses only the file's explicit keys (GenerationConfig.to_diff_dict()).
/// Values are checked by parse_generation_config (engine/loader/hf/hf_config.h) to lie in the
/// ranges SamplingParams accepts. GGUF and llama2.c files have none: every field unset.
struct GenerationDefaults {
  std::optional<float> temperature;         ///< >= 0
  std::optional<float> top_p;               ///< (0, 1]
  std::optional<int> top_k;                 ///< >= -1 (0 and -1: off)
  std::optional<float> min_p;               ///< [0, 1]
  std::optional<float> repetition_penalty;  ///< > 0
  std::optional<int> max_new_tokens;        ///< >= 1; SamplingParams::max_tokens
  /// transformers: false means greedy search whatever temperature says (GenerationConfig's
  /// default is false). vLLM ignores do_sample; default_sampling_params() follows transformers.
  std::optional<bool> do_sample;

  bool empty() const {
    return !temperature && !top_p && !top_k && !min_p && !repetition_penalty && !max_new_tokens && !do_sample;
  }
  /// do_sample is explicitly false: the model's authors meant greedy decoding.
  bool greedy() const { return do_sample.has_value() && !*do_sample; }
};

/// The SamplingParams a request of this model starts from: SamplingParams{} with every field
/// `g` sets copied over (max_new_tokens -> max_tokens); when g.greedy(), temperature 0 (so
/// top_p/top_k/min_p are ignored, and a temperature in the file is dropped, as transformers'
/// greedy search does). The caller then overrides what the user asked for explicitly.
SamplingParams default_sampling_params(const GenerationDefaults& g);

}  // namespace pagedchat
