// engine/text/templated_text.h
// The text a chat template renders, with the byte ranges that came from the conversation's data.
// Written by the Jinja interpreter (engine/text/jinja), read by the tokenizer: special tokens are
// recognized only in template text, never inside a data range.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>
namespace pagedchat {
/// A half-open byte range [begin, end) of a string.
struct ByteRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool operator==(const ByteRange&) const = default;
};
/// A prompt as a chat template wrote it, with the ranges that came from the conversation's data
/// (message contents, tool definitions) marked: a tokenizer parses special tokens only outside them.
/// `data` is sorted, non-overlapping, non-empty, inside `text`; adjacent ranges merged.
struct TemplatedText {
  std::string text;
  std::vector<ByteRange> data;
  void append(std::string_view s, bool is_data);                    // merges with a touching last range
  void append(const TemplatedText& t);                              // keeps t's ranges, shifted
  bool is_template_text(std::size_t begin, std::size_t end) const;  // no byte of [begin,end) is data
};

inline void TemplatedText::append(std::string_view s, bool is_data) {
  if (s.empty()) return;
  const std::size_t begin = text.size();
  text.append(s);
  if (!is_data) return;
  if (!data.empty() && data.back().end == begin) {
    data.back().end = text.size();
  } else {
    data.push_back({begin, text.size()});
  }
}

inline void TemplatedText::append(const TemplatedText& t) {
  if (&t == this) {  // appending to itself: work from a copy (the loop below would see its own pushes)
    const TemplatedText copy = t;
    append(copy);
    return;
  }
  const std::size_t shift = text.size();
  text.append(t.text);
  for (const ByteRange& r : t.data) {
    const ByteRange moved{r.begin + shift, r.end + shift};
    if (!data.empty() && data.back().end == moved.begin) {
      data.back().end = moved.end;
    } else {
      data.push_back(moved);
    }
  }
}

/// The first `n` bytes of `t` (n <= t.text.size()), its data ranges clipped to them.
inline TemplatedText prefix_of(const TemplatedText& t, std::size_t n) {
  TemplatedText out;
  out.text = t.text.substr(0, n);
  for (const ByteRange& r : t.data)
    if (r.begin < n) out.data.push_back({r.begin, std::min(r.end, n)});
  return out;
}

inline bool TemplatedText::is_template_text(std::size_t begin, std::size_t end) const {
  if (begin >= end) return true;
  // The first range ending after `begin` is the only one that can overlap [begin, end) first.
  const auto it = std::upper_bound(data.begin(), data.end(), begin,
                                   [](std::size_t pos, const ByteRange& r) { return pos < r.end; });
  return it == data.end() || it->begin >= end;
}
}  // namespace pagedchat
