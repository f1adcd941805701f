// Qt Test for ChatStore's history features (schema v2): the v1 -> v2 upgrade with its backup
// copy, the message tree (branch, siblings, leaves), full-text search (Korean, special
// characters, FTS5 syntax taken literally), export / import (round trip, bad files leave nothing),
// soft delete + restore + purge, pinning, and ConversationListModel's date groups and paging.
#include <QTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>

#include "app/controllers/conversation_list_model.h"
#include "app/store/chat_store.h"

using pagedchat::FinishReason;

namespace {

/// Builds `<dir>/pagedchat.sqlite3` exactly as PagedChat's schema version 1 wrote it.
void writeV1Database(const QString& path, bool wal = true) {
  const QString name = QStringLiteral("v1-writer");
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    QVERIFY(db.open());
    QSqlQuery q(db);
    const QStringList sql = {
        wal ? "PRAGMA journal_mode = WAL" : "PRAGMA journal_mode = DELETE",
        "CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_at TEXT,"
        " updated_at TEXT)",
        "CREATE TABLE messages (id INTEGER PRIMARY KEY,"
        " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
        " role TEXT NOT NULL CHECK(role IN ('system','user','assistant')), text TEXT NOT NULL,"
        " finish_reason TEXT NOT NULL DEFAULT '', created_at TEXT)",
        "CREATE INDEX messages_conversation_id ON messages(conversation_id, id)",
        "INSERT INTO conversations VALUES (1, 'First', '2024-01-01T10:00:00.000Z', '2024-01-01T10:05:00.000Z')",
        "INSERT INTO conversations VALUES (2, 'Second', '2024-01-02T10:00:00.000Z', '2024-01-02T10:05:00.000Z')",
        // Interleaved ids: each conversation's messages still chain in id order.
        "INSERT INTO messages VALUES (1, 1, 'user', 'hello there', '', '2024-01-01T10:00:00.000Z')",
        "INSERT INTO messages VALUES (2, 2, 'user', '안녕하세요 반갑습니다', '', '2024-01-02T10:00:00.000Z')",
        "INSERT INTO messages VALUES (3, 1, 'assistant', 'general kenobi', 'stop', '2024-01-01T10:01:00.000Z')",
        "INSERT INTO messages VALUES (4, 1, 'user', 'tell me more', '', '2024-01-01T10:02:00.000Z')",
        "INSERT INTO messages VALUES (5, 2, 'assistant', '네, 반가워요', 'length', '2024-01-02T10:01:00.000Z')",
        "INSERT INTO messages VALUES (6, 1, 'assistant', 'the end', 'stop', '2024-01-01T10:03:00.000Z')",
        "PRAGMA user_version = 1",
    };
    for (const QString& s : sql) QVERIFY2(q.exec(s), qPrintable(s + ": " + q.lastError().text()));
    db.close();
  }
  QSqlDatabase::removeDatabase(name);
}

QList<qint64> idsOf(const QList<MessageRecord>& list) {
  QList<qint64> out;
  for (const auto& m : list) out << m.id;
  return out;
}

QList<qint64> idsOf(const QList<ConversationRecord>& list) {
  QList<qint64> out;
  for (const auto& c : list) out << c.id;
  return out;
}

QList<qint64> hitIds(const QList<SearchHit>& hits) {
  QList<qint64> out;
  for (const auto& h : hits) out << h.messageId;
  return out;
}

QString importError(ChatStore& store, const QByteArray& json) {
  try {
    store.importJson(json);
  } catch (const StoreError& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

}  // namespace

class TestChatHistory : public QObject {
  Q_OBJECT

 private slots:
  void migrateV1WithBackup();
  void migrateV2AddsBackend();
  void toolMessagesAfterMigration();
  void newerVersionRefusedUntouched();
  void backupIsTheOriginalBytes();
  void errorMessagesHaveNoDanglingColon();
  void messageTree();
  void search();
  void exportImportRoundTrip();
  void badImportsLeaveNothing();
  void softDeleteRestorePurge();
  void pinnedFirst();
  void dateGroups();
  void lazyPaging();
};

void TestChatHistory::migrateV1WithBackup() {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  writeV1Database(path);
  if (QTest::currentTestFailed()) return;

  ChatStore store(dir.path());
  // A backup copy next to the database, still schema 1 with all rows.
  QVERIFY(!store.backupPath().isEmpty());
  QVERIFY2(QFileInfo(store.backupPath()).fileName().startsWith(QStringLiteral("pagedchat.sqlite3.v1-backup-")),
           qPrintable(store.backupPath()));
  QCOMPARE(QFileInfo(store.backupPath()).absolutePath(), QFileInfo(path).absolutePath());
  {
    QSqlDatabase b = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("backup"));
    b.setDatabaseName(store.backupPath());
    QVERIFY(b.open());
    QSqlQuery q(b);
    QVERIFY(q.exec(QStringLiteral("PRAGMA user_version")) && q.next());
    QCOMPARE(q.value(0).toInt(), 1);
    QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM messages")) && q.next());
    QCOMPARE(q.value(0).toInt(), 6);
    b.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("backup"));

  // Content kept; each conversation's messages chain in order; the leaf is the last message.
  const QList<MessageRecord> first = store.branch(1);
  QCOMPARE(idsOf(first), (QList<qint64>{1, 3, 4, 6}));
  QCOMPARE(first[0].parentId, 0);
  QCOMPARE(first[1].parentId, 1);
  QCOMPARE(first[2].parentId, 3);
  QCOMPARE(first[3].parentId, 4);
  QCOMPARE(first[3].text, QStringLiteral("the end"));
  for (const MessageRecord& m : first) QCOMPARE(m.siblingCount, 1);
  QCOMPARE(idsOf(store.branch(2)), (QList<qint64>{2, 5}));
  QCOMPARE(store.branch(2)[1].finishReason, std::optional(FinishReason::kLength));
  QCOMPARE(store.conversation(1).currentLeafId, 6);
  QCOMPARE(store.conversation(2).title, QStringLiteral("Second"));
  QVERIFY(!store.conversation(2).pinned);
  // The old text is searchable right away (the FTS index was built from the v1 rows).
  QCOMPARE(hitIds(store.search(QStringLiteral("kenobi"))), (QList<qint64>{3}));
  QCOMPARE(hitIds(store.search(QStringLiteral("반갑"))), (QList<qint64>{2}));
  store.close();

  // Opening again: already current, no second backup.
  ChatStore again(dir.path());
  QVERIFY(again.backupPath().isEmpty());
  QCOMPARE(again.conversations().size(), 2);
}

void TestChatHistory::migrateV2AddsBackend() {
  // A schema-2 file (as the previous version wrote it: no messages.backend) is backed up and
  // upgraded; its replies get backend "" and new ones record who answered.
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  qint64 conversation = 0;
  {
    ChatStore store(dir.path());
    conversation = store.createConversation(QStringLiteral("Old"));
    const qint64 user = store.addMessage(conversation, MessageRole::kUser, QStringLiteral("hi"));
    store.addMessage(conversation, MessageRole::kAssistant, QStringLiteral("hello"), FinishReason::kStop, user);
  }
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("v2"));
    db.setDatabaseName(path);
    QVERIFY(db.open());
    QSqlQuery q(db);
    QVERIFY2(q.exec(QStringLiteral("ALTER TABLE messages DROP COLUMN backend")), qPrintable(q.lastError().text()));
    QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = 2")));
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("v2"));
  ChatStore store(dir.path());
  QVERIFY2(QFileInfo(store.backupPath()).fileName().startsWith(QStringLiteral("pagedchat.sqlite3.v2-backup-")),
           qPrintable(store.backupPath()));
  const QList<MessageRecord> old = store.branch(conversation);
  QCOMPARE(old.size(), 2);
  QCOMPARE(old[1].text, QStringLiteral("hello"));
  QCOMPARE(old[1].backend, QString());
  const qint64 reply = store.addMessage(conversation, MessageRole::kAssistant, QStringLiteral("again"), std::nullopt,
                                        old[0].id, QStringLiteral("remote:m@http://127.0.0.1:8000/v1"));
  QCOMPARE(store.branch(conversation).constLast().id, reply);
  QCOMPARE(store.branch(conversation).constLast().backend, QStringLiteral("remote:m@http://127.0.0.1:8000/v1"));
}

void TestChatHistory::toolMessagesAfterMigration() {
  // Schema 4 rebuilds the messages table (its role CHECK takes 'tool'): the rows keep their ids,
  // the tree its foreign key (deleting a reply deletes the result below it) and search its
  // triggers (new and changed text is found).
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  writeV1Database(path);
  if (QTest::currentTestFailed()) return;
  ChatStore store(dir.path());
  QCOMPARE(idsOf(store.branch(1)), (QList<qint64>{1, 3, 4, 6}));
  const QString calls = QStringLiteral(
      "{\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
      "\"arguments\":\"{\\\"city\\\":\\\"Seoul\\\"}\"}}]}");
  const QString result = QStringLiteral("{\"name\":\"get_weather\",\"tool_call_id\":\"call_1\"}");
  const qint64 reply = store.addMessage(1, MessageRole::kAssistant, QStringLiteral("Checking."), FinishReason::kStop, 6,
                                        QStringLiteral("local:m"));
  store.setMessageFields(reply, calls);
  const qint64 tool = store.addMessage(1, MessageRole::kTool, QStringLiteral("sunny and 21 degrees"), std::nullopt,
                                       reply, QString(), result);
  const QList<MessageRecord> branch = store.branch(1);
  QCOMPARE(idsOf(branch), (QList<qint64>{1, 3, 4, 6, reply, tool}));
  QCOMPARE(branch[4].fields, calls);
  QVERIFY(branch[5].role == MessageRole::kTool);
  QCOMPARE(branch[5].fields, result);
  QVERIFY(branch[3].fields.isEmpty());
  QCOMPARE(hitIds(store.search(QStringLiteral("sunny"))), (QList<qint64>{tool}));
  store.updateMessage(tool, QStringLiteral("rainy"));
  QVERIFY(store.search(QStringLiteral("sunny")).isEmpty());
  QCOMPARE(hitIds(store.search(QStringLiteral("rainy"))), (QList<qint64>{tool}));
  QCOMPARE(hitIds(store.search(QStringLiteral("kenobi"))), (QList<qint64>{3}));  // the copied rows too

  // Export and import keep the role and the fields; Markdown shows the call and the result.
  const QString md = store.exportMarkdown(1);
  QVERIFY2(md.contains(QStringLiteral("Tool call: get_weather\n\n```json\n{\"city\":\"Seoul\"}\n```\n")) &&
               md.contains(QStringLiteral("## Tool result\n\nrainy")),
           qPrintable(md));
  const qint64 copy = store.importJson(store.exportJson(1));
  const QList<MessageRecord> imported = store.branch(copy);
  QCOMPARE(imported.size(), 6);
  QVERIFY(imported[5].role == MessageRole::kTool);
  QCOMPARE(QJsonDocument::fromJson(imported[4].fields.toUtf8()), QJsonDocument::fromJson(calls.toUtf8()));
  QCOMPARE(QJsonDocument::fromJson(imported[5].fields.toUtf8()), QJsonDocument::fromJson(result.toUtf8()));

  store.deleteMessage(reply);
  QCOMPARE(idsOf(store.branch(1)), (QList<qint64>{1, 3, 4, 6}));
  QCOMPARE(hitIds(store.search(QStringLiteral("rainy"))), (QList<qint64>{imported[5].id}));

  // Fields must be an object.
  QJsonObject bad = QJsonDocument::fromJson(store.exportJson(copy)).object();
  QJsonArray messages = bad.value("messages").toArray();
  QJsonObject last = messages.last().toObject();
  last.insert("fields", QJsonArray{1});
  messages.replace(messages.size() - 1, last);
  bad.insert("messages", messages);
  const int before = store.conversationCount();
  QVERIFY2(importError(store, QJsonDocument(bad).toJson()).contains(QStringLiteral("\"fields\" must be an object")),
           qPrintable(importError(store, QJsonDocument(bad).toJson())));
  QCOMPARE(store.conversationCount(), before);
}

void TestChatHistory::newerVersionRefusedUntouched() {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  writeV1Database(path);
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("future"));
    db.setDatabaseName(path);
    QVERIFY(db.open());
    QSqlQuery q(db);
    QVERIFY(q.exec(QStringLiteral("PRAGMA journal_mode = DELETE")));
    QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = %1").arg(ChatStore::kSchemaVersion + 1)));
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("future"));
  QFile f(path);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QByteArray before = f.readAll();
  f.close();
  QString message;
  try {
    ChatStore store(dir.path());
  } catch (const StoreError& e) {
    message = QString::fromUtf8(e.what());
  }
  QVERIFY2(message.contains(QStringLiteral("newer")), qPrintable(message));
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(f.readAll(), before);  // not a byte changed
  QCOMPARE(QDir(dir.path()).entryList(QStringList{QStringLiteral("*backup*")}, QDir::Files).size(), 0);
}

void TestChatHistory::backupIsTheOriginalBytes() {
  // A v1 file in rollback-journal mode: the backup is the file exactly as it was (the switch to
  // WAL, which rewrites the header, comes after the backup).
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  writeV1Database(path, /*wal=*/false);
  if (QTest::currentTestFailed()) return;
  QVERIFY(!QFileInfo::exists(path + QStringLiteral("-wal")));
  QFile f(path);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QByteArray before = f.readAll();
  f.close();
  QVERIFY(before.size() > 0);
  ChatStore store(dir.path());
  QVERIFY(!store.backupPath().isEmpty());
  QFile b(store.backupPath());
  QVERIFY(b.open(QIODevice::ReadOnly));
  QCOMPARE(b.readAll(), before);
  QCOMPARE(store.branch(1).size(), 4);  // and the upgrade itself still happened
}

void TestChatHistory::errorMessagesHaveNoDanglingColon() {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  writeV1Database(path);
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("future2"));
    db.setDatabaseName(path);
    QVERIFY(db.open());
    QSqlQuery q(db);
    QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = 9")));
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("future2"));
  QString message;
  try {
    ChatStore store(dir.path());
  } catch (const StoreError& e) {
    message = QString::fromUtf8(e.what());
  }
  // No detail: "ChatStore: <what> (database: <path>)", without ": " before the parenthesis.
  QVERIFY2(message.startsWith(QStringLiteral("ChatStore: the database schema version 9 is newer")),
           qPrintable(message));
  QVERIFY2(
      message.endsWith(QStringLiteral("please update PagedChat (database: %1)").arg(QDir::toNativeSeparators(path))),
      qPrintable(message));
  QVERIFY2(!message.contains(QStringLiteral(":  ")) && !message.contains(QStringLiteral(": (")), qPrintable(message));
  // With a detail: "<what>: <detail> (database: ...)".
  ChatStore ok(QDir(dir.path()).filePath(QStringLiteral("other")));
  message.clear();
  try {
    ok.setPinned(12345, true);
  } catch (const StoreError& e) {
    message = QString::fromUtf8(e.what());
  }
  QVERIFY2(message.startsWith(QStringLiteral("ChatStore: cannot pin conversation 12345")), qPrintable(message));
  QVERIFY2(!message.contains(QStringLiteral(":  ")) && !message.contains(QStringLiteral(": (")), qPrintable(message));
  ok.close();
  message.clear();
  try {
    ok.conversations();
  } catch (const StoreError& e) {
    message = QString::fromUtf8(e.what());
  }
  QVERIFY2(message.startsWith(QStringLiteral("ChatStore: the store is closed (database: ")), qPrintable(message));
}

void TestChatHistory::messageTree() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  const qint64 c = store.createConversation(QStringLiteral("tree"));
  const qint64 u1 = store.addMessage(c, MessageRole::kUser, QStringLiteral("q1"));
  const qint64 a1 = store.addMessage(c, MessageRole::kAssistant, QStringLiteral("a1"));
  QCOMPARE(store.branch(c).constLast().parentId, u1);
  // A regenerated answer: a sibling of a1, now shown.
  const qint64 a2 = store.addMessage(c, MessageRole::kAssistant, QStringLiteral("a2"), FinishReason::kStop, u1);
  QCOMPARE(idsOf(store.branch(c)), (QList<qint64>{u1, a2}));
  QCOMPARE(store.branch(c)[1].siblingIndex, 1);
  QCOMPARE(store.branch(c)[1].siblingCount, 2);
  QCOMPARE(idsOf(store.siblings(a1)), (QList<qint64>{a1, a2}));
  // An edited first question: a second root with its own answer.
  const qint64 u2 = store.addMessage(c, MessageRole::kUser, QStringLiteral("q1 edited"), std::nullopt, 0);
  const qint64 a3 = store.addMessage(c, MessageRole::kAssistant, QStringLiteral("a3"));
  QCOMPARE(idsOf(store.branch(c)), (QList<qint64>{u2, a3}));
  QCOMPARE(store.branch(c)[0].siblingIndex, 1);
  QCOMPARE(store.branch(c)[0].siblingCount, 2);
  QCOMPARE(store.branch(c)[1].siblingCount, 1);
  // Back to the first question: its newest answer.
  QCOMPARE(store.newestLeafUnder(u1), a2);
  store.setCurrentLeaf(c, store.newestLeafUnder(u1));
  QCOMPARE(idsOf(store.branch(c)), (QList<qint64>{u1, a2}));
  store.setCurrentLeaf(c, a1);
  QCOMPARE(idsOf(store.branch(c)), (QList<qint64>{u1, a1}));
  QCOMPARE(store.branch(c)[1].siblingIndex, 0);
  // Appending follows the shown branch.
  const qint64 u3 = store.addMessage(c, MessageRole::kUser, QStringLiteral("q2"));
  QCOMPARE(idsOf(store.branch(c)), (QList<qint64>{u1, a1, u3}));
  // Deleting the shown leaf's subtree moves the leaf to the parent; others are untouched.
  store.deleteMessage(a1);
  QCOMPARE(idsOf(store.branch(c)), (QList<qint64>{u1}));
  QCOMPARE(store.messages(c).size(), 4);  // u1, a2, u2, a3
  // A parent from another conversation or a foreign leaf is refused.
  const qint64 other = store.createConversation(QStringLiteral("other"));
  QVERIFY_THROWS_EXCEPTION(StoreError,
                           store.addMessage(other, MessageRole::kUser, QStringLiteral("x"), std::nullopt, u1));
  QVERIFY_THROWS_EXCEPTION(StoreError, store.setCurrentLeaf(other, a2));
}

void TestChatHistory::search() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  const qint64 c = store.createConversation(QStringLiteral("Search me"));
  const qint64 m1 = store.addMessage(c, MessageRole::kUser, QStringLiteral("How do I write C++ templates?"));
  const qint64 m2 = store.addMessage(c, MessageRole::kAssistant,
                                     QStringLiteral("오늘은 날씨가 정말 좋습니다. 산책하러 가요!"));
  const qint64 m3 = store.addMessage(c, MessageRole::kUser,
                                     QStringLiteral("He said \"hello\" AND left; NEAR(x y) *star* <b>bold</b>"));
  QCOMPARE(hitIds(store.search(QStringLiteral("templates"))), (QList<qint64>{m1}));
  QCOMPARE(hitIds(store.search(QStringLiteral("TEMPL"))), (QList<qint64>{m1}));  // prefix, any case
  QCOMPARE(hitIds(store.search(QStringLiteral("날씨"))), (QList<qint64>{m2}));   // Korean word prefix
  QCOMPARE(hitIds(store.search(QStringLiteral("산책하러"))), (QList<qint64>{m2}));
  QCOMPARE(hitIds(store.search(QStringLiteral("날씨 좋습니다"))), (QList<qint64>{m2}));  // all words
  QCOMPARE(hitIds(store.search(QStringLiteral("날씨 templates"))), QList<qint64>{});
  // FTS5 syntax is taken literally; nothing throws.
  for (const QString& q :
       {QStringLiteral("\""), QStringLiteral("\"hello"), QStringLiteral("AND"), QStringLiteral("NEAR(x"),
        QStringLiteral("*"), QStringLiteral("c++"), QStringLiteral("-"), QStringLiteral("(("), QStringLiteral("a:b"),
        QStringLiteral("^start"), QStringLiteral("   ")})
    store.search(q);
  QCOMPARE(hitIds(store.search(QStringLiteral("\"hello\""))), (QList<qint64>{m3}));
  QCOMPARE(hitIds(store.search(QStringLiteral("AND"))), (QList<qint64>{m3}));
  QCOMPARE(hitIds(store.search(QStringLiteral("NEAR(x"))), (QList<qint64>{m3}));
  QCOMPARE(store.search(QStringLiteral("\"")).size(), 0);
  QCOMPARE(store.search(QString()).size(), 0);
  // The snippet is escaped rich text with the match in bold.
  const QList<SearchHit> hits = store.search(QStringLiteral("bold"));
  QCOMPARE(hits.size(), 1);
  QCOMPARE(hits[0].conversationId, c);
  QCOMPARE(hits[0].conversationTitle, QStringLiteral("Search me"));
  QVERIFY2(hits[0].snippetHtml.contains(QStringLiteral("&lt;b&gt;<b>bold</b>&lt;/b&gt;")),
           qPrintable(hits[0].snippetHtml));
  // Edited text is re-indexed; deleted messages and hidden conversations are not found.
  store.updateMessage(m1, QStringLiteral("rewritten entirely"));
  QCOMPARE(store.search(QStringLiteral("templates")).size(), 0);
  QCOMPARE(hitIds(store.search(QStringLiteral("rewritten"))), (QList<qint64>{m1}));
  store.softDeleteConversation(c);
  QCOMPARE(store.search(QStringLiteral("rewritten")).size(), 0);
  store.restoreConversation(c);
  QCOMPARE(store.search(QStringLiteral("rewritten")).size(), 1);
  store.deleteConversation(c);
  QCOMPARE(store.search(QStringLiteral("rewritten")).size(), 0);
  // Newest first, limited.
  const qint64 c2 = store.createConversation(QStringLiteral("many"));
  QList<qint64> ids;
  for (int i = 0; i < 5; ++i) ids.prepend(store.addMessage(c2, MessageRole::kUser, QStringLiteral("apple %1").arg(i)));
  QCOMPARE(hitIds(store.search(QStringLiteral("apple"), 3)), ids.mid(0, 3));
}

void TestChatHistory::exportImportRoundTrip() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  const qint64 c = store.createConversation(QStringLiteral("Round trip 한국어"));
  const qint64 u = store.addMessage(c, MessageRole::kUser, QStringLiteral("질문 \"quoted\"\nline 2"));
  store.addMessage(c, MessageRole::kAssistant, QStringLiteral("old answer"), FinishReason::kStop);
  const qint64 a2 = store.addMessage(c, MessageRole::kAssistant, QStringLiteral("new answer"), FinishReason::kLength,
                                     u);
  store.setPinned(c, true);

  const QString md = store.exportMarkdown(c);
  QVERIFY(md.startsWith(QStringLiteral("# Round trip 한국어\n")));
  QVERIFY(md.contains(QStringLiteral("## User\n\n질문 \"quoted\"\nline 2\n")));
  QVERIFY(md.contains(QStringLiteral("new answer")));
  QVERIFY(!md.contains(QStringLiteral("old answer")));  // the shown branch only
  QVERIFY(md.contains(QStringLiteral("(cut off)")));
  // An answer's leading whitespace is left out of the Markdown (as in the window), not its text.
  const qint64 spaced = store.createConversation(QStringLiteral("spaced"));
  store.addMessage(spaced, MessageRole::kUser, QStringLiteral("Once upon a time"));
  store.addMessage(spaced, MessageRole::kAssistant, QStringLiteral(" \nthere was a cat"), FinishReason::kStop);
  QVERIFY2(store.exportMarkdown(spaced).endsWith(QStringLiteral("## Assistant\n\nthere was a cat\n")),
           qPrintable(store.exportMarkdown(spaced)));
  QCOMPARE(store.branch(spaced).constLast().text, QStringLiteral(" \nthere was a cat"));

  const QByteArray json = store.exportJson(c);
  const QJsonObject root = QJsonDocument::fromJson(json).object();
  QCOMPARE(root.value(QStringLiteral("format")).toString(), QStringLiteral("pagedchat-conversation"));
  QCOMPARE(root.value(QStringLiteral("version")).toInt(), 1);
  QCOMPARE(root.value(QStringLiteral("messages")).toArray().size(), 3);

  const qint64 imported = store.importJson(json);
  QVERIFY(imported != c);
  const ConversationRecord ic = store.conversation(imported);
  QCOMPARE(ic.title, QStringLiteral("Round trip 한국어"));
  QVERIFY(ic.pinned);
  const QList<MessageRecord> all = store.messages(imported);
  QCOMPARE(all.size(), 3);
  const QList<MessageRecord> shown = store.branch(imported);
  QCOMPARE(shown.size(), 2);
  QCOMPARE(shown[0].text, QStringLiteral("질문 \"quoted\"\nline 2"));
  QCOMPARE(shown[1].text, QStringLiteral("new answer"));
  QCOMPARE(shown[1].finishReason, std::optional(FinishReason::kLength));
  QCOMPARE(shown[1].siblingCount, 2);
  QCOMPARE(shown[1].siblingIndex, 1);
  QVERIFY(shown[1].id != a2);
  // Export of the import equals the original apart from ids.
  QJsonObject again = QJsonDocument::fromJson(store.exportJson(imported)).object();
  QCOMPARE(again.value(QStringLiteral("title")), root.value(QStringLiteral("title")));
  QCOMPARE(again.value(QStringLiteral("createdAt")), root.value(QStringLiteral("createdAt")));
  QCOMPARE(store.exportMarkdown(imported), md);
  // Ids local to the file (1, 2, 3; parents and the current leaf to match): the same file again.
  QCOMPARE(again.value(QStringLiteral("messages")), root.value(QStringLiteral("messages")));
  QCOMPARE(again.value(QStringLiteral("currentLeafId")), root.value(QStringLiteral("currentLeafId")));
  const QJsonArray msgs = root.value(QStringLiteral("messages")).toArray();
  for (int i = 0; i < msgs.size(); ++i) QCOMPARE(msgs.at(i).toObject().value(QStringLiteral("id")).toInt(), i + 1);
  QVERIFY(msgs.at(0).toObject().value(QStringLiteral("parentId")).isNull());
  QCOMPARE(msgs.at(1).toObject().value(QStringLiteral("parentId")).toInt(), 1);
  QCOMPARE(msgs.at(2).toObject().value(QStringLiteral("parentId")).toInt(), 1);
  QCOMPARE(root.value(QStringLiteral("currentLeafId")).toInt(), 3);
  // Files with other ids (database ids, as older versions wrote) import the same.
  QJsonObject shifted = root;
  QJsonArray shiftedMsgs;
  for (const QJsonValue& v : msgs) {
    QJsonObject o = v.toObject();
    o.insert(QStringLiteral("id"), o.value(QStringLiteral("id")).toInt() + 40);
    if (!o.value(QStringLiteral("parentId")).isNull())
      o.insert(QStringLiteral("parentId"), o.value(QStringLiteral("parentId")).toInt() + 40);
    shiftedMsgs.append(o);
  }
  shifted.insert(QStringLiteral("messages"), shiftedMsgs);
  shifted.insert(QStringLiteral("currentLeafId"), 43);
  const qint64 fromShifted = store.importJson(QJsonDocument(shifted).toJson());
  QCOMPARE(store.exportJson(fromShifted).size() > 0, true);
  QCOMPARE(QJsonDocument::fromJson(store.exportJson(fromShifted)).object().value(QStringLiteral("messages")),
           root.value(QStringLiteral("messages")));
  QCOMPARE(store.exportMarkdown(fromShifted), md);
}

void TestChatHistory::badImportsLeaveNothing() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  const qint64 c = store.createConversation(QStringLiteral("x"));
  store.addMessage(c, MessageRole::kUser, QStringLiteral("hi"));
  const QJsonObject good = QJsonDocument::fromJson(store.exportJson(c)).object();
  auto with = [&](const QString& key, const QJsonValue& v) {
    QJsonObject o = good;
    if (v.isUndefined())
      o.remove(key);
    else
      o.insert(key, v);
    return QJsonDocument(o).toJson();
  };
  QJsonArray badRole = good.value(QStringLiteral("messages")).toArray();
  QJsonObject m0 = badRole[0].toObject();
  m0.insert(QStringLiteral("role"), QStringLiteral("wizard"));
  badRole[0] = m0;
  QJsonArray noText = good.value(QStringLiteral("messages")).toArray();
  QJsonObject m1 = noText[0].toObject();
  m1.remove(QStringLiteral("text"));
  // A second message after a valid first one: an error there must not leave the first behind.
  QJsonArray brokenSecond = good.value(QStringLiteral("messages")).toArray();
  brokenSecond.append(QJsonObject{{QStringLiteral("id"), 99},
                                  {QStringLiteral("parentId"), 12345},
                                  {QStringLiteral("role"), QStringLiteral("user")},
                                  {QStringLiteral("text"), QStringLiteral("t")}});
  noText[0] = m1;
  QList<QPair<QByteArray, QString>> cases = {
      {QByteArray("{not json"), QStringLiteral("not valid JSON")},
      {QByteArray("[1,2]"), QStringLiteral("not a PagedChat conversation")},
      {QByteArray(""), QStringLiteral("not valid JSON")},
      {with(QStringLiteral("format"), QStringLiteral("chatgpt-export")),
       QStringLiteral("format is \"chatgpt-export\"")},
      {with(QStringLiteral("format"), QJsonValue::Undefined), QStringLiteral("format is missing")},
      {with(QStringLiteral("version"), 2), QStringLiteral("unsupported format version 2")},
      {with(QStringLiteral("title"), QJsonValue::Undefined), QStringLiteral("no \"title\"")},
      {with(QStringLiteral("messages"), QStringLiteral("x")), QStringLiteral("no \"messages\"")},
      {with(QStringLiteral("messages"), badRole), QStringLiteral("unknown role \"wizard\"")},
      {with(QStringLiteral("messages"), noText), QStringLiteral("message 1 has no \"text\"")},
      {with(QStringLiteral("messages"), brokenSecond), QStringLiteral("message 2: parent 12345")},
      {with(QStringLiteral("currentLeafId"), 777), QStringLiteral("currentLeafId")},
  };
  // Fields of the wrong type or with impossible values (one changed at a time, in message 1 or
  // at the top).
  auto withMessage = [&](const QString& key, const QJsonValue& v) {
    QJsonArray list = good.value(QStringLiteral("messages")).toArray();
    QJsonObject m = list[0].toObject();
    m.insert(key, v);
    list[0] = m;
    return with(QStringLiteral("messages"), list);
  };
  QJsonArray answerList = good.value(QStringLiteral("messages")).toArray();
  answerList.append(QJsonObject{{QStringLiteral("id"), 50},
                                {QStringLiteral("parentId"), answerList[0].toObject().value(QStringLiteral("id"))},
                                {QStringLiteral("role"), QStringLiteral("assistant")},
                                {QStringLiteral("text"), QStringLiteral("a")},
                                {QStringLiteral("finishReason"), QStringLiteral("done")}});
  const QString future = QDateTime::currentDateTimeUtc().addDays(2).toString(Qt::ISODateWithMs);
  QByteArray badUtf8 = with(QStringLiteral("title"), QStringLiteral("TITLE_MARK"));
  badUtf8.replace("TITLE_MARK", "ab\xff\xfe");
  QByteArray loneSurrogate = with(QStringLiteral("title"), QStringLiteral("TITLE_MARK"));
  loneSurrogate.replace("TITLE_MARK", "a\\ud800b");
  QByteArray nulTitle = with(QStringLiteral("title"), QStringLiteral("TITLE_MARK"));
  nulTitle.replace("TITLE_MARK", "a\\u0000b");
  cases << QList<QPair<QByteArray, QString>>{
      {with(QStringLiteral("version"), QStringLiteral("1")),
       QStringLiteral("\"version\" must be a number, not a string")},
      {with(QStringLiteral("format"), 5), QStringLiteral("\"format\" must be a string, not a number")},
      {with(QStringLiteral("pinned"), QStringLiteral("yes")),
       QStringLiteral("\"pinned\" must be true or false, not a string")},
      {with(QStringLiteral("pinned"), 1), QStringLiteral("\"pinned\" must be true or false, not a number")},
      {with(QStringLiteral("title"), QStringLiteral("")), QStringLiteral("\"title\" is empty")},
      {with(QStringLiteral("title"), QStringLiteral("   ")), QStringLiteral("\"title\" is empty")},
      {with(QStringLiteral("title"), 3), QStringLiteral("\"title\" must be a string, not a number")},
      {with(QStringLiteral("createdAt"), QStringLiteral("yesterday")),
       QStringLiteral("the conversation: \"createdAt\" is not a date")},
      {with(QStringLiteral("updatedAt"), QStringLiteral("2024-13-45T99:00:00Z")),
       QStringLiteral("\"updatedAt\" is not a date")},
      {with(QStringLiteral("updatedAt"), 12), QStringLiteral("\"updatedAt\" must be a string")},
      {with(QStringLiteral("createdAt"), future), QStringLiteral("\"createdAt\" is in the future")},
      {withMessage(QStringLiteral("createdAt"), future), QStringLiteral("message 1: \"createdAt\" is in the future")},
      {withMessage(QStringLiteral("createdAt"), QStringLiteral("soon")),
       QStringLiteral("message 1: \"createdAt\" is not a date")},
      {withMessage(QStringLiteral("finishReason"), 1),
       QStringLiteral("message 1: \"finishReason\" must be a string, not a number")},
      {withMessage(QStringLiteral("finishReason"), QStringLiteral("stop")),
       QStringLiteral("message 1: \"finishReason\" is set on a user message")},
      {with(QStringLiteral("messages"), answerList), QStringLiteral("message 2: unknown \"finishReason\" \"done\"")},
      {withMessage(QStringLiteral("text"), QString(QStringLiteral("a")) + QChar(0) + QStringLiteral("b")),
       QStringLiteral("message 1: \"text\" contains a NUL character")},
      {withMessage(QStringLiteral("text"), true),
       QStringLiteral("message 1: \"text\" must be a string, not a boolean")},
      {nulTitle, QStringLiteral("\"title\" contains a NUL character")},
      {loneSurrogate, QStringLiteral("\"title\" contains invalid text")},
      {badUtf8, QStringLiteral("not valid UTF-8")},
  };
  for (const auto& [bytes, expected] : cases) {
    const QString error = importError(store, bytes);
    QVERIFY2(error.startsWith(QStringLiteral("Cannot import:")), qPrintable(error));
    QVERIFY2(error.contains(expected), qPrintable(error + QStringLiteral(" / expected: ") + expected));
  }
  QCOMPARE(store.conversationCount(), 1);
  QCOMPARE(store.messages(c).size(), 1);
  // Still accepted: empty / missing dates (= now), a date within the tolerance, pinned false/null,
  // a surrogate pair (emoji), finishReason "" on a user message.
  QJsonObject fine = good;
  fine.insert(QStringLiteral("createdAt"), QString());
  fine.remove(QStringLiteral("updatedAt"));
  fine.insert(QStringLiteral("pinned"), QJsonValue());
  fine.insert(QStringLiteral("title"), QStringLiteral("emoji \U0001F600"));
  QJsonArray fineList = fine.value(QStringLiteral("messages")).toArray();
  QJsonObject fm = fineList[0].toObject();
  fm.insert(QStringLiteral("createdAt"), QDateTime::currentDateTimeUtc().addSecs(60).toString(Qt::ISODateWithMs));
  fm.insert(QStringLiteral("finishReason"), QString());
  fineList[0] = fm;
  fine.insert(QStringLiteral("messages"), fineList);
  const qint64 imported = store.importJson(QJsonDocument(fine).toJson());
  QCOMPARE(store.conversation(imported).title, QStringLiteral("emoji \U0001F600"));
  QVERIFY(store.conversation(imported).createdAt.isValid());
}

void TestChatHistory::softDeleteRestorePurge() {
  QTemporaryDir dir;
  qint64 a = 0, b = 0;
  {
    ChatStore store(dir.path());
    a = store.createConversation(QStringLiteral("a"));
    b = store.createConversation(QStringLiteral("b"));
    store.addMessage(a, MessageRole::kUser, QStringLiteral("keep me"));
    store.softDeleteConversation(a);
    QCOMPARE(idsOf(store.conversations()), (QList<qint64>{b}));
    QCOMPARE(store.conversationCount(), 1);
    QVERIFY(store.conversation(a).deletedAt.isValid());
    store.restoreConversation(a);
    QCOMPARE(store.conversationCount(), 2);
    QCOMPARE(store.messages(a).size(), 1);  // undo loses nothing
    store.softDeleteConversation(a);
    // A cutoff before the deletion purges nothing; none after it purges it.
    QCOMPARE(store.purgeDeletedConversations(QDateTime::currentDateTimeUtc().addSecs(-60)), 0);
    QCOMPARE(store.messages(a).size(), 1);
  }
  ChatStore store(dir.path());  // a later start
  QCOMPARE(store.purgeDeletedConversations(), 1);
  QCOMPARE(store.messages(a).size(), 0);
  QVERIFY_THROWS_EXCEPTION(StoreError, store.conversation(a));
  QCOMPARE(idsOf(store.conversations()), (QList<qint64>{b}));
}

void TestChatHistory::pinnedFirst() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  const qint64 a = store.createConversation(QStringLiteral("a"));
  const qint64 b = store.createConversation(QStringLiteral("b"));
  const qint64 c = store.createConversation(QStringLiteral("c"));
  QCOMPARE(idsOf(store.conversations()), (QList<qint64>{c, b, a}));
  store.setPinned(a, true);
  QCOMPARE(idsOf(store.conversations()), (QList<qint64>{a, c, b}));
  store.addMessage(b, MessageRole::kUser, QStringLiteral("bump"));
  QCOMPARE(idsOf(store.conversations()), (QList<qint64>{a, b, c}));
  store.setPinned(a, false);
  QCOMPARE(idsOf(store.conversations()), (QList<qint64>{b, c, a}));
  QVERIFY_THROWS_EXCEPTION(StoreError, store.setPinned(12345, true));
}

void TestChatHistory::dateGroups() {
  using G = ConversationListModel::Group;
  const QDateTime now(QDate(2026, 3, 10), QTime(9, 0));  // local time
  auto at = [](const QDateTime& t, bool pinned = false) {
    ConversationRecord r;
    r.updatedAt = t.toUTC();
    r.pinned = pinned;
    return r;
  };
  QCOMPARE(ConversationListModel::groupOf(at(now.addSecs(-3600)), now), G::Today);
  QCOMPARE(ConversationListModel::groupOf(at(QDateTime(QDate(2026, 3, 10), QTime(0, 1))), now), G::Today);
  QCOMPARE(ConversationListModel::groupOf(at(QDateTime(QDate(2026, 3, 9), QTime(23, 59))), now), G::Yesterday);
  QCOMPARE(ConversationListModel::groupOf(at(QDateTime(QDate(2026, 3, 8), QTime(12, 0))), now), G::Previous7Days);
  QCOMPARE(ConversationListModel::groupOf(at(QDateTime(QDate(2026, 3, 4), QTime(12, 0))), now), G::Previous7Days);
  QCOMPARE(ConversationListModel::groupOf(at(QDateTime(QDate(2026, 3, 3), QTime(12, 0))), now), G::Older);
  QCOMPARE(ConversationListModel::groupOf(at(QDateTime(QDate(2025, 1, 1), QTime(12, 0)), true), now), G::Pinned);

  // Through the model's section role, with an injected "now".
  QTemporaryDir dir;
  ChatStore store(dir.path());
  const qint64 old = store.importJson(
      QJsonDocument(QJsonObject{{QStringLiteral("format"), QStringLiteral("pagedchat-conversation")},
                                {QStringLiteral("version"), 1},
                                {QStringLiteral("title"), QStringLiteral("old")},
                                {QStringLiteral("updatedAt"), QStringLiteral("2020-05-01T12:00:00.000Z")},
                                {QStringLiteral("messages"), QJsonArray()}})
          .toJson());
  const qint64 fresh = store.createConversation(QStringLiteral("fresh"));
  ConversationListModel model(&store);
  model.setNow(QDateTime::currentDateTime());
  QCOMPARE(model.idAt(0), fresh);
  QCOMPARE(model.data(model.index(0), ConversationListModel::SectionRole).toString(), QStringLiteral("Today"));
  QCOMPARE(model.idAt(1), old);
  QCOMPARE(model.data(model.index(1), ConversationListModel::SectionRole).toString(), QStringLiteral("Older"));
  model.setNow(QDateTime(QDate(2020, 5, 2), QTime(8, 0), Qt::UTC));
  QCOMPARE(model.data(model.index(1), ConversationListModel::SectionRole).toString(), QStringLiteral("Yesterday"));
  store.setPinned(old, true);
  model.reload();
  QCOMPARE(model.idAt(0), old);
  QCOMPARE(model.data(model.index(0), ConversationListModel::SectionRole).toString(), QStringLiteral("Pinned"));
  QCOMPARE(model.data(model.index(0), ConversationListModel::PinnedRole).toBool(), true);
}

void TestChatHistory::lazyPaging() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  QList<qint64> ids;
  for (int i = 0; i < 25; ++i) ids.prepend(store.createConversation(QStringLiteral("c%1").arg(i)));
  for (int i = 25; i < 130; ++i) ids.prepend(store.createConversation(QStringLiteral("c%1").arg(i)));
  ConversationListModel big(&store);  // default page: 100 rows
  QCOMPARE(big.rowCount(), ConversationListModel::kDefaultPageSize);
  QCOMPARE(big.totalCount(), 130);
  QVERIFY(big.canFetchMore(QModelIndex()));
  QSignalSpy inserted(&big, &QAbstractItemModel::rowsInserted);
  big.fetchMore(QModelIndex());
  QCOMPARE(inserted.size(), 1);
  QCOMPARE(big.rowCount(), 130);
  QVERIFY(!big.canFetchMore(QModelIndex()));
  for (int i = 0; i < 130; ++i) QCOMPARE(big.idAt(i), ids.at(i));
  // reload() keeps all loaded rows.
  store.renameConversation(ids.last(), QStringLiteral("renamed"));
  big.reload();
  QCOMPARE(big.rowCount(), 130);
  QCOMPARE(big.data(big.index(129), ConversationListModel::TitleRole).toString(), QStringLiteral("renamed"));
}

QTEST_GUILESS_MAIN(TestChatHistory)
#include "test_chat_history.moc"
