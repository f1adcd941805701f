#include "engine/output_processor.h"

#include <algorithm>
#include <iterator>

#include "engine/sample/stop_automaton.h"
#include "engine/text/utf8.h"

namespace pagedchat {

std::span<const int> OutputProcessor::masked_ids(const Request& r) {
  masked_.clear();
  if (r.num_output_tokens() >= r.params.min_tokens) return {};
  if (!r.params.ignore_eos) {
    masked_.push_back(model_.eos_id);
    masked_.insert(masked_.end(), model_.extra_eos_ids.begin(), model_.extra_eos_ids.end());
    if (model_.stop_on_bos) masked_.push_back(model_.bos_id);
  }
  masked_.insert(masked_.end(), r.params.stop_token_ids.begin(), r.params.stop_token_ids.end());
  return masked_;
}

void OutputProcessor::finish(Request& r, FinishReason reason) {
  r.finish_reason = reason;
  r.status = RequestStatus::kFinished;
}

void OutputProcessor::append_token(Request& r, const SampleResult& s) {
  const SamplingParams& p = r.params;
  const int token = s.token;
  r.token_ids.push_back(token);
  r.last_token_text_begin = r.text.size();
  // The sampler chose within the grammar's mask, so the matcher takes the token; only a mask
  // with no token in it (LLMEngine: a grammar position nothing can follow) gives one it refuses.
  if (p.logprobs) {
    std::map<int, Logprob> entry;
    auto piece = [&](int id) {
      if (!tokenizer_) return std::string();
      return utf8::repair(tokenizer_->token_text(id));  // "▁" -> " ", byte-level -> bytes; partial UTF-8 -> U+FFFD
    };
    for (size_t i = 0; i < s.top_logprobs.size(); ++i)
      entry[s.top_logprobs[i].first] = Logprob{s.top_logprobs[i].second, int(i) + 1, piece(s.top_logprobs[i].first)};
    entry[token] = Logprob{s.logprob, s.rank, piece(token)};
    r.logprobs.push_back(std::move(entry));
    r.cumulative_logprob += s.logprob;
  }

  if (r.matcher && !r.matcher->accept_token(token)) {
    // Ends the request, its text as it was: "abort", not "stop", so that nobody takes the text
    // for a complete structured output.
    r.error = "the structured output's grammar allows no next token here";
    finish(r, FinishReason::kAbort);
    r.num_releasable_chars = r.text.size();
    return;
  }
  const int n_out = r.num_output_tokens();
  const bool check_stops = n_out >= p.min_tokens;  // no stop of any kind before min_tokens
  const bool eos = !p.ignore_eos && (token == model_.eos_id || (model_.stop_on_bos && token == model_.bos_id) ||
                                     std::find(model_.extra_eos_ids.begin(), model_.extra_eos_ids.end(), token) !=
                                         model_.extra_eos_ids.end());
  const bool stop_token = std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), token) != p.stop_token_ids.end();
  if (check_stops && eos) {
    finish(r, FinishReason::kStop);
  } else if (check_stops && stop_token) {
    r.stop_reason = token;
    if (p.include_stop_str_in_output && r.detokenizer) r.text += r.detokenizer->add_token(token);
    finish(r, FinishReason::kStop);
  } else if (r.detokenizer) {
    r.text += r.detokenizer->add_token(token);
    if (!p.stop.empty()) {
      // One automaton over all stop strings, fed only the new text: the cost of a token does not
      // grow with the number of stop strings or the text so far (stop_automaton.h).
      if (!r.stop_automaton) {
        if (r.group && !r.group->stop_automaton) r.group->stop_automaton = std::make_shared<StopAutomaton>(p.stop);
        r.stop_automaton = r.group ? r.group->stop_automaton : std::make_shared<StopAutomaton>(p.stop);
      }
      if (auto m = r.stop_automaton->feed(r.text, r.stop_cursor, p.include_stop_str_in_output, check_stops)) {
        r.text.resize(m->text_length);
        r.stop_reason = m->stop;
        finish(r, FinishReason::kStop);
      }
    }
  }
  // A structured output that is complete ends the request, as vLLM does.
  if (!r.finish_reason && r.matcher && r.matcher->is_terminated()) finish(r, FinishReason::kStop);
  if (!r.finish_reason && (n_out >= p.max_tokens || r.num_tokens() >= max_model_len_)) finish(r, FinishReason::kLength);
  if (r.finish_reason && r.detokenizer && !std::holds_alternative<std::string>(r.stop_reason))
    r.text += r.detokenizer->flush(/*complete=*/*r.finish_reason == FinishReason::kStop);
  const size_t hold = r.finish_reason || p.include_stop_str_in_output || !r.stop_automaton
                          ? 0
                          : r.stop_automaton->holdback(r.text, r.stop_cursor);
  r.num_releasable_chars = std::max(r.num_releasable_chars, r.text.size() - hold);
}

void OutputProcessor::abort(Request& r, std::string why) {
  if (r.finish_reason) return;
  r.error = std::move(why);
  finish(r, FinishReason::kAbort);
  r.num_releasable_chars = r.text.size();
}

bool OutputProcessor::has_news(const RequestGroup& g) const {
  for (const auto& s : g.seqs)
    if (s->num_releasable_chars > s->num_reported_chars || size_t(s->num_output_tokens()) > s->num_reported_tokens ||
        (s->finish_reason && !s->reported_finish))
      return true;
  return false;
}

std::vector<std::pair<size_t, size_t>> OutputProcessor::draft_spans(const Request& r, size_t from_char) {
  // The spans that reach into [from_char, num_releasable_chars), found from the back (the new
  // ones are the last): a delta costs what it reports.
  const size_t end = r.num_releasable_chars;
  auto first = r.draft_text_spans.end();
  while (first != r.draft_text_spans.begin() && std::prev(first)->second > from_char) --first;
  std::vector<std::pair<size_t, size_t>> spans;
  for (auto it = first; it != r.draft_text_spans.end(); ++it) {
    const size_t b = std::max(it->first, from_char), e = std::min(it->second, end);
    if (b < e) spans.emplace_back(b - from_char, e - from_char);
  }
  return spans;
}

RequestOutput OutputProcessor::make_output(RequestGroup& g) {
  RequestOutput out;
  out.request_id = g.request_id;
  out.prompt = g.prompt;
  out.prompt_token_ids = g.prompt_token_ids;
  out.finished = g.finished();
  out.metrics = g.metrics;
  out.num_cached_tokens = g.metrics.num_cached_tokens;
  const Request& first = *g.seqs.front();
  out.num_computed_prompt_tokens = std::min(first.num_computed_tokens, first.num_prompt_tokens());
  const bool delta = g.params.output_kind == RequestOutputKind::kDelta;
  for (auto& sp : g.seqs) {
    Request& s = *sp;
    CompletionOutput c;
    c.index = s.index;
    c.finish_reason = s.finish_reason;
    c.stop_reason = s.stop_reason;
    if (s.finish_reason) c.error = s.error;
    const size_t from_char = delta ? s.num_reported_chars : 0;
    const size_t from_tok = delta ? s.num_reported_tokens : 0;
    c.text = s.text.substr(from_char, s.num_releasable_chars - std::min(from_char, s.num_releasable_chars));
    c.token_ids.assign(s.token_ids.begin() + s.num_prompt_tokens() + from_tok, s.token_ids.end());
    c.draft_spans = draft_spans(s, from_char);
    if (s.params.logprobs) {
      c.logprobs.emplace(s.logprobs.begin() + std::min(from_tok, s.logprobs.size()), s.logprobs.end());
      c.cumulative_logprob = s.cumulative_logprob;
    }
    s.num_reported_chars = std::max(s.num_reported_chars, s.num_releasable_chars);
    s.num_reported_tokens = s.num_output_tokens();
    if (s.finish_reason) s.reported_finish = true;
    out.outputs.push_back(std::move(c));
  }
  return out;
}

}  // namespace pagedchat
