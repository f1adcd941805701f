// Splits a chat message's Markdown into prose and fenced code blocks for rendering.
#pragma once

#include <QList>
#include <QString>

/// One piece of a message: Markdown prose (rendered by Qt's GitHub-dialect Markdown) or the
/// content of a fenced code block (shown verbatim in a monospace box with a copy button).
struct MarkdownBlock {
  enum class Kind { Prose, Code };
  Kind kind = Kind::Prose;
  QString text;        ///< prose Markdown, or the code without its fences (indent removed)
  QString language;    ///< a code block's info string's first word ("cpp", "python"), else empty
  bool closed = true;  ///< false for a code block whose closing fence has not arrived (streaming)

  bool operator==(const MarkdownBlock&) const = default;
};

/// Splits `text` at fenced code blocks (CommonMark rules: a line of 3+ backticks or tildes,
/// indented at most 3 spaces, opens a fence; only a line of the same character at least as long,
/// with nothing else on it, closes it, so ```` can hold ``` lines; a backtick fence's info
/// string may not contain backticks; an unclosed fence runs to the end). Prose between code
/// blocks is further cut at blank lines into chunks of about `maxProseChars` characters so that
/// a long streaming answer only re-lays out its last chunk. Empty prose is left out.
QList<MarkdownBlock> splitMarkdownBlocks(const QString& text, int maxProseChars = 2000);

/// `prose` (Markdown from a model or a remote endpoint) made unable to load anything when Qt's
/// Markdown renderer shows it: an image (Markdown's `![alt](url)` or `![alt][ref]`) becomes a
/// link to it, shown as its alt text (a zero-width space between '!' and '['), and raw HTML
/// becomes text (a zero-width space after its '<'), since an HTML tag can name an image, a
/// background or a style sheet to fetch. Kept as they are: autolinks (`<https://...>`,
/// `<someone@example.org>`) and attribute-free formatting tags (`<br>`, `<b>`, `</sub>`, ...),
/// which load nothing. What is shown reads the same: the inserted spaces have no width.
QString withoutRemoteContent(const QString& prose);
