// ChatStore: full-text search over message text (the FTS5 table messages_fts, see
// chat_store_migrations.cpp).
#include <QRegularExpression>

#include "app/store/chat_store.h"
#include "app/store/chat_store_sql.h"

using namespace chatstore;

namespace {
// Marks snippet() puts around matches; control characters never typed into a chat.
const QChar kMatchStart(0x02);
const QChar kMatchEnd(0x03);
constexpr int kSnippetTokens = 12;

/// HTML-escapes `snippet` and turns the match marks into <b>...</b>.
QString snippetToHtml(const QString& snippet) {
  QString html = snippet.toHtmlEscaped();
  html.replace(kMatchStart, QLatin1String("<b>"));
  html.replace(kMatchEnd, QLatin1String("</b>"));
  html.replace(QLatin1Char('\n'), QLatin1Char(' '));
  return html;
}
}  // namespace

QString ChatStore::ftsQuery(const QString& text) {
  // Each whitespace-separated word becomes a quoted phrase (its quotes doubled, so no character
  // is FTS5 syntax) with a prefix star; words without a letter or digit (a lone quote, "-",
  // "*") match nothing and are dropped. The terms are ANDed.
  static const QRegularExpression space(QStringLiteral("\\s+"));
  QStringList terms;
  for (const QString& word : text.split(space, Qt::SkipEmptyParts)) {
    bool hasWordChar = false;
    for (const QChar c : word) hasWordChar = hasWordChar || c.isLetterOrNumber();
    if (!hasWordChar) continue;
    QString quoted = word;
    quoted.replace(QLatin1Char('"'), QLatin1String("\"\""));
    terms << QLatin1Char('"') + quoted + QLatin1String("\"*");
  }
  return terms.join(QLatin1Char(' '));
}

QList<SearchHit> ChatStore::search(const QString& text, int limit) const {
  const QString match = ftsQuery(text);
  if (match.isEmpty() || limit <= 0) return {};
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  // Newest first: FTS5 walks its rowid (= message id) index backwards and stops at the limit,
  // so a common word costs no more than a rare one.
  const QString sql = QStringLiteral(
                          "SELECT f.rowid, m.conversation_id, c.title, m.role,"
                          " snippet(messages_fts, 0, char(2), char(3), '…', %1)"
                          " FROM messages_fts f JOIN messages m ON m.id = f.rowid"
                          " JOIN conversations c ON c.id = m.conversation_id"
                          " WHERE messages_fts MATCH ? AND c.deleted_at IS NULL"
                          " ORDER BY f.rowid DESC LIMIT ?")
                          .arg(kSnippetTokens);
  QSqlQuery q = exec(db, m_path, sql, {match, limit});
  QList<SearchHit> out;
  while (nextRow(q, m_path, sql)) {
    SearchHit h;
    h.messageId = q.value(0).toLongLong();
    h.conversationId = q.value(1).toLongLong();
    h.conversationTitle = q.value(2).toString();
    h.role = storedRole(q.value(3), m_path);
    h.snippetHtml = snippetToHtml(q.value(4).toString());
    out.append(h);
  }
  return out;
}
