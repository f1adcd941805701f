// engine/text/templated_text.h
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>
namespace pagedchat {
/// A half-open byte range [begin, end) of a string.
struct ByteRange { std::size_t begin = 0; std::size_t end = 0; bool operator==(const ByteRange&) const = default; };
/// A prompt as a chat template wrote it, with the ranges that came from the conversation's data
/// (message contents, tool definitions) marked: a tokenizer parses special tokens only outside them.
/// `data` is sorted, non-overlapping, non-empty, inside `text`; adjacent ranges merged.
struct TemplatedText {
  std::string text;
  std::vector<ByteRange> data;
  void append(std::string_view s, bool is_data);          // merges with a touching last range
  void append(const TemplatedText& t);                     // keeps t's ranges, shifted
  bool is_template_text(std::size_t begin, std::size_t end) const;  // no byte of [begin,end) is data
};
}
