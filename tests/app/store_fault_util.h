// What the chat-store fault tests share: another program's connection, a small disk, and the
// words a user must never see.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>

#include <sys/mount.h>

namespace storefault {

/// Another SQLite connection to the same file, as another program would hold it.
class OtherConnection {
 public:
  explicit OtherConnection(const QString& path) : name_(QStringLiteral("other-%1").arg(++counter_)) {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name_);
    db.setDatabaseName(path);
    db.open();
  }
  ~OtherConnection() {
    QSqlDatabase::database(name_, false).close();
    QSqlDatabase::removeDatabase(name_);
  }
  bool exec(const QString& sql) {
    QSqlQuery q(QSqlDatabase::database(name_, false));
    return q.exec(sql);
  }

 private:
  static inline int counter_ = 0;
  QString name_;
};

/// The words a user must never see in the banner's message.
inline bool looksLikeSql(const QString& text) {
  for (const char* word : {"SELECT", "INSERT", "UPDATE", "DELETE FROM", "BEGIN", "PRAGMA", "COMMIT", "QSQLITE"})
    if (text.contains(QLatin1String(word))) return true;
  return false;
}

/// A tmpfs of `bytes` mounted on `dir` (root in a mount-capable environment), unmounted on exit.
class SmallDisk {
 public:
  SmallDisk(const QString& dir, qint64 bytes) : dir_(dir) {
    const QByteArray options = "size=" + QByteArray::number(bytes);
    mounted_ = ::mount("tmpfs", QFile::encodeName(dir).constData(), "tmpfs", 0, options.constData()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(QFile::encodeName(dir_).constData(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  /// Makes the disk read-only or writable again; false when the system refuses (files open for
  /// writing on a switch to read-only: EBUSY).
  bool remount(bool readOnly) {
    unsigned long flags = MS_REMOUNT;
    if (readOnly) flags |= MS_RDONLY;
    return mounted_ && ::mount("tmpfs", QFile::encodeName(dir_).constData(), "tmpfs", flags, nullptr) == 0;
  }

 private:
  QString dir_;
  bool mounted_ = false;
};

}  // namespace storefault
