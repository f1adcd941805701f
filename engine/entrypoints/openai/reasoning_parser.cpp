#include "engine/entrypoints/openai/reasoning_parser.h"

namespace pagedchat::openai {

namespace {
constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";
constexpr std::string_view kBlank = " \t\r\n";

// How many bytes at the end of `s` are a proper prefix of `tag` (held back: the tag may follow).
std::size_t partial_think_suffix(std::string_view s, std::string_view tag) {
  for (std::size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}
}  // namespace

ReasoningStream::ReasoningStream(bool opened) : state_(opened ? State::kReasoning : State::kStart), seen_(opened) {}

void ReasoningStream::feed(std::string_view text, std::string& reasoning, std::string& content) {
  held_ += text;
  while (true) {
    switch (state_) {
      case State::kStart: {
        const std::size_t b = held_.find_first_not_of(kBlank);
        if (b == std::string::npos) return;  // whitespace only so far
        const std::string_view rest = std::string_view(held_).substr(b);
        if (rest.size() < kThinkOpen.size() && kThinkOpen.substr(0, rest.size()) == rest) return;  // maybe "<think>"
        if (rest.substr(0, kThinkOpen.size()) == kThinkOpen) {
          held_.erase(0, b + kThinkOpen.size());
          state_ = State::kReasoning;
          seen_ = true;
        } else {
          state_ = State::kContent;
        }
        break;
      }
      case State::kReasoning: {
        // Streamed as the whole split gives it: without the whitespace at its start and end
        // (trailing whitespace waits for more text).
        const std::size_t close = held_.find(kThinkClose);
        std::size_t end = close == std::string::npos ? held_.size() - partial_think_suffix(held_, kThinkClose) : close;
        std::size_t begin = 0;
        if (!reasoning_text_) {
          begin = std::min(end, held_.find_first_not_of(kBlank));
          if (begin < end) reasoning_text_ = true;
        }
        const std::size_t last = held_.find_last_not_of(kBlank, end == 0 ? 0 : end - 1);
        const std::size_t upto = last == std::string::npos || last < begin || end == 0 ? begin : last + 1;
        reasoning.append(held_, begin, upto - begin);
        if (close == std::string::npos) {
          held_.erase(0, upto);
          return;
        }
        held_.erase(0, close + kThinkClose.size());
        state_ = State::kAfter;
        break;
      }
      case State::kAfter: {  // the answer's leading whitespace is the block's separator
        const std::size_t b = held_.find_first_not_of(kBlank);
        if (b == std::string::npos) {
          held_.clear();
          return;
        }
        held_.erase(0, b);
        state_ = State::kContent;
        break;
      }
      case State::kContent:
        content += held_;
        held_.clear();
        return;
    }
  }
}

void ReasoningStream::finish(std::string& reasoning, std::string& content) {
  if (state_ == State::kReasoning) {
    const std::size_t last = held_.find_last_not_of(kBlank);
    if (last != std::string::npos) reasoning.append(held_, 0, last + 1);
  } else if (state_ != State::kAfter) {
    content += held_;
  }
  held_.clear();
}

ReasoningSplit split_reasoning(std::string_view text, bool opened) {
  ReasoningStream s(opened);
  ReasoningSplit r;
  s.feed(text, r.reasoning, r.content);
  s.finish(r.reasoning, r.content);
  r.has_reasoning = s.has_reasoning();
  const std::size_t b = r.reasoning.find_first_not_of(kBlank);
  r.reasoning = b == std::string::npos ? std::string()
                                       : r.reasoning.substr(b, r.reasoning.find_last_not_of(kBlank) - b + 1);
  return r;
}

}  // namespace pagedchat::openai
