// The conversation sent to the engine for one chat turn. The GUI thread only collects the
// messages (role, text); the engine worker renders them with the model's chat template and
// tokenizes them (pagedchat::fit_chat), so the GUI never tokenizes.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

#include <vector>

#include "app/store/chat_store.h"
#include "engine/text/chat_template.h"

/// One message of the conversation a request carries.
struct PromptMessage {
  MessageRole role = MessageRole::kUser;
  QString text;
  /// The rows of the history it was made of (joined messages span several), -1 for none (the
  /// system prompt, the new user message): what a pane marks when the engine leaves it out.
  int firstRow = -1, lastRow = -1;
  /// MessageRecord::fields: a reply's tool calls, a tool result's call id ("" = none).
  QString fields{};
  /// The pictures the text holds a marker for (pagedchat::kImageMarker, U+FFFC, one each, in
  /// order): each joined message's pictures go before its text.
  QList<ImageAttachment> images{};
  /// Role, text, fields and pictures: the rows are where it came from, not what it is.
  bool operator==(const PromptMessage& o) const {
    return role == o.role && text == o.text && fields == o.fields && images == o.images;
  }
};
Q_DECLARE_METATYPE(PromptMessage)

/// The messages of a new user turn, in the order every chat template expects: the system
/// message (`systemPrompt`, then any stored system records, joined by a blank line) when there
/// is one, the pane's earlier user/assistant messages (`history`, oldest first, without the new
/// one), and `userMessage` last. Consecutive messages of one role (e.g. a reply that was never
/// stored) are joined by a blank line and leading assistant messages are left out, so the roles
/// alternate user/assistant as the strict templates (llama-2, mistral, vicuna) require. An empty
/// assistant message (a reply stopped at once) is kept: it still separates two user turns. A
/// message with fields (a reply that called tools) and a tool result are never joined: each
/// result answers one call, and the call goes with the text before it.
/// Each message's pictures (MessageRecord::attachments, `userImages` for the new one) become
/// markers at the start of its text; markers typed in the text are removed.
QList<PromptMessage> buildChatMessages(const QString& systemPrompt, const QList<MessageRecord>& history,
                                       const QString& userMessage, const QList<ImageAttachment>& userImages = {});

/// The messages of a continuation: as buildChatMessages() without a new user message, `history`
/// ending with the assistant reply to continue (sent with LocalChatBackend::submit(..., continueLast)).
/// Empty when the last message (after joining) is not an assistant reply.
QList<PromptMessage> buildContinuationMessages(const QString& systemPrompt, const QList<MessageRecord>& history);

/// The messages of the conversation as it stands (`history` after `systemPrompt`, roles joined
/// as in buildChatMessages(), no new message): what the pane's context holds, for counting.
QList<PromptMessage> buildConversationMessages(const QString& systemPrompt, const QList<MessageRecord>& history);

/// The engine's form of `messages` (UTF-8; the roles as the chat template sees them: "system",
/// "user", "assistant", "tool"; the fields as ChatMessage::fields_json).
std::vector<pagedchat::ChatMessage> toChatMessages(const QList<PromptMessage>& messages);
