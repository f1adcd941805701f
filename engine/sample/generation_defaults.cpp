#include "engine/sample/generation_defaults.h"

namespace pagedchat {

SamplingParams default_sampling_params(const GenerationDefaults& g) {
  SamplingParams p;
  if (g.temperature) p.temperature = *g.temperature;
  if (g.top_p) p.top_p = *g.top_p;
  if (g.top_k) p.top_k = *g.top_k;
  if (g.min_p) p.min_p = *g.min_p;
  if (g.repetition_penalty) p.repetition_penalty = *g.repetition_penalty;
  if (g.max_new_tokens) p.max_tokens = *g.max_new_tokens;
  if (g.greedy()) p.temperature = 0.0f;
  return p;
}

}  // namespace pagedchat
