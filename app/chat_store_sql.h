// Shared SQL helpers of the ChatStore implementation files (not part of the store's API).
#pragma once

#include <QDateTime>
#include <QDir>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QVariant>
#include <QVariantList>

#include "app/chat_store.h"

namespace chatstore {

/// The text of a StoreError: "ChatStore: <what>: <detail> (database: <path>)", or
/// "ChatStore: <what> (database: <path>)" when the detail is empty (no dangling colon).
inline QString failMessage(const QString& path, const QString& what, const QString& detail) {
  const QString d = detail.trimmed();
  const QString file = QDir::toNativeSeparators(path);
  return d.isEmpty() ? QStringLiteral("ChatStore: %1 (database: %2)").arg(what.trimmed(), file)
                     : QStringLiteral("ChatStore: %1: %2 (database: %3)").arg(what.trimmed(), d, file);
}

/// Throws StoreError with failMessage(path, what, detail).
[[noreturn]] inline void fail(const QString& path, const QString& what, const QString& detail) {
  throw StoreError(failMessage(path, what, detail).toStdString());
}

[[noreturn]] inline void failQuery(const QString& path, const QString& sql, const QSqlError& error) {
  fail(path, QStringLiteral("\"%1\" failed").arg(sql.simplified()), error.text());
}

/// Prepares, binds and runs one statement; throws StoreError when any step fails.
inline QSqlQuery exec(const QSqlDatabase& db, const QString& path, const QString& sql,
                      const QVariantList& binds = {}) {
  QSqlQuery q(db);
  q.setForwardOnly(true);
  if (!q.prepare(sql)) failQuery(path, sql, q.lastError());
  for (const QVariant& v : binds) q.addBindValue(v);
  if (!q.exec()) failQuery(path, sql, q.lastError());
  return q;
}

/// Runs a statement that yields one row and returns its first column.
inline QVariant scalar(const QSqlDatabase& db, const QString& path, const QString& sql,
                       const QVariantList& binds = {}) {
  QSqlQuery q = exec(db, path, sql, binds);
  if (!q.next()) {
    if (q.lastError().isValid()) failQuery(path, sql, q.lastError());
    fail(path, QStringLiteral("\"%1\" returned no row").arg(sql), QString());
  }
  return q.value(0);
}

/// Reads the next row, distinguishing "no more rows" from a read error (e.g. corruption).
inline bool nextRow(QSqlQuery& q, const QString& path, const QString& sql) {
  if (q.next()) return true;
  if (q.lastError().isValid()) failQuery(path, sql, q.lastError());
  return false;
}

/// BEGIN IMMEDIATE on construction (takes the write lock up front, so a locked database fails
/// here rather than half-way through), ROLLBACK on destruction unless commit() succeeded.
class WriteTransaction {
 public:
  WriteTransaction(const QSqlDatabase& db, const QString& path) : m_db(db), m_path(path) {
    exec(m_db, m_path, QStringLiteral("BEGIN IMMEDIATE"));
  }
  ~WriteTransaction() {
    if (!m_done) {
      QSqlQuery q(m_db);
      q.exec(QStringLiteral("ROLLBACK"));  // best effort; never throws from a destructor
    }
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;

  void commit() {
    exec(m_db, m_path, QStringLiteral("COMMIT"));
    m_done = true;
  }

 private:
  QSqlDatabase m_db;
  QString m_path;
  bool m_done = false;
};

inline QDateTime parseStamp(const QVariant& v) {
  if (v.isNull()) return {};
  QDateTime t = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
  return t.isValid() ? t.toUTC() : QDateTime();
}

/// Binds a possibly-null QString as '' rather than SQL NULL (the text columns are NOT NULL).
inline QVariant textValue(const QString& s) {
  return s.isNull() ? QVariant(QString(QLatin1String(""))) : QVariant(s);
}

/// Binds an id, 0 meaning SQL NULL (no parent / no leaf).
inline QVariant idOrNull(qint64 id) { return id == 0 ? QVariant(QMetaType::fromType<qint64>()) : QVariant(id); }

/// The open connection `name`; throws "the store is closed" when there is none.
inline QSqlDatabase openConnection(const QString& name, const QString& path) {
  if (name.isEmpty()) fail(path, QStringLiteral("the store is closed"), QString());
  QSqlDatabase db = QSqlDatabase::database(name, false);
  if (!db.isOpen()) fail(path, QStringLiteral("the store is closed"), QString());
  return db;
}

/// The columns readMessages() expects, in order, for a messages table aliased `m`.
inline QString messageColumns() {
  return QStringLiteral("m.id, m.conversation_id, m.parent_id, m.role, m.text, m.finish_reason, m.created_at");
}

}  // namespace chatstore
