// ChatStore: conversations and messages in one SQLite file through Qt SQL (QSQLITE).
//
// Every public method is a single statement (autocommit) or a BEGIN IMMEDIATE ... COMMIT
// transaction, so all writes are durable when the method returns. Every failing statement
// throws StoreError carrying SQLite's message and the database path.
#include "app/chat_store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <QVariantList>

#include <atomic>
#include <cerrno>

#include <sys/stat.h>

namespace {

constexpr int kSchemaVersion = 1;        // PRAGMA user_version written by migrate()
constexpr int kBusyTimeoutMs = 2000;     // how long a write waits for another connection's lock
const char kFileName[] = "pagedchat.sqlite3";

std::atomic<quint64> g_connectionCounter{0};

[[noreturn]] void fail(const QString& path, const QString& what, const QString& detail) {
  throw StoreError(QStringLiteral("ChatStore: %1: %2 (database: %3)")
                       .arg(what, detail.trimmed(), QDir::toNativeSeparators(path))
                       .toStdString());
}

[[noreturn]] void failQuery(const QString& path, const QString& sql, const QSqlError& error) {
  fail(path, QStringLiteral("\"%1\" failed").arg(sql.simplified()), error.text());
}

/// Prepares, binds and runs one statement; throws StoreError when any step fails.
QSqlQuery exec(const QSqlDatabase& db, const QString& path, const QString& sql,
               const QVariantList& binds = {}) {
  QSqlQuery q(db);
  q.setForwardOnly(true);
  if (!q.prepare(sql)) failQuery(path, sql, q.lastError());
  for (const QVariant& v : binds) q.addBindValue(v);
  if (!q.exec()) failQuery(path, sql, q.lastError());
  return q;
}

/// Runs a statement that yields one row and returns its first column.
QVariant scalar(const QSqlDatabase& db, const QString& path, const QString& sql,
                const QVariantList& binds = {}) {
  QSqlQuery q = exec(db, path, sql, binds);
  if (!q.next()) {
    if (q.lastError().isValid()) failQuery(path, sql, q.lastError());
    fail(path, QStringLiteral("\"%1\" returned no row").arg(sql), QString());
  }
  return q.value(0);
}

/// Reads the next row, distinguishing "no more rows" from a read error (e.g. corruption).
bool nextRow(QSqlQuery& q, const QString& path, const QString& sql) {
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

QDateTime parseStamp(const QVariant& v) {
  if (v.isNull()) return {};
  QDateTime t = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
  return t.isValid() ? t.toUTC() : QDateTime();
}

/// Binds a possibly-null QString as '' rather than SQL NULL (the text columns are NOT NULL).
QVariant textValue(const QString& s) {
  return s.isNull() ? QVariant(QString(QLatin1String(""))) : QVariant(s);
}

/// Why QDir::mkpath(dir) failed, in words: a file where a folder should be, or the system's reason
/// (permission denied, read-only file system, ...) for the first folder that could not be made.
QString mkpathFailure(const QString& dir) {
  const QString absolute = QDir::cleanPath(QDir(dir).absolutePath());
  QString existing = absolute;  // the deepest ancestor (or the path itself) that exists
  QString missing;              // its child on the way to `absolute`
  while (!QFileInfo::exists(existing)) {
    const QString parent = QFileInfo(existing).path();
    if (parent == existing) break;
    missing = existing;
    existing = parent;
  }
  if (QFileInfo::exists(existing) && !QFileInfo(existing).isDir())
    return QStringLiteral("%1 is a file, not a folder").arg(QDir::toNativeSeparators(existing));
  if (missing.isEmpty()) return QStringLiteral("unknown error");
  if (::mkdir(QFile::encodeName(missing).constData(), 0777) != 0)
    return QStringLiteral("%1: %2").arg(QDir::toNativeSeparators(missing), qt_error_string(errno));
  return QStringLiteral("unknown error");  // it could be made now: the failure was transient
}

}  // namespace

ChatStore::ChatStore(const QString& dataDir, QObject* parent) : QObject(parent) {
  try {
    openDatabase(dataDir);
    migrate();
  } catch (...) {
    close();  // the destructor does not run when a constructor throws
    throw;
  }
}

ChatStore::~ChatStore() { close(); }

QString ChatStore::databasePath() const { return m_path; }

void ChatStore::openDatabase(const QString& dataDir) {
  m_path = QDir(dataDir).absoluteFilePath(QLatin1String(kFileName));

  if (!QDir().mkpath(dataDir))
    fail(m_path, QStringLiteral("cannot create the data directory %1")
                     .arg(QDir::toNativeSeparators(dataDir)),
         mkpathFailure(dataDir));
  if (QFileInfo(m_path).isDir())
    fail(m_path, QStringLiteral("the database path is a directory"), QString());

  if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")))
    fail(m_path, QStringLiteral("the Qt SQLite driver (QSQLITE) is not available"), QString());

  m_connectionName = QStringLiteral("pagedchat-store-%1").arg(++g_connectionCounter);
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
    db.setDatabaseName(m_path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(kBusyTimeoutMs));
    if (!db.open()) fail(m_path, QStringLiteral("cannot open the database"), db.lastError().text());

    exec(db, m_path, QStringLiteral("PRAGMA busy_timeout = %1").arg(kBusyTimeoutMs));
    exec(db, m_path, QStringLiteral("PRAGMA foreign_keys = ON"));

    // First statement that actually reads the file: a non-database or damaged file fails here
    // (SQLITE_NOTADB / SQLITE_CORRUPT) or reports problems as rows other than "ok".
    {
      const QString sql = QStringLiteral("PRAGMA quick_check");
      QSqlQuery q = exec(db, m_path, sql);
      QStringList problems;
      while (nextRow(q, m_path, sql)) {
        const QString row = q.value(0).toString();
        if (row != QLatin1String("ok")) problems << row;
      }
      if (!problems.isEmpty())
        fail(m_path, QStringLiteral("the database is corrupt"),
             problems.mid(0, 5).join(QLatin1String("; ")));
    }

    // WAL is persistent in the file; the result row names the mode actually in effect (some file
    // systems cannot do WAL, in which case SQLite keeps the rollback journal, which is still safe).
    scalar(db, m_path, QStringLiteral("PRAGMA journal_mode = WAL"));
    if (scalar(db, m_path, QStringLiteral("PRAGMA foreign_keys")).toInt() != 1)
      fail(m_path, QStringLiteral("cannot enable foreign keys"), QString());
  }
}

void ChatStore::migrate() {
  const QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
  const QString userVersionSql = QStringLiteral("PRAGMA user_version");

  auto checkVersion = [&](int version) {
    if (version > kSchemaVersion)
      fail(m_path,
           QStringLiteral("the database schema version %1 is newer than this version of "
                          "PagedChat supports (%2); please update PagedChat")
               .arg(version)
               .arg(kSchemaVersion),
           QString());
    if (version < 0)
      fail(m_path, QStringLiteral("invalid database schema version %1").arg(version), QString());
  };

  int version = scalar(db, m_path, userVersionSql).toInt();
  checkVersion(version);
  if (version == kSchemaVersion) return;

  WriteTransaction tx(db, m_path);
  version = scalar(db, m_path, userVersionSql).toInt();  // another process may have migrated
  checkVersion(version);
  if (version == kSchemaVersion) return;  // tx rolls back (nothing written)

  while (version < kSchemaVersion) {
    switch (version) {
      case 0:  // -> 1: initial schema
        exec(db, m_path, QStringLiteral(
            "CREATE TABLE IF NOT EXISTS conversations ("
            " id INTEGER PRIMARY KEY,"
            " title TEXT NOT NULL,"
            " created_at TEXT,"
            " updated_at TEXT)"));
        exec(db, m_path, QStringLiteral(
            "CREATE TABLE IF NOT EXISTS messages ("
            " id INTEGER PRIMARY KEY,"
            " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
            " role TEXT NOT NULL CHECK(role IN ('system','user','assistant')),"
            " text TEXT NOT NULL,"
            " finish_reason TEXT NOT NULL DEFAULT '',"
            " created_at TEXT)"));
        exec(db, m_path, QStringLiteral(
            "CREATE INDEX IF NOT EXISTS messages_conversation_id"
            " ON messages(conversation_id, id)"));
        break;
      default:
        fail(m_path, QStringLiteral("no migration from schema version %1").arg(version),
             QString());
    }
    ++version;
  }
  // PRAGMA does not take bound parameters; version is an int we computed.
  exec(db, m_path, QStringLiteral("PRAGMA user_version = %1").arg(version));
  tx.commit();
}

void ChatStore::close() {
  if (m_connectionName.isEmpty()) return;
  {
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    if (db.isOpen()) db.close();  // the last connection to close checkpoints and removes the WAL
  }
  QSqlDatabase::removeDatabase(m_connectionName);
  m_connectionName.clear();
}

QString ChatStore::nextTimestamp() {
  QDateTime now = QDateTime::currentDateTimeUtc();
  // Strictly increasing per instance so "newest updated first" follows the order of operations
  // even within one millisecond (or when the wall clock steps back).
  if (m_lastStamp.isValid() && now <= m_lastStamp) now = m_lastStamp.addMSecs(1);
  m_lastStamp = now;
  return now.toString(Qt::ISODateWithMs);
}

namespace {
QSqlDatabase openConnection(const QString& name, const QString& path) {
  if (name.isEmpty()) fail(path, QStringLiteral("the store is closed"), QString());
  QSqlDatabase db = QSqlDatabase::database(name, false);
  if (!db.isOpen()) fail(path, QStringLiteral("the store is closed"), QString());
  return db;
}
}  // namespace

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
    fail(m_path, QStringLiteral("cannot rename conversation %1").arg(id),
         QStringLiteral("no such conversation"));
}

void ChatStore::deleteConversation(qint64 id) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  // ON DELETE CASCADE (foreign_keys=ON) removes the messages in the same statement.
  exec(db, m_path, QStringLiteral("DELETE FROM conversations WHERE id = ?"), {id});
}

QList<ConversationRecord> ChatStore::conversations() const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString sql = QStringLiteral(
      "SELECT id, title, created_at, updated_at FROM conversations"
      " ORDER BY updated_at DESC, id DESC");
  QSqlQuery q = exec(db, m_path, sql);
  QList<ConversationRecord> out;
  while (nextRow(q, m_path, sql)) {
    ConversationRecord r;
    r.id = q.value(0).toLongLong();
    r.title = q.value(1).toString();
    r.createdAt = parseStamp(q.value(2));
    r.updatedAt = parseStamp(q.value(3));
    out.append(r);
  }
  return out;
}

qint64 ChatStore::addMessage(qint64 conversationId, const QString& role, const QString& text,
                             const QString& finishReason) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = nextTimestamp();
  WriteTransaction tx(db, m_path);
  QSqlQuery q = exec(db, m_path,
                     QStringLiteral("INSERT INTO messages(conversation_id, role, text,"
                                    " finish_reason, created_at) VALUES(?, ?, ?, ?, ?)"),
                     {conversationId, textValue(role), textValue(text), textValue(finishReason),
                      now});
  const qint64 id = q.lastInsertId().toLongLong();
  q.finish();
  exec(db, m_path, QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"),
       {now, conversationId});
  tx.commit();
  return id;
}

void ChatStore::updateMessage(qint64 messageId, const QString& text, const QString& finishReason) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = nextTimestamp();
  WriteTransaction tx(db, m_path);
  QSqlQuery q = exec(db, m_path,
                     QStringLiteral("UPDATE messages SET text = ?, finish_reason = ? WHERE id = ?"),
                     {textValue(text), textValue(finishReason), messageId});
  if (q.numRowsAffected() == 0)
    fail(m_path, QStringLiteral("cannot update message %1").arg(messageId),
         QStringLiteral("no such message"));
  q.finish();
  exec(db, m_path,
       QStringLiteral("UPDATE conversations SET updated_at = ?"
                      " WHERE id = (SELECT conversation_id FROM messages WHERE id = ?)"),
       {now, messageId});
  tx.commit();
}

void ChatStore::deleteMessage(qint64 messageId) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  exec(db, m_path, QStringLiteral("DELETE FROM messages WHERE id = ?"), {messageId});
}

QList<MessageRecord> ChatStore::messages(qint64 conversationId) const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString sql = QStringLiteral(
      "SELECT id, conversation_id, role, text, finish_reason, created_at FROM messages"
      " WHERE conversation_id = ? ORDER BY id");
  QSqlQuery q = exec(db, m_path, sql, {conversationId});
  QList<MessageRecord> out;
  while (nextRow(q, m_path, sql)) {
    MessageRecord r;
    r.id = q.value(0).toLongLong();
    r.conversationId = q.value(1).toLongLong();
    r.role = q.value(2).toString();
    r.text = q.value(3).toString();
    r.finishReason = q.value(4).toString();
    r.createdAt = parseStamp(q.value(5));
    out.append(r);
  }
  return out;
}
