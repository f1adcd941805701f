#include "engine/sample/sampling_defaults.h"

namespace pagedchat {

void apply_sampling_defaults(const SamplingDefaults& d, SamplingParams& p, const SamplingFieldsSet& set) {
  if (!set.temperature) {
    if (d.temperature) p.temperature = *d.temperature;
    if (d.do_sample && !*d.do_sample) p.temperature = 0.0f;
  }
  if (!set.top_p && d.top_p) p.top_p = *d.top_p;
  if (!set.top_k && d.top_k) p.top_k = *d.top_k;
  if (!set.min_p && d.min_p) p.min_p = *d.min_p;
  if (!set.repetition_penalty && d.repetition_penalty) p.repetition_penalty = *d.repetition_penalty;
  if (!set.max_tokens && d.max_new_tokens) p.max_tokens = *d.max_new_tokens;
}

}  // namespace pagedchat
