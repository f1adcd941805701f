// Stop strings on the detokenized text (vLLM's StopChecker): a stop string is found even when it
// spans several tokens; while streaming, text that could still become a stop string is held back
// so that the concatenated deltas always equal the final text.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pagedchat {

struct StopStringMatch {
  std::string stop;    ///< the stop string found
  size_t text_length;  ///< where the output text ends: before the stop, or after it if included
};

/// Searches `text` for the earliest stop string that ends at or after `new_text_start` (text
/// before it was already searched). Returns the cut, or nullopt.
std::optional<StopStringMatch> find_stop_string(const std::string& text, size_t new_text_start,
                                                const std::vector<std::string>& stops, bool include_stop_str);

/// Bytes at the end of `text` that must be held back: the longest suffix that is a proper prefix
/// of some stop string (0 when none). The cut always falls on a UTF-8 character boundary.
size_t stop_string_holdback(const std::string& text, const std::vector<std::string>& stops);

}  // namespace pagedchat
