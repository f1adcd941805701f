// ChatStore: conversations and messages in one SQLite file through Qt SQL (QSQLITE). Opening
// and closing: chat_store_open.cpp.
//
// Every public method is a single statement (autocommit) or a BEGIN IMMEDIATE ... COMMIT
// transaction, so all writes are durable when the method returns. Every failing statement
// throws StoreError carrying SQLite's message and the database path.
#include "app/store/chat_store.h"

#include <QHash>
#include <QStringList>
#include "app/store/chat_store_sql.h"
#include "app/store/finish_reason_text.h"
#include "app/store/store_health.h"

#include <QSqlDatabase>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QVariant>
#include <QVariantList>

using namespace chatstore;

void ChatStore::setBusyTimeout(int ms) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  exec(db, m_path, QStringLiteral("PRAGMA busy_timeout = %1").arg(qMax(0, ms)));
}

void ChatStore::checkWritable() {
  if (m_readOnlyCause) throw *m_readOnlyCause;  // (BEGIN IMMEDIATE succeeds on a read-only connection)
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  WriteTransaction tx(db, m_path);  // rolls back: nothing is written
}

QString ChatStore::nextTimestamp() {
  QDateTime now = QDateTime::currentDateTimeUtc();
  // Strictly increasing per instance so "newest updated first" follows the order of operations
  // even within one millisecond (or when the wall clock steps back).
  if (m_lastStamp.isValid() && now <= m_lastStamp) now = m_lastStamp.addMSecs(1);
  m_lastStamp = now;
  return now.toString(Qt::ISODateWithMs);
}

qint64 ChatStore::createConversation(const QString& title) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = nextTimestamp();
  QSqlQuery q = exec(db, m_path,
                     QStringLiteral("INSERT INTO conversations(title, created_at, updated_at)"
                                    " VALUES(?, ?, ?)"),
                     {textValue(title), now, now});
  return q.lastInsertId().toLongLong();
}

void ChatStore::renameConversation(qint64 id, const QString& title) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  QSqlQuery q = exec(db, m_path, QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"),
                     {textValue(title), id});
  if (q.numRowsAffected() == 0)
    fail(m_path, QStringLiteral("cannot rename conversation %1").arg(id), QStringLiteral("no such conversation"));
}

void ChatStore::deleteConversation(qint64 id) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  // ON DELETE CASCADE (foreign_keys=ON) removes the messages in the same statement.
  exec(db, m_path, QStringLiteral("DELETE FROM conversations WHERE id = ?"), {id});
}

namespace {
const QString kConversationColumns = QStringLiteral(
    "id, title, created_at, updated_at, pinned, current_leaf_id, deleted_at");

ConversationRecord readConversation(const QSqlQuery& q) {
  ConversationRecord r;
  r.id = q.value(0).toLongLong();
  r.title = q.value(1).toString();
  r.createdAt = parseStamp(q.value(2));
  r.updatedAt = parseStamp(q.value(3));
  r.pinned = q.value(4).toInt() != 0;
  r.currentLeafId = q.value(5).toLongLong();
  r.deletedAt = parseStamp(q.value(6));
  return r;
}
}  // namespace

QList<ConversationRecord> ChatStore::conversations(int offset, int limit) const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  // Served by the partial index conversations_live (see chat_store_migrations.cpp): a page is a
  // short index range scan, whatever the number of conversations.
  const QString sql = QStringLiteral(
                          "SELECT %1 FROM conversations WHERE deleted_at IS NULL"
                          " ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ? OFFSET ?")
                          .arg(kConversationColumns);
  QSqlQuery q = exec(db, m_path, sql, {limit < 0 ? -1 : limit, qMax(0, offset)});
  QList<ConversationRecord> out;
  while (nextRow(q, m_path, sql)) out.append(readConversation(q));
  return out;
}

int ChatStore::conversationCount() const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  return scalar(db, m_path, QStringLiteral("SELECT count(*) FROM conversations WHERE deleted_at IS NULL")).toInt();
}

ConversationRecord ChatStore::conversation(qint64 id) const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString sql = QStringLiteral("SELECT %1 FROM conversations WHERE id = ?").arg(kConversationColumns);
  QSqlQuery q = exec(db, m_path, sql, {id});
  if (!nextRow(q, m_path, sql))
    fail(m_path, QStringLiteral("cannot read conversation %1").arg(id), QStringLiteral("no such conversation"));
  return readConversation(q);
}

void ChatStore::setPinned(qint64 id, bool pinned) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  QSqlQuery q = exec(db, m_path, QStringLiteral("UPDATE conversations SET pinned = ? WHERE id = ?"),
                     {pinned ? 1 : 0, id});
  if (q.numRowsAffected() == 0)
    fail(m_path, QStringLiteral("cannot pin conversation %1").arg(id), QStringLiteral("no such conversation"));
}

void ChatStore::softDeleteConversation(qint64 id) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  exec(db, m_path, QStringLiteral("UPDATE conversations SET deleted_at = ? WHERE id = ?"), {nextTimestamp(), id});
}

void ChatStore::restoreConversation(qint64 id) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  exec(db, m_path, QStringLiteral("UPDATE conversations SET deleted_at = NULL WHERE id = ?"), {id});
}

int ChatStore::purgeDeletedConversations(const QDateTime& cutoff) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  if (!cutoff.isValid()) {
    QSqlQuery q = exec(db, m_path, QStringLiteral("DELETE FROM conversations WHERE deleted_at IS NOT NULL"));
    return q.numRowsAffected();
  }
  QSqlQuery q = exec(db, m_path,
                     QStringLiteral("DELETE FROM conversations WHERE deleted_at IS NOT NULL"
                                    " AND deleted_at <= ?"),
                     {cutoff.toUTC().toString(Qt::ISODateWithMs)});
  return q.numRowsAffected();
}

qint64 ChatStore::addMessage(qint64 conversationId, MessageRole role, const QString& text,
                             std::optional<pagedchat::FinishReason> finishReason, qint64 parentId,
                             const QString& backend, const QString& fields, const QList<ImageAttachment>& attachments) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = nextTimestamp();
  WriteTransaction tx(db, m_path);
  if (parentId == kAppendToBranch) {
    const QString sql = QStringLiteral("SELECT current_leaf_id FROM conversations WHERE id = ?");
    QSqlQuery q = exec(db, m_path, sql, {conversationId});
    parentId = nextRow(q, m_path, sql) ? q.value(0).toLongLong() : 0;
  } else if (parentId != 0) {
    const QVariant owner = scalar(
        db, m_path, QStringLiteral("SELECT (SELECT conversation_id FROM messages WHERE id = ?)"), {parentId});
    if (owner.isNull() || owner.toLongLong() != conversationId)
      fail(m_path, QStringLiteral("cannot add a message to conversation %1").arg(conversationId),
           QStringLiteral("parent message %1 is not in that conversation").arg(parentId));
  }
  QSqlQuery q = exec(db, m_path,
                     QStringLiteral("INSERT INTO messages(conversation_id, parent_id, role, text,"
                                    " finish_reason, created_at, backend, fields) VALUES(?, ?, ?, ?, ?, ?, ?, ?)"),
                     {conversationId, idOrNull(parentId), messageRoleText(role), textValue(text),
                      textValue(finishReasonText(finishReason)), now, textValue(backend), textValue(fields)});
  const qint64 id = q.lastInsertId().toLongLong();
  q.finish();
  for (int i = 0; i < attachments.size(); ++i) {
    const ImageAttachment& a = attachments[i];
    exec(
        db, m_path,
        QStringLiteral("INSERT INTO attachments(message_id, idx, mime, bytes, width, height) VALUES(?, ?, ?, ?, ?, ?)"),
        {id, i, a.mime, a.bytes, a.width, a.height});
  }
  exec(db, m_path, QStringLiteral("UPDATE conversations SET updated_at = ?, current_leaf_id = ? WHERE id = ?"),
       {now, id, conversationId});
  tx.commit();
  return id;
}

void ChatStore::updateMessage(qint64 messageId, const QString& text,
                              std::optional<pagedchat::FinishReason> finishReason) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = nextTimestamp();
  WriteTransaction tx(db, m_path);
  QSqlQuery q = exec(db, m_path, QStringLiteral("UPDATE messages SET text = ?, finish_reason = ? WHERE id = ?"),
                     {textValue(text), textValue(finishReasonText(finishReason)), messageId});
  if (q.numRowsAffected() == 0)
    fail(m_path, QStringLiteral("cannot update message %1").arg(messageId), QStringLiteral("no such message"));
  q.finish();
  exec(db, m_path,
       QStringLiteral("UPDATE conversations SET updated_at = ?"
                      " WHERE id = (SELECT conversation_id FROM messages WHERE id = ?)"),
       {now, messageId});
  tx.commit();
}

void ChatStore::setMessageFields(qint64 messageId, const QString& fields) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  WriteTransaction tx(db, m_path);
  QSqlQuery q = exec(db, m_path, QStringLiteral("UPDATE messages SET fields = ? WHERE id = ?"),
                     {textValue(fields), messageId});
  if (q.numRowsAffected() == 0)
    fail(m_path, QStringLiteral("cannot update message %1").arg(messageId), QStringLiteral("no such message"));
  q.finish();
  tx.commit();
}

void ChatStore::deleteMessage(qint64 messageId) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  WriteTransaction tx(db, m_path);
  const QString sql = QStringLiteral("SELECT conversation_id, parent_id FROM messages WHERE id = ?");
  QSqlQuery q = exec(db, m_path, sql, {messageId});
  if (!nextRow(q, m_path, sql)) return;  // unknown: nothing to do (tx rolls back)
  const qint64 conversationId = q.value(0).toLongLong();
  const qint64 parentId = q.value(1).toLongLong();
  q.finish();
  // Is the current leaf at or below the message? Then the shown branch ends at its parent.
  const bool leafGoes = scalar(db, m_path,
                               QStringLiteral("WITH RECURSIVE up(id, parent_id) AS ("
                                              " SELECT m.id, m.parent_id FROM messages m, conversations c"
                                              "  WHERE c.id = ? AND m.id = c.current_leaf_id"
                                              " UNION ALL SELECT m.id, m.parent_id FROM messages m JOIN up"
                                              "  ON m.id = up.parent_id)"
                                              " SELECT count(*) FROM up WHERE id = ?"),
                               {conversationId, messageId})
                            .toInt() > 0;
  // parent_id ... ON DELETE CASCADE removes the messages below it too.
  exec(db, m_path, QStringLiteral("DELETE FROM messages WHERE id = ?"), {messageId});
  if (leafGoes)
    exec(db, m_path, QStringLiteral("UPDATE conversations SET current_leaf_id = ? WHERE id = ?"),
         {idOrNull(parentId), conversationId});
  tx.commit();
}

QList<MessageRecord> ChatStore::readMessages(const QString& sql, const QVariantList& binds) const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  QSqlQuery q = exec(db, m_path, sql, binds);
  QList<MessageRecord> out;
  while (nextRow(q, m_path, sql)) {
    MessageRecord r;
    r.id = q.value(0).toLongLong();
    r.conversationId = q.value(1).toLongLong();
    r.parentId = q.value(2).toLongLong();
    r.role = storedRole(q.value(3), m_path);
    r.text = q.value(4).toString();
    r.finishReason = parseFinishReasonText(q.value(5).toString());
    r.createdAt = parseStamp(q.value(6));
    r.backend = q.value(7).toString();
    r.fields = q.value(8).toString();
    if (q.record().count() > 10) {
      r.siblingIndex = q.value(9).toInt();
      r.siblingCount = q.value(10).toInt();
    }
    out.append(r);
  }
  q.finish();
  if (out.isEmpty()) return out;
  // Their pictures (schema 5), one query for the lot.
  QHash<qint64, int> row;
  QStringList ids;
  for (int i = 0; i < out.size(); ++i) {
    row.insert(out[i].id, i);
    ids << QString::number(out[i].id);
  }
  const QString asql = QStringLiteral(
                           "SELECT message_id, mime, bytes, width, height FROM attachments"
                           " WHERE message_id IN (%1) ORDER BY message_id, idx")
                           .arg(ids.join(QLatin1Char(',')));
  QSqlQuery a = exec(db, m_path, asql);
  while (nextRow(a, m_path, asql)) {
    const auto it = row.constFind(a.value(0).toLongLong());
    if (it == row.constEnd()) continue;
    out[*it].attachments.append(
        {a.value(1).toString(), a.value(2).toByteArray(), a.value(3).toInt(), a.value(4).toInt()});
  }
  return out;
}

QList<MessageRecord> ChatStore::messages(qint64 conversationId) const {
  return readMessages(QStringLiteral("SELECT %1 FROM messages m WHERE m.conversation_id = ?"
                                     " ORDER BY m.id")
                          .arg(messageColumns()),
                      {conversationId});
}
