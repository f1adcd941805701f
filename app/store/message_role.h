// MessageRole: who wrote a message of a conversation. The app passes the enum around; it becomes
// text ("system", "user", "assistant", "tool": the OpenAI chat API's names, which chat templates
// test) only at its edges: SQLite (the messages.role column's CHECK allows exactly these), the
// exported JSON, a remote endpoint's request, QML's `role`, and the engine's chat messages.
#pragma once

#include <QString>

#include <optional>

/// kTool: a tool's result, answering an assistant message's call (MessageRecord::fields).
enum class MessageRole { kSystem, kUser, kAssistant, kTool };

/// "system", "user", "assistant" or "tool".
inline QString messageRoleText(MessageRole role) {
  switch (role) {
    case MessageRole::kSystem:
      return QStringLiteral("system");
    case MessageRole::kUser:
      return QStringLiteral("user");
    case MessageRole::kAssistant:
      return QStringLiteral("assistant");
    case MessageRole::kTool:
      return QStringLiteral("tool");
  }
  return QStringLiteral("user");  // unreachable: every enumerator is handled above
}

/// The role `text` names, exactly as messageRoleText() writes it; nullopt for any other text.
inline std::optional<MessageRole> parseMessageRole(const QString& text) {
  for (MessageRole r : {MessageRole::kSystem, MessageRole::kUser, MessageRole::kAssistant, MessageRole::kTool})
    if (text == messageRoleText(r)) return r;
  return std::nullopt;
}
