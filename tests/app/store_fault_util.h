// What the chat-store fault tests share: another program's connection and the words a user must
// never see (the disk faults: sqlite_faults.h).
#pragma once

#include <QByteArray>
#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>

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

}  // namespace storefault
