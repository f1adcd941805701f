// A chat reply's reasoning apart from its answer, as OpenAI-compatible servers return it
// (`reasoning_content`, vLLM's reasoning parsers: vllm/reasoning/deepseek_r1_reasoning_parser.py
// reads the same form). The engine writes every family's reasoning one way (ReplyDetokenizer):
// "<think>" reasoning "</think>" then the answer; a template may open the block in the prompt
// (DeepSeek-R1's "<think>\n" generation prompt), so that the reply starts inside it.
#pragma once

#include <string>
#include <string_view>

namespace pagedchat::openai {

/// Whole-reply result of ReasoningStream.
struct ReasoningSplit {
  std::string reasoning;  ///< the text inside the block (trimmed); "" when none
  std::string content;    ///< the rest: the answer (its leading whitespace dropped after a block)
  bool has_reasoning = false;
};

/// Splits a reply that streams into reasoning and content. Only a block at the start counts: a
/// reply that does not open with "<think>" (after whitespace) is all content, tags included.
/// A partial tag at a piece's end is held back until it is known; the reasoning's leading and
/// trailing whitespace is left out, as in the whole split.
class ReasoningStream {
 public:
  /// `opened`: the prompt opened the block (the reply starts as reasoning).
  explicit ReasoningStream(bool opened = false);
  /// New text; appends to `reasoning` and `content` what is known.
  void feed(std::string_view text, std::string& reasoning, std::string& content);
  /// The end of the reply: what was held back (an unclosed block stays reasoning).
  void finish(std::string& reasoning, std::string& content);
  /// True once any reasoning was seen.
  bool has_reasoning() const { return seen_; }

 private:
  enum class State { kStart, kReasoning, kAfter, kContent } state_;
  std::string held_;
  bool seen_ = false;
  bool reasoning_text_ = false;  ///< reasoning other than whitespace was sent
};

/// The whole of a reply at once (ReasoningStream fed once, then finished; reasoning trimmed).
ReasoningSplit split_reasoning(std::string_view text, bool opened = false);

}  // namespace pagedchat::openai
