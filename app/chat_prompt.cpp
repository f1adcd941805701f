#include "app/chat_prompt.h"

QString buildChatPrompt(const QList<MessageRecord>& history, const QString& userMessage) {
  Q_UNUSED(history);
  return userMessage;
}
