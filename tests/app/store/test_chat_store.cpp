// Qt Test for ChatStore: persistence across reopen, Unicode, ordering, cascade delete, partial
// (streaming) messages, corrupt / locked / too-new database files.
#include <QTest>

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <memory>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/controllers/conversation_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/store/chat_store.h"

using pagedchat::FinishReason;

namespace {

/// A second, independent SQLite connection to the same file (as another process would have).
class RawDb {
 public:
  explicit RawDb(const QString& path) {
    static int counter = 0;
    m_name = QStringLiteral("test-raw-%1").arg(++counter);
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=100"));
    m_ok = db.open();
    if (!m_ok) m_error = db.lastError().text();
  }
  ~RawDb() {
    {
      QSqlDatabase db = QSqlDatabase::database(m_name, false);
      db.close();
    }
    QSqlDatabase::removeDatabase(m_name);
  }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  bool ok() const { return m_ok; }
  QString error() const { return m_error; }

  /// Runs a statement; returns false (and keeps the error text) on failure.
  bool exec(const QString& sql) {
    QSqlQuery q(QSqlDatabase::database(m_name, false));
    if (!q.exec(sql)) {
      m_error = q.lastError().text();
      return false;
    }
    return true;
  }
  /// First column of the first row, or an invalid QVariant.
  QVariant scalar(const QString& sql) {
    QSqlQuery q(QSqlDatabase::database(m_name, false));
    if (!q.exec(sql)) {
      m_error = q.lastError().text();
      return {};
    }
    if (!q.next()) return {};
    return q.value(0);
  }

 private:
  QString m_name;
  bool m_ok = false;
  QString m_error;
};

QString dbPath(const QTemporaryDir& dir) { return dir.filePath(QStringLiteral("pagedchat.sqlite3")); }

/// Runs fn, which must throw StoreError; returns its message (empty when nothing was thrown).
template <typename Fn>
QString storeErrorOf(Fn&& fn, bool* thrown) {
  *thrown = false;
  try {
    fn();
  } catch (const StoreError& e) {
    *thrown = true;
    return QString::fromUtf8(e.what());
  }
  return {};
}

QList<qint64> ids(const QList<ConversationRecord>& list) {
  QList<qint64> out;
  for (const auto& c : list) out << c.id;
  return out;
}

}  // namespace

class TestChatStore : public QObject {
  Q_OBJECT

 private slots:
  void schemaAndPragmas();
  void roundTripUnicodeAcrossReopen();
  void conversationsNewestUpdatedFirst();
  void deleteCascadesMessages();
  void renameConversation();
  void partialMessageSurvivesClose();
  void closedStoreThrows();
  void constraintViolationsThrow();
  void corruptFileThrowsWithPath();
  void lockedDatabaseThrowsThenRecovers();
  void newerUserVersionThrows();
  void unusableDataDirThrows();
};

void TestChatStore::schemaAndPragmas() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString sub = dir.filePath(QStringLiteral("nested/data"));  // created on demand
  {
    ChatStore store(sub);
    QCOMPARE(store.databasePath(), QDir(sub).absoluteFilePath(QStringLiteral("pagedchat.sqlite3")));
    QVERIFY(QFileInfo::exists(store.databasePath()));
    QVERIFY(store.conversations().isEmpty());

    RawDb raw(store.databasePath());
    QVERIFY2(raw.ok(), qPrintable(raw.error()));
    QCOMPARE(raw.scalar(QStringLiteral("PRAGMA user_version")).toInt(), ChatStore::kSchemaVersion);
    QCOMPARE(raw.scalar(QStringLiteral("PRAGMA journal_mode")).toString(), QStringLiteral("wal"));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE type='table'"
                                       " AND name IN ('conversations','messages')"))
                 .toInt(),
             2);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE type='index'"
                                       " AND tbl_name='messages' AND sql LIKE '%conversation_id%'"))
                 .toInt(),
             1);
  }
  // Reopening an up-to-date database does not re-run or break anything.
  ChatStore again(sub);
  QVERIFY(again.conversations().isEmpty());
}

void TestChatStore::roundTripUnicodeAcrossReopen() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString title = QStringLiteral("인사 🙂 \"quoted\" title");
  const QString korean = QStringLiteral("안녕하세요");
  const QString emoji = QStringLiteral("🙂👍🏽 thumbs");
  const QString tricky = QStringLiteral("line 1\nline 2\r\n\ttabbed \"double\" 'single' back\\slash; DROP TABLE x; --");
  const QString system = QStringLiteral("You are a helpful assistant.");

  qint64 convId = 0;
  QList<qint64> msgIds;
  const QDateTime before = QDateTime::currentDateTimeUtc().addSecs(-1);
  {
    ChatStore store(dir.path());
    convId = store.createConversation(title);
    QVERIFY(convId > 0);
    msgIds << store.addMessage(convId, MessageRole::kSystem, system);
    msgIds << store.addMessage(convId, MessageRole::kUser, korean);
    msgIds << store.addMessage(convId, MessageRole::kAssistant, emoji, FinishReason::kStop);
    msgIds << store.addMessage(convId, MessageRole::kUser, tricky);
    store.close();
  }
  const QDateTime after = QDateTime::currentDateTimeUtc().addSecs(1);

  {  // stored as ISO-8601 UTC with milliseconds, e.g. 2024-05-01T12:34:56.789Z
    RawDb raw(dbPath(dir));
    QVERIFY2(raw.ok(), qPrintable(raw.error()));
    const QString glob = QStringLiteral(
        "'[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]"
        "T[0-2][0-9]:[0-5][0-9]:[0-6][0-9].[0-9][0-9][0-9]Z'");
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM conversations WHERE created_at GLOB %1"
                                       " AND updated_at GLOB %1")
                            .arg(glob))
                 .toInt(),
             1);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM messages WHERE created_at GLOB %1").arg(glob)).toInt(), 4);
  }

  ChatStore store(dir.path());
  const auto convs = store.conversations();
  QCOMPARE(convs.size(), 1);
  QCOMPARE(convs[0].id, convId);
  QCOMPARE(convs[0].title, title);
  QVERIFY(convs[0].createdAt.isValid());
  QCOMPARE(convs[0].createdAt.timeSpec(), Qt::UTC);
  QVERIFY(convs[0].createdAt >= before && convs[0].createdAt <= after);
  QVERIFY(convs[0].updatedAt > convs[0].createdAt);  // bumped by the messages

  const auto msgs = store.messages(convId);
  QCOMPARE(msgs.size(), 4);
  const QList<MessageRole> roles{MessageRole::kSystem, MessageRole::kUser, MessageRole::kAssistant, MessageRole::kUser};
  const QStringList texts{system, korean, emoji, tricky};
  const QList<std::optional<FinishReason>> reasons{std::nullopt, std::nullopt, FinishReason::kStop, std::nullopt};
  for (int i = 0; i < 4; ++i) {
    QCOMPARE(msgs[i].id, msgIds[i]);
    QCOMPARE(msgs[i].conversationId, convId);
    QCOMPARE(msgs[i].role, roles[i]);
    QCOMPARE(msgs[i].text, texts[i]);
    QCOMPARE(msgs[i].finishReason, reasons[i]);
    QVERIFY(msgs[i].createdAt.isValid());
    QCOMPARE(msgs[i].createdAt.timeSpec(), Qt::UTC);
    QVERIFY(msgs[i].createdAt >= before && msgs[i].createdAt <= after);
  }
  QVERIFY(msgs[0].createdAt < msgs[3].createdAt);
  QCOMPARE(convs[0].updatedAt, msgs[3].createdAt);
  // The UTF-8 bytes themselves are intact (no lossy conversion on the way).
  QCOMPARE(msgs[2].text.toUtf8(), QByteArray("\xF0\x9F\x99\x82\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD thumbs"));
  QCOMPARE(msgs[1].text.size(), 5);
}

void TestChatStore::conversationsNewestUpdatedFirst() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  qint64 a = 0, b = 0, c = 0;
  {
    ChatStore store(dir.path());
    a = store.createConversation(QStringLiteral("A"));
    b = store.createConversation(QStringLiteral("B"));
    c = store.createConversation(QStringLiteral("C"));
    QCOMPARE(ids(store.conversations()), (QList<qint64>{c, b, a}));

    const qint64 ma = store.addMessage(a, MessageRole::kUser, QStringLiteral("hi A"));
    QCOMPARE(ids(store.conversations()), (QList<qint64>{a, c, b}));

    store.addMessage(b, MessageRole::kUser, QStringLiteral("hi B"));
    QCOMPARE(ids(store.conversations()), (QList<qint64>{b, a, c}));

    store.updateMessage(ma, QStringLiteral("hi A, edited"));  // text update bumps A
    QCOMPARE(ids(store.conversations()), (QList<qint64>{a, b, c}));

    store.renameConversation(c, QStringLiteral("C renamed"));  // a rename does not
    QCOMPARE(ids(store.conversations()), (QList<qint64>{a, b, c}));

    const auto convs = store.conversations();
    for (int i = 1; i < convs.size(); ++i) QVERIFY(convs[i - 1].updatedAt > convs[i].updatedAt);
  }
  ChatStore store(dir.path());
  QCOMPARE(ids(store.conversations()), (QList<qint64>{a, b, c}));
}

void TestChatStore::deleteCascadesMessages() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  qint64 keep = 0, drop = 0;
  {
    ChatStore store(dir.path());
    keep = store.createConversation(QStringLiteral("keep"));
    drop = store.createConversation(QStringLiteral("drop"));
    for (int i = 0; i < 3; ++i) {
      store.addMessage(keep, MessageRole::kUser, QStringLiteral("keep %1").arg(i));
      store.addMessage(drop, MessageRole::kUser, QStringLiteral("drop %1").arg(i));
    }
    store.deleteConversation(drop);
    QCOMPARE(ids(store.conversations()), (QList<qint64>{keep}));
    QVERIFY(store.messages(drop).isEmpty());
    QCOMPARE(store.messages(keep).size(), 3);
  }
  {
    RawDb raw(dbPath(dir));
    QVERIFY2(raw.ok(), qPrintable(raw.error()));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM messages WHERE conversation_id=%1").arg(drop)).toInt(), 0);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM messages")).toInt(), 3);
  }
  ChatStore store(dir.path());
  QCOMPARE(store.messages(keep).size(), 3);
  QVERIFY(store.messages(drop).isEmpty());
}

void TestChatStore::renameConversation() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  qint64 id = 0;
  {
    ChatStore store(dir.path());
    id = store.createConversation(QStringLiteral("New chat"));
    store.renameConversation(id, QStringLiteral("Trip to Seoul 서울 ✈️"));
    QCOMPARE(store.conversations().value(0).title, QStringLiteral("Trip to Seoul 서울 ✈️"));
    bool thrown = false;
    storeErrorOf([&] { store.renameConversation(id + 1000, QStringLiteral("x")); }, &thrown);
    QVERIFY2(thrown, "renaming a missing conversation should throw StoreError");
  }
  ChatStore store(dir.path());
  const auto convs = store.conversations();
  QCOMPARE(convs.size(), 1);
  QCOMPARE(convs[0].id, id);
  QCOMPARE(convs[0].title, QStringLiteral("Trip to Seoul 서울 ✈️"));
}

void TestChatStore::partialMessageSurvivesClose() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  qint64 conv = 0, msg = 0;
  const QString partial = QStringLiteral("Once upon a time, 옛날 옛적에 🙂");
  {
    ChatStore store(dir.path());
    conv = store.createConversation(QStringLiteral("story"));
    store.addMessage(conv, MessageRole::kUser, QStringLiteral("Tell me a story"));
    msg = store.addMessage(conv, MessageRole::kAssistant, QString());  // streaming starts
    store.updateMessage(msg, QStringLiteral("Once"));
    store.updateMessage(msg, QStringLiteral("Once upon"));
    store.updateMessage(msg, partial);

    // Committed on return: another connection already sees the partial text.
    {
      RawDb raw(dbPath(dir));
      QVERIFY2(raw.ok(), qPrintable(raw.error()));
      QCOMPARE(raw.scalar(QStringLiteral("SELECT text FROM messages WHERE id=%1").arg(msg)).toString(), partial);
    }
    store.close();  // mid-stream, never finished
    store.close();  // safe twice
  }
  {
    ChatStore store(dir.path());
    const auto msgs = store.messages(conv);
    QCOMPARE(msgs.size(), 2);
    QCOMPARE(msgs[1].id, msg);
    QCOMPARE(msgs[1].role, MessageRole::kAssistant);
    QCOMPARE(msgs[1].text, partial);
    QVERIFY(!msgs[1].finishReason);

    // The stream can be finished after reopening.
    store.updateMessage(msg, partial + QStringLiteral(" The end."), FinishReason::kAbort);
  }
  ChatStore store(dir.path());
  const auto msgs = store.messages(conv);
  QCOMPARE(msgs.value(1).text, partial + QStringLiteral(" The end."));
  QCOMPARE(msgs.value(1).finishReason, std::optional(FinishReason::kAbort));
}

void TestChatStore::closedStoreThrows() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  ChatStore store(dir.path());
  const qint64 id = store.createConversation(QStringLiteral("x"));
  store.close();
  bool thrown = false;
  storeErrorOf([&] { store.createConversation(QStringLiteral("y")); }, &thrown);
  QVERIFY(thrown);
  storeErrorOf([&] { store.conversations(); }, &thrown);
  QVERIFY(thrown);
  storeErrorOf([&] { store.addMessage(id, MessageRole::kUser, QStringLiteral("z")); }, &thrown);
  QVERIFY(thrown);
}

void TestChatStore::constraintViolationsThrow() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  ChatStore store(dir.path());
  const qint64 id = store.createConversation(QStringLiteral("x"));
  bool thrown = false;
  // An unknown role cannot be passed (MessageRole). One written by another program past the
  // schema's CHECK makes the file damaged when read: an error naming it, not a wrong message.
  const qint64 other = store.createConversation(QStringLiteral("y"));
  const qint64 robot = store.addMessage(other, MessageRole::kUser, QStringLiteral("beep"));
  {
    RawDb raw(store.databasePath());
    QVERIFY2(raw.exec(QStringLiteral("PRAGMA ignore_check_constraints = ON")), qPrintable(raw.error()));
    QVERIFY2(raw.exec(QStringLiteral("UPDATE messages SET role = 'robot' WHERE id = %1").arg(robot)),
             qPrintable(raw.error()));
  }
  StoreError::Kind kind = StoreError::Kind::kOther;
  QString msg;
  try {
    store.messages(other);
  } catch (const StoreError& e) {
    thrown = true;
    kind = e.kind();
    msg = QString::fromUtf8(e.what());
  }
  QVERIFY2(thrown, "an unknown stored role must be an error");
  QCOMPARE(kind, StoreError::Kind::kCorrupt);
  QVERIFY2(msg.contains(QLatin1String("robot")) && msg.contains(store.databasePath()), qPrintable(msg));
  msg = storeErrorOf([&] { store.addMessage(id + 1000, MessageRole::kUser, QStringLiteral("orphan")); }, &thrown);
  QVERIFY2(thrown, "a message for a missing conversation must be rejected (foreign key)");
  storeErrorOf([&] { store.updateMessage(424242, QStringLiteral("nothing")); }, &thrown);
  QVERIFY2(thrown, "updating a missing message should throw");
  // Nothing half-written, and the store still works.
  QVERIFY(store.messages(id).isEmpty());
  QVERIFY(store.messages(id + 1000).isEmpty());
  store.addMessage(id, MessageRole::kUser, QStringLiteral("ok"));
  QCOMPARE(store.messages(id).size(), 1);
}

void TestChatStore::corruptFileThrowsWithPath() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dbPath(dir);
  QByteArray garbage(4096, '\0');
  QRandomGenerator rng(12345);
  for (char& ch : garbage) ch = char(rng.bounded(256));
  garbage[0] = 'X';  // never the "SQLite format 3" magic
  {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(garbage), qint64(garbage.size()));
  }

  bool thrown = false;
  QString msg;
  try {
    ChatStore store(dir.path());
    store.conversations();
  } catch (const StoreError& e) {
    thrown = true;
    msg = QString::fromUtf8(e.what());
  }
  QVERIFY2(thrown, "opening a garbage file must throw StoreError");
  qDebug().noquote() << "corrupt file error:" << msg;
  QVERIFY2(msg.contains(QDir::toNativeSeparators(path)), qPrintable(msg));
  QVERIFY2(msg.contains(QLatin1String("not a database"), Qt::CaseInsensitive) ||
               msg.contains(QLatin1String("malformed"), Qt::CaseInsensitive),
           qPrintable(msg));

  // The user's file is left exactly as it was (not truncated or "repaired").
  QFile f(path);
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(f.readAll(), garbage);
  // No connection leaked: a fresh directory still opens fine.
  QTemporaryDir other;
  ChatStore ok(other.path());
  QVERIFY(ok.conversations().isEmpty());
}

void TestChatStore::lockedDatabaseThrowsThenRecovers() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  ChatStore store(dir.path());
  const qint64 conv = store.createConversation(QStringLiteral("before the lock"));
  const qint64 m1 = store.addMessage(conv, MessageRole::kUser, QStringLiteral("committed 1"));
  const qint64 m2 = store.addMessage(conv, MessageRole::kAssistant, QStringLiteral("partial"));

  auto locker = std::make_unique<RawDb>(store.databasePath());
  QVERIFY2(locker->ok(), qPrintable(locker->error()));
  QVERIFY2(locker->exec(QStringLiteral("BEGIN EXCLUSIVE")), qPrintable(locker->error()));
  QVERIFY2(locker->exec(QStringLiteral("INSERT INTO conversations(title) VALUES('locker')")),
           qPrintable(locker->error()));

  QElapsedTimer timer;
  timer.start();
  bool thrown = false;
  QString msg = storeErrorOf([&] { store.addMessage(conv, MessageRole::kUser, QStringLiteral("lost")); }, &thrown);
  QVERIFY2(thrown, "a write while another connection holds the write lock must throw");
  qDebug().noquote() << "locked error after" << timer.elapsed() << "ms:" << msg;
  QVERIFY2(msg.contains(store.databasePath()), qPrintable(msg));
  QVERIFY2(msg.contains(QLatin1String("locked"), Qt::CaseInsensitive) ||
               msg.contains(QLatin1String("busy"), Qt::CaseInsensitive),
           qPrintable(msg));
  storeErrorOf([&] { store.updateMessage(m2, QStringLiteral("partial, more")); }, &thrown);
  QVERIFY(thrown);
  storeErrorOf([&] { store.createConversation(QStringLiteral("lost too")); }, &thrown);
  QVERIFY(thrown);

  // WAL: reading still works while the writer holds its lock, and sees only committed data.
  QCOMPARE(ids(store.conversations()), (QList<qint64>{conv}));
  QCOMPARE(store.messages(conv).size(), 2);

  // The app started meanwhile: its start-up clean-up cannot write, which the window's banner says
  // (not only the terminal); the conversations are still listed.
  AppOptions options;
  options.dataDir = dir.path();
  auto app = std::make_unique<AppController>(options);
  const QString startError = app->errors()->text();
  QVERIFY2(startError.startsWith(QLatin1String("The chat history could not be saved: another program is using")),
           qPrintable(startError));
  const QString detail = app->errors()->detail();  // one click away: SQLite's words and the file
  QVERIFY2(detail.contains(store.databasePath()) && (detail.contains(QLatin1String("locked"), Qt::CaseInsensitive) ||
                                                     detail.contains(QLatin1String("busy"), Qt::CaseInsensitive)),
           qPrintable(detail));
  QCOMPARE(app->conversations()->rowCount(), 1);
  emit app->panes()->conversationsModified();  // a pane saved something: still locked, still said
  QCOMPARE(app->errors()->text(), startError);

  QVERIFY2(locker->exec(QStringLiteral("ROLLBACK")), qPrintable(locker->error()));
  locker.reset();
  emit app->panes()->conversationsModified();  // the next change after the lock: clean-up done, banner gone
  QCOMPARE(app->errors()->text(), QString());
  app.reset();

  // After the lock is gone the store works again and nothing committed earlier is lost.
  const qint64 m3 = store.addMessage(conv, MessageRole::kUser, QStringLiteral("after"));
  store.updateMessage(m2, QStringLiteral("partial, finished"), FinishReason::kStop);
  store.close();

  ChatStore reopened(dir.path());
  const auto convs = reopened.conversations();
  QCOMPARE(convs.size(), 1);
  QCOMPARE(convs[0].title, QStringLiteral("before the lock"));
  const auto msgs = reopened.messages(conv);
  QCOMPARE(msgs.size(), 3);
  QCOMPARE(msgs[0].id, m1);
  QCOMPARE(msgs[0].text, QStringLiteral("committed 1"));
  QCOMPARE(msgs[1].id, m2);
  QCOMPARE(msgs[1].text, QStringLiteral("partial, finished"));
  QCOMPARE(msgs[1].finishReason, std::optional(FinishReason::kStop));
  QCOMPARE(msgs[2].id, m3);
  QCOMPARE(msgs[2].text, QStringLiteral("after"));
}

void TestChatStore::newerUserVersionThrows() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dbPath(dir);
  {
    RawDb raw(path);
    QVERIFY2(raw.ok(), qPrintable(raw.error()));
    QVERIFY(raw.exec(QStringLiteral("CREATE TABLE future_stuff(x)")));
    QVERIFY(raw.exec(QStringLiteral("PRAGMA user_version = 1000")));
  }
  bool thrown = false;
  const QString msg = storeErrorOf([&] { ChatStore store(dir.path()); }, &thrown);
  QVERIFY2(thrown, "a schema newer than we know must throw StoreError");
  QVERIFY2(msg.contains(QLatin1String("newer")), qPrintable(msg));
  QVERIFY2(msg.contains(QLatin1String("1000")), qPrintable(msg));
  QVERIFY2(msg.contains(QDir::toNativeSeparators(path)), qPrintable(msg));

  RawDb raw(path);  // left untouched
  QCOMPARE(raw.scalar(QStringLiteral("PRAGMA user_version")).toInt(), 1000);
  QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name='messages'")).toInt(), 0);
}

void TestChatStore::unusableDataDirThrows() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString file = dir.filePath(QStringLiteral("plain-file"));
  {
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("x");
  }
  bool thrown = false;
  const QString msg = storeErrorOf([&] { ChatStore store(file + QStringLiteral("/sub")); }, &thrown);
  QVERIFY2(thrown, "a data dir below a plain file must throw StoreError");
  QVERIFY2(msg.contains(QStringLiteral("pagedchat.sqlite3")), qPrintable(msg));
  // The message says why, not just that it failed.
  QVERIFY2(msg.contains(QDir::toNativeSeparators(file) + QStringLiteral(" is a file, not a folder")), qPrintable(msg));
  // The data dir itself being a file: the same reason.
  const QString self = storeErrorOf([&] { ChatStore store(file); }, &thrown);
  QVERIFY(thrown);
  QVERIFY2(self.contains(QStringLiteral("is a file, not a folder")), qPrintable(self));
}

QTEST_GUILESS_MAIN(TestChatStore)
#include "test_chat_store.moc"
