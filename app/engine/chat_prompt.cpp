#include "app/engine/chat_prompt.h"

#include <optional>

namespace {
const QString kJoin = QStringLiteral("\n\n");
const QChar kMarker(0xFFFC);  // pagedchat::kImageMarker

/// The common part: system message first, `history` with roles alternating, then `last` (role,
/// text) when there is one.
QList<PromptMessage> build(const QString& systemPrompt, const QList<MessageRecord>& history,
                           const std::optional<PromptMessage>& last) {
  QStringList system;
  if (!systemPrompt.isEmpty()) system.append(QString(systemPrompt).remove(kMarker));
  QList<PromptMessage> turns;
  auto add = [&turns](MessageRole role, QString text, int row, const QString& fields,
                      const QList<ImageAttachment>& images) {
    // A conversation starts with the user (a tool result alone answers nothing).
    if (turns.isEmpty() && role != MessageRole::kUser) return;
    text.remove(kMarker);
    text.prepend(QString(images.size(), kMarker));
    if (!turns.isEmpty() && turns.constLast().role == role && role != MessageRole::kTool &&
        turns.constLast().fields.isEmpty()) {
      if (!fields.isEmpty()) turns.last().fields = fields;
      turns.last().text += kJoin + text;
      turns.last().images += images;
      if (row >= 0) {
        if (turns.last().firstRow < 0) turns.last().firstRow = row;
        turns.last().lastRow = row;
      }
      return;
    }
    turns.append({role, text, row, row, fields, images});
  };
  for (int row = 0; row < history.size(); ++row) {
    const MessageRecord& m = history.at(row);
    if (m.role == MessageRole::kSystem) {
      if (!m.text.isEmpty()) system.append(QString(m.text).remove(kMarker));
    } else {
      add(m.role, m.text, row, m.fields, m.attachments);
    }
  }
  if (last) add(last->role, last->text, -1, last->fields, last->images);
  if (!system.isEmpty()) turns.prepend({MessageRole::kSystem, system.join(kJoin)});
  return turns;
}
}  // namespace

QList<PromptMessage> buildChatMessages(const QString& systemPrompt, const QList<MessageRecord>& history,
                                       const QString& userMessage, const QList<ImageAttachment>& userImages) {
  PromptMessage last{MessageRole::kUser, userMessage};
  last.images = userImages;
  return build(systemPrompt, history, last);
}

QList<PromptMessage> buildContinuationMessages(const QString& systemPrompt, const QList<MessageRecord>& history) {
  QList<PromptMessage> turns = build(systemPrompt, history, std::nullopt);
  if (turns.isEmpty() || turns.constLast().role != MessageRole::kAssistant) return {};
  return turns;
}

QList<PromptMessage> buildConversationMessages(const QString& systemPrompt, const QList<MessageRecord>& history) {
  return build(systemPrompt, history, std::nullopt);
}

std::vector<pagedchat::ChatMessage> toChatMessages(const QList<PromptMessage>& messages) {
  std::vector<pagedchat::ChatMessage> out;
  out.reserve(static_cast<size_t>(messages.size()));
  for (const PromptMessage& m : messages)
    out.emplace_back(messageRoleText(m.role).toStdString(), m.text.toStdString(), m.fields.toStdString());
  return out;
}
