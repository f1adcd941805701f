#include "app/engine/tool_reply.h"

#include <nlohmann/json.hpp>

#include <utility>

namespace {
constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
}  // namespace

ToolReplySplitter::ToolReplySplitter(pagedchat::openai::ToolCallFormat format, nlohmann::json tools)
    : stream_(format, std::move(tools)) {}

std::string ToolReplySplitter::toStream(std::string_view text) {
  return text.empty() ? std::string() : stream_.feed(text, calls_);
}

QString ToolReplySplitter::feed(const QString& piece) {
  std::string text = piece.toStdString();
  std::string out;
  if (state_ == State::kStart) {
    held_ += text;
    text.clear();
    const std::size_t start = held_.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) return {};  // blank so far: it decides nothing
    const std::string_view rest = std::string_view(held_).substr(start);
    if (rest.size() < kThinkOpen.size() && kThinkOpen.substr(0, rest.size()) == rest) return {};  // "<thi"
    if (rest.substr(0, kThinkOpen.size()) == kThinkOpen) {
      state_ = State::kReasoning;
      text = std::exchange(held_, {});  // read below as reasoning
    } else {
      state_ = State::kContent;
      return QString::fromStdString(toStream(std::exchange(held_, {})));
    }
  }
  if (state_ == State::kReasoning) {
    const std::string joined = carry_ + text;
    const std::size_t close = joined.find(kThinkClose);
    if (close == std::string::npos) {
      carry_ = joined.substr(joined.size() > kThinkClose.size() ? joined.size() - kThinkClose.size() : 0);
      return QString::fromStdString(text);
    }
    const std::size_t end = close + kThinkClose.size() - carry_.size();  // in `text`
    out = text.substr(0, end);
    text.erase(0, end);
    carry_.clear();
    state_ = State::kContent;
  }
  out += toStream(text);
  return QString::fromStdString(out);
}

QString ToolReplySplitter::finish() {
  std::string out;
  if (state_ == State::kStart) out = std::exchange(held_, {});  // blank, or a lone "<thi"
  if (state_ == State::kContent) out = stream_.finish(calls_);
  return QString::fromStdString(out);
}

QString ToolReplySplitter::toolCallsJson() const {
  if (calls_.empty()) return {};
  nlohmann::json array = nlohmann::json::array();
  for (const pagedchat::openai::ToolCall& c : calls_)
    array.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  return QString::fromStdString(array.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}
