// LLMEngine's sampling of a step's rows: a request's next token (its grammar's mask, the
// sampler's restrictions) and what appending it does (stops, the end of a request no token can
// satisfy, freeing a finished one).
#include <algorithm>
#include <cstdio>

#include "engine/llm_engine_impl.h"

namespace pagedchat {

SampleResult LLMEngine::Impl::sample(Request& r, const float* row) {
  // Rows past the tokenizer's last id (Qwen pads 151669 tokens to 151936 rows) are never chosen:
  // no text belongs to them, and the detokenizer would refuse them.
  const int vocab = tokenizer ? std::min(model.config.vocab_size, tokenizer->vocab_size()) : model.config.vocab_size;
  const std::span<const int> all(r.token_ids);
  const uint64_t* allowed = nullptr;
  if (r.matcher) {
    mask.resize(std::size_t(token_trie->mask_words()));
    r.matcher->fill_next_token_bitmask(mask.data());
    allowed = mask.data();
    // No token can go on (a grammar too deep for the matcher): not the whole step's failure;
    // the matcher refuses this token and the request ends "abort" (OutputProcessor).
    if (std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; })) return SampleResult{0, 0, 0, {}};
  }
  try {
    return sampler.sample(row, vocab, r.params, all.first(r.num_prompt_tokens()), all.subspan(r.num_prompt_tokens()),
                          output->masked_ids(r), r.rng, allowed);
  } catch (const NoTokenError& e) {
    // This request's restrictions (allowed_token_ids against a grammar, min_tokens against the
    // only allowed ids, ...) leave nothing to draw: it alone ends ("abort", on_token), the
    // step's other requests go on.
    std::fprintf(stderr, "pagedchat: request %s ends: %s\n", r.request_id.c_str(), e.what());
    r.error = e.what();
    return SampleResult{-1, 0, 0, {}};
  }
}

void LLMEngine::Impl::on_token(RequestGroup& g, Request& r, const SampleResult& s, double t, bool defer_finish) {
  if (s.token < 0) {  // no token could be drawn (sample()): the request ends with what it has
    output->abort(r, r.error);
    if (!defer_finish) finish_if_done(r);
    return;
  }
  output->append_token(r, s);
  ++stats.num_generation_tokens;
  if (r.index == 0) {
    if (g.metrics.first_token_time == 0) g.metrics.first_token_time = t;
    g.metrics.last_token_time = t;
    ++g.metrics.num_generation_tokens;
  }
  if (!defer_finish) finish_if_done(r);
}

void LLMEngine::Impl::finish_if_done(Request& r) {
  if (!r.finish_reason) return;
  scheduler->finish_request(&r);
  if (drafter) drafter->remove(r.request_id);
  if (mtp) mtp->remove(r.request_id);
}

}  // namespace pagedchat
