// LLMEngine's speculative decoding steps (engine/spec_decode/ has the proposers and budgets):
// verification of a step's drafts, proposals for the next step, and the batch-aware cut.
#include <algorithm>

#include "engine/llm_engine_impl.h"
#include "engine/spec_decode/draft_budget.h"
#include "engine/spec_decode/ngram_proposer.h"

namespace pagedchat {

// Exact for any sampling settings: with a deterministic draft (one token, probability 1), the
// rejection sampling rule of Leviathan et al. 2023 ("Fast Inference from Transformers via
// Speculative Decoding": accept with min(1, p/q), else sample the residual (p - q)+) reduces to
// "sample from the target's p; accept the draft if that is the token". The sampled token is then
// the target's own sample at that position, from the request's own RNG, one draw per token as
// without speculation: greedy and seeded outputs are those of plain decoding.
void LLMEngine::Impl::verify_drafts(RequestGroup& g, Request& r, const ScheduledRequest& s, int first_token,
                                    const float* first_row, double t) {
  // (Sampling and on_token leave r.spec_token_ids alone: the drafts are read in place.)
  const std::size_t vocab = std::size_t(model.config.vocab_size);
  int accepted = 0, token = first_token;
  const size_t draft_text_begin = r.last_token_text_begin;  // first_token's text (appended by the caller)
  while (accepted < s.num_spec_tokens && !r.finish_reason && token == r.spec_token_ids[std::size_t(accepted)]) {
    ++accepted;
    const SampleResult next = sample(r, first_row + std::size_t(accepted) * vocab);
    on_token(g, r, next, t, true);
    token = next.token;
  }
  // The accepted drafts' text: up to the text of the token sampled after them (the target's own).
  if (accepted > 0 && r.last_token_text_begin > draft_text_begin) {
    if (!r.draft_text_spans.empty() && r.draft_text_spans.back().second == draft_text_begin)
      r.draft_text_spans.back().second = r.last_token_text_begin;
    else
      r.draft_text_spans.emplace_back(draft_text_begin, r.last_token_text_begin);
  }
  const bool all_scheduled = int(r.spec_token_ids.size()) == s.num_spec_tokens;
  r.spec_token_ids.clear();
  // (Before a finished request is freed: a checkpoint among the accepted drafts is its turn's end.)
  stats.spec_num_recomputed_tokens += scheduler->drafts_verified(r, s, accepted, r.finish_reason.has_value());
  finish_if_done(r);
  ++stats.spec_num_drafts;
  stats.spec_num_draft_tokens += s.num_spec_tokens;
  stats.spec_num_accepted_tokens += accepted;
  for (int i = 0; i < accepted; ++i) ++stats.spec_accepted_per_pos[std::size_t(i)];  // sized at load
  if (r.index == 0) {
    ++g.metrics.num_spec_drafts;
    g.metrics.num_spec_draft_tokens += s.num_spec_tokens;
    g.metrics.num_spec_accepted_tokens += accepted;
  }
  adapt_draft_budget(r, s.num_spec_tokens, accepted, config.speculative_config.num_speculative_tokens);
  r.observe_drafts(s.num_spec_tokens, accepted);
  // A draft the batch cut after these is judged against the token sampled after the last one.
  if (all_scheduled && accepted == s.num_spec_tokens && !r.finish_reason) r.observe_cut_draft(token);
  r.spec_cut_draft = -1;
}

void LLMEngine::Impl::propose(Request& r) {
  r.spec_token_ids.clear();
  r.spec_cut_draft = -1;
  if (r.spec_skip_steps > 0) {
    --r.spec_skip_steps;
    return;
  }
  const SpeculativeConfig& sc = config.speculative_config;
  const int k = draft_limit(r, config.max_model_len);
  if (k <= 0) return;
  proposed.push_back(&r);
  using M = SpeculativeConfig::Method;
  if (r.spec_method == M::kDraftModel || r.spec_method == M::kMtp) {
    (r.spec_method == M::kMtp ? to_propose_mtp : to_propose).emplace_back(&r, k);
  } else if (r.spec_method == M::kNgram) {
    propose_ngram(r.token_ids, k, sc.prompt_lookup_min, sc.prompt_lookup_max, r.spec_token_ids);
  } else if (r.spec_method == M::kOracle) {
    const std::size_t from = std::size_t(r.num_output_tokens());
    for (std::size_t i = from; i < r.oracle_token_ids.size() && int(i - from) < k; ++i)
      r.spec_token_ids.push_back(r.oracle_token_ids[i]);
  }
}

void LLMEngine::Impl::propose_queued() {
  if (drafter && !to_propose.empty()) drafter->propose(to_propose);
  if (mtp) mtp->propose(to_propose_mtp);  // (also the rows of requests that draft nothing this step)
  if (draft_observer)
    for (const Request* r : proposed)
      if (!r->spec_token_ids.empty()) draft_observer(r->request_id, r->num_tokens(), r->spec_token_ids);
  to_propose.clear();
  to_propose_mtp.clear();
  proposed.clear();
}

std::vector<SpeculativeConfig::Method> LLMEngine::Impl::methods() const {
  using M = SpeculativeConfig::Method;
  const SpeculativeConfig& sc = config.speculative_config;
  std::vector<M> have;
  if (!sc.enabled()) return have;
  // The default first: MTP where mtp_if_available loaded it (the app's "Automatic"), else the
  // configured method.
  if (mtp && sc.mtp_if_available) have.push_back(M::kMtp);
  if (have.empty() || sc.method != M::kMtp) have.push_back(sc.method);
  for (const auto& [m, loaded] :
       {std::pair<M, bool>{M::kNgram, true}, {M::kMtp, bool(mtp)}, {M::kDraftModel, bool(drafter)}})
    if (loaded && std::find(have.begin(), have.end(), m) == have.end()) have.push_back(m);
  return have;
}

void LLMEngine::Impl::observe_hidden(const ScheduledRequest& s, int first, int offset) {
  if (!mtp) return;
  Request& r = *s.request;
  if (r.finish_reason || r.spec_method != SpeculativeConfig::Method::kMtp) return;  // (freed, or not MTP's)
  // A sampling step's inputs past the tokens r now has (minus the one just sampled) were drafts
  // that verification rejected.
  const int valid = s.samples ? std::min(s.num_new_tokens, r.num_tokens() - 1 - first) : s.num_new_tokens;
  const int H = model.config.hidden_size;
  mtp->observe(r, first, valid, runner->model().hidden().data() + std::size_t(offset) * std::size_t(H));
}

void LLMEngine::Impl::fit_drafts_to_batch() {
  if (!config.speculative_config.fit_to_batch || !step_cost.ready()) return;
  std::vector<Request*> drafting;
  std::vector<DraftCandidate> candidates;
  long long known = 0;
  for (Request* r : scheduler->running()) {
    known += r->num_tokens() - r->num_computed_tokens;
    if (r->spec_token_ids.empty()) continue;
    drafting.push_back(r);
    candidates.push_back({r->spec_acceptance(), int(r->spec_token_ids.size())});
  }
  if (drafting.empty()) return;
  known = std::min<long long>(known, config.max_num_batched_tokens);
  stats.step_cost_intercept_s = step_cost.intercept();  // the fit this cut uses
  stats.step_cost_per_token_s = step_cost.slope();
  const std::vector<int> keep = batch_draft_budget(candidates, int(known), int(scheduler->running().size()),
                                                   stats.step_cost_intercept_s, stats.step_cost_per_token_s);
  for (std::size_t i = 0; i < drafting.size(); ++i) {
    std::vector<int>& d = drafting[i]->spec_token_ids;
    if (keep[i] >= int(d.size())) continue;
    stats.spec_num_trimmed_tokens += int(d.size()) - keep[i];
    drafting[i]->spec_cut_draft = d[std::size_t(keep[i])];
    d.resize(std::size_t(keep[i]));
  }
}

}  // namespace pagedchat
