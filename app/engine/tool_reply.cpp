#include "app/engine/tool_reply.h"

#include <QCoreApplication>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/openai/chat_reply.h"

#include <utility>

namespace {
constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
}  // namespace

QString toolChoiceUnavailable(const QString& toolChoice) {
  if (toolChoice == QLatin1String("required"))
    return QCoreApplication::translate("ToolChoice",
                                       "This pane must call a tool, and none is offered now (Settings \u2192 Tools, "
                                       "or the pane's servers), or none has parameters the model can be held to.");
  return QCoreApplication::translate("ToolChoice",
                                     "This pane must call the tool %1, which is not offered now (or whose parameters "
                                     "the model cannot be held to).")
      .arg(toolChoice);
}

ToolReplySplitter::ToolReplySplitter(pagedchat::openai::ToolCallFormat format, nlohmann::json tools)
    : stream_(format, std::move(tools)) {}

std::string ToolReplySplitter::toStream(std::string_view text) {
  if (!forced_.isEmpty()) {  // all of it is the call
    forcedText_ += text;
    return {};
  }
  return text.empty() ? std::string() : stream_.feed(text, calls_);
}

ToolReplySplitter::ToolReplySplitter(const QString& toolChoice)
    : stream_(pagedchat::openai::ToolCallFormat::kNone, nlohmann::json::array()), forced_(toolChoice) {}

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
  if (!forced_.isEmpty()) return finishForced();
  std::string out;
  if (state_ == State::kStart) out = std::exchange(held_, {});  // blank, or a lone "<thi"
  if (state_ == State::kContent) out = stream_.finish(calls_);
  return QString::fromStdString(out);
}

QString ToolReplySplitter::finishForced() {
  if (state_ == State::kStart) forcedText_ = std::exchange(held_, {}) + forcedText_;
  if (state_ == State::kReasoning) return {};  // cut short while reasoning: nothing of a call
  pagedchat::openai::ChatReplyOptions o;
  o.forced = forced_ == QLatin1String("required") ? "required" : "function";
  if (o.forced == "function") o.forced_name = forced_.toStdString();
  pagedchat::openai::ChatReply reply = pagedchat::openai::parse_chat_reply(o, forcedText_);
  // A named tool's arguments must be a whole object: a reply cut short (the max tokens) is text.
  bool whole = !reply.calls.empty();
  for (const auto& c : reply.calls)
    whole = whole && nlohmann::json::parse(c.arguments, nullptr, /*allow_exceptions=*/false).is_object();
  if (!whole) return QString::fromStdString(std::exchange(forcedText_, {}));
  calls_ = std::move(reply.calls);
  forcedText_.clear();
  return QString::fromStdString(reply.content);
}

QString ToolReplySplitter::toolCallsJson() const {
  if (calls_.empty()) return {};
  nlohmann::json array = nlohmann::json::array();
  for (const pagedchat::openai::ToolCall& c : calls_)
    array.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  return QString::fromStdString(array.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}
