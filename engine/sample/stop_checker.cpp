#include "engine/sample/stop_checker.h"

#include <algorithm>

namespace pagedchat {

std::optional<StopStringMatch> find_stop_string(const std::string& text, size_t new_text_start,
                                                const std::vector<std::string>& stops, bool include_stop_str) {
  std::optional<StopStringMatch> best;
  size_t best_pos = std::string::npos;
  for (const auto& stop : stops) {
    if (stop.empty() || stop.size() > text.size()) continue;
    // Any match ending in the new text starts at or after new_text_start - (len - 1).
    const size_t from = new_text_start >= stop.size() - 1 ? new_text_start - (stop.size() - 1) : 0;
    const size_t pos = text.find(stop, from);
    if (pos == std::string::npos) continue;
    if (pos < best_pos || (pos == best_pos && best && stop.size() > best->stop.size())) {
      best_pos = pos;
      best = StopStringMatch{stop, include_stop_str ? pos + stop.size() : pos};
    }
  }
  return best;
}

size_t stop_string_holdback(const std::string& text, const std::vector<std::string>& stops) {
  size_t hold = 0;
  for (const auto& stop : stops) {
    const size_t max_len = std::min(text.size(), stop.size() - (stop.empty() ? 0 : 1));
    for (size_t len = max_len; len > hold; --len)
      if (text.compare(text.size() - len, len, stop, 0, len) == 0) {
        hold = len;
        break;
      }
  }
  return hold;
}

}  // namespace pagedchat
