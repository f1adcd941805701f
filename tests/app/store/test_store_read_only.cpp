// The chat database on a disk that is read-only when the app starts (FaultyDisk: SQLite's system
// calls answer EROFS for the folder, as a read-only mount does; sqlite_faults.h), or a file the
// user may not write: the history opens for reading, says so in the banner, refuses what it
// cannot save without losing the user's text, and writes again once it can.
#include <QTest>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cstdio>
#include <functional>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/controllers/app_controller.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/store_health.h"
#include "app_test_util.h"
#include "sqlite_faults.h"
#include "store_fault_util.h"
#include "test_paths.h"

using namespace storefault;
using pagedchat::FinishReason;

class TestStoreReadOnly : public QObject {
  Q_OBJECT

 private slots:
  void readOnlyDiskShowsTheHistory_data();
  void readOnlyDiskShowsTheHistory();
  void readOnlyDiskThatGoesAway();
  void readOnlyDiskNeverSkipsTheWal();
  void readOnlyFileOfAUser();
};

namespace {
/// The chat database of an earlier run in `dataDir`: one conversation with a question and its
/// answer. `walLeft`: as a crash leaves it, the newest transactions still in the -wal file
/// (copied, with the -shm when `withShm`, while the writing connection is open in `scratchDir`).
/// Returns the conversation's id, 0 on failure.
qint64 writeEarlierHistory(const QString& dataDir, bool walLeft, const QString& scratchDir, bool withShm = true) {
  ChatStore store(walLeft ? scratchDir : dataDir);
  const qint64 id = store.createConversation(QStringLiteral("Read me later"));
  store.addMessage(id, MessageRole::kUser, QStringLiteral("Hello there"));
  store.addMessage(id, MessageRole::kAssistant, QStringLiteral("General Kenobi"), FinishReason::kLength);
  if (!walLeft) return id;
  const QString target = QDir(dataDir).filePath(QStringLiteral("pagedchat.sqlite3"));
  if (!QDir().mkpath(dataDir)) return 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (!withShm && qstrcmp(suffix, "-shm") == 0) continue;
    if (!QFile::copy(store.databasePath() + QLatin1String(suffix), target + QLatin1String(suffix))) return 0;
  }
  return QFileInfo(target + QLatin1String("-wal")).size() > 0 ? id : 0;
}
}  // namespace

void TestStoreReadOnly::readOnlyDiskShowsTheHistory_data() {
  QTest::addColumn<bool>("walLeft");
  QTest::newRow("closed cleanly") << false;
  QTest::newRow("WAL left by a crash") << true;
}

void TestStoreReadOnly::readOnlyDiskShowsTheHistory() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QFETCH(bool, walLeft);
  QTemporaryDir dir;
  const QString data = QDir(dir.path()).filePath(QStringLiteral("data"));
  FaultyDisk disk(data);
  const qint64 conversation = writeEarlierHistory(data, walLeft, QDir(dir.path()).filePath(QStringLiteral("scratch")));
  QVERIFY(conversation != 0);
  disk.setMode(FaultyDisk::Mode::kReadOnly);

  AppController app(apptest::optionsFor(data));
  app.start();
  QVERIFY(app.store()->isReadOnly());
  // The banner: what works and what does not, in plain words; the detail apart; a retry.
  QVERIFY2(app.errors()->text().startsWith(QLatin1String("The chat history can only be read")),
           qPrintable(app.errors()->text()));
  QVERIFY(app.errors()->retryable());
  QVERIFY2(!looksLikeSql(app.errors()->text()) && !looksLikeSql(app.errors()->detail()),
           qPrintable(app.errors()->detail()));
  QVERIFY(!app.errors()->detail().isEmpty());
  qInfo("banner: %s | details: %s", qPrintable(app.errors()->text()), qPrintable(app.errors()->detail()));

  // Everything written before is there, in the list and in the pane.
  QCOMPARE(app.conversations()->rowCount(), 1);
  QCOMPARE(app.conversations()->idAt(0), conversation);
  PaneState* session = app.panes()->paneAt(0);
  QVERIFY(session);
  QCOMPARE(session->conversationId(), conversation);
  QCOMPARE(session->messages()->rowCount(), 2);
  QCOMPARE(session->messages()->textAt(1), QStringLiteral("General Kenobi"));

  // A question cannot be saved, so it is not sent; the text stays in the input box.
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  session->setMaxTokens(20);
  session->setInputText(QStringLiteral("Still there?"));
  QVERIFY(!session->send());
  QCOMPARE(session->inputText(), QStringLiteral("Still there?"));
  QVERIFY2(session->errorText().startsWith(QLatin1String("Not sent: ")), qPrintable(session->errorText()));
  // Continuing the cut-off answer is refused too (its text could not be saved).
  QVERIFY(session->canContinue());
  QVERIFY(!session->continueReply());
  QVERIFY2(session->errorText().startsWith(QLatin1String("Not continued: The chat history could not be saved")),
           qPrintable(session->errorText()));
  QVERIFY(!session->isBusy());
  // An edit is refused too; the edited text (whose editor closed with its row) goes to the input
  // box, above what was typed there, and the pane shows the stored branch again.
  const QString edited = QStringLiteral("Hello there, edited");
  QVERIFY(!session->editMessage(0, edited));
  QCOMPARE(session->inputText(), edited + QLatin1String("\nStill there?"));
  QVERIFY2(session->errorText().startsWith(QLatin1String("Not sent: ")) &&
               session->errorText().endsWith(QLatin1String("Your text is back in the input box.")),
           qPrintable(session->errorText()));
  QCOMPARE(session->messages()->rowCount(), 2);
  QCOMPARE(session->messages()->textAt(0), QStringLiteral("Hello there"));
  QCOMPARE(session->messages()->textAt(1), QStringLiteral("General Kenobi"));
  // A regenerate has no text of the user's to keep, and says so in its own words.
  QVERIFY(!session->regenerate());
  QVERIFY2(session->errorText().startsWith(QLatin1String("No new answer: ")), qPrintable(session->errorText()));
  QCOMPARE(session->messages()->rowCount(), 2);
  QCOMPARE(session->messages()->textAt(1), QStringLiteral("General Kenobi"));
  session->setInputText(QStringLiteral("Still there?"));
  // A delete is refused: the conversation stays in the list and in its pane, and the banner says why.
  app.history()->deleteConversation(conversation);
  QVERIFY2(app.errors()->text().startsWith(QLatin1String("The chat history could not be saved: the disk or the file "
                                                         "is read-only")),
           qPrintable(app.errors()->text()));
  QCOMPARE(app.conversations()->rowCount(), 1);
  QCOMPARE(session->conversationId(), conversation);
  QCOMPARE(session->messages()->rowCount(), 2);
  QCOMPARE(app.history()->undoDeleteCount(), 0);
  app.errors()->retry();  // still read-only: nothing changes, and the banner still says why
  QVERIFY(app.store()->isReadOnly());
  QVERIFY(app.errors()->retryable());
  QVERIFY2(app.errors()->text().startsWith(QLatin1String("The chat history can only be read")),
           qPrintable(app.errors()->text()));

  QVERIFY(disk.faultsInjected() > 0);
  // Writable again: the app notices on its own, the banner goes, and the question goes through.
  disk.setMode(FaultyDisk::Mode::kHealthy);
  QTRY_VERIFY_WITH_TIMEOUT(!app.store()->isReadOnly(), 5 * StoreHealth::kRetryIntervalMs);
  QTRY_COMPARE(app.errors()->text(), QString());
  QCOMPARE(session->errorText(), QString());  // the pane's "Not sent" line goes with the banner
  QSignalSpy finished(session, &PaneState::replyFinished);
  QVERIFY(session->send());
  QVERIFY(finished.wait(60000));
  const QList<MessageRecord> stored = app.store()->messages(conversation);
  QCOMPARE(stored.size(), 4);
  QCOMPARE(stored.at(1).text, QStringLiteral("General Kenobi"));
  QCOMPARE(stored.at(2).text, QStringLiteral("Still there?"));
}

void TestStoreReadOnly::readOnlyDiskThatGoesAway() {
  // The read-only disk is unmounted under the running app (here: its folder moves away while the
  // app holds its files open, as an unmount leaves them): trying to write again must not make a
  // new, empty history in the folder left behind; the app keeps showing what it read.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  const QString mountPoint = QDir(dir.path()).filePath(QStringLiteral("disk"));
  const QString data = QDir(mountPoint).filePath(QStringLiteral("data"));
  FaultyDisk disk(mountPoint);
  const qint64 conversation = writeEarlierHistory(data, false, QString());
  QVERIFY(conversation != 0);
  disk.setMode(FaultyDisk::Mode::kReadOnly);
  // The folder under the mount point, as it will be seen once the disk is gone (writable).
  const QString leftBehind = data;
  {
    AppController app(apptest::optionsFor(data));
    QVERIFY(app.store()->isReadOnly());
    QCOMPARE(app.conversations()->rowCount(), 1);
    QVERIFY(QDir().rename(mountPoint, mountPoint + QLatin1String("-unmounted")));  // gone
    disk.setMode(FaultyDisk::Mode::kHealthy);  // what shows there now is a writable folder
    QVERIFY(QDir().mkpath(leftBehind));
    app.errors()->retry();
    app.errors()->retry();
    QVERIFY(app.store()->isReadOnly());
    QVERIFY2(!QFileInfo::exists(QDir(leftBehind).filePath(QStringLiteral("pagedchat.sqlite3"))),
             "a new database was made where the old one was");
    QCOMPARE(app.store()->conversations().size(), 1);  // what was read stays readable
    QCOMPARE(app.store()->messages(conversation).size(), 2);
    QVERIFY2(app.errors()->text().startsWith(QLatin1String("The chat history can only be read")),
             qPrintable(app.errors()->text()));
  }
}

namespace {
/// Runs `check` as a user without privileges: in a child process switched to nobody (65534) when
/// this process is root (root ignores file permissions), else here. Returns what `check` returned
/// (0 = passed, else the number of the step that failed), or -1 when the child could not run it.
int asUnprivilegedUser(const std::function<int()>& check) {
  if (::geteuid() != 0) return check();
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::_exit(check());
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}
}  // namespace

void TestStoreReadOnly::readOnlyFileOfAUser() {
  // Read-only by permissions, for a user (not a disk): the file without write permission, in a
  // folder the user may write (SQLite then makes its -wal and -shm read-only too) and in one the
  // user may not. The history opens for reading; after chmod the store writes again, without a
  // restart.
  QTemporaryDir dir;
  QVERIFY(QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup |
                                                QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther));
  const QString own = QDir(dir.path()).filePath(QStringLiteral("own")), foreign = QDir(dir.path()).filePath("foreign");
  QVERIFY(writeEarlierHistory(own, false, QString()) != 0);
  QVERIFY(writeEarlierHistory(foreign, false, QString()) != 0);
  const QString ownFile = QDir(own).filePath(QStringLiteral("pagedchat.sqlite3"));
  const QString foreignFile = QDir(foreign).filePath(QStringLiteral("pagedchat.sqlite3"));
  if (::geteuid() == 0) {  // `own` belongs to nobody; `foreign` (and its file) stays root's
    for (const QString& path : {own, ownFile}) QVERIFY(::chown(QFile::encodeName(path).constData(), 65534, 65534) == 0);
  } else {  // a folder this user may not write: not makeable without root
    QVERIFY(QFile::setPermissions(foreign, QFile::ReadOwner | QFile::ExeOwner));
  }
  QVERIFY(::chmod(QFile::encodeName(ownFile).constData(), 0444) == 0);
  QVERIFY(::chmod(QFile::encodeName(foreignFile).constData(), 0444) == 0);
  const int failedStep = asUnprivilegedUser([&] {
    try {
      ChatStore store(own);
      if (!store.isReadOnly()) return 1;
      if (store.conversations().size() != 1) return 2;
      try {
        store.reopenForWriting();
        return 3;  // still 0444: must not work
      } catch (const StoreError&) {
      }
      if (::chmod(QFile::encodeName(ownFile).constData(), 0644) != 0) return 4;
      store.reopenForWriting();
      if (store.isReadOnly()) return 5;
      store.createConversation(QStringLiteral("Written after chmod"));
      if (store.conversations().size() != 2) return 6;
      ChatStore other(foreign);  // neither the file nor its folder may be written
      if (!other.isReadOnly()) return 7;
      if (other.messages(other.conversations().constFirst().id).size() != 2) return 8;
      return 0;
    } catch (const StoreError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 9;
    }
  });
  QCOMPARE(failedStep, 0);
  // A run that read the 0444 file left its -wal/-shm 0444 behind; the next start, after chmod,
  // writes at once (the banner would say "can only be read" until the first retry otherwise).
  const int failedLaterStep = asUnprivilegedUser([&] {
    try {
      if (::chmod(QFile::encodeName(ownFile).constData(), 0444) != 0) return 1;
      {
        ChatStore reader(own);
        if (!reader.isReadOnly()) return 2;
      }
      if (!QFileInfo::exists(ownFile + QLatin1String("-shm"))) return 3;  // what the case needs
      if (QFileInfo(ownFile + QLatin1String("-shm")).isWritable()) return 4;
      if (::chmod(QFile::encodeName(ownFile).constData(), 0644) != 0) return 5;
      ChatStore next(own);
      if (next.isReadOnly()) return 6;
      return 0;
    } catch (const StoreError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 9;
    }
  });
  QCOMPARE(failedLaterStep, 0);
  QFile::setPermissions(foreign, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);  // for the clean-up
}

void TestStoreReadOnly::readOnlyDiskNeverSkipsTheWal() {
  // A -wal holding transactions but no -shm on a read-only disk: SQLite cannot read the -wal,
  // and reading the file alone (immutable=1) would show older history. The open must fail, with
  // a clear kind, and leave the files as they are.
  QTemporaryDir dir;
  const QString data = QDir(dir.path()).filePath(QStringLiteral("data"));
  FaultyDisk disk(data);
  QVERIFY(writeEarlierHistory(data, /*walLeft=*/true, QDir(dir.path()).filePath(QStringLiteral("scratch")),
                              /*withShm=*/false) != 0);
  const QString wal = QDir(data).filePath(QStringLiteral("pagedchat.sqlite3-wal"));
  const qint64 walSize = QFileInfo(wal).size();
  disk.setMode(FaultyDisk::Mode::kReadOnly);
  try {
    ChatStore store(data);
    QFAIL("a database whose -wal cannot be read opened");
  } catch (const StoreError& e) {
    // Read-only, and why: making the disk writable is the way out (the start-up window's Try again).
    QCOMPARE(e.kind(), StoreError::Kind::kReadOnly);
    QCOMPARE(StoreHealth::userMessage(e),
             QStringLiteral("The chat history could not be opened: the disk or the file is read-only."));
    QVERIFY2(e.detail().find("-shm") != std::string::npos, e.detail().c_str());
    // SQLite's words and the file once each.
    const QString detail = QString::fromStdString(e.detail());
    QVERIFY2(detail.count(QLatin1String("SQLite:")) == 1, qPrintable(detail));
    QVERIFY2(detail.count(QLatin1String("pagedchat.sqlite3")) == 1, qPrintable(detail));
    qInfo("detail: %s", qPrintable(detail));
  }
  QCOMPARE(QFileInfo(wal).size(), walSize);
}

QTEST_MAIN(TestStoreReadOnly)
#include "test_store_read_only.moc"
