// The pagedchat executable as a user starts it (QProcess): --help / --version / bad options work
// without a display (--automation, the tests' hook, is not in it); data-folder and database
// errors say why, on stderr and in a window (the process waits for it); SIGTERM / SIGINT while a
// reply streams quit cleanly and the partial reply is saved with finish reason "abort".
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include <QDir>
#include <QSqlDatabase>
#include <QSqlQuery>

#include <csignal>
#include <memory>

#include "app/store/chat_store.h"
#include "test_paths.h"

using pagedchat::FinishReason;

namespace {

/// Environment without any display: xcb cannot connect, so QGuiApplication would abort.
QProcessEnvironment noDisplay() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove(QStringLiteral("DISPLAY"));
  env.remove(QStringLiteral("WAYLAND_DISPLAY"));
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("xcb"));
  return env;
}

QProcessEnvironment offscreen() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  return env;
}

struct Result {
  int exitCode = -1;
  QProcess::ExitStatus status = QProcess::CrashExit;
  QString out;
  QString err;
};

/// The assistant message in the chat database at `path`, as another program reads it (a
/// read-only connection, opened for each read); `exists` false while there is none.
struct Reply {
  bool exists = false;
  QString text, finishReason;
};
Reply readReply(const QString& path) {
  static int counter = 0;
  const QString name = QStringLiteral("reader-%1").arg(++counter);
  Reply reply;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=2000"));
    if (QFile::exists(path) && db.open()) {
      QSqlQuery q(db);
      if (q.exec(QStringLiteral("SELECT text, finish_reason FROM messages WHERE role = 'assistant'")) && q.next()) {
        reply.exists = true;
        reply.text = q.value(0).toString();
        reply.finishReason = q.value(1).toString();
      }
    }
    db.close();
  }
  QSqlDatabase::removeDatabase(name);
  return reply;
}

Result runToEnd(const QStringList& args, const QProcessEnvironment& env) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(QStringLiteral(PAGEDCHAT_BINARY), args);
  Result r;
  if (!p.waitForFinished(30000)) {
    p.kill();
    p.waitForFinished();
    r.err = QStringLiteral("(timed out)");
    return r;
  }
  r.exitCode = p.exitCode();
  r.status = p.exitStatus();
  r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
  r.err = QString::fromLocal8Bit(p.readAllStandardError());
  return r;
}

}  // namespace

class TestAppProcess : public QObject {
  Q_OBJECT

 private slots:
  void helpAndErrorsWithoutDisplay();
  void startupErrorsSayWhy_data();
  void startupErrorsSayWhy();
  void corruptDatabaseIsSetAside();
  void signalSavesPartialReply_data();
  void signalSavesPartialReply();
};

void TestAppProcess::helpAndErrorsWithoutDisplay() {
  Result help = runToEnd({QStringLiteral("--help")}, noDisplay());
  QCOMPARE(help.status, QProcess::NormalExit);
  QCOMPARE(help.exitCode, 0);
  QVERIFY2(help.out.contains(QLatin1String("--data-dir")), qPrintable(help.out + help.err));
  QVERIFY2(!help.out.contains(QLatin1String("--send")), qPrintable(help.out));  // hidden test hook
  QVERIFY2(!help.out.contains(QLatin1String("-platform")), qPrintable(help.out));

  Result version = runToEnd({QStringLiteral("--version")}, noDisplay());
  QCOMPARE(version.exitCode, 0);
  QVERIFY2(version.out.startsWith(QLatin1String("PagedChat ")), qPrintable(version.out + version.err));

  Result bogus = runToEnd({QStringLiteral("--bogus")}, noDisplay());
  QCOMPARE(bogus.status, QProcess::NormalExit);
  QCOMPARE(bogus.exitCode, 1);
  QVERIFY2(bogus.err.contains(QLatin1String("bogus")), qPrintable(bogus.err));
  QVERIFY2(!bogus.err.contains(QLatin1String("platform plugin")), qPrintable(bogus.err));

  // The tests' stdin hook is not in the app (only in pagedchat-automation, which is never
  // installed): --automation is an unknown option like any other.
  Result automation = runToEnd({QStringLiteral("--automation")}, noDisplay());
  QCOMPARE(automation.status, QProcess::NormalExit);
  QCOMPARE(automation.exitCode, 1);
  QVERIFY2(automation.err.contains(QLatin1String("Unknown option 'automation'")), qPrintable(automation.err));

  // Qt's own GUI options are left to QGuiApplication, not rejected as unknown.
  Result qtOption = runToEnd({QStringLiteral("-platform"), QStringLiteral("offscreen"), QStringLiteral("-h")},
                             noDisplay());
  QCOMPARE(qtOption.exitCode, 0);
  QVERIFY2(qtOption.out.contains(QLatin1String("--data-dir")), qPrintable(qtOption.out + qtOption.err));
}

void TestAppProcess::startupErrorsSayWhy_data() {
  QTest::addColumn<QString>("kind");
  QTest::addColumn<QString>("reason");
  QTest::newRow("data dir under a file") << QStringLiteral("file") << QStringLiteral("is a file, not a folder");
  QTest::newRow("newer database") << QStringLiteral("newer") << QStringLiteral("newer than this version");
}

void TestAppProcess::startupErrorsSayWhy() {
  QFETCH(QString, kind);
  QFETCH(QString, reason);
  QTemporaryDir dir;
  QString dataDir;
  if (kind == QLatin1String("file")) {
    QFile blocker(dir.filePath(QStringLiteral("blocker")));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    dataDir = dir.filePath(QStringLiteral("blocker/data"));
  } else {
    dataDir = dir.path();
    const QString name = QStringLiteral("future");
    {
      QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
      db.setDatabaseName(dir.filePath(QStringLiteral("pagedchat.sqlite3")));
      QVERIFY(db.open());
      QSqlQuery q(db);
      QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = 1000")));
      QVERIFY(q.exec(QStringLiteral("CREATE TABLE later(x)")));
      db.close();
    }
    QSqlDatabase::removeDatabase(name);
  }

  QProcess p;
  p.setProcessEnvironment(offscreen());
  p.start(QStringLiteral(PAGEDCHAT_BINARY),
          {QStringLiteral("--data-dir"), dataDir, QStringLiteral("--model"), QStringLiteral("/nonexistent")});
  QVERIFY(p.waitForStarted());
  QString err;
  QTRY_VERIFY_WITH_TIMEOUT(
      (err += QString::fromLocal8Bit(p.readAllStandardError())).contains(QLatin1String("pagedchat: ")), 20000);
  QTRY_VERIFY_WITH_TIMEOUT((err += QString::fromLocal8Bit(p.readAllStandardError())).contains(QLatin1Char('\n')), 5000);
  QVERIFY2(err.contains(reason), qPrintable(err));
  QVERIFY2(!err.contains(QLatin1String(":  (")), qPrintable(err));  // no empty reason
  // The error window is up: the process waits for the user instead of exiting.
  QVERIFY(!p.waitForFinished(500));
  QCOMPARE(p.state(), QProcess::Running);
  ::kill(static_cast<pid_t>(p.processId()), SIGTERM);  // as closing the window would
  QVERIFY(p.waitForFinished(10000));
  QCOMPARE(p.exitStatus(), QProcess::NormalExit);
  QCOMPARE(p.exitCode(), 1);
}

void TestAppProcess::corruptDatabaseIsSetAside() {
  // A damaged database does not stop the app: it is kept beside a new one, and the app says so.
  QTemporaryDir dir;
  const QByteArray garbage = QByteArray("this is not a database, just text that happens to be here. ").repeated(200);
  {
    QFile db(dir.filePath(QStringLiteral("pagedchat.sqlite3")));
    QVERIFY(db.open(QIODevice::WriteOnly));
    db.write(garbage);
  }
  QProcess p;
  p.setProcessEnvironment(offscreen());
  p.start(QStringLiteral(PAGEDCHAT_BINARY),
          {QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--model"), QStringLiteral("/nonexistent")});
  QVERIFY(p.waitForStarted());
  QString err;
  QTRY_VERIFY_WITH_TIMEOUT(
      (err += QString::fromLocal8Bit(p.readAllStandardError())).contains(QLatin1String("was kept as")), 20000);
  const QStringList copies = QDir(dir.path()).entryList({QStringLiteral("pagedchat.sqlite3.corrupt-*")}, QDir::Files);
  QCOMPARE(copies.size(), 1);
  QFile kept(dir.filePath(copies.constFirst()));
  QVERIFY(kept.open(QIODevice::ReadOnly));
  QCOMPARE(kept.readAll(), garbage);
  QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(dir.filePath(QStringLiteral("pagedchat.sqlite3"))), 10000);
  ::kill(static_cast<pid_t>(p.processId()), SIGTERM);  // the main window is up: it quits cleanly
  QVERIFY(p.waitForFinished(20000));
  QCOMPARE(p.exitStatus(), QProcess::NormalExit);
  QCOMPARE(p.exitCode(), 0);
  ChatStore fresh(dir.path());
  QCOMPARE(fresh.conversationCount(), 0);
}

void TestAppProcess::signalSavesPartialReply_data() {
  QTest::addColumn<int>("signalNumber");
  QTest::newRow("SIGTERM") << int(SIGTERM);
  QTest::newRow("SIGINT") << int(SIGINT);
}

void TestAppProcess::signalSavesPartialReply() {
  // A reply that is certainly still streaming when the signal comes: a random-weight model that
  // greedy decoding keeps in a loop of ordinary tokens (never EOS; 3 ms per token here, a 1000-token
  // reply) with stories260K's tokenizer, the pane set to greedy and 1000 tokens in the app's own
  // settings file. (stories260K itself answers in a fraction of a second: the signal came too late.)
  const QString tokenizer = testpaths::stories260K() + QStringLiteral("/tok512.model");
  REQUIRE_MODEL_FILE(tokenizer);
  QFETCH(int, signalNumber);
  QTemporaryDir dir;
  {
    QSettings ini(dir.filePath(QStringLiteral("pagedchat.ini")), QSettings::IniFormat);
    // The readable form a user could write by hand: a sampling field that is there is the user's.
    ini.beginWriteArray(QStringLiteral("panes"), 1);
    ini.setArrayIndex(0);
    ini.setValue(QStringLiteral("temperature"), 0.0);
    ini.setValue(QStringLiteral("maxTokens"), 1000);
    ini.endArray();
  }
  QProcess p;
  p.setProcessEnvironment(offscreen());
  p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  p.start(QStringLiteral(PAGEDCHAT_BINARY),
          {QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--model"),
           QStringLiteral("random:dim=768,hidden_dim=2048,n_layers=8,n_heads=12,n_kv_heads=4,vocab_size=512,"
                          "max_seq_len=1024,seed=3"),
           QStringLiteral("--tokenizer"), tokenizer, QStringLiteral("--send"), QStringLiteral("Once upon a time")});
  QVERIFY(p.waitForStarted());

  // The (empty) reply row is written at send time, before the model has produced anything; the
  // streamed text reaches it with the periodic save. Wait for text: then the reply is streaming
  // (a signal before the first token would rightly save an empty, aborted reply).
  // Read as another program would, through a read-only connection: a read-write ChatStore here
  // takes write locks (its open probes them) that a send of the app's could meet.
  const QString database = dir.filePath(QStringLiteral("pagedchat.sqlite3"));
  QTRY_VERIFY_WITH_TIMEOUT(!readReply(database).text.isEmpty(), 60000);
  {
    const Reply early = readReply(database);
    QVERIFY2(early.finishReason.isEmpty(),
             qPrintable(QStringLiteral("the reply ended (%1, %2 characters) before the signal")
                            .arg(early.finishReason)
                            .arg(early.text.size())));
  }
  ::kill(static_cast<pid_t>(p.processId()), signalNumber);
  QVERIFY(p.waitForFinished(20000));
  QCOMPARE(p.exitStatus(), QProcess::NormalExit);  // quit through the event loop, not killed
  QCOMPARE(p.exitCode(), 0);

  const Reply reply = readReply(database);
  QCOMPARE(reply.finishReason, QStringLiteral("abort"));  // empty would mean: lost mid-stream
  QVERIFY(!reply.text.isEmpty());
  qInfo("partial reply saved: %lld characters", static_cast<long long>(reply.text.size()));
}

QTEST_MAIN(TestAppProcess)
#include "test_app_process.moc"
