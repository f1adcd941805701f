// ChatStore: opening the SQLite file (for writing, else for reading only), the integrity check
// at open, switching back to writing, closing.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QSqlDriver>
#include <QSqlError>
#include <QUrl>
#include <QVariant>

#include <atomic>
#include <cerrno>

#include <sqlite3.h>
#include <sys/stat.h>

#include "app/chat_store.h"
#include "app/chat_store_sql.h"
#include "app/store_health.h"

using namespace chatstore;

namespace {

constexpr qint64 kFullCheckMaxBytes = 32LL << 20;  // quick_check at open up to this file size
const char kFileName[] = "pagedchat.sqlite3";

std::atomic<quint64> g_connectionCounter{0};

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

/// A read-write open that failed because the file or its disk cannot be written; `path` exists.
bool readingMayWork(const StoreError& e, const QString& path) {
  const bool unwritable = e.kind() == StoreError::Kind::kReadOnly || e.kind() == StoreError::Kind::kCannotOpen;
  const QFileInfo file(path);
  return unwritable && file.isFile() && file.isReadable();
}

/// The SQLite URI of `path` for reading only (https://www.sqlite.org/uri.html): percent-encoded,
/// with `immutable=1` when asked.
QString readOnlyUri(const QString& path, bool immutable) {
  QString uri = QUrl::fromLocalFile(path).toString(QUrl::FullyEncoded) + QStringLiteral("?mode=ro");
  if (immutable) uri += QStringLiteral("&immutable=1");
  return uri;
}

}  // namespace

ChatStore::ChatStore(const QString& dataDir, QObject* parent)
    : QObject(parent), m_dataDir(dataDir), m_health(new StoreHealth(this)) {
  try {
    open();
  } catch (...) {
    close();  // the destructor does not run when a constructor throws
    throw;
  }
}

ChatStore::~ChatStore() { close(); }

QString ChatStore::databasePath() const { return m_path; }

void ChatStore::open() {
  m_readOnlyCause.reset();
  try {
    openDatabase(m_dataDir, Access::kReadWrite);
  } catch (const StoreError& e) {
    if (!readingMayWork(e, m_path)) throw;
    close();
    try {
      openDatabase(m_dataDir, Access::kReadOnly);
    } catch (const StoreError& readError) {
      // Damage found by reading says more than "cannot write"; anything else: the first error.
      if (readError.kind() == StoreError::Kind::kCorrupt) throw;
      throw e;
    }
    m_readOnlyCause = e;
  }
  if (!m_readOnlyCause && connectionIsReadOnly())
    m_readOnlyCause = StoreError(
        failMessage(m_path, QStringLiteral("the database file cannot be written"), QString()).toStdString(),
        StoreError::Kind::kReadOnly, /*write=*/true,
        QStringLiteral("SQLite opened %1 read-only: the file or its folder cannot be written")
            .arg(QDir::toNativeSeparators(m_path))
            .toStdString());
  migrate();
}

void ChatStore::reopenForWriting() {
  if (!m_readOnlyCause) return;
  close();
  try {
    open();
  } catch (const StoreError&) {
    close();
    m_readOnlyCause.reset();
    open();  // as it was before (read-only), or a new problem (then the store is closed)
    throw;
  }
  if (m_readOnlyCause) throw *m_readOnlyCause;  // still (or again) read-only
}

bool ChatStore::connectionIsReadOnly() const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QVariant handle = db.driver()->handle();
  if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3*") != 0) return false;
  sqlite3* connection = *static_cast<sqlite3* const*>(handle.constData());
  return connection && sqlite3_db_readonly(connection, "main") == 1;
}

void ChatStore::openDatabase(const QString& dataDir, Access access) {
  m_path = QDir(dataDir).absoluteFilePath(QLatin1String(kFileName));

  if (access == Access::kReadWrite && !QDir().mkpath(dataDir))
    fail(m_path, QStringLiteral("cannot create the data directory %1").arg(QDir::toNativeSeparators(dataDir)),
         mkpathFailure(dataDir), StoreError::Kind::kCannotOpen, /*write=*/true);
  if (QFileInfo(m_path).isDir())
    fail(m_path, QStringLiteral("the database path is a directory"), QString(), StoreError::Kind::kCannotOpen);

  if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")))
    fail(m_path, QStringLiteral("the Qt SQLite driver (QSQLITE) is not available"), QString());

  // Reading only: SQLite's read-only mode first (it uses the -wal and -shm files when they are
  // there or can be made); when it cannot open the file (no -shm on a read-only disk), and no
  // -wal holds transactions, immutable=1 (reads the file alone, takes no locks).
  const QFileInfo wal(m_path + QLatin1String("-wal"));
  const int attempts = access == Access::kReadOnly && !(wal.exists() && wal.size() > 0) ? 2 : 1;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const bool last = attempt + 1 == attempts;
    try {
      m_connectionName = QStringLiteral("pagedchat-store-%1").arg(++g_connectionCounter);
      QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
      QString options = QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(kBusyTimeoutMs);
      if (access == Access::kReadWrite) {
        db.setDatabaseName(m_path);
      } else {
        db.setDatabaseName(readOnlyUri(m_path, /*immutable=*/attempt == 1));
        options += QStringLiteral(";QSQLITE_OPEN_READONLY;QSQLITE_OPEN_URI");
      }
      db.setConnectOptions(options);
      if (!db.open()) {
        const StoreError::Kind kind = kindOf(db.lastError());
        fail(m_path, QStringLiteral("cannot open the database"), db.lastError().text(),
             kind == StoreError::Kind::kOther ? StoreError::Kind::kCannotOpen : kind, access == Access::kReadWrite);
      }

      exec(db, m_path, QStringLiteral("PRAGMA busy_timeout = %1").arg(kBusyTimeoutMs));
      exec(db, m_path, QStringLiteral("PRAGMA foreign_keys = ON"));

      // First statement that actually reads the file: a non-database or damaged file fails here
      // (SQLITE_NOTADB / SQLITE_CORRUPT), and so does a file that cannot be opened. A small file
      // also gets a full quick_check; a big one (whose check would cost about a second per 400 MB
      // at every start) is checked before an upgrade (migrate()), and damage found later fails
      // that statement with StoreError.
      scalar(db, m_path, QStringLiteral("SELECT count(*) FROM sqlite_master"));
    } catch (const StoreError& e) {
      if (last || e.kind() != StoreError::Kind::kCannotOpen) throw;
      close();
      continue;
    }
    break;
  }
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  if (QFileInfo(m_path).size() <= kFullCheckMaxBytes) checkIntegrity();
  if (scalar(db, m_path, QStringLiteral("PRAGMA foreign_keys")).toInt() != 1)
    fail(m_path, QStringLiteral("cannot enable foreign keys"), QString());
}

void ChatStore::checkIntegrity() {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString sql = QStringLiteral("PRAGMA quick_check");
  QSqlQuery q = exec(db, m_path, sql);
  QStringList problems;
  while (nextRow(q, m_path, sql)) {
    const QString row = q.value(0).toString();
    if (row != QLatin1String("ok")) problems << row;
  }
  if (!problems.isEmpty())
    fail(m_path, QStringLiteral("the database is corrupt"), problems.mid(0, 5).join(QLatin1String("; ")),
         StoreError::Kind::kCorrupt);
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
