// Marks for accepted draft text (speculative decoding) in a message's display copy.
#pragma once

#include <QChar>
#include <QList>
#include <QString>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

/// A reply's text with the accepted draft tokens' text bracketed by two private-use characters,
/// for display: the bubble tints what lies between them (MarkdownStyler) and removes them. The
/// stored message never holds them. The marks go around runs of letters, digits and combining
/// marks only, and only where Markdown reads the text the same with them in (they count as
/// letters to a Markdown parser): never inside a word that is or may be a link, an address or
/// markup (one holding '<', '>', '&', '@', "://", starting "www.", or '[' / ']' when the text
/// has reference definitions), on a code fence's line or a link reference definition's, or around digits that start a
/// line (an ordered list's number). Spaces and punctuation between tinted words stay as they are.
namespace draftmarks {

inline constexpr QChar kBegin = QChar(0xF8F0);  ///< private use: opens a draft run
inline constexpr QChar kEnd = QChar(0xF8F1);    ///< private use: closes it

/// `text` with marks around the letter runs inside `spans` (flattened [begin, end) pairs of
/// UTF-16 offsets into `text`, in order; out-of-range parts are ignored). Returns an empty
/// string when nothing is marked, or when `text` already holds a mark character (nothing could
/// tell the model's own from ours).
QString insert(const QString& text, const QList<int>& spans);

/// `text` without mark characters.
QString remove(QString text);

/// Byte ranges of the UTF-8 `text` (CompletionOutput::draft_spans, in order) as the flattened
/// [begin, end) UTF-16 offsets of the same characters in QString::fromStdString(text) (valid
/// UTF-8 assumed, as the engine's text is).
QList<int> fromUtf8Spans(const std::string& text, const std::vector<std::pair<std::size_t, std::size_t>>& spans);

/// Appends `delta`'s spans (relative to its start) shifted by `offset` to `spans`, joining a
/// span that starts where the previous one ends.
void append(QList<int>& spans, const QList<int>& delta, int offset);

}  // namespace draftmarks
