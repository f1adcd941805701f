#include "app/chat_prompt.h"

namespace {
const QString kSystem = QStringLiteral("system");
const QString kUser = QStringLiteral("user");
const QString kAssistant = QStringLiteral("assistant");
const QString kJoin = QStringLiteral("\n\n");
}  // namespace

namespace {
/// The common part: system message first, `history` with roles alternating, then `last` (role,
/// text) when `last.role` is not empty.
QList<PromptMessage> build(const QString& systemPrompt, const QList<MessageRecord>& history,
                           const PromptMessage& last) {
  QStringList system;
  if (!systemPrompt.isEmpty()) system.append(systemPrompt);
  QList<PromptMessage> turns;
  auto add = [&turns](const QString& role, const QString& text) {
    if (turns.isEmpty() && role == kAssistant) return;  // a conversation starts with the user
    if (!turns.isEmpty() && turns.constLast().role == role) {
      turns.last().text += kJoin + text;
      return;
    }
    turns.append({role, text});
  };
  for (const MessageRecord& m : history) {
    if (m.role == kSystem) {
      if (!m.text.isEmpty()) system.append(m.text);
    } else if (m.role == kUser || m.role == kAssistant) {
      add(m.role, m.text);
    }
  }
  if (!last.role.isEmpty()) add(last.role, last.text);
  if (!system.isEmpty()) turns.prepend({kSystem, system.join(kJoin)});
  return turns;
}
}  // namespace

QList<PromptMessage> buildChatMessages(const QString& systemPrompt, const QList<MessageRecord>& history,
                                       const QString& userMessage) {
  return build(systemPrompt, history, {kUser, userMessage});
}

QList<PromptMessage> buildContinuationMessages(const QString& systemPrompt, const QList<MessageRecord>& history) {
  QList<PromptMessage> turns = build(systemPrompt, history, {});
  if (turns.isEmpty() || turns.constLast().role != kAssistant) return {};
  return turns;
}

QList<PromptMessage> buildConversationMessages(const QString& systemPrompt, const QList<MessageRecord>& history) {
  return build(systemPrompt, history, {});
}

std::vector<pagedchat::ChatMessage> toChatMessages(const QList<PromptMessage>& messages) {
  std::vector<pagedchat::ChatMessage> out;
  out.reserve(static_cast<size_t>(messages.size()));
  for (const PromptMessage& m : messages) out.push_back({m.role.toStdString(), m.text.toStdString()});
  return out;
}
