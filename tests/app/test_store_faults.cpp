// The chat database failing under a running app: locked by another connection, on a full disk
// (a small tmpfs when this process may mount one, else RLIMIT_FSIZE: writes fail with EFBIG),
// damaged, on a disk that is read-only when the app starts (a tmpfs remounted read-only; Linux
// refuses that remount with EBUSY under a running app, whose database is open for writing).
// Each time: a plain-language message in the window's banner (never SQL) with the technical
// detail apart, Retry, nothing the user wrote or the model streamed lost, no crash. Also: the
// engine's load warnings reach the banner.
#include <QtTest>

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
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/app_controller.h"
#include "app/app_startup.h"
#include "app/chat_session.h"
#include "app/chat_store.h"
#include "app/engine_worker.h"
#include "app/message_list_model.h"
#include "app/pane_list_model.h"
#include "app/store_health.h"
#include "app_test_util.h"
#include "test_paths.h"

using pagedchat::FinishReason;

namespace {

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
bool looksLikeSql(const QString& text) {
  for (const char* word : {"SELECT", "INSERT", "UPDATE", "DELETE FROM", "BEGIN", "PRAGMA", "COMMIT", "QSQLITE"})
    if (text.contains(QLatin1String(word))) return true;
  return false;
}

/// Holds the engine worker until released (so that a reply cannot finish before the fault is set up).
struct WorkerGate {
  explicit WorkerGate(EngineClient* engine) {
    QMetaObject::invokeMethod(
        engine->worker(), [this] { gate.acquire(); }, Qt::QueuedConnection);
  }
  ~WorkerGate() { open(); }
  void open() {
    if (!opened) gate.release();
    opened = true;
  }
  QSemaphore gate;
  bool opened = false;
};

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

/// Fills the file system of `dir` with one file until it is full; returns its path.
QString fillDisk(const QString& dir) {
  const QString path = QDir(dir).filePath(QStringLiteral("filler"));
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return path;
  const QByteArray chunk(64 * 1024, 'x');
  while (f.write(chunk) == chunk.size()) {
  }
  f.write(QByteArray(512, 'x'));
  f.flush();  // whatever fits
  return path;
}

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
  void fullDiskKeepsEverything_data();
  void fullDiskKeepsEverything();
  void corruptDatabaseIsKeptAndReplaced_data();
  void corruptDatabaseIsKeptAndReplaced();
  void readOnlyDiskShowsTheHistory_data();
  void readOnlyDiskShowsTheHistory();
  void readOnlyDiskThatGoesAway();
  void readOnlyDiskNeverSkipsTheWal();
  void readOnlyFileOfAUser();
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
  ChatSession* session = app.panes()->sessionAt(0);
  QVERIFY(session);
  session->setMaxTokens(60);
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  QSignalSpy finished(session, &ChatSession::replyFinished);
  {
    WorkerGate gate(app.engine());
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

void TestStoreFaults::fullDiskKeepsEverything_data() {
  QTest::addColumn<bool>("tmpfs");
  QTest::newRow("full tmpfs") << true;
  QTest::newRow("RLIMIT_FSIZE") << false;
}

void TestStoreFaults::fullDiskKeepsEverything() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QFETCH(bool, tmpfs);
  QTemporaryDir dir;
  std::unique_ptr<SmallDisk> disk;
  if (tmpfs) {
    disk = std::make_unique<SmallDisk>(dir.path(), 4 << 20);
    if (!disk->mounted()) QSKIP("this process may not mount a tmpfs; the RLIMIT_FSIZE row fails writes instead");
  }
  AppController app(apptest::optionsFor(dir));
  app.start();
  if (!tmpfs) {
    // No mount: every write past a file's first byte fails with EFBIG, as on a full disk.
    std::unique_ptr<NoFileGrowth> limit;
    streamThroughFault(
        app, [&] { limit = std::make_unique<NoFileGrowth>(); }, [&] { limit.reset(); }, QString());
    return;
  }
  QString filler;
  streamThroughFault(
      app, [&] { filler = fillDisk(dir.path()); }, [&] { QVERIFY(QFile::remove(filler)); },
      QStringLiteral("the disk is full"));
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

void TestStoreFaults::readOnlyDiskShowsTheHistory_data() {
  QTest::addColumn<bool>("walLeft");
  QTest::newRow("closed cleanly") << false;
  QTest::newRow("WAL left by a crash") << true;
}

void TestStoreFaults::readOnlyDiskShowsTheHistory() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QFETCH(bool, walLeft);
  QTemporaryDir dir;
  SmallDisk disk(dir.path(), 16 << 20);
  if (!disk.mounted()) QSKIP("this process may not mount a tmpfs");
  const QString data = QDir(dir.path()).filePath(QStringLiteral("data"));
  const qint64 conversation = writeEarlierHistory(data, walLeft, QDir(dir.path()).filePath(QStringLiteral("scratch")));
  QVERIFY(conversation != 0);
  QVERIFY(disk.remount(/*readOnly=*/true));
  auto remountWritable = qScopeGuard([&] { disk.remount(false); });

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
  ChatSession* session = app.panes()->sessionAt(0);
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

  // Writable again: the app notices on its own, the banner goes, and the question goes through.
  QVERIFY(disk.remount(/*readOnly=*/false));
  QTRY_VERIFY_WITH_TIMEOUT(!app.store()->isReadOnly(), 5 * StoreHealth::kRetryIntervalMs);
  QTRY_COMPARE(app.errors()->text(), QString());
  QCOMPARE(session->errorText(), QString());  // the pane's "Not sent" line goes with the banner
  QSignalSpy finished(session, &ChatSession::replyFinished);
  QVERIFY(session->send());
  QVERIFY(finished.wait(60000));
  const QList<MessageRecord> stored = app.store()->messages(conversation);
  QCOMPARE(stored.size(), 4);
  QCOMPARE(stored.at(1).text, QStringLiteral("General Kenobi"));
  QCOMPARE(stored.at(2).text, QStringLiteral("Still there?"));
}

void TestStoreFaults::readOnlyDiskThatGoesAway() {
  // The read-only disk is unmounted under the running app: trying to write again must not make a
  // new, empty history in the folder left behind; the app keeps showing what it read.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  const QString mountPoint = QDir(dir.path()).filePath(QStringLiteral("disk"));
  QVERIFY(QDir().mkpath(mountPoint));
  SmallDisk disk(mountPoint, 16 << 20);
  if (!disk.mounted()) QSKIP("this process may not mount a tmpfs");
  const QString data = QDir(mountPoint).filePath(QStringLiteral("data"));
  const qint64 conversation = writeEarlierHistory(data, false, QString());
  QVERIFY(conversation != 0);
  QVERIFY(disk.remount(/*readOnly=*/true));
  // The folder under the mount point, as it will be seen once the disk is gone (writable).
  const QString leftBehind = data;
  {
    AppController app(apptest::optionsFor(data));
    QVERIFY(app.store()->isReadOnly());
    QCOMPARE(app.conversations()->rowCount(), 1);
    QVERIFY(::umount2(QFile::encodeName(mountPoint).constData(), MNT_DETACH) == 0);  // gone
    QVERIFY(QDir().mkpath(leftBehind));  // a writable folder where the database was
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

void TestStoreFaults::readOnlyFileOfAUser() {
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

void TestStoreFaults::readOnlyDiskNeverSkipsTheWal() {
  // A -wal holding transactions but no -shm on a read-only disk: SQLite cannot read the -wal,
  // and reading the file alone (immutable=1) would show older history. The open must fail, with
  // a clear kind, and leave the files as they are.
  QTemporaryDir dir;
  SmallDisk disk(dir.path(), 16 << 20);
  if (!disk.mounted()) QSKIP("this process may not mount a tmpfs");
  const QString data = QDir(dir.path()).filePath(QStringLiteral("data"));
  QVERIFY(writeEarlierHistory(data, /*walLeft=*/true, QDir(dir.path()).filePath(QStringLiteral("scratch")),
                              /*withShm=*/false) != 0);
  const QString wal = QDir(data).filePath(QStringLiteral("pagedchat.sqlite3-wal"));
  const qint64 walSize = QFileInfo(wal).size();
  QVERIFY(disk.remount(/*readOnly=*/true));
  auto remountWritable = qScopeGuard([&] { disk.remount(false); });
  try {
    ChatStore store(data);
    QFAIL("a database whose -wal cannot be read opened");
  } catch (const StoreError& e) {
    // Read-only, and why: making the disk writable is the way out (the start-up window's Try again).
    QCOMPARE(e.kind(), StoreError::Kind::kReadOnly);
    QCOMPARE(StoreHealth::userMessage(e),
             QStringLiteral("The chat history could not be read: the disk or the file is read-only."));
    QVERIFY2(e.detail().find("-shm") != std::string::npos, e.detail().c_str());
    // SQLite's words and the file once each.
    const QString detail = QString::fromStdString(e.detail());
    QVERIFY2(detail.count(QLatin1String("SQLite:")) == 1, qPrintable(detail));
    QVERIFY2(detail.count(QLatin1String("pagedchat.sqlite3")) == 1, qPrintable(detail));
    qInfo("detail: %s", qPrintable(detail));
  }
  QCOMPARE(QFileInfo(wal).size(), walSize);
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
  QVERIFY2(shown.constFirst().startsWith(QLatin1String("The chat history could not be read: another program is using "
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
  ChatSession* first = app.panes()->sessionAt(0);
  ChatSession* second = app.panes()->addPane();
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
  for (ChatSession* s : {first, second})
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
  QSignalSpy warnings(app.engine(), &EngineClient::engineWarning);
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
