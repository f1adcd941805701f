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
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "[prompt: %d tokens (%d cached) in %.2f s, %s tok/s | decode: %d tokens in %.2f s, %s tok/s]", prompt,
                m.num_cached_tokens, prompt_s, rate(computed, prompt_s).c_str(), generated, decode_s,
                rate(decoded, decode_s).c_str());
  return buf;
}

}  // namespace pagedchat::cli
