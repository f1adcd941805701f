// How many draft tokens a request proposes: its adaptive budget (Request::num_spec_budget,
// spec_misses, spec_skip_steps), kept apart from the engine loop that applies it.
#pragma once

#include <algorithm>

#include "engine/core/request.h"

namespace pagedchat {

/// The most drafts `r` may propose for its next step: its budget, never past max_tokens (the
/// step's own token comes first) or the context of `max_model_len` tokens. <= 0: none.
inline int draft_limit(const Request& r, int max_model_len) {
  return std::min({r.num_spec_budget, r.params.max_tokens - r.num_output_tokens() - 1, max_model_len - r.num_tokens()});
}

/// After a verification of `proposed` drafts of which `accepted` were kept: one more draft after a
/// full acceptance, else what was accepted plus one (within [1, `most`]); drafts nobody accepted
/// pause the proposals for 1, 3, 7 ... (at most 31) steps.
inline void adapt_draft_budget(Request& r, int proposed, int accepted, int most) {
  if (accepted == proposed)
    r.num_spec_budget = std::min(most, r.num_spec_budget + 1);
  else
    r.num_spec_budget = std::clamp(accepted + 1, 1, most);
  if (accepted == 0) {
    r.spec_misses = std::min(r.spec_misses + 1, 5);
    r.spec_skip_steps = (1 << r.spec_misses) - 1;
  } else {
    r.spec_misses = 0;
  }
}

}  // namespace pagedchat
