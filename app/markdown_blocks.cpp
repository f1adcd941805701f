#include "app/markdown_blocks.h"

#include <QStringList>
#include <QStringView>

#include <optional>

namespace {

struct Fence {
  QChar ch;
  int length = 0;
  int indent = 0;
  QString language;
};

/// Leading spaces of `line` (tabs count as one column each here: fences rarely use them).
int indentOf(QStringView line) {
  int n = 0;
  while (n < line.size() && line[n] == QLatin1Char(' ')) ++n;
  return n;
}

/// The fence `line` opens, if it opens one.
std::optional<Fence> openingFence(QStringView line) {
  const int indent = indentOf(line);
  if (indent > 3 || indent >= line.size()) return std::nullopt;
  const QChar ch = line[indent];
  if (ch != QLatin1Char('`') && ch != QLatin1Char('~')) return std::nullopt;
  int n = indent;
  while (n < line.size() && line[n] == ch) ++n;
  const int length = n - indent;
  if (length < 3) return std::nullopt;
  const QStringView info = line.mid(n).trimmed();
  if (ch == QLatin1Char('`') && info.contains(QLatin1Char('`'))) return std::nullopt;
  Fence f{ch, length, indent, QString()};
  if (!info.isEmpty()) {
    qsizetype end = 0;
    while (end < info.size() && !info[end].isSpace()) ++end;
    f.language = info.left(end).toString();
  }
  return f;
}

bool closesFence(QStringView line, const Fence& open) {
  const int indent = indentOf(line);
  if (indent > 3) return false;
  int n = indent;
  while (n < line.size() && line[n] == open.ch) ++n;
  return n - indent >= open.length && line.mid(n).trimmed().isEmpty();
}

/// Removes up to `indent` leading spaces (a fenced block's lines lose the fence's indentation).
QStringView dedent(QStringView line, int indent) {
  int n = 0;
  while (n < indent && n < line.size() && line[n] == QLatin1Char(' ')) ++n;
  return line.mid(n);
}

/// Appends `prose` (lines joined) to `out`, cut at blank lines into chunks of ~maxChars.
void addProse(QList<MarkdownBlock>& out, const QList<QStringView>& lines, int maxChars) {
  QString chunk;
  bool previousBlank = false;
  for (QStringView line : lines) {
    const bool blank = line.trimmed().isEmpty();
    // Cut before a non-indented line that follows a blank line: a new paragraph, not a list
    // item's continuation or indented code.
    if (!blank && previousBlank && chunk.size() >= maxChars && indentOf(line) == 0) {
      while (chunk.endsWith(QLatin1Char('\n'))) chunk.chop(1);
      if (!chunk.trimmed().isEmpty()) out.append({MarkdownBlock::Kind::Prose, chunk, {}, true});
      chunk.clear();
    }
    if (!chunk.isEmpty() || !blank) {
      if (!chunk.isEmpty()) chunk += QLatin1Char('\n');
      chunk += line;
    }
    previousBlank = blank;
  }
  while (chunk.endsWith(QLatin1Char('\n'))) chunk.chop(1);
  if (!chunk.trimmed().isEmpty()) out.append({MarkdownBlock::Kind::Prose, chunk, {}, true});
}

}  // namespace

QList<MarkdownBlock> splitMarkdownBlocks(const QString& text, int maxProseChars) {
  QList<MarkdownBlock> blocks;
  const QList<QStringView> lines = QStringView(text).split(QLatin1Char('\n'));
  QList<QStringView> prose;
  qsizetype i = 0;
  while (i < lines.size()) {
    QStringView line = lines[i];
    if (line.endsWith(QLatin1Char('\r'))) line.chop(1);
    const std::optional<Fence> fence = openingFence(line);
    if (!fence) {
      prose.append(line);
      ++i;
      continue;
    }
    addProse(blocks, prose, maxProseChars);
    prose.clear();
    MarkdownBlock code{MarkdownBlock::Kind::Code, QString(), fence->language, false};
    QStringList body;
    for (++i; i < lines.size(); ++i) {
      QStringView l = lines[i];
      if (l.endsWith(QLatin1Char('\r'))) l.chop(1);
      if (closesFence(l, *fence)) {
        code.closed = true;
        ++i;
        break;
      }
      body.append(dedent(l, fence->indent).toString());
    }
    code.text = body.join(QLatin1Char('\n'));
    blocks.append(code);
  }
  addProse(blocks, prose, maxProseChars);
  return blocks;
}
