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
#include <optional>
#include <utility>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/store/chat_store.h"
#include "app/store/chat_store_sql.h"
#include "app/store/store_health.h"

using namespace chatstore;

namespace {

constexpr qint64 kFullCheckMaxBytes = 32LL << 20;  // quick_check at open up to this file size
const char kFileName[] = "pagedchat.sqlite3";

std::atomic<quint64> g_connectionCounter{0};

/// The kind of an open that the system refused with `error` (errno): permission denied, a
/// read-only file system, or any other reason the file or its folder cannot be opened.
StoreError::Kind kindOfSystemError(int error) {
  if (error == EACCES || error == EPERM) return StoreError::Kind::kPermissionDenied;
  if (error == EROFS) return StoreError::Kind::kReadOnly;
  return StoreError::Kind::kCannotOpen;
}

/// Why QDir::mkpath(dir) failed, in words: a file where a folder should be, or the system's reason
/// (permission denied, read-only file system, ...) for the first folder that could not be made.
/// `error` is set to that errno (0 when there is none: a file in the way, or a transient failure).
QString mkpathFailure(const QString& dir, int* error) {
  *error = 0;
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
  if (::mkdir(QFile::encodeName(missing).constData(), 0777) != 0) {
    *error = errno;
    return QStringLiteral("%1: %2").arg(QDir::toNativeSeparators(missing), qt_error_string(*error));
  }
  return QStringLiteral("unknown error");  // it could be made now: the failure was transient
}

/// Why the system would not open `path` (the database; when there is no such file, its folder)
/// for reading, or for reading and writing with `write`: errno, or 0 when it would open it.
int systemOpenError(const QString& path, bool write) {
  // (Never waits: a FIFO or a device in its place opens at once or fails.)
  const int fd = ::open(QFile::encodeName(path).constData(),
                        (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd >= 0) {
    ::close(fd);
    return 0;
  }
  const int error = errno;
  if (error != ENOENT) return error;
  // No file yet: SQLite makes it in the folder, which must be searchable (and writable); when
  // it is, the system has no objection (SQLite failed for a reason of its own).
  if (::access(QFile::encodeName(QFileInfo(path).absolutePath()).constData(), write ? W_OK | X_OK : X_OK) != 0)
    return errno;
  return 0;
}

/// `e`, an open of `path` that SQLite could not make (SQLITE_CANTOPEN, which says no more), with
/// the system's reason: permission denied and a read-only file system as their own kinds, any
/// other reason (no such folder, too many open files) in words. Other errors are returned as they are.
StoreError withSystemReason(const StoreError& e, const QString& path, bool write) {
  if (e.kind() != StoreError::Kind::kCannotOpen) return e;
  const int error = systemOpenError(path, write);
  if (error == 0) return e;
  const QString reason = qt_error_string(error);
  return StoreError(e.what(), kindOfSystemError(error), e.isWrite(),
                    e.detail() + QStringLiteral(": %1").arg(reason).toStdString(), reason.toStdString());
}

/// A read-write open that failed because the file or its disk cannot be written; `path` exists.
bool readingMayWork(const StoreError& e, const QString& path) {
  const bool unwritable = e.kind() == StoreError::Kind::kReadOnly || e.kind() == StoreError::Kind::kCannotOpen ||
                          e.kind() == StoreError::Kind::kPermissionDenied;
  const QFileInfo file(path);
  return unwritable && file.isFile() && file.isReadable();
}

/// The SQLite URI of `path` (https://www.sqlite.org/uri.html): percent-encoded, with `query`.
QString sqliteUri(const QString& path, const QString& query) {
  return QUrl::fromLocalFile(path).toString(QUrl::FullyEncoded) + QLatin1Char('?') + query;
}

/// (st_dev, st_ino) of `path`, or nothing when it cannot be stat'ed.
std::optional<std::pair<quint64, quint64>> fileIdOf(const QString& path) {
  struct stat st {};
  if (::stat(QFile::encodeName(path).constData(), &st) != 0) return std::nullopt;
  return std::pair<quint64, quint64>(st.st_dev, st.st_ino);
}

/// SQLite makes a database's -wal and -shm files with the database's permissions, so a read-only
/// open of a 0444 file leaves them 0444. Once the database may be written again (chmod), so may
/// these files when they are this user's own: else every write would fail at the lock or the log.
void makeSideFilesWritable(const QString& path) {
  const QByteArray file = QFile::encodeName(path);
  struct stat fileStat {};
  if (::access(file.constData(), W_OK) != 0 || ::stat(file.constData(), &fileStat) != 0) return;
  for (const char* suffix : {"-wal", "-shm"}) {
    const QByteArray side = file + suffix;
    struct stat sideStat {};
    if (::stat(side.constData(), &sideStat) == 0 && sideStat.st_uid == ::geteuid() &&
        ::access(side.constData(), W_OK) != 0)
      ::chmod(side.constData(), (sideStat.st_mode | (fileStat.st_mode & 0666)) & 07777);
  }
}

}  // namespace

ChatStore::ChatStore(const QString& dataDir, QObject* parent)
    : QObject(parent), m_dataDir(dataDir), m_health(new StoreHealth(this)) {
  try {
    open(Access::kReadWrite);
  } catch (StoreError& e) {
    e.setOpening(true);  // the history could not be opened (not "saved" or "read")
    close();             // the destructor does not run when a constructor throws
    throw;
  } catch (...) {
    close();
    throw;
  }
}

ChatStore::~ChatStore() { close(); }

QString ChatStore::databasePath() const { return m_path; }

void ChatStore::open(Access access) {
  m_readOnlyCause.reset();
  try {
    openDatabase(m_dataDir, access);
  } catch (const StoreError& e) {
    if (!readingMayWork(e, m_path)) throw;
    close();
    try {
      openDatabase(m_dataDir, Access::kReadOnly);
    } catch (const StoreError& readError) {
      // Damage found by reading, or a read-only disk that keeps even reading out (a -wal without
      // its -shm), says more than "cannot write"; anything else: the first error.
      if (readError.kind() == StoreError::Kind::kCorrupt || readError.kind() == StoreError::Kind::kReadOnly) throw;
      throw e;
    }
    // The reason, as a failed write (the open may have failed at its first read).
    m_readOnlyCause = StoreError(e.what(), StoreError::Kind::kReadOnly, /*write=*/true, e.detail());
  }
  if (!m_readOnlyCause) probeWritable();
  if (!m_fileId) m_fileId = fileIdOf(m_path);
  try {
    migrate();
  } catch (const StoreError& e) {
    // A newer version's file stays as it is: closing must not checkpoint its -wal into it
    // (https://www.sqlite.org/c3ref/c_dbconfig_defensive.html, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE).
    if (e.kind() == StoreError::Kind::kTooNew)
      if (sqlite3* connection = nativeHandle())
        sqlite3_db_config(connection, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    throw;
  }
}

void ChatStore::probeWritable() {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  if (connectionIsReadOnly()) {
    m_readOnlyCause = StoreError(
        failMessage(m_path, QStringLiteral("the database file cannot be written"), QString()).toStdString(),
        StoreError::Kind::kReadOnly, /*write=*/true,
        QStringLiteral("SQLite opened %1 read-only: the file or its folder cannot be written")
            .arg(QDir::toNativeSeparators(m_path))
            .toStdString());
    return;
  }
  // A writable file whose -shm index is read-only (left by another user's read-only open) fails
  // at the write lock. Another program holding the lock is not this store's problem: not waited for.
  exec(db, m_path, QStringLiteral("PRAGMA busy_timeout = 0"));
  try {
    WriteTransaction tx(db, m_path);  // rolls back: nothing is written
  } catch (const StoreError& e) {
    if (e.kind() == StoreError::Kind::kReadOnly) m_readOnlyCause = e;
  }
  exec(db, m_path, QStringLiteral("PRAGMA busy_timeout = %1").arg(kBusyTimeoutMs));
}

void ChatStore::reopenForWriting() {
  if (!m_readOnlyCause) return;
  // Never another file at that path (the disk was unmounted and the folder beneath shows):
  // then the read-only connection stays, reading what it had.
  if (fileIdOf(m_path) != m_fileId) {
    const QString why = QStringLiteral("the file is gone or was replaced (was its disk unmounted?)");
    throw StoreError(
        failMessage(m_path, QStringLiteral("cannot open the database for writing again"), why).toStdString(),
        StoreError::Kind::kCannotOpen, /*write=*/true, std::string(), why.toStdString());
  }
  makeSideFilesWritable(m_path);
  // The read-only connection goes first: SQLite shares a file's -shm mapping between the
  // connections of a process, and one opened read-only would keep the new one read-only too.
  close();
  try {
    open(Access::kReopen);  // for writing, else for reading again
  } catch (const StoreError&) {
    close();  // a new problem: the store is closed, its calls throw
    throw;
  }
  if (m_readOnlyCause) throw *m_readOnlyCause;  // still (or again) read-only
}

sqlite3* ChatStore::nativeHandle() const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QVariant handle = db.driver()->handle();
  if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3*") != 0) return nullptr;
  return *static_cast<sqlite3* const*>(handle.constData());
}

bool ChatStore::connectionIsReadOnly() const {
  sqlite3* connection = nativeHandle();
  return connection && sqlite3_db_readonly(connection, "main") == 1;
}

void ChatStore::openDatabase(const QString& dataDir, Access access) {
  m_path = QDir(dataDir).absoluteFilePath(QLatin1String(kFileName));

  if (access == Access::kReadWrite && !QDir().mkpath(dataDir)) {
    int error = 0;
    const QString why = mkpathFailure(dataDir, &error);
    throw StoreError(
        failMessage(m_path,
                    QStringLiteral("cannot create the data directory %1").arg(QDir::toNativeSeparators(dataDir)), why)
            .toStdString(),
        error != 0 ? kindOfSystemError(error) : StoreError::Kind::kCannotOpen, /*write=*/true, std::string(),
        (error != 0 ? qt_error_string(error) : why).toStdString());
  }
  if (QFileInfo(m_path).isDir())
    throw StoreError(failMessage(m_path, QStringLiteral("the database path is a directory"), QString()).toStdString(),
                     StoreError::Kind::kCannotOpen, false, std::string(),
                     QStringLiteral("%1 is a folder, not a file").arg(QDir::toNativeSeparators(m_path)).toStdString());
  if (access == Access::kReadWrite && !QFileInfo::exists(m_path) &&
      ::access(QFile::encodeName(QDir(dataDir).absolutePath()).constData(), W_OK) != 0) {
    const int error = errno;
    throw StoreError(
        failMessage(m_path, QStringLiteral("cannot create the database"),
                    QStringLiteral("the folder %1 cannot be written: %2")
                        .arg(QDir::toNativeSeparators(QDir(dataDir).absolutePath()), qt_error_string(error)))
            .toStdString(),
        kindOfSystemError(error), /*write=*/true, std::string(), qt_error_string(error).toStdString());
  }
  // An earlier run that read a 0444 file left its -wal/-shm 0444 too; the file is writable now.
  if (access == Access::kReadWrite) makeSideFilesWritable(m_path);
  // A -wal holding transactions cannot be read without its -shm index, which a read-only disk
  // cannot get: say so (reading the file alone would show older history).
  const QFileInfo wal(m_path + QLatin1String("-wal"));
  const bool walWithoutShm = wal.exists() && wal.size() > 0 && !QFileInfo::exists(m_path + QLatin1String("-shm"));

  if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")))
    fail(m_path, QStringLiteral("the Qt SQLite driver (QSQLITE) is not available"), QString());

  // Reading only: SQLite's read-only mode first (it uses the -wal and -shm files when they are
  // there or can be made); when it cannot open the file (no -shm on a read-only disk), and no
  // -wal holds transactions, immutable=1 (reads the file alone, takes no locks).
  const int attempts = access == Access::kReadOnly && !(wal.exists() && wal.size() > 0) ? 2 : 1;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const bool last = attempt + 1 == attempts;
    try {
      m_connectionName = QStringLiteral("pagedchat-store-%1").arg(++g_connectionCounter);
      QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
      QString options = QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(kBusyTimeoutMs);
      switch (access) {
        case Access::kReadWrite:
          db.setDatabaseName(m_path);
          break;
        case Access::kReopen:  // mode=rw: never creates the file
          db.setDatabaseName(sqliteUri(m_path, QStringLiteral("mode=rw")));
          options += QStringLiteral(";QSQLITE_OPEN_URI");
          break;
        case Access::kReadOnly:
          db.setDatabaseName(
              sqliteUri(m_path, attempt == 1 ? QStringLiteral("mode=ro&immutable=1") : QStringLiteral("mode=ro")));
          options += QStringLiteral(";QSQLITE_OPEN_READONLY;QSQLITE_OPEN_URI");
          break;
      }
      db.setConnectOptions(options);
      if (!db.open()) {
        const StoreError::Kind kind = kindOf(db.lastError());
        fail(m_path, QStringLiteral("cannot open the database"), db.lastError().text(),
             kind == StoreError::Kind::kOther ? StoreError::Kind::kCannotOpen : kind, access != Access::kReadOnly);
      }

      exec(db, m_path, QStringLiteral("PRAGMA busy_timeout = %1").arg(kBusyTimeoutMs));
      exec(db, m_path, QStringLiteral("PRAGMA foreign_keys = ON"));

      // First statement that actually reads the file: a non-database or damaged file fails here
      // (SQLITE_NOTADB / SQLITE_CORRUPT), and so does a file that cannot be opened. A small file
      // also gets a full quick_check; a big one (whose check would cost about a second per 400 MB
      // at every start) is checked before an upgrade (migrate()), and damage found later fails
      // that statement with StoreError.
      scalar(db, m_path, QStringLiteral("SELECT count(*) FROM sqlite_master"));
    } catch (const StoreError& cantOpen) {
      const StoreError e = withSystemReason(cantOpen, m_path, access != Access::kReadOnly);
      if (access == Access::kReadOnly && walWithoutShm) {
        const QString why = QStringLiteral(
            "Its -wal file holds the newest messages, and the -shm index SQLite needs to read it cannot be created: "
            "the disk or the folder is read-only.");
        // The detail: why, then SQLite's own words (which name the file).
        throw StoreError(chatstore::failMessage(m_path, QStringLiteral("cannot read the database"), why).toStdString(),
                         StoreError::Kind::kReadOnly, false, (why + QLatin1Char(' ')).toStdString() + e.detail());
      }
      // SQLite's read-only mode fails where it cannot make the -shm (CANTOPEN) or may not use
      // the folder (READONLY_DIRECTORY): then immutable=1.
      const bool tryImmutable = e.kind() == StoreError::Kind::kCannotOpen || e.kind() == StoreError::Kind::kReadOnly ||
                                e.kind() == StoreError::Kind::kPermissionDenied;
      if (last || !tryImmutable) throw e;
      close();
      continue;
    }
    break;
  }
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  // (Not again when a read-only store opens the file it already checked for writing.)
  if (!m_fileId && QFileInfo(m_path).size() <= kFullCheckMaxBytes) checkIntegrity();
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
  closeConnection(m_connectionName);
  m_connectionName.clear();
}

void ChatStore::closeConnection(const QString& name) {
  if (name.isEmpty()) return;
  {
    QSqlDatabase db = QSqlDatabase::database(name, false);
    if (db.isOpen()) db.close();  // the last connection to close checkpoints and removes the WAL
  }
  QSqlDatabase::removeDatabase(name);
}
