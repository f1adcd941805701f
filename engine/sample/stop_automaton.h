// Stop strings as one automaton over all of them (Aho-Corasick: a trie of the strings with failure
// links, Aho and Corasick, "Efficient string matching", CACM 18(6), 1975). The output text is fed
// once, byte by byte, as it grows: each byte costs amortized constant time whatever the number and
// length of the stop strings and the length of the text so far, and the automaton's state is
// itself the longest tail of the text that could still become a stop string (what a stream holds
// back). Same answers as find_stop_string / stop_string_holdback (stop_checker.h), which look at
// every stop string for every token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/sample/stop_checker.h"

namespace pagedchat {

/// The automaton of a list of stop strings (immutable once built; share it between sequences).
class StopAutomaton {
 public:
  /// Empty strings are ignored. Memory: about 64 bytes per byte of the strings.
  explicit StopAutomaton(const std::vector<std::string>& stops);

  /// A position in the text: the automaton's state.
  struct Cursor {
    int node = 0;
    std::size_t fed = 0;  ///< bytes of the text fed so far
  };

  /// Feeds text[cursor.fed, text.size()) and advances the cursor. When `report`, returns the
  /// earliest-starting stop string among those that end in the bytes fed (the longest on a tie),
  /// with the cut as find_stop_string() gives it; the cursor then stops where no later match
  /// could start earlier. Without `report` (before min_tokens) it only advances.
  std::optional<StopStringMatch> feed(const std::string& text, Cursor& cursor, bool include_stop_str,
                                      bool report) const;

  /// Bytes at the end of the fed text to hold back: the longest tail that is a proper prefix of
  /// some stop string, widened to a UTF-8 character boundary (stop_string_holdback()).
  std::size_t holdback(const std::string& text, const Cursor& cursor) const;

  bool empty() const { return longest_ == 0; }

 private:
  struct Node {
    int fail = 0;         // the longest proper suffix of this node's string that is in the trie
    int depth = 0;        // bytes from the root
    int pattern = -1;     // the stop string that ends here, or -1
    int next_match = -1;  // the nearest node on the failure chain where a stop string ends
    bool has_child = false;
    std::vector<std::pair<uint8_t, int>> kids;  // (byte, child): few, except at the root
  };
  int child(int node, uint8_t byte) const;
  int step(int node, uint8_t byte) const;

  std::vector<Node> nodes_;
  std::vector<int> root_;  // the root's children by byte (-1: none)
  std::vector<std::string> patterns_;
  std::size_t longest_ = 0;
};

}  // namespace pagedchat
