#include "cli/timings.h"

#include <cstdio>

namespace pagedchat::cli {

namespace {

std::string rate(double tokens, double seconds) {
  if (seconds <= 0.0 || tokens <= 0.0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", tokens / seconds);
  return buf;
}

}  // namespace

std::string timings_line(const RequestOutput& out) {
  const RequestMetrics& m = out.metrics;
  const int prompt = int(out.prompt_token_ids.size());
  const int computed = prompt - m.num_cached_tokens;
  const double prompt_s = m.first_token_time > 0 && m.first_scheduled_time > 0
                              ? m.first_token_time - m.first_scheduled_time
                              : 0.0;
  const int generated = m.num_generation_tokens;
  const int decoded = generated > 1 ? generated - 1 : 0;
  const double decode_s = decoded > 0 ? m.last_token_time - m.first_token_time : 0.0;
  char buf[384];
  int n = std::snprintf(buf, sizeof buf,
                        "[prompt: %d tokens (%d cached) in %.2f s, %s tok/s | decode: %d tokens in %.2f s, %s tok/s",
                        prompt, m.num_cached_tokens, prompt_s, rate(computed, prompt_s).c_str(), generated, decode_s,
                        rate(decoded, decode_s).c_str());
  if (m.num_spec_drafts > 0 && n > 0 && std::size_t(n) < sizeof buf)
    n += std::snprintf(buf + n, sizeof buf - std::size_t(n),
                       " | %s drafts: %d of %d accepted, %.2f tokens per verifying step", m.spec_method.c_str(),
                       m.num_spec_accepted_tokens, m.num_spec_draft_tokens,
                       1.0 + double(m.num_spec_accepted_tokens) / double(m.num_spec_drafts));
  return std::string(buf) + "]";
}

void write_text(std::ostream& out, const CompletionOutput& c, bool tint) {
  if (!tint || c.draft_spans.empty()) {
    out << c.text;
    return;
  }
  std::size_t at = 0;
  for (const auto& [begin, end] : c.draft_spans) {
    if (begin < at || end > c.text.size() || begin >= end) continue;
    out << c.text.substr(at, begin - at) << "\x1b[32m" << c.text.substr(begin, end - begin) << "\x1b[0m";
    at = end;
  }
  out << c.text.substr(at);
}

}  // namespace pagedchat::cli
