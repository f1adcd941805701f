#include "app/engine/reasoning.h"

namespace {
const QString kOpen = QStringLiteral("<think>");
const QString kClose = QStringLiteral("</think>");

qsizetype firstNonSpace(const QString& s, qsizetype from = 0) {
  while (from < s.size() && s.at(from).isSpace()) ++from;
  return from;
}
}  // namespace

ReasoningSplit splitReasoning(const QString& text) {
  ReasoningSplit out;
  const qsizetype start = firstNonSpace(text);
  if (text.mid(start, kOpen.size()) != kOpen) {
    out.answer = text;
    return out;
  }
  out.hasReasoning = true;
  const qsizetype body = start + kOpen.size();
  const qsizetype close = text.indexOf(kClose, body);
  if (close < 0) {
    out.open = true;
    out.reasoning = text.mid(body).trimmed();
    return out;
  }
  out.reasoning = text.mid(body, close - body).trimmed();
  out.answer = text.mid(firstNonSpace(text, close + kClose.size()));
  return out;
}
