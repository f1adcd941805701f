// The app's text edges of pagedchat::FinishReason (SQLite, exported JSON, QML roles, automation events):
// a reply's reason as QString, "" meaning none (still streaming, interrupted, or not an answer).
#pragma once

#include <QString>

#include <optional>
#include <string_view>

#include "engine/finish_reason.h"

/// "stop", "length" or "abort"; "" for none. Never fails.
inline QString finishReasonText(std::optional<pagedchat::FinishReason> reason) {
  if (!reason) return QString();
  const std::string_view text = pagedchat::to_string(*reason);
  return QString(QLatin1String(text.data(), static_cast<qsizetype>(text.size())));
}

/// The reason named by `text` (as finishReasonText writes it); nullopt for "" and for any other text.
inline std::optional<pagedchat::FinishReason> parseFinishReasonText(const QString& text) {
  return pagedchat::parse_finish_reason(text.toStdString());
}
