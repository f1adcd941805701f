#include "engine/sample/stop_automaton.h"

#include <deque>

namespace pagedchat {

StopAutomaton::StopAutomaton(const std::vector<std::string>& stops) : root_(256, -1) {
  nodes_.emplace_back();  // the root: the empty string
  for (const std::string& s : stops) {
    if (s.empty()) continue;
    int node = 0;
    for (unsigned char c : s) {
      int next = child(node, c);
      if (next < 0) {
        next = int(nodes_.size());
        nodes_.push_back({0, nodes_[node].depth + 1, -1, -1, false, {}});
        nodes_[node].has_child = true;
        if (node == 0)
          root_[c] = next;
        else
          nodes_[node].kids.emplace_back(c, next);
      }
      node = next;
    }
    if (nodes_[node].pattern < 0) {
      nodes_[node].pattern = int(patterns_.size());
      patterns_.push_back(s);
      longest_ = std::max(longest_, s.size());
    }
  }
  // Failure links breadth first: a node's failure is its parent's failure followed by its byte.
  std::deque<int> queue;
  for (int v : root_)
    if (v >= 0) queue.push_back(v);  // depth 1: failure to the root
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    const int f = nodes_[u].fail;
    nodes_[u].next_match = nodes_[f].pattern >= 0 ? f : nodes_[f].next_match;
    for (const auto& [c, v] : nodes_[u].kids) {
      nodes_[v].fail = step(nodes_[u].fail, c);
      queue.push_back(v);
    }
  }
  nodes_[0].next_match = -1;
}

int StopAutomaton::child(int node, uint8_t byte) const {
  if (node == 0) return root_[byte];
  for (const auto& [c, v] : nodes_[node].kids)
    if (c == byte) return v;
  return -1;
}

int StopAutomaton::step(int node, uint8_t byte) const {
  for (;;) {
    const int next = child(node, byte);
    if (next >= 0) return next;
    if (node == 0) return 0;
    node = nodes_[node].fail;
  }
}

std::optional<StopStringMatch> StopAutomaton::feed(const std::string& text, Cursor& cursor, bool include_stop_str,
                                                   bool report) const {
  std::optional<StopStringMatch> best;
  std::size_t best_start = 0;
  for (; cursor.fed < text.size(); ++cursor.fed) {
    // A match ending here or later starts at cursor.fed + 1 - longest_ at the earliest.
    if (best && cursor.fed + 1 >= best_start + longest_) break;
    cursor.node = step(cursor.node, uint8_t(text[cursor.fed]));
    if (!report) continue;
    for (int m = nodes_[cursor.node].pattern >= 0 ? cursor.node : nodes_[cursor.node].next_match; m >= 0;
         m = nodes_[m].next_match) {
      const std::size_t len = std::size_t(nodes_[m].depth), start = cursor.fed + 1 - len;
      if (!best || start < best_start || (start == best_start && len > best->stop.size())) {
        best_start = start;
        best = StopStringMatch{patterns_[std::size_t(nodes_[m].pattern)], include_stop_str ? start + len : start};
      }
    }
  }
  return best;
}

std::size_t StopAutomaton::holdback(const std::string& text, const Cursor& cursor) const {
  int node = cursor.node;
  while (node != 0 && !nodes_[node].has_child) node = nodes_[node].fail;  // a proper prefix only
  std::size_t hold = std::min<std::size_t>(std::size_t(nodes_[node].depth), cursor.fed);
  const std::size_t end = std::min(cursor.fed, text.size());
  while (hold < end && (uint8_t(text[end - hold]) & 0xC0) == 0x80) ++hold;  // not inside a character
  return hold;
}

}  // namespace pagedchat
