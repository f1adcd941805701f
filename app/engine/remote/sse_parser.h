// SseParser: server-sent events read incrementally from a byte stream (the framing of OpenAI's
// streamed responses).
#pragma once

#include <QByteArray>
#include <QList>

/// Splits a text/event-stream body into events as its bytes arrive, in pieces cut anywhere (inside
/// a line, inside a UTF-8 character, between "\r" and "\n"). Follows the HTML Living Standard's
/// "Parsing an event stream" (https://html.spec.whatwg.org/multipage/server-sent-events.html):
/// lines end with CRLF, LF or CR; a line starting with ':' is a comment; "data" fields of one
/// event are joined with "\n"; a blank line ends the event. Only the data matters here (OpenAI's
/// streams send neither "event" nor "id"), so events are returned as their data; an event with
/// no data field is dropped, as the standard says.
class SseParser {
 public:
  /// Feeds the next bytes; returns the data of every event they complete (UTF-8, in order).
  QList<QByteArray> feed(const QByteArray& bytes);
  /// True when bytes of an unfinished event are held (a stream that ends now was cut short).
  bool hasPartialEvent() const { return !line_.isEmpty() || hasData_; }

 private:
  void takeLine(QList<QByteArray>& events);

  QByteArray line_;         ///< the current line so far
  QByteArray data_;         ///< the current event's data
  bool hasData_ = false;    ///< a data field was seen in the current event
  bool lastWasCr_ = false;  ///< the previous byte ended a line with CR (a following LF belongs to it)
};
