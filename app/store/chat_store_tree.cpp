// ChatStore: the message tree. Each message has a parent (0 = a root); the messages sharing a
// parent are siblings (an edited question, a regenerated answer). A conversation shows one
// branch, root -> current_leaf_id.
#include "app/store/chat_store.h"
#include "app/store/chat_store_sql.h"

using namespace chatstore;

namespace {
/// Sibling position and count of message `m` (columns 8 and 9 of readMessages()'s rows).
const QString kSiblingColumns = QStringLiteral(
    "(SELECT count(*) FROM messages s WHERE s.conversation_id = m.conversation_id"
    "  AND s.parent_id IS m.parent_id AND s.id < m.id),"
    " (SELECT count(*) FROM messages s WHERE s.conversation_id = m.conversation_id"
    "  AND s.parent_id IS m.parent_id)");
}  // namespace

QList<MessageRecord> ChatStore::pathTo(qint64 leafId) const {
  if (leafId == 0) return {};
  // Walk up from the leaf (one index lookup per message), then order root first.
  return readMessages(QStringLiteral("WITH RECURSIVE up(id, depth) AS ("
                                     " SELECT ?, 0"
                                     " UNION ALL SELECT m.parent_id, up.depth + 1 FROM messages m JOIN up"
                                     "  ON m.id = up.id WHERE m.parent_id IS NOT NULL)"
                                     " SELECT %1, %2 FROM up JOIN messages m ON m.id = up.id"
                                     " ORDER BY up.depth DESC")
                          .arg(messageColumns(), kSiblingColumns),
                      {leafId});
}

QList<MessageRecord> ChatStore::branch(qint64 conversationId) const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString sql = QStringLiteral("SELECT current_leaf_id FROM conversations WHERE id = ?");
  QSqlQuery q = exec(db, m_path, sql, {conversationId});
  if (!nextRow(q, m_path, sql)) return {};
  const qint64 leaf = q.value(0).toLongLong();
  q.finish();
  return pathTo(leaf);
}

QList<MessageRecord> ChatStore::siblings(qint64 messageId) const {
  return readMessages(QStringLiteral("SELECT %1 FROM messages m JOIN messages me ON me.id = ?"
                                     " WHERE m.conversation_id = me.conversation_id AND m.parent_id IS me.parent_id"
                                     " ORDER BY m.id")
                          .arg(messageColumns()),
                      {messageId});
}

qint64 ChatStore::newestLeafUnder(qint64 messageId) const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  return scalar(db, m_path,
                QStringLiteral("WITH RECURSIVE down(id, depth) AS (SELECT ?, 0"
                               " UNION ALL SELECT (SELECT max(c.id) FROM messages c"
                               "  WHERE c.parent_id = down.id), down.depth + 1"
                               "  FROM down WHERE down.id IS NOT NULL)"
                               " SELECT id FROM down WHERE id IS NOT NULL ORDER BY depth DESC LIMIT 1"),
                {messageId})
      .toLongLong();
}

void ChatStore::setCurrentLeaf(qint64 conversationId, qint64 leafId) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  if (leafId != 0) {
    const QVariant owner = scalar(
        db, m_path, QStringLiteral("SELECT (SELECT conversation_id FROM messages WHERE id = ?)"), {leafId});
    if (owner.isNull() || owner.toLongLong() != conversationId)
      fail(m_path, QStringLiteral("cannot show message %1").arg(leafId),
           QStringLiteral("it is not in conversation %1").arg(conversationId));
  }
  exec(db, m_path, QStringLiteral("UPDATE conversations SET current_leaf_id = ? WHERE id = ?"),
       {idOrNull(leafId), conversationId});
}
