// Reasoning models (Qwen3, DeepSeek-R1 and its distills) write their thinking first, between
// "<think>" and "</think>", then the answer. The pane shows the two apart: the reasoning
// collapsed, with its length, and the answer as the message. The stored text stays as the model
// wrote it, so that the chat template decides what of it is sent again (most templates drop the
// reasoning of earlier replies).
#pragma once

#include <QString>

/// A reply split into its reasoning and its answer.
struct ReasoningSplit {
  QString reasoning;          ///< the text between <think> and </think> (or the end), trimmed; "" when none
  QString answer;             ///< the text after </think> (leading whitespace dropped), or the whole text
  bool hasReasoning = false;  ///< the reply starts with <think> (after whitespace)
  bool open = false;          ///< <think> without its </think> yet: still thinking (or cut off)
};

/// Splits `text` when it starts (after leading whitespace) with "<think>": the reasoning runs to
/// the first "</think>" (open when there is none), the answer follows it. Any other text is all
/// answer, including a "</think>" or "<think>" in the middle of it.
ReasoningSplit splitReasoning(const QString& text);
