// ChatStore: a conversation exported to Markdown (for reading) and JSON (for import), and the
// JSON import.
#include <QHash>
#include <QSet>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include "app/chat_store.h"
#include "app/chat_store_sql.h"

using namespace chatstore;

namespace {

QString stamp(const QDateTime& t) { return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString(); }

[[noreturn]] void badImport(const QString& why) {
  throw StoreError(QStringLiteral("Cannot import: %1").arg(why).toStdString());
}

/// A required string member of `o` (`where` names the object in messages).
QString requireString(const QJsonObject& o, const QString& key, const QString& where) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined()) badImport(QStringLiteral("%1 has no \"%2\" field").arg(where, key));
  if (!v.isString()) badImport(QStringLiteral("%1: \"%2\" is not a string").arg(where, key));
  return v.toString();
}

/// An optional integer id member (null or missing = 0).
qint64 optionalId(const QJsonObject& o, const QString& key, const QString& where) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined() || v.isNull()) return 0;
  if (!v.isDouble() || v.toDouble() != static_cast<double>(v.toInteger()) || v.toInteger() <= 0)
    badImport(QStringLiteral("%1: \"%2\" is not a positive whole number").arg(where, key));
  return v.toInteger();
}

QDateTime optionalStamp(const QJsonObject& o, const QString& key) {
  const QDateTime t = QDateTime::fromString(o.value(key).toString(), Qt::ISODateWithMs);
  return t.isValid() ? t.toUTC() : QDateTime();
}

}  // namespace

QString ChatStore::exportMarkdown(qint64 conversationId) const {
  const ConversationRecord c = conversation(conversationId);
  QString md = QStringLiteral("# %1\n").arg(c.title);
  for (const MessageRecord& m : branch(conversationId)) {
    const QString heading = m.role == QLatin1String("user")        ? tr("User")
                            : m.role == QLatin1String("assistant") ? tr("Assistant")
                                                                   : tr("System");
    md += QStringLiteral("\n## %1\n\n%2\n").arg(heading, m.text);
    if (m.role == QLatin1String("assistant") &&
        (m.finishReason == QLatin1String("length") || m.finishReason == QLatin1String("abort")))
      md += QStringLiteral("\n*%1*\n").arg(tr("(cut off)"));
  }
  return md;
}

QByteArray ChatStore::exportJson(qint64 conversationId) const {
  const ConversationRecord c = conversation(conversationId);
  QJsonArray messages;
  for (const MessageRecord& m : this->messages(conversationId)) {  // by id: parents first
    QJsonObject o;
    o.insert(QStringLiteral("id"), m.id);
    o.insert(QStringLiteral("parentId"), m.parentId == 0 ? QJsonValue() : QJsonValue(m.parentId));
    o.insert(QStringLiteral("role"), m.role);
    o.insert(QStringLiteral("text"), m.text);
    o.insert(QStringLiteral("finishReason"), m.finishReason);
    o.insert(QStringLiteral("createdAt"), stamp(m.createdAt));
    messages.append(o);
  }
  QJsonObject root;
  root.insert(QStringLiteral("format"), QString::fromLatin1(kJsonFormat));
  root.insert(QStringLiteral("version"), kJsonFormatVersion);
  root.insert(QStringLiteral("title"), c.title);
  root.insert(QStringLiteral("createdAt"), stamp(c.createdAt));
  root.insert(QStringLiteral("updatedAt"), stamp(c.updatedAt));
  root.insert(QStringLiteral("pinned"), c.pinned);
  root.insert(QStringLiteral("currentLeafId"),
              c.currentLeafId == 0 ? QJsonValue() : QJsonValue(c.currentLeafId));
  root.insert(QStringLiteral("messages"), messages);
  return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

qint64 ChatStore::importJson(const QByteArray& json) {
  // Everything is checked before anything is written.
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
  if (parseError.error != QJsonParseError::NoError)
    badImport(QStringLiteral("the file is not valid JSON (%1 at byte %2)")
                  .arg(parseError.errorString())
                  .arg(parseError.offset));
  if (!doc.isObject()) badImport(QStringLiteral("the file is not a PagedChat conversation (no JSON object)"));
  const QJsonObject root = doc.object();
  const QString top = QStringLiteral("the conversation");
  const QJsonValue format = root.value(QStringLiteral("format"));
  if (format.toString() != QLatin1String(kJsonFormat))
    badImport(QStringLiteral("the file is not a PagedChat conversation (format is %1, expected \"%2\")")
                  .arg(format.isUndefined() ? QStringLiteral("missing")
                                            : QStringLiteral("\"%1\"").arg(format.toVariant().toString()),
                       QLatin1String(kJsonFormat)));
  const QJsonValue version = root.value(QStringLiteral("version"));
  if (!version.isDouble() || version.toInteger() != kJsonFormatVersion)
    badImport(QStringLiteral("unsupported format version %1 (this PagedChat reads version %2)")
                  .arg(version.isUndefined() ? QStringLiteral("(missing)") : version.toVariant().toString())
                  .arg(kJsonFormatVersion));
  const QString title = requireString(root, QStringLiteral("title"), top);
  const QJsonValue list = root.value(QStringLiteral("messages"));
  if (!list.isArray()) badImport(QStringLiteral("the conversation has no \"messages\" list"));

  struct Row {
    qint64 fileId, fileParent;
    QString role, text, finishReason;
    QDateTime createdAt;
  };
  QList<Row> rows;
  QSet<qint64> seen;
  const QJsonArray array = list.toArray();
  for (qsizetype i = 0; i < array.size(); ++i) {
    const QString where = QStringLiteral("message %1").arg(i + 1);
    if (!array.at(i).isObject()) badImport(QStringLiteral("%1 is not an object").arg(where));
    const QJsonObject o = array.at(i).toObject();
    Row r;
    r.fileId = optionalId(o, QStringLiteral("id"), where);
    if (r.fileId == 0) badImport(QStringLiteral("%1 has no \"id\" field").arg(where));
    if (seen.contains(r.fileId)) badImport(QStringLiteral("%1: id %2 is used twice").arg(where).arg(r.fileId));
    r.fileParent = optionalId(o, QStringLiteral("parentId"), where);
    if (r.fileParent != 0 && !seen.contains(r.fileParent))
      badImport(QStringLiteral("%1: parent %2 is not an earlier message").arg(where).arg(r.fileParent));
    r.role = requireString(o, QStringLiteral("role"), where);
    if (r.role != QLatin1String("user") && r.role != QLatin1String("assistant") &&
        r.role != QLatin1String("system"))
      badImport(QStringLiteral("%1: unknown role \"%2\"").arg(where, r.role));
    r.text = requireString(o, QStringLiteral("text"), where);
    r.finishReason = o.value(QStringLiteral("finishReason")).toString();
    r.createdAt = optionalStamp(o, QStringLiteral("createdAt"));
    seen.insert(r.fileId);
    rows.append(r);
  }
  const qint64 fileLeaf = optionalId(root, QStringLiteral("currentLeafId"), top);
  if (fileLeaf != 0 && !seen.contains(fileLeaf))
    badImport(QStringLiteral("\"currentLeafId\" %1 is not one of the messages").arg(fileLeaf));

  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = nextTimestamp();
  const QDateTime created = optionalStamp(root, QStringLiteral("createdAt"));
  const QDateTime updated = optionalStamp(root, QStringLiteral("updatedAt"));
  WriteTransaction tx(db, m_path);
  QSqlQuery c = exec(db, m_path,
                     QStringLiteral("INSERT INTO conversations(title, created_at, updated_at, pinned)"
                                    " VALUES(?, ?, ?, ?)"),
                     {textValue(title), created.isValid() ? stamp(created) : now,
                      updated.isValid() ? stamp(updated) : now,
                      root.value(QStringLiteral("pinned")).toBool() ? 1 : 0});
  const qint64 conversationId = c.lastInsertId().toLongLong();
  c.finish();
  QHash<qint64, qint64> newIds;  // file id -> store id
  QSqlQuery insert(db);
  const QString sql = QStringLiteral(
      "INSERT INTO messages(conversation_id, parent_id, role, text, finish_reason, created_at)"
      " VALUES(?, ?, ?, ?, ?, ?)");
  if (!insert.prepare(sql)) failQuery(m_path, sql, insert.lastError());
  for (const Row& r : rows) {
    insert.addBindValue(conversationId);
    insert.addBindValue(idOrNull(newIds.value(r.fileParent)));
    insert.addBindValue(r.role);
    insert.addBindValue(textValue(r.text));
    insert.addBindValue(textValue(r.finishReason));
    insert.addBindValue(r.createdAt.isValid() ? stamp(r.createdAt) : now);
    if (!insert.exec()) failQuery(m_path, sql, insert.lastError());
    newIds.insert(r.fileId, insert.lastInsertId().toLongLong());
  }
  insert.finish();
  // No leaf given: the newest message (the whole conversation, when it is a list).
  const qint64 leaf = fileLeaf != 0 ? newIds.value(fileLeaf)
                                    : (rows.isEmpty() ? 0 : newIds.value(rows.constLast().fileId));
  exec(db, m_path, QStringLiteral("UPDATE conversations SET current_leaf_id = ? WHERE id = ?"),
       {idOrNull(leaf), conversationId});
  tx.commit();
  return conversationId;
}
