// ToolReplySplitter: a streamed reply of a request that offered tools, split into the text a pane
// shows and stores and the tool calls the model made, in the model's own call format.
#pragma once

#include <QString>

#include <string>
#include <vector>

#include "engine/entrypoints/openai/tool_calls.h"

/// Why a request whose pane must call a tool (`toolChoice`: "required" or a tool's name) cannot be
/// sent: the tool, or any tool, is not offered now (its server off or gone, or its parameters
/// beyond what constrained decoding can hold the model to). In the current language.
QString toolChoiceUnavailable(const QString& toolChoice);

/// Reads a reply piece by piece (UTF-8 text as RequestDelta carries it). A leading reasoning
/// block ("<think>…</think>", the form the engine writes every family's reasoning in) passes
/// through as it is, so a call the model only thinks about is never run; after it, the text goes
/// through pagedchat::openai::ToolCallStream in `format`: calls are taken out (text that may
/// begin one is held back until it is known) and the rest is returned as text. Runs on the engine
/// worker's thread; one object per request. A reply that tool_choice forced (constrained
/// decoding, after the reasoning block if any: "required"'s array of {"name", "parameters"}, or a
/// named tool's arguments object) is all call after its reasoning: none of it is shown; finish()
/// parses it (pagedchat::openai::parse_chat_reply) and, when it holds no whole call (cut short
/// by the max tokens), returns it as text, so that nothing is lost.
class ToolReplySplitter {
 public:
  /// `format`: the chat template's call format (tool_call_format_of()); `tools`: the OpenAI
  /// tools array offered (the parsers check call names against it).
  ToolReplySplitter(pagedchat::openai::ToolCallFormat format, nlohmann::json tools);
  /// A reply forced by `toolChoice`: "required" or the name of the tool it must call.
  explicit ToolReplySplitter(const QString& toolChoice);
  /// The text of `piece` that can be shown now.
  QString feed(const QString& piece);
  /// The end of the reply: the text held back, if any.
  QString finish();
  /// The calls made, an OpenAI tool_calls array's JSON text ([{"id", "type": "function",
  /// "function": {"name", "arguments"}}]), or "" when there were none. Complete after finish().
  QString toolCallsJson() const;

 private:
  std::string toStream(std::string_view text);
  QString finishForced();
  enum class State { kStart, kReasoning, kContent } state_ = State::kStart;
  std::string held_;   ///< kStart: the text so far (blank, or a prefix of "<think>")
  std::string carry_;  ///< kReasoning: the last few characters shown (a "</think>" split in two)
  pagedchat::openai::ToolCallStream stream_;
  std::vector<pagedchat::openai::ToolCall> calls_;
  QString forced_;          ///< the forced tool_choice ("" when the model chooses)
  std::string forcedText_;  ///< a forced reply so far
};
