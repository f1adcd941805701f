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

#include "app/store/chat_store.h"

namespace chatstore {

/// The text of a StoreError: "ChatStore: <what>: <detail> (database: <path>)", or
/// "ChatStore: <what> (database: <path>)" when the detail is empty (no dangling colon).
inline QString failMessage(const QString& path, const QString& what, const QString& detail) {
  const QString d = detail.trimmed();
  const QString file = QDir::toNativeSeparators(path);
  return d.isEmpty() ? QStringLiteral("ChatStore: %1 (database: %2)").arg(what.trimmed(), file)
                     : QStringLiteral("ChatStore: %1: %2 (database: %3)").arg(what.trimmed(), d, file);
}

/// Throws StoreError with failMessage(path, what, detail), of `kind`, for a read or a write.
[[noreturn]] inline void fail(const QString& path, const QString& what, const QString& detail,
                              StoreError::Kind kind = StoreError::Kind::kOther, bool write = false) {
  throw StoreError(failMessage(path, what, detail).toStdString(), kind, write);
}

/// The StoreError kind of a QSQLITE error: its native code is SQLite's result code (the primary
/// code is the low byte of an extended one); the message decides when there is no code.
inline StoreError::Kind kindOf(const QSqlError& error) {
  bool ok = false;
  const int code = error.nativeErrorCode().toInt(&ok) & 0xff;
  if (ok) {
    switch (code) {
      case 5:
      case 6:
        return StoreError::Kind::kBusy;  // SQLITE_BUSY, SQLITE_LOCKED
      case 3:
      case 8:
      case 23:
        return StoreError::Kind::kReadOnly;  // PERM, READONLY, AUTH
      case 13:
        return StoreError::Kind::kDiskFull;  // SQLITE_FULL
      case 10:
        return StoreError::Kind::kIoError;  // SQLITE_IOERR
      case 11:
      case 26:
        return StoreError::Kind::kCorrupt;  // SQLITE_CORRUPT, SQLITE_NOTADB
      case 14:
        return StoreError::Kind::kCannotOpen;  // SQLITE_CANTOPEN
      default:
        break;
    }
  }
  const QString text = error.text();
  auto has = [&](const char* word) { return text.contains(QLatin1String(word), Qt::CaseInsensitive); };
  if (has("locked") || has("busy")) return StoreError::Kind::kBusy;
  if (has("readonly") || has("read-only")) return StoreError::Kind::kReadOnly;
  if (has("disk is full")) return StoreError::Kind::kDiskFull;
  if (has("malformed") || has("not a database")) return StoreError::Kind::kCorrupt;
  if (has("disk I/O")) return StoreError::Kind::kIoError;
  if (has("unable to open")) return StoreError::Kind::kCannotOpen;
  return StoreError::Kind::kOther;
}

/// True for a statement that only reads (SELECT, a read-only PRAGMA, WITH ... SELECT).
inline bool isReadStatement(const QString& sql) {
  const QString s = sql.trimmed();
  auto starts = [&](const char* word) { return s.startsWith(QLatin1String(word), Qt::CaseInsensitive); };
  return starts("SELECT") || starts("WITH") ||
         (starts("PRAGMA") && !s.contains(QLatin1Char('=')) && !s.contains(QLatin1String("checkpoint")));
}

/// Throws the StoreError of a failed statement: what() names the statement (for logs), detail()
/// only SQLite's message and code and the file.
[[noreturn]] inline void failQuery(const QString& path, const QString& sql, const QSqlError& error) {
  const QString code = error.nativeErrorCode();
  const QString detail = QStringLiteral("SQLite: %1%2 (database: %3)")
                             .arg(error.text().trimmed(),
                                  code.isEmpty() ? QString() : QStringLiteral(" (code %1)").arg(code),
                                  QDir::toNativeSeparators(path));
  throw StoreError(failMessage(path, QStringLiteral("\"%1\" failed").arg(sql.simplified()), error.text()).toStdString(),
                   kindOf(error), !isReadStatement(sql), detail.toStdString());
}

/// Prepares, binds and runs one statement; throws StoreError when any step fails.
inline QSqlQuery exec(const QSqlDatabase& db, const QString& path, const QString& sql, const QVariantList& binds = {}) {
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
    throw StoreError(failMessage(path, QStringLiteral("\"%1\" returned no row").arg(sql), QString()).toStdString(),
                     StoreError::Kind::kOther, !isReadStatement(sql),
                     failMessage(path, QStringLiteral("a query returned no row"), QString()).toStdString());
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

/// The role stored in a messages.role value. Throws StoreError (kCorrupt) for text the schema's
/// CHECK does not allow (a file changed outside PagedChat).
inline MessageRole storedRole(const QVariant& v, const QString& path) {
  const std::optional<MessageRole> role = parseMessageRole(v.toString());
  if (!role)
    fail(path, QStringLiteral("cannot read a message"),
         QStringLiteral("unknown role \"%1\"").arg(v.toString().left(40)), StoreError::Kind::kCorrupt);
  return *role;
}

/// Binds a possibly-null QString as '' rather than SQL NULL (the text columns are NOT NULL).
inline QVariant textValue(const QString& s) { return s.isNull() ? QVariant(QString(QLatin1String(""))) : QVariant(s); }

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
  return QStringLiteral(
      "m.id, m.conversation_id, m.parent_id, m.role, m.text, m.finish_reason, m.created_at,"
      " m.backend, m.fields");
}

}  // namespace chatstore
