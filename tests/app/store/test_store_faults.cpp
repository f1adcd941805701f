// The chat database failing under a running app: locked by another connection, on a full disk
// (FaultyDisk: SQLite's writes that grow a file get ENOSPC, sqlite_faults.h; and RLIMIT_FSIZE:
// every write past a file's first byte fails with EFBIG), on a failing disk (EIO), damaged (a
// read-only disk or file: test_store_read_only.cpp).
// Each time: a plain-language message in the window's banner (never SQL) with the technical
// detail apart, Retry, nothing the user wrote or the model streamed lost, no crash. Also: the
// engine's load warnings reach the banner.
#include <QTest>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QSemaphore>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <csignal>
#include <cstdio>
#include <memory>

#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/app_startup.h"
#include "app/controllers/app_controller.h"
#include "app/engine/engine_worker.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/store_health.h"
#include "app_test_util.h"
#include "sqlite_faults.h"
#include "store_fault_util.h"
#include "test_paths.h"

using pagedchat::FinishReason;

namespace {

using namespace storefault;

/// RLIMIT_FSIZE of this process set to 1 byte while alive (every write past the first byte of a
/// regular file fails with EFBIG, as on a full disk), with SIGXFSZ ignored.
class NoFileGrowth {
 public:
  NoFileGrowth() {
    std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit limit = saved_;
    limit.rlim_cur = 1;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~NoFileGrowth() { lift(); }
  void lift() { ::setrlimit(RLIMIT_FSIZE, &saved_); }

 private:
  rlimit saved_{};
};

QString replyTextIn(ChatStore* store, qint64 conversationId) {
  const QList<MessageRecord> messages = store->messages(conversationId);
  return messages.isEmpty() ? QString() : messages.constLast().text;
}

}  // namespace

class TestStoreFaults : public QObject {
  Q_OBJECT

 private slots:
  void lockedDatabaseKeepsEverything();
  void diskFaultKeepsEverything_data();
  void diskFaultKeepsEverything();
  void corruptDatabaseIsKeptAndReplaced_data();
  void corruptDatabaseIsKeptAndReplaced();
  void lockedAtStartTriesAgain();
  void cleanUpUnderALockPromisesNothing();
  void lockEndsAndItsMessagesGo();
  void newerHistoryAtStartSaysWhatToDo_data();
  void newerHistoryAtStartSaysWhatToDo();
  void exportNeverFollowsASymlink();
  void userMessagesArePlain();
  void engineWarningReachesBanner();

 private:
  /// Streams one reply in pane 0 while `breakStore` has made writes fail, then `repairStore`
  /// mends it: the banner says so in plain words, Retry writes the whole reply and a rename.
  void streamThroughFault(AppController& app, const std::function<void()>& breakStore,
                          const std::function<void()>& repairStore, const QString& expectedReason);
};

void TestStoreFaults::streamThroughFault(AppController& app, const std::function<void()>& breakStore,
                                         const std::function<void()>& repairStore, const QString& expectedReason) {
  PaneState* session = app.panes()->paneAt(0);
  QVERIFY(session);
  session->setMaxTokens(60);
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  QSignalSpy finished(session, &PaneState::replyFinished);
  {
    apptest::WorkerGate gate(app.engine()->worker());  // the reply cannot end before the fault
    session->setInputText(QStringLiteral("Once upon a time"));
    QVERIFY(session->send());  // the question is committed before the request is submitted
    breakStore();
  }
  QVERIFY(finished.wait(60000));
  const qint64 conversation = session->conversationId();
  const QString streamed = session->messages()->textAt(session->messages()->rowCount() - 1);
  QVERIFY(!streamed.isEmpty());

  // The banner: plain words, the detail apart, a retry; the reply waits in memory.
  QVERIFY2(app.errors()->text().startsWith(QLatin1String("The chat history could not be saved: ") + expectedReason),
           qPrintable(app.errors()->text()));
  QVERIFY2(!looksLikeSql(app.errors()->text()), qPrintable(app.errors()->text()));
  QVERIFY2(!looksLikeSql(app.errors()->detail()), qPrintable(app.errors()->detail()));
  QVERIFY2(app.errors()->detail().contains(QLatin1String("SQLite")), qPrintable(app.errors()->detail()));
  QVERIFY(app.errors()->retryable());
  QVERIFY(app.store()->health()->pendingCount() >= 1);
  qInfo("banner: %s | details: %s", qPrintable(app.errors()->text()), qPrintable(app.errors()->detail()));

  // A rename while the store is broken waits too; a send is refused with the text kept.
  app.history()->renameConversation(conversation, QStringLiteral("Renamed while broken"));
  QVERIFY(app.errors()->retryable());
  session->setInputText(QStringLiteral("A second question"));
  QVERIFY(!session->send());
  QCOMPARE(session->inputText(), QStringLiteral("A second question"));
  QVERIFY2(session->errorText().startsWith(QLatin1String("Not sent: The chat history could not be saved")),
           qPrintable(session->errorText()));

  // Retry while still broken: still there, nothing dropped.
  app.errors()->retry();
  QVERIFY(app.errors()->retryable());
  QVERIFY(app.store()->health()->pendingCount() >= 2);

  repairStore();
  app.errors()->retry();
  QCOMPARE(app.store()->health()->pendingCount(), 0);
  QCOMPARE(app.errors()->text(), QString());
  QCOMPARE(replyTextIn(app.store(), conversation), streamed);
  QCOMPARE(app.store()->messages(conversation).constLast().finishReason,
           std::optional(finished.constFirst().constFirst().value<FinishReason>()));
  QCOMPARE(app.store()->conversation(conversation).title, QStringLiteral("Renamed while broken"));
  QTRY_COMPARE(session->title(), QStringLiteral("Renamed while broken"));
  QVERIFY(session->send());  // and the next question goes through
  QVERIFY(finished.wait(60000));
  QCOMPARE(app.store()->messages(conversation).size(), 4);
}

void TestStoreFaults::lockedDatabaseKeepsEverything() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController app(apptest::optionsFor(dir));
  app.start();
  std::unique_ptr<OtherConnection> other;
  streamThroughFault(
      app,
      [&] {
        other = std::make_unique<OtherConnection>(app.store()->databasePath());
        QVERIFY(other->exec(QStringLiteral("BEGIN EXCLUSIVE")));
      },
      [&] {
        QVERIFY(other->exec(QStringLiteral("ROLLBACK")));
        other.reset();
      },
      QStringLiteral("another program is using the chat history file"));
}

void TestStoreFaults::diskFaultKeepsEverything_data() {
  QTest::addColumn<QString>("fault");
  QTest::addColumn<QString>("reason");
  QTest::newRow("full disk (ENOSPC)") << QStringLiteral("full") << QStringLiteral("the disk is full");
  QTest::newRow("RLIMIT_FSIZE (EFBIG)") << QStringLiteral("fsize") << QString();
  QTest::newRow("failing disk (EIO)") << QStringLiteral("eio") << QStringLiteral("the disk reported an error");
  // SQLite answers a write refused with EROFS as an I/O error (only ENOSPC is "full").
  QTest::newRow("turns read-only (EROFS)") << QStringLiteral("erofs") << QStringLiteral("the disk reported an error");
}

void TestStoreFaults::diskFaultKeepsEverything() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QFETCH(QString, fault);
  QFETCH(QString, reason);
  QTemporaryDir dir;
  FaultyDisk disk(dir.path());
  AppController app(apptest::optionsFor(dir));
  app.start();
  if (fault == QLatin1String("fsize")) {
    std::unique_ptr<NoFileGrowth> limit;
    streamThroughFault(
        app, [&] { limit = std::make_unique<NoFileGrowth>(); }, [&] { limit.reset(); }, reason);
    return;
  }
  const FaultyDisk::Mode mode = fault == QLatin1String("full")    ? FaultyDisk::Mode::kFull
                                : fault == QLatin1String("erofs") ? FaultyDisk::Mode::kReadOnly
                                                                  : FaultyDisk::Mode::kIoError;
  streamThroughFault(
      app, [&] { disk.setMode(mode); },
      [&] {
        QVERIFY(disk.faultsInjected() > 0);  // the fault was met, below SQLite
        disk.setMode(FaultyDisk::Mode::kHealthy);
      },
      reason);
}

void TestStoreFaults::corruptDatabaseIsKeptAndReplaced_data() {
  QTest::addColumn<QString>("damage");
  QTest::newRow("not a database") << QStringLiteral("garbage");
  QTest::newRow("damaged pages") << QStringLiteral("pages");
}

void TestStoreFaults::corruptDatabaseIsKeptAndReplaced() {
  QFETCH(QString, damage);
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  if (damage == QLatin1String("garbage")) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray("this is not a database, just text that happens to be here. ").repeated(200));
  } else {
    {
      ChatStore store(dir.path());
      for (int i = 0; i < 200; ++i) {
        const qint64 c = store.createConversation(QStringLiteral("conversation %1").arg(i));
        store.addMessage(c, MessageRole::kUser, QString(QStringLiteral("text %1 ").arg(i)).repeated(40));
      }
    }  // closed: checkpointed into the main file
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.size() > 8 * 4096);
    QRandomGenerator rng(7);
    for (qint64 page = 2; page * 4096 < f.size(); page += 3) {  // every third page after the schema
      QByteArray noise(4096, '\0');
      for (char& ch : noise) ch = static_cast<char>(rng.bounded(256));
      f.seek(page * 4096);
      f.write(noise);
    }
  }
  QFile original(path);
  QVERIFY(original.open(QIODevice::ReadOnly));
  const QByteArray bytes = original.readAll();
  original.close();

  AppController app(apptest::optionsFor(dir));  // no throw: it starts
  QVERIFY2(app.errors()->text().startsWith(QLatin1String("The chat history file was damaged")),
           qPrintable(app.errors()->text()));
  QVERIFY2(!looksLikeSql(app.errors()->text()), qPrintable(app.errors()->text()));
  QVERIFY(!app.errors()->detail().isEmpty());
  const QStringList copies = QDir(dir.path()).entryList({QStringLiteral("pagedchat.sqlite3.corrupt-*")}, QDir::Files);
  QCOMPARE(copies.size(), 1);
  QVERIFY2(app.errors()->text().contains(copies.constFirst()), qPrintable(app.errors()->text()));
  QFile kept(dir.filePath(copies.constFirst()));
  QVERIFY(kept.open(QIODevice::ReadOnly));
  QCOMPARE(kept.readAll(), bytes);  // the user's file, byte for byte
  // A fresh history that works.
  QCOMPARE(app.conversations()->rowCount(), 0);
  app.history()->newConversation();
  QCOMPARE(app.store()->conversationCount(), 1);
}

void TestStoreFaults::lockedAtStartTriesAgain() {
  // Another program holds the database so that it cannot even be read (SQLite's exclusive
  // locking mode) when PagedChat starts: the error window says so with Try again; trying while it
  // is still locked shows it again, and once the lock is gone the app starts with the history.
  QTemporaryDir dir;
  {
    ChatStore store(dir.path());
    store.createConversation(QStringLiteral("Kept"));
  }
  auto other = std::make_unique<OtherConnection>(QDir(dir.path()).filePath(QStringLiteral("pagedchat.sqlite3")));
  QVERIFY(other->exec(QStringLiteral("PRAGMA locking_mode = EXCLUSIVE")));
  QVERIFY(other->exec(QStringLiteral("BEGIN EXCLUSIVE")));
  QVERIFY(other->exec(QStringLiteral("UPDATE conversations SET title = title")));
  QStringList shown;
  QList<bool> retryable;
  std::unique_ptr<AppController> app = startAppController(
      apptest::optionsFor(dir), nullptr, [&](const QString&, const QString& details, bool r) {
        shown << details;
        retryable << r;
        if (shown.size() == 2) {  // the user gets the other program to let go, then tries again
          other->exec(QStringLiteral("COMMIT"));
          other.reset();
        }
        return true;
      });
  QVERIFY(app);
  QCOMPARE(shown.size(), 2);
  QCOMPARE(retryable, QList<bool>({true, true}));
  QVERIFY2(shown.constFirst().startsWith(QLatin1String("The chat history could not be opened: another program is using "
                                                       "the chat history file.")),
           qPrintable(shown.constFirst()));
  QVERIFY2(!looksLikeSql(shown.constFirst()), qPrintable(shown.constFirst()));
  QCOMPARE(app->conversations()->rowCount(), 1);
  QCOMPARE(app->store()->conversations().constFirst().title, QStringLiteral("Kept"));

  // Giving up: no controller.
  OtherConnection again(QDir(dir.path()).filePath(QStringLiteral("pagedchat.sqlite3")));
  app.reset();
  QVERIFY(again.exec(QStringLiteral("PRAGMA locking_mode = EXCLUSIVE")));
  QVERIFY(again.exec(QStringLiteral("BEGIN EXCLUSIVE")));
  QVERIFY(again.exec(QStringLiteral("UPDATE conversations SET title = title")));
  int asked = 0;
  QVERIFY(!startAppController(apptest::optionsFor(dir), nullptr, [&](const QString&, const QString&, bool) {
    ++asked;
    return false;
  }));
  QCOMPARE(asked, 1);
  QVERIFY(again.exec(QStringLiteral("COMMIT")));
}

void TestStoreFaults::cleanUpUnderALockPromisesNothing() {
  // Another program holds the write lock (reads still work) when PagedChat starts: the start-up
  // clean-up of deleted conversations waits and is retried, and the banner says so without the
  // "keeps what you wrote" promise (the user wrote nothing); a write of the user's brings it.
  QTemporaryDir dir;
  {
    ChatStore store(dir.path());
    store.createConversation(QStringLiteral("Kept"));
    store.softDeleteConversation(store.createConversation(QStringLiteral("Deleted")));
  }
  auto other = std::make_unique<OtherConnection>(QDir(dir.path()).filePath(QStringLiteral("pagedchat.sqlite3")));
  QVERIFY(other->exec(QStringLiteral("BEGIN IMMEDIATE")));
  AppController app(apptest::optionsFor(dir));
  app.start();
  QCOMPARE(app.conversations()->rowCount(), 1);
  QCOMPARE(app.store()->health()->pendingCount(), 1);
  QVERIFY2(app.errors()->text() ==
               QLatin1String("The chat history could not be saved: another program is using the chat history file. "
                             "PagedChat tries again."),
           qPrintable(app.errors()->text()));
  QVERIFY(app.errors()->retryable());

  const qint64 kept = app.conversations()->idAt(0);
  // A delete is refused, in its own words: a retry of the waiting clean-up (the banner's Retry)
  // must not turn them into a promise to delete it later.
  app.history()->deleteConversation(kept);
  const QString refused = QStringLiteral(
      "The chat history could not be saved: another program is using the chat "
      "history file.");
  QCOMPARE(app.errors()->text(), refused);
  QVERIFY(!app.store()->health()->retryNow());
  QCOMPARE(app.errors()->text(), refused);
  QCOMPARE(app.conversations()->rowCount(), 1);
  app.history()->renameConversation(kept, QStringLiteral("Renamed while locked"));
  QVERIFY2(app.errors()->text().endsWith(QLatin1String("PagedChat keeps what you wrote and tries again; nothing is "
                                                       "lost while it stays open.")),
           qPrintable(app.errors()->text()));

  QVERIFY(other->exec(QStringLiteral("COMMIT")));
  other.reset();
  QTRY_COMPARE_WITH_TIMEOUT(app.store()->health()->pendingCount(), 0, 5 * StoreHealth::kRetryIntervalMs);
  QCOMPARE(app.errors()->text(), QString());
  QCOMPARE(app.store()->conversation(kept).title, QStringLiteral("Renamed while locked"));
  QCOMPARE(app.store()->purgeDeletedConversations(), 0);  // the retried clean-up did it
  QCOMPARE(app.conversations()->rowCount(), 1);           // and the refused delete stayed refused
}

void TestStoreFaults::lockEndsAndItsMessagesGo() {
  // Sends refused under another program's lock keep nothing to retry, yet the banner and the
  // panes' "Not sent" lines go on their own once the lock has; a "send to all" tried again does
  // not pile its text up in the input boxes.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController app(apptest::optionsFor(dir));
  app.start();
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  PaneState* first = app.panes()->paneAt(0);
  PaneState* second = app.panes()->addPane();
  QVERIFY(first && second);
  second->setInputText(QStringLiteral("draft two"));
  auto other = std::make_unique<OtherConnection>(app.store()->databasePath());
  QVERIFY(other->exec(QStringLiteral("BEGIN IMMEDIATE")));

  first->setInputText(QStringLiteral("lock test"));
  QVERIFY(!first->send());
  QCOMPARE(first->inputText(), QStringLiteral("lock test"));
  for (int i = 0; i < 2; ++i) QCOMPARE(app.panes()->sendToAll(QStringLiteral("to all")), 0);
  QCOMPARE(first->inputText(), QStringLiteral("to all\nlock test"));
  QCOMPARE(second->inputText(), QStringLiteral("to all\ndraft two"));
  for (PaneState* s : {first, second})
    QVERIFY2(s->errorText().startsWith(QLatin1String("Not sent: ")), qPrintable(s->errorText()));
  QVERIFY2(app.errors()->text().startsWith(QLatin1String("The chat history could not be saved: another program")),
           qPrintable(app.errors()->text()));
  QCOMPARE(app.store()->health()->pendingCount(), 0);

  QVERIFY(other->exec(QStringLiteral("COMMIT")));
  other.reset();
  QTRY_COMPARE_WITH_TIMEOUT(app.errors()->text(), QString(), 5 * StoreHealth::kRetryIntervalMs);
  QCOMPARE(first->errorText(), QString());
  QCOMPARE(second->errorText(), QString());
  // Sent to all now: the copies the refused tries put back go, the panes' own drafts stay.
  QCOMPARE(app.panes()->sendToAll(QStringLiteral("to all")), 2);
  QCOMPARE(first->inputText(), QStringLiteral("lock test"));
  QCOMPARE(second->inputText(), QStringLiteral("draft two"));
}

void TestStoreFaults::newerHistoryAtStartSaysWhatToDo_data() {
  QTest::addColumn<bool>("walLeft");
  QTest::newRow("rollback journal") << false;
  QTest::newRow("WAL left by the newer version") << true;
}

namespace {
/// Reads `path` whole ("" when it is not there).
QByteArray contentsOf(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
}  // namespace

void TestStoreFaults::newerHistoryAtStartSaysWhatToDo() {
  // A history written by a newer PagedChat: no Try again (waiting changes nothing), and the way
  // out is that version; the files are left as they are, a -wal that version left included
  // (closing must not checkpoint it into the file).
  QFETCH(bool, walLeft);
  QTemporaryDir dir;
  const QString path = QDir(dir.path()).filePath(QStringLiteral("pagedchat.sqlite3"));
  {
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(QFile::encodeName(path).constData(), &db), SQLITE_OK);
    const char* sql = walLeft ? "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE later(x); "
                                "PRAGMA user_version = 1000; INSERT INTO later VALUES ('newest')"
                              : "CREATE TABLE later(x); PRAGMA user_version = 1000";
    QCOMPARE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    if (walLeft) sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);  // as if killed
    sqlite3_close(db);
  }
  const QString wal = path + QLatin1String("-wal");
  const QByteArray before = contentsOf(path), walBefore = contentsOf(wal);
  QVERIFY(!before.isEmpty());
  QCOMPARE(walBefore.isEmpty(), !walLeft);
  QStringList shown;
  QList<bool> retryable;
  QVERIFY(!startAppController(apptest::optionsFor(dir), nullptr, [&](const QString&, const QString& details, bool r) {
    shown << details;
    retryable << r;
    return true;  // not offered: the caller shows no Try again, and the answer means Quit
  }));
  QCOMPARE(retryable, QList<bool>({false}));
  QVERIFY2(shown.constFirst().contains(QLatin1String("written by a newer version of PagedChat")),
           qPrintable(shown.constFirst()));
  QVERIFY2(shown.constFirst().contains(QLatin1String("Open it with the newer PagedChat that wrote it")),
           qPrintable(shown.constFirst()));
  QVERIFY(contentsOf(path) == before);
  QVERIFY(contentsOf(wal) == walBefore);
}

void TestStoreFaults::exportNeverFollowsASymlink() {
  QTemporaryDir dir;
  AppController app(apptest::optionsFor(dir));
  app.history()->newConversation();
  const qint64 id = app.history()->currentConversationId();
  QVERIFY(id != 0);
  const QString outside = dir.filePath(QStringLiteral("elsewhere.txt"));
  {
    QFile f(outside);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("keep me");
  }
  const QString link = dir.filePath(QStringLiteral("chosen.json"));
  QVERIFY(QFile::link(outside, link));
  QVERIFY(!app.history()->exportConversation(id, QUrl::fromLocalFile(link), QStringLiteral("json")));
  QVERIFY2(app.errors()->text().contains(QLatin1String("symbolic link")), qPrintable(app.errors()->text()));
  QFile f(outside);
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(f.readAll(), QByteArray("keep me"));  // untouched
  QVERIFY(QFileInfo(link).isSymLink());
  // A plain file name next to it works.
  QVERIFY(app.history()->exportConversation(id, QUrl::fromLocalFile(dir.filePath(QStringLiteral("plain.json"))),
                                            QStringLiteral("json")));
}

void TestStoreFaults::userMessagesArePlain() {
  using Kind = StoreError::Kind;
  const StoreError full("ChatStore: \"UPDATE messages SET text = ?\" failed: database or disk is full", Kind::kDiskFull,
                        true, "SQLite: database or disk is full (code 13) (database: /x/pagedchat.sqlite3)");
  QCOMPARE(StoreHealth::userMessage(full).section(QLatin1Char('.'), 0, 0),
           QStringLiteral("The chat history could not be saved: the disk is full"));
  QVERIFY(!looksLikeSql(StoreHealth::technicalDetail(full)));
  const StoreError locked("x", Kind::kBusy, false);
  QCOMPARE(StoreHealth::userMessage(locked),
           QStringLiteral("The chat history could not be read: another program is using the chat history file."));
  const StoreError import("Cannot import: \"title\" is empty", Kind::kInvalidImport);
  QCOMPARE(StoreHealth::userMessage(import), QStringLiteral("Cannot import: \"title\" is empty"));
}

void TestStoreFaults::engineWarningReachesBanner() {
  const QString gguf = testpaths::modelFile(QStringLiteral("stories260K/stories260K.gguf"));
  REQUIRE_MODEL_FILE(gguf);
  QTemporaryDir dir;
  AppOptions options = apptest::optionsFor(dir);
  options.modelPath = gguf;
  options.modelGiven = true;
  AppController app(options);
  QSignalSpy warnings(app.engine(), &LocalChatBackend::engineWarning);
  app.start();
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  QCOMPARE(warnings.size(), 0);  // its own 128 positions: nothing to say
  pagedchat::EngineConfig config = app.engine()->engineConfig();
  config.max_model_len = 256;  // above the 128 of the file's metadata
  app.engine()->setEngineConfig(config);
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady() && warnings.size() == 1, 60000);
  QVERIFY2(warnings.constFirst().constFirst().toString().contains(QLatin1String("max_model_len 256")),
           qPrintable(warnings.constFirst().constFirst().toString()));
  QTRY_VERIFY(app.errors()->text().startsWith(QLatin1String("Warning from the engine: max_model_len 256")));
}

QTEST_MAIN(TestStoreFaults)
#include "test_store_faults.moc"
