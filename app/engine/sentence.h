// sentence(): a message ending with a full stop, so that another sentence can follow it.
#pragma once

#include <QString>

/// `text` trimmed, with a full stop added unless it ends with '.', '!' or '?' (engine and server
/// messages often have none); "" stays "".
inline QString sentence(const QString& text) {
  const QString t = text.trimmed();
  return t.isEmpty() || t.endsWith(QLatin1Char('.')) || t.endsWith(QLatin1Char('!')) || t.endsWith(QLatin1Char('?'))
             ? t
             : t + QLatin1Char('.');
}
