// Crash safety of the real app: pagedchat (offscreen, two panes streaming stories260K) is killed
// with SIGKILL at random moments, 20 times, and started again on the same data folder. Driven
// through its hidden --automation hook (app/automation.h), which reports on stdout every
// committed user message, every streamed piece of text (with the monotonic clock) and every
// committed rename and deletion. After each kill the database must pass PRAGMA integrity_check
// and hold: every user message reported sent; each reply as a prefix of what was streamed and at
// least what was streamed one second before the kill (whole, with its finish reason, once
// reported saved); each rename reported done (or a later one); each deletion reported done. A
// third of the kills fall while conversations are renamed, a third while they are deleted.
#include <QTest>

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QRandomGenerator>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <csignal>

#include "test_paths.h"

namespace {

constexpr int kKills = 20;
constexpr qint64 kTotalBudgetMs = 240000;  // the whole test, start-ups included
constexpr qint64 kSaveBoundMs = 1000;      // streamed text older than this must be in the store

/// What the app reported about one reply.
struct Reply {
  qint64 conversation = 0;
  QList<QPair<qint64, qsizetype>> progress;  // (t, total length so far)
  QString text;
  QString savedReason;  // set by "finished": saved whole
  qint64 killedAt = 0;  // when the run that streamed it was killed (0: not yet)
};

/// Everything the app reported over all its runs.
struct Ledger {
  QMap<qint64, QPair<qint64, QString>> users;  // user message id -> (conversation, text)
  QMap<qint64, Reply> replies;                 // reply id -> what was streamed
  QMap<qint64, QStringList> titlesSent;        // conversation -> renames asked, in order
  QMap<qint64, int> titleAcked;                // conversation -> index in titlesSent of the last acked rename
  QSet<qint64> hidden;                         // deletions acked (hidden, maybe purged)
  QSet<qint64> deleteAsked;                    // deletions asked for (acked or not: maybe done)
  QSet<qint64> purged;                         // hidden before an acked purge: gone for good
  QList<qint64> conversations;                 // every conversation a send started, oldest first
};

/// One run of the app under --automation.
class AppRun {
 public:
  explicit AppRun(const QString& dataDir) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    process.setProcessEnvironment(env);
    process.setProcessChannelMode(QProcess::SeparateChannels);
    process.setStandardErrorFile(QProcess::nullDevice());
    process.start(QStringLiteral(PAGEDCHAT_BINARY), {QStringLiteral("--data-dir"), dataDir, QStringLiteral("--model"),
                                                     testpaths::stories260K(), QStringLiteral("--automation")});
  }
  ~AppRun() {
    if (process.state() != QProcess::NotRunning) {
      process.kill();
      process.waitForFinished(10000);
    }
  }
  /// Reads what arrived; returns the complete event lines.
  QList<QJsonObject> read(int waitMs) {
    if (waitMs > 0) process.waitForReadyRead(waitMs);
    buffer += process.readAllStandardOutput();
    QList<QJsonObject> events;
    for (qsizetype end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      events.append(QJsonDocument::fromJson(buffer.left(end)).object());
      buffer.remove(0, end + 1);
    }
    return events;
  }
  void command(const QString& line) { process.write((line + QLatin1Char('\n')).toUtf8()); }

  QProcess process;
  QByteArray buffer;
};

QSqlDatabase openDb(const QString& path) {
  const QString name = QStringLiteral("crash-check");
  QSqlDatabase db = QSqlDatabase::contains(name) ? QSqlDatabase::database(name, false)
                                                 : QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
  db.setDatabaseName(path);
  db.open();
  return db;
}

}  // namespace

class TestCrashSafety : public QObject {
  Q_OBJECT

 private slots:
  void killedAtRandomMomentsLosesNothing();

 private:
  /// Checks the database after a kill at `killedAt` (monotonic ms) against the ledger.
  void checkAfterKill(const QString& dbPath, const Ledger& ledger, qint64 killedAt);
  void apply(Ledger& ledger, const QJsonObject& e, int streaming[2]);
};

void TestCrashSafety::apply(Ledger& ledger, const QJsonObject& e, int streaming[2]) {
  const QString event = e.value(QStringLiteral("event")).toString();
  if (event == QLatin1String("sent") && e.value(QStringLiteral("ok")).toBool()) {
    const qint64 c = e.value(QStringLiteral("conversationId")).toInteger();
    ledger.users.insert(e.value(QStringLiteral("userId")).toInteger(), {c, e.value(QStringLiteral("text")).toString()});
    Reply reply;
    reply.conversation = c;
    ledger.replies.insert(e.value(QStringLiteral("replyId")).toInteger(), reply);
    if (!ledger.conversations.contains(c)) ledger.conversations.append(c);
  } else if (event == QLatin1String("delta")) {
    Reply& r = ledger.replies[e.value(QStringLiteral("replyId")).toInteger()];
    r.text += e.value(QStringLiteral("text")).toString();
    r.progress.append({e.value(QStringLiteral("t")).toInteger(), r.text.size()});
    const int pane = e.value(QStringLiteral("pane")).toInt();
    if (pane >= 0 && pane < 2) streaming[pane] = 1;
  } else if (event == QLatin1String("finished")) {
    ledger.replies[e.value(QStringLiteral("replyId")).toInteger()].savedReason =
        e.value(QStringLiteral("reason")).toString();
  } else if (event == QLatin1String("renamed") && e.value(QStringLiteral("ok")).toBool()) {
    const qint64 c = e.value(QStringLiteral("conversationId")).toInteger();
    ledger.titleAcked[c] = static_cast<int>(ledger.titlesSent[c].indexOf(e.value(QStringLiteral("title")).toString()));
  } else if (event == QLatin1String("deleted") && e.value(QStringLiteral("ok")).toBool()) {
    ledger.hidden.insert(e.value(QStringLiteral("conversationId")).toInteger());
  } else if (event == QLatin1String("purged")) {
    ledger.purged.unite(ledger.hidden);
  }
}

void TestCrashSafety::checkAfterKill(const QString& dbPath, const Ledger& ledger, qint64 killedAt) {
  QSqlDatabase db = openDb(dbPath);
  QVERIFY2(db.isOpen(), qPrintable(db.lastError().text()));
  {
    QSqlQuery q(db);
    QVERIFY(q.exec(QStringLiteral("PRAGMA integrity_check")));
    QVERIFY(q.next());
    QCOMPARE(q.value(0).toString(), QStringLiteral("ok"));
  }
  QSet<qint64> live;  // conversations present
  QMap<qint64, QString> titles;
  QSet<qint64> hiddenInDb;
  {
    QSqlQuery q(db);
    QVERIFY(q.exec(QStringLiteral("SELECT id, title, deleted_at FROM conversations")));
    while (q.next()) {
      live.insert(q.value(0).toLongLong());
      titles.insert(q.value(0).toLongLong(), q.value(1).toString());
      if (!q.value(2).isNull()) hiddenInDb.insert(q.value(0).toLongLong());
    }
  }
  QMap<qint64, QPair<qint64, QString>> messages;  // id -> (conversation, text)
  QMap<qint64, QString> finish;
  {
    QSqlQuery q(db);
    QVERIFY(q.exec(QStringLiteral("SELECT id, conversation_id, text, finish_reason FROM messages")));
    while (q.next()) {
      messages.insert(q.value(0).toLongLong(), {q.value(1).toLongLong(), q.value(2).toString()});
      finish.insert(q.value(0).toLongLong(), q.value(3).toString());
    }
  }
  db.close();

  // Deletions: acked ones are hidden or gone; purged ones are gone with their messages.
  for (qint64 c : ledger.hidden) QVERIFY2(!live.contains(c) || hiddenInDb.contains(c), qPrintable(QString::number(c)));
  for (qint64 c : ledger.purged) QVERIFY2(!live.contains(c), qPrintable(QString::number(c)));
  for (auto it = messages.cbegin(); it != messages.cend(); ++it)
    QVERIFY2(live.contains(it.value().first), "a message outlived its conversation");
  // Renames: the one acked last, or one asked after it.
  for (auto it = ledger.titleAcked.cbegin(); it != ledger.titleAcked.cend(); ++it) {
    if (!live.contains(it.key())) continue;
    const int stored = static_cast<int>(ledger.titlesSent.value(it.key()).indexOf(titles.value(it.key())));
    QVERIFY2(stored >= it.value(), qPrintable(QStringLiteral("conversation %1: title \"%2\", acked #%3")
                                                  .arg(it.key())
                                                  .arg(titles.value(it.key()))
                                                  .arg(it.value())));
  }
  // User messages: every one reported sent.
  for (auto it = ledger.users.cbegin(); it != ledger.users.cend(); ++it) {
    if (!messages.contains(it.key())) {
      QVERIFY2(ledger.deleteAsked.contains(it.value().first),
               qPrintable(QStringLiteral("user message %1 lost").arg(it.key())));
      continue;
    }
    QCOMPARE(messages.value(it.key()).second, it.value().second);
  }
  // Replies: a prefix of what streamed, and at least what streamed a second before the kill.
  for (auto it = ledger.replies.cbegin(); it != ledger.replies.cend(); ++it) {
    if (!messages.contains(it.key())) {
      QVERIFY2(ledger.deleteAsked.contains(it.value().conversation),
               qPrintable(QStringLiteral("reply %1 lost").arg(it.key())));
      continue;
    }
    const Reply& r = it.value();
    const QString stored = messages.value(it.key()).second;
    const qint64 runKilledAt = r.killedAt ? r.killedAt : killedAt;  // a reply of an earlier run ended with it
    QVERIFY2(stored.isEmpty() || r.text.startsWith(stored),
             qPrintable(QStringLiteral("reply %1: stored text is not what streamed:\n"
                                       "stored:   %2\nstreamed: %3")
                            .arg(it.key())
                            .arg(stored, r.text)));
    qsizetype due = 0;
    for (const auto& [t, length] : r.progress)
      if (t <= runKilledAt - kSaveBoundMs) due = length;
    QVERIFY2(stored.size() >= due, qPrintable(QStringLiteral("reply %1: %2 characters stored, %3 streamed a second "
                                                             "before the kill")
                                                  .arg(it.key())
                                                  .arg(stored.size())
                                                  .arg(due)));
    if (!r.savedReason.isEmpty()) {
      QCOMPARE(stored, r.text);
      QCOMPARE(finish.value(it.key()), r.savedReason);
    }
  }
}

void TestCrashSafety::killedAtRandomMomentsLosesNothing() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  const QString dbPath = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  QRandomGenerator rng(QRandomGenerator::global()->generate());
  Ledger ledger;
  QElapsedTimer total;
  total.start();
  int renameCounter = 0;
  int killsWhileRenaming = 0, killsWhileDeleting = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    QVERIFY2(total.elapsed() < kTotalBudgetMs, "over the time budget");
    const int mode = kill % 3;  // 0: streaming only, 1: renaming too, 2: deleting too
    AppRun app(dir.path());
    QVERIFY(app.process.waitForStarted(10000));
    int streaming[2] = {0, 0};
    bool ready = false;
    QElapsedTimer wait;
    wait.start();
    while (!ready && wait.elapsed() < 60000 && app.process.state() == QProcess::Running)
      for (const QJsonObject& e : app.read(200))
        ready = ready || e.value(QStringLiteral("event")).toString() == QLatin1String("ready");
    QVERIFY2(ready, "the app did not come up");
    // Restarted: the conversations hidden before the kill are purged at start.
    if (kill > 0) {
      QSqlDatabase db = openDb(dbPath);
      QSqlQuery q(db);
      QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM conversations WHERE deleted_at IS NOT NULL")));
      QVERIFY(q.next());
      QCOMPARE(q.value(0).toInt(), 0);
      q.finish();
      db.close();
      ledger.purged.unite(ledger.hidden);
    }
    app.command(QStringLiteral("panes 2"));
    for (int pane = 0; pane < 2; ++pane) {
      app.command(QStringLiteral("new %1").arg(pane));
      app.command(QStringLiteral("send %1 Once upon a time %2").arg(pane).arg(kill));
    }
    // The conversations of earlier runs (not shown now) are renamed or deleted meanwhile.
    QList<qint64> older;
    for (qint64 c : std::as_const(ledger.conversations))
      if (!ledger.deleteAsked.contains(c)) older.append(c);
    const qint64 killAfterMs = 200 + rng.bounded(1800);
    QElapsedTimer sinceStreaming;
    qint64 killedAt = 0;
    while (killedAt == 0) {
      QVERIFY2(app.process.state() == QProcess::Running, "the app exited on its own");
      QVERIFY2(wait.elapsed() < 60000, "the panes did not stream");
      for (const QJsonObject& e : app.read(20)) {
        apply(ledger, e, streaming);
        const QString event = e.value(QStringLiteral("event")).toString();
        if (event == QLatin1String("finished")) {  // keep both panes streaming
          const int pane = e.value(QStringLiteral("pane")).toInt();
          app.command(QStringLiteral("new %1").arg(pane));
          app.command(QStringLiteral("send %1 Lily and Tom %2").arg(pane).arg(kill));
        }
        QVERIFY2(event != QLatin1String("error"), qPrintable(e.value(QStringLiteral("text")).toString()));
      }
      if (streaming[0] && streaming[1] && !sinceStreaming.isValid()) sinceStreaming.start();
      if (mode == 1 && !older.isEmpty()) {
        const qint64 c = older.at(rng.bounded(static_cast<int>(older.size())));
        const QString title = QStringLiteral("Title %1").arg(++renameCounter);
        ledger.titlesSent[c].append(title);
        app.command(QStringLiteral("rename %1 %2").arg(c).arg(title));
      } else if (mode == 2 && !older.isEmpty() && rng.bounded(4) == 0) {
        const qint64 c = older.takeLast();
        ledger.deleteAsked.insert(c);
        app.command(QStringLiteral("delete %1").arg(c));
        if (rng.bounded(2) == 0) app.command(QStringLiteral("purge"));
      }
      if (sinceStreaming.isValid() && sinceStreaming.elapsed() >= killAfterMs) {
        QElapsedTimer clock;  // the monotonic clock, as the app's "t"
        clock.start();
        killedAt = clock.msecsSinceReference();
        ::kill(static_cast<pid_t>(app.process.processId()), SIGKILL);
      }
    }
    QVERIFY(app.process.waitForFinished(10000));
    QCOMPARE(app.process.exitStatus(), QProcess::CrashExit);
    for (const QJsonObject& e : app.read(0)) apply(ledger, e, streaming);  // reported before the kill
    if (mode == 1) ++killsWhileRenaming;
    if (mode == 2) ++killsWhileDeleting;
    checkAfterKill(dbPath, ledger, killedAt);
    for (Reply& r : ledger.replies)
      if (r.killedAt == 0) r.killedAt = killedAt;
    if (QTest::currentTestFailed()) return;
  }
  qsizetype streamedChars = 0;
  for (const Reply& r : std::as_const(ledger.replies)) streamedChars += r.text.size();
  qInfo(
      "%d kills (%d while renaming, %d while deleting) in %.1f s: %lld user messages, %lld replies "
      "(%lld characters streamed), %lld renames, %lld deletions checked",
      kKills, killsWhileRenaming, killsWhileDeleting, total.elapsed() / 1000.0,
      static_cast<long long>(ledger.users.size()), static_cast<long long>(ledger.replies.size()),
      static_cast<long long>(streamedChars), static_cast<long long>(renameCounter),
      static_cast<long long>(ledger.hidden.size()));
}

QTEST_GUILESS_MAIN(TestCrashSafety)
#include "test_crash_safety.moc"
