#include "app/engine/remote/sse_parser.h"

#include <utility>

QList<QByteArray> SseParser::feed(const QByteArray& bytes) {
  QList<QByteArray> events;
  for (const char c : bytes) {
    if (c == '\n' && lastWasCr_) {  // the LF of a CRLF: the line already ended
      lastWasCr_ = false;
      continue;
    }
    lastWasCr_ = c == '\r';
    if (c == '\r' || c == '\n')
      takeLine(events);
    else
      line_.append(c);
  }
  return events;
}

void SseParser::takeLine(QList<QByteArray>& events) {
  const QByteArray line = std::exchange(line_, {});
  if (line.isEmpty()) {  // dispatch
    if (hasData_) events.append(std::exchange(data_, {}));
    data_.clear();
    hasData_ = false;
    return;
  }
  if (line.startsWith(':')) return;  // comment (keep-alive)
  const qsizetype colon = line.indexOf(':');
  const QByteArray field = colon < 0 ? line : line.left(colon);
  QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
  if (value.startsWith(' ')) value.remove(0, 1);
  if (field != "data") return;  // event, id, retry: not used by OpenAI's streams
  if (hasData_) data_.append('\n');
  data_.append(value);
  hasData_ = true;
}
