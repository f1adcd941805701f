// The start-up error window's words (startAppController()) for a chat history that cannot be
// opened, each saying what happened: "could not be opened" (never "could not be saved" for a file
// that was never opened), "permission denied" where the system refused access (a file without
// permissions, a folder that cannot be entered or written), "read-only" only for a read-only disk
// or file, "damaged" for a damaged file that cannot be set aside. The permission cases run as a
// user without privileges (a child process switched to nobody when the test runs as root, which
// ignores permissions).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/app_startup.h"
#include "app/store/chat_store.h"
#include "sqlite_faults.h"
#include "store_fault_util.h"

using storefault::FaultyDisk;

namespace {

/// What startAppController() asked the error window to show ("started" when nothing failed).
struct Shown {
  bool started = false;
  QString headline;
  QString details;
  bool retryable = false;
};

/// startAppController() for `dataDir` (no model), the error window answered with Quit; what it
/// was to show. With `unprivileged` it runs in a child process, switched to the user nobody
/// (65534) when this process is root; `error` says why it could not run.
Shown startupError(const QString& dataDir, bool unprivileged, QString* error) {
  auto run = [&dataDir] {
    AppOptions options;
    options.dataDir = dataDir;
    Shown shown;
    std::unique_ptr<AppController> app = startAppController(
        options, nullptr, [&](const QString& headline, const QString& details, bool retryable) {
          shown.headline = headline;
          shown.details = details;
          shown.retryable = retryable;
          return false;
        });
    shown.started = app != nullptr;
    return shown;
  };
  if (!unprivileged) return run();
  int fds[2];
  if (::pipe(fds) != 0) {
    *error = QStringLiteral("pipe() failed");
    return {};
  }
  const pid_t child = ::fork();
  if (child < 0) {
    *error = QStringLiteral("fork() failed");
    return {};
  }
  if (child == 0) {
    ::close(fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(100);
    const Shown shown = run();
    const QByteArray json = QJsonDocument(QJsonObject{{"started", shown.started},
                                                      {"headline", shown.headline},
                                                      {"details", shown.details},
                                                      {"retryable", shown.retryable}})
                                .toJson(QJsonDocument::Compact);
    qsizetype written = 0;
    while (written < json.size()) {
      const ssize_t n = ::write(fds[1], json.constData() + written, static_cast<size_t>(json.size() - written));
      if (n <= 0) ::_exit(101);
      written += n;
    }
    ::_exit(0);  // no destructors: the parent owns what the fork copied
  }
  ::close(fds[1]);
  QByteArray json;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) json.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = QStringLiteral("the child failed (status %1)").arg(status);
    return {};
  }
  const QJsonObject o = QJsonDocument::fromJson(json).object();
  return Shown{o.value("started").toBool(), o.value("headline").toString(), o.value("details").toString(),
               o.value("retryable").toBool()};
}

bool setMode(const QString& path, mode_t mode) { return ::chmod(QFile::encodeName(path).constData(), mode) == 0; }

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

}  // namespace

class TestAppStartup : public QObject {
  Q_OBJECT

 private slots:
  void openFailuresSayWhy_data();
  void openFailuresSayWhy();
  void readOnlyDiskSaysReadOnly();
};

void TestAppStartup::openFailuresSayWhy_data() {
  QTest::addColumn<QString>("situation");
  QTest::addColumn<QString>("expected");  // the start of the details: the sentence for the user
  QTest::newRow("file without permissions")
      << QStringLiteral("file-000") << QStringLiteral("The chat history could not be opened: permission denied.");
  QTest::newRow("folder that cannot be entered")
      << QStringLiteral("parent-000") << QStringLiteral("The chat history could not be opened: permission denied.");
  QTest::newRow("folder that cannot be written, no history yet")
      << QStringLiteral("folder-555") << QStringLiteral("The chat history could not be opened: permission denied.");
  QTest::newRow("damaged file that cannot be set aside")
      << QStringLiteral("damaged") << QStringLiteral("The chat history could not be opened: the file is damaged.");
  QTest::newRow("data folder below a file")
      << QStringLiteral("below-file")
      << QStringLiteral("The chat history could not be opened: %1 is a file, not a folder.");
}

void TestAppStartup::openFailuresSayWhy() {
  QFETCH(QString, situation);
  QFETCH(QString, expected);
  QTemporaryDir dir;
  QVERIFY(setMode(dir.path(), 0755));  // nobody may come in
  const QString root = dir.path();
  QString dataDir = QDir(root).filePath(QStringLiteral("data"));
  QString restore;  // a folder whose permissions go back for the clean-up
  QVERIFY(QDir().mkpath(dataDir));
  QVERIFY(setMode(dataDir, 0777));
  const QString database = QDir(dataDir).filePath(QStringLiteral("pagedchat.sqlite3"));
  if (situation == QLatin1String("file-000")) {
    QVERIFY(writeFile(database, QByteArray()));
    QVERIFY(setMode(database, 0));
  } else if (situation == QLatin1String("parent-000")) {
    restore = dataDir;
    dataDir = QDir(dataDir).filePath(QStringLiteral("inner"));
    QVERIFY(setMode(restore, 0));
  } else if (situation == QLatin1String("folder-555")) {
    QVERIFY(setMode(dataDir, 0555));
    restore = dataDir;
  } else if (situation == QLatin1String("damaged")) {
    QVERIFY(writeFile(database, QByteArray("this is not a database, only text. ").repeated(200)));
    QVERIFY(setMode(database, 0644));
    QVERIFY(setMode(dataDir, 0555));
    restore = dataDir;
  } else if (situation == QLatin1String("below-file")) {
    QVERIFY(writeFile(QDir(root).filePath(QStringLiteral("blocker")), QByteArray("x")));
    dataDir = QDir(root).filePath(QStringLiteral("blocker/data"));
    expected = expected.arg(QDir::toNativeSeparators(QDir(root).filePath(QStringLiteral("blocker"))));
  }

  QString error;
  const Shown shown = startupError(dataDir, /*unprivileged=*/true, &error);
  if (!restore.isEmpty()) setMode(restore, 0755);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  QVERIFY(!shown.started);
  QCOMPARE(shown.headline, QStringLiteral("PagedChat could not open its chat data."));
  QVERIFY2(shown.details.startsWith(expected + QStringLiteral("\n\n")), qPrintable(shown.details));
  QVERIFY2(!shown.details.contains(QLatin1String("could not be saved")), qPrintable(shown.details));
  QVERIFY2(!shown.details.contains(QLatin1String("read-only")), qPrintable(shown.details));
  QVERIFY2(!storefault::looksLikeSql(shown.details), qPrintable(shown.details));
  QVERIFY(shown.retryable);                   // a permission, a folder, a file set aside: each may be fixed meanwhile
  if (situation == QLatin1String("damaged"))  // left as it was
    QCOMPARE(QDir(QFileInfo(database).path()).entryList({QStringLiteral("*.corrupt-*")}, QDir::Files).size(), 0);
}

void TestAppStartup::readOnlyDiskSaysReadOnly() {
  // The one start-up failure that is a read-only disk: a -wal holding the newest messages without
  // the -shm index SQLite needs to read it, which a read-only disk cannot get.
  QTemporaryDir dir;
  const QString data = QDir(dir.path()).filePath(QStringLiteral("data"));
  const QString scratch = QDir(dir.path()).filePath(QStringLiteral("scratch"));
  QVERIFY(QDir().mkpath(data));
  FaultyDisk disk(data);
  {
    ChatStore store(scratch);  // open while copying: the -wal still holds the transactions
    const qint64 id = store.createConversation(QStringLiteral("Kept in the WAL"));
    store.addMessage(id, MessageRole::kUser, QStringLiteral("Hello"));
    const QString target = QDir(data).filePath(QStringLiteral("pagedchat.sqlite3"));
    for (const char* suffix : {"", "-wal"})
      QVERIFY(QFile::copy(store.databasePath() + QLatin1String(suffix), target + QLatin1String(suffix)));
    QVERIFY(QFileInfo(target + QLatin1String("-wal")).size() > 0);
  }
  disk.setMode(FaultyDisk::Mode::kReadOnly);
  QString error;
  const Shown shown = startupError(data, /*unprivileged=*/false, &error);
  QVERIFY(!shown.started);
  QVERIFY2(shown.details.startsWith(
               QStringLiteral("The chat history could not be opened: the disk or the file is read-only.\n\n")),
           qPrintable(shown.details));
  QVERIFY2(!shown.details.contains(QLatin1String("could not be saved")), qPrintable(shown.details));
}

QTEST_GUILESS_MAIN(TestAppStartup)
#include "test_app_startup.moc"
