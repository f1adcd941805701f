// The text sent to the engine for one chat turn. Kept in one place so chat templates can replace it.
#pragma once

#include <QList>
#include <QString>

#include "app/chat_store.h"

/// Builds the prompt for a new user turn. `history` holds the conversation's earlier messages
/// (oldest first, without the new one). stories260K has no chat template, so for now the prompt
/// is the user's message as is; a later change adds per-model chat templates here.
QString buildChatPrompt(const QList<MessageRecord>& history, const QString& userMessage);
