#include "app/render/markdown_blocks.h"

#include <QRegularExpression>
#include <QSet>
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

QString withoutRemoteContent(const QString& prose) {
  if (!prose.contains(QLatin1Char('<')) && !prose.contains(QLatin1String("!["))) return prose;
  static const QChar kZeroWidthSpace(0x200B);
  // A tag that can load nothing: a formatting element's name alone, opening or closing.
  static const QRegularExpression plainTag(QStringLiteral("</?([A-Za-z][A-Za-z0-9]*)\\s*/?>"));
  static const QSet<QString> formatting{
      QStringLiteral("b"),     QStringLiteral("i"),     QStringLiteral("em"),    QStringLiteral("strong"),
      QStringLiteral("u"),     QStringLiteral("s"),     QStringLiteral("del"),   QStringLiteral("strike"),
      QStringLiteral("ins"),   QStringLiteral("sub"),   QStringLiteral("sup"),   QStringLiteral("small"),
      QStringLiteral("big"),   QStringLiteral("mark"),  QStringLiteral("code"),  QStringLiteral("kbd"),
      QStringLiteral("samp"),  QStringLiteral("var"),   QStringLiteral("tt"),    QStringLiteral("br"),
      QStringLiteral("hr"),    QStringLiteral("p"),     QStringLiteral("span"),  QStringLiteral("div"),
      QStringLiteral("pre"),   QStringLiteral("q"),     QStringLiteral("cite"),  QStringLiteral("blockquote"),
      QStringLiteral("ul"),    QStringLiteral("ol"),    QStringLiteral("li"),    QStringLiteral("dl"),
      QStringLiteral("dt"),    QStringLiteral("dd"),    QStringLiteral("h1"),    QStringLiteral("h2"),
      QStringLiteral("h3"),    QStringLiteral("h4"),    QStringLiteral("h5"),    QStringLiteral("h6"),
      QStringLiteral("table"), QStringLiteral("thead"), QStringLiteral("tbody"), QStringLiteral("tfoot"),
      QStringLiteral("tr"),    QStringLiteral("th"),    QStringLiteral("td"),    QStringLiteral("caption"),
      QStringLiteral("center")};
  // CommonMark's autolinks: <scheme:...> and <address@host>, no spaces or angle brackets inside.
  static const QRegularExpression autolink(
      QStringLiteral("<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\\s<>]*|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+)>"));
  QString out;
  out.reserve(prose.size() + 16);
  for (qsizetype i = 0; i < prose.size(); ++i) {
    const QChar c = prose[i];
    out += c;
    const QChar next = i + 1 < prose.size() ? prose[i + 1] : QChar();
    if (c == QLatin1Char('!') && next == QLatin1Char('[')) {
      out += kZeroWidthSpace;  // an image becomes a link: "![alt](url)" shows "!" and the link "alt"
    } else if (c == QLatin1Char('<') &&
               (next.isLetter() || next == QLatin1Char('/') || next == QLatin1Char('!') || next == QLatin1Char('?'))) {
      constexpr auto kHere = QRegularExpression::AnchorAtOffsetMatchOption;
      const QRegularExpressionMatch tag = plainTag.match(prose, i, QRegularExpression::NormalMatch, kHere);
      const bool harmless = (tag.hasMatch() && formatting.contains(tag.captured(1).toLower())) ||
                            autolink.match(prose, i, QRegularExpression::NormalMatch, kHere).hasMatch();
      if (!harmless) out += kZeroWidthSpace;  // not a tag any more: shown as the text it is
    }
  }
  return out;
}
