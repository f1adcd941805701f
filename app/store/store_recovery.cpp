#include "app/store/store_recovery.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "app/store/store_health.h"

std::unique_ptr<ChatStore> openChatStore(const QString& dataDir, StoreRecovery* recovery) {
  *recovery = StoreRecovery{};
  try {
    return std::make_unique<ChatStore>(dataDir);
  } catch (const StoreError& e) {
    if (e.kind() != StoreError::Kind::kCorrupt) throw;
    const QString path = QDir(dataDir).absoluteFilePath(QStringLiteral("pagedchat.sqlite3"));
    const QString stamp = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd'T'HHmmss'Z'"));
    QString copy = QStringLiteral("%1.corrupt-%2").arg(path, stamp);
    for (int n = 2; QFileInfo::exists(copy); ++n) copy = QStringLiteral("%1.corrupt-%2-%3").arg(path, stamp).arg(n);
    // The WAL may hold the newest transactions: it goes with the file, under the same name.
    if (!QFile::rename(path, copy)) throw;
    for (const char* suffix : {"-wal", "-shm"})
      if (QFileInfo::exists(path + QLatin1String(suffix)))
        QFile::rename(path + QLatin1String(suffix), copy + QLatin1String(suffix));
    qWarning("pagedchat: %s; the file was kept as %s and a new chat history started", e.what(),
             qUtf8Printable(QDir::toNativeSeparators(copy)));
    recovery->keptCopy = copy;
    recovery->message = StoreHealth::tr(
                            "The chat history file was damaged and could not be read. It was kept as %1; PagedChat "
                            "started a new, empty chat history.")
                            .arg(QDir::toNativeSeparators(copy));
    recovery->detail = StoreHealth::technicalDetail(e);
    return std::make_unique<ChatStore>(dataDir);
  }
}
