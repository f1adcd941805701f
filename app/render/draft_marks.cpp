#include "app/render/draft_marks.h"

#include <QStringView>

#include <algorithm>
#include <vector>

namespace draftmarks {
namespace {

/// A letter, digit or combining mark (of the BMP: a surrogate is none, so a character outside it
/// stays unmarked and a run never splits a pair).
bool isWordChar(QChar c) { return c.isLetterOrNumber() || c.isMark(); }

/// Whether the whitespace-delimited `word` must stay unmarked.
bool unsafeWord(QStringView word, bool bracketsUnsafe) {
  for (QChar c : word)
    if (c == u'<' || c == u'>' || c == u'&' || c == u'@' || (bracketsUnsafe && (c == u'[' || c == u']'))) return true;
  return word.contains(u"://") || word.contains(u"www.", Qt::CaseInsensitive);
}

/// Whether `line` must stay unmarked as a whole: it may open or close a code fence (``` or ~~~
/// after spaces: its info string names the language, read as typed) or define a link reference
/// ("[label]: url \"title\"": nothing of it is shown, its label must match as typed).
bool unsafeLine(QStringView line) {
  const QStringView rest = line.trimmed();
  if (rest.startsWith(u"```") || rest.startsWith(u"~~~")) return true;
  if (!rest.startsWith(u'[')) return false;
  const qsizetype close = rest.indexOf(u']');
  return close > 1 && close + 1 < rest.size() && rest[close + 1] == u':';
}

}  // namespace

QString insert(const QString& text, const QList<int>& spans) {
  if (spans.size() < 2 || text.contains(kBegin) || text.contains(kEnd)) return QString();
  // Per character: inside an accepted draft.
  std::vector<bool> draft(std::size_t(text.size()), false);
  bool any = false;
  for (qsizetype i = 0; i + 1 < spans.size(); i += 2) {
    const qsizetype b = std::max<qsizetype>(0, spans[i]), e = std::min<qsizetype>(text.size(), spans[i + 1]);
    for (qsizetype k = b; k < e; ++k) draft[std::size_t(k)] = true;
    any = any || b < e;
  }
  if (!any) return QString();
  // A reference definition ("[label]: url") makes bracketed text a label that must match as typed.
  const bool bracketsUnsafe = text.contains(u"]:");
  QString out;
  out.reserve(text.size() + text.size() / 4);
  int marked = 0;
  qsizetype lineStart = 0;
  while (lineStart < text.size()) {
    qsizetype lineEnd = text.indexOf(u'\n', lineStart);
    if (lineEnd < 0) lineEnd = text.size();
    const QStringView line = QStringView(text).mid(lineStart, lineEnd - lineStart);
    const bool skipLine = unsafeLine(line);
    qsizetype i = 0;
    while (i < line.size()) {
      if (line[i].isSpace()) {
        out += line[i++];
        continue;
      }
      qsizetype wordEnd = i;
      while (wordEnd < line.size() && !line[wordEnd].isSpace()) ++wordEnd;
      const bool safe = !skipLine && !unsafeWord(line.mid(i, wordEnd - i), bracketsUnsafe);
      const qsizetype wordStart = i;
      while (i < wordEnd) {
        if (!safe || !draft[std::size_t(lineStart + i)] || !isWordChar(line[i])) {
          out += line[i++];
          continue;
        }
        qsizetype runEnd = i;
        while (runEnd < wordEnd && draft[std::size_t(lineStart + runEnd)] && isWordChar(line[runEnd])) ++runEnd;
        // Digits that start a word and end in '.' or ')' may be an ordered list's number.
        bool listNumber = i == wordStart && runEnd < wordEnd && (line[runEnd] == u'.' || line[runEnd] == u')');
        for (qsizetype k = i; listNumber && k < runEnd; ++k) listNumber = line[k].isDigit();
        if (listNumber) {
          out += line.mid(i, runEnd - i);
          i = runEnd;
          continue;
        }
        out += kBegin;
        out += line.mid(i, runEnd - i);
        out += kEnd;
        ++marked;
        i = runEnd;
      }
    }
    if (lineEnd < text.size()) out += u'\n';
    lineStart = lineEnd + 1;
  }
  return marked > 0 ? out : QString();
}

QString remove(QString text) {
  text.remove(kBegin);
  text.remove(kEnd);
  return text;
}

QList<int> fromUtf8Spans(const std::string& text, const std::vector<std::pair<std::size_t, std::size_t>>& spans) {
  QList<int> out;
  if (spans.empty()) return out;
  out.reserve(qsizetype(spans.size() * 2));
  std::size_t byte = 0;
  int unit = 0;
  auto advance = [&](std::size_t to) {
    to = std::min(to, text.size());
    for (; byte < to; ++byte) {
      const auto c = static_cast<unsigned char>(text[byte]);
      if ((c & 0xC0) != 0x80) unit += c >= 0xF0 ? 2 : 1;  // a lead byte: one character (4 bytes: a pair)
    }
    return unit;
  };
  for (const auto& [b, e] : spans) {
    if (b < byte || e <= b) continue;  // out of order or empty
    out << advance(b);
    out << advance(e);
  }
  return out;
}

void append(QList<int>& spans, const QList<int>& delta, int offset) {
  for (qsizetype i = 0; i + 1 < delta.size(); i += 2) {
    const int b = delta[i] + offset, e = delta[i + 1] + offset;
    if (b >= e) continue;
    if (!spans.isEmpty() && spans.last() == b)
      spans.last() = e;
    else
      spans << b << e;
  }
}

}  // namespace draftmarks
