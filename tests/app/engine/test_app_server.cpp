// The app's OpenAI server toggle (ApiServerController on the app's engine worker), driven with curl
// as an outside client: a pane's request and an HTTP request run in the same engine steps (the
// worker's snapshots show both running at once, the server's marked as such), a client that
// disconnects mid-stream aborts its request and frees its blocks, turning the server off closes
// the port, and an address other than loopback needs an explicit choice and an API key. Browsers
// (requests with an Origin header) are refused unless their page is an allowed origin, and
// turning the server off while it streams a long answer returns at once.
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>

#include "app/controllers/app_controller.h"
#include "app/engine/engine_worker.h"
#include "app/engine/remote/api_key_store.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app_test_util.h"
#include "engine/async_engine_client.h"

namespace {

constexpr int kTimeoutMs = 60000;

/// A streamed chat completion through curl (-N: no buffering), running until it ends or is killed.
void startStream(QProcess& curl, const QString& v1, int maxTokens,
                 const QString& model = QStringLiteral("stories260K")) {
  const QByteArray body = QStringLiteral(R"({"model": "%2", "stream": true, "max_tokens": %1,
      "ignore_eos": true, "temperature": 0, "messages": [{"role": "user", "content": "Tom and his dog"}]})")
                              .arg(maxTokens)
                              .arg(model)
                              .toUtf8();
  curl.start(QStringLiteral("curl"), {"-sS", "-N", "--max-time", "120", "-H", "Content-Type: application/json",
                                      "--data-binary", QString::fromUtf8(body), v1 + "/chat/completions"});
}

/// The first model id GET <v1>/models lists ("" when there is none).
QString servedModel(const QString& v1) {
  QProcess curl;
  curl.start(QStringLiteral("curl"), {"-sS", "--max-time", "30", v1 + "/models"});
  curl.waitForFinished(kTimeoutMs);
  const QJsonArray data = QJsonDocument::fromJson(curl.readAllStandardOutput()).object().value("data").toArray();
  return data.isEmpty() ? QString() : data.first().toObject().value("id").toString();
}

/// The status line and headers of GET <v1>/models sent by a browser's page at `origin`.
QByteArray modelsHeadersFrom(const QString& v1, const QString& origin) {
  QProcess curl;
  curl.start(QStringLiteral("curl"), {"-sS", "--max-time", "30", "-o", "/dev/null", "-D", "-", "-H",
                                      QStringLiteral("Origin: ") + origin, v1 + "/models"});
  curl.waitForFinished(kTimeoutMs);
  return curl.readAllStandardOutput();
}

/// Waits for `p` to end (it may have ended already); true when it did.
bool finished(QProcess& p) { return p.state() == QProcess::NotRunning || p.waitForFinished(kTimeoutMs); }

/// The running requests of a snapshot: (pane requests, server requests).
QPair<int, int> runningOf(const EngineSnapshot& s) {
  int pane = 0, server = 0;
  for (const EngineRequestInfo& r : s.requests)
    if (r.running) (r.fromServer ? server : pane) += 1;
  return {pane, server};
}

}  // namespace

class TestAppServer : public QObject {
  Q_OBJECT

 private slots:
  void paneAndServerShareSteps();
  void networkAddressNeedsChoiceAndKey();
  void allowedOriginsReachTheServer();
  void turningOffMidAnswerIsQuick();
  void deepBodyWhileAPaneAnswers();
};

void TestAppServer::paneAndServerShareSteps() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  MemoryApiKeyStore keys;
  AppController app(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
  ApiServerController* server = app.server();
  QVERIFY(!server->isEnabled());  // off by default
  app.start();
  LocalChatBackend* engine = app.engine();
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), kTimeoutMs);
  QCOMPARE(server->start(QStringLiteral("127.0.0.1"), 0, QString(), false), QString());
  QVERIFY2(server->isRunning(), qPrintable(server->error()));
  QVERIFY(server->address().startsWith(QStringLiteral("http://127.0.0.1:")));
  const QString v1 = server->address();

  // Every step's snapshot: did one show a pane's request and a server request running together?
  engine->setMonitoring(true, 0);
  EngineSnapshot last;
  bool together = false;
  connect(engine, &LocalChatBackend::snapshotReady, this, [&](const EngineSnapshot& s) {
    last = s;
    const auto [pane, fromServer] = runningOf(s);
    if (pane > 0 && fromServer > 0) together = true;
  });

  // The worker is held inside the pane's first step; the HTTP request is queued meanwhile, so
  // the next step takes both.
  PaneState* session = app.panes()->paneAt(0);
  QVERIFY(session->settings()->apply({{"maxTokens", "200"}, {"temperature", "0"}}).isEmpty());
  QSemaphore hold;
  std::atomic<bool> held{false};
  apptest::ReleaseOnExit release{hold, {}};
  release.connection = connect(
      engine->worker(), &EngineWorker::stepFinished, this,
      [&] {
        if (!held.exchange(true)) hold.acquire();
      },
      Qt::DirectConnection);
  QVERIFY(session->sendText(QStringLiteral("Once upon a time")));
  QTRY_VERIFY_WITH_TIMEOUT(held.load(), kTimeoutMs);
  QProcess curl;
  startStream(curl, v1, 40);
  pagedchat::AsyncEngineClient* client = engine->worker()->serverClient();
  QTRY_COMPARE_WITH_TIMEOUT(client->num_unfinished_requests(), 1, kTimeoutMs);
  hold.release();
  QTRY_VERIFY_WITH_TIMEOUT(together, kTimeoutMs);
  QVERIFY(finished(curl));
  const QByteArray out = curl.readAllStandardOutput();
  QVERIFY2(out.contains("data: [DONE]") && out.contains("\"finish_reason\":\"length\""), out.constData());
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), kTimeoutMs);
  QVERIFY(!session->messages()->at(1).text.isEmpty());

  // A client that goes away mid-stream: its request is aborted and its blocks freed. The worker
  // is held two steps after the request arrived (so it is running, with tokens sent), the client
  // is killed meanwhile, and only then may the request go on: it cannot finish first, however
  // fast the machine (400 tokens of stories260K take a fraction of a second).
  bool serverRan = false;
  connect(engine, &LocalChatBackend::snapshotReady, this, [&](const EngineSnapshot& s) {
    if (runningOf(s).second == 1) serverRan = true;
  });
  QSemaphore holdServer;
  std::atomic<bool> armed{false};
  std::atomic<bool> serverHeld{false};
  std::atomic<int> stepsSinceArrival{0};
  apptest::ReleaseOnExit releaseServer{holdServer, {}};
  releaseServer.connection = connect(
      engine->worker(), &EngineWorker::stepFinished, this,
      [&] {
        if (!armed.load() || client->num_unfinished_requests() != 1) return;
        if (++stepsSinceArrival >= 3 && !serverHeld.exchange(true)) holdServer.acquire();
      },
      Qt::DirectConnection);
  armed = true;
  QProcess gone;
  startStream(gone, v1, 400);
  QTRY_VERIFY_WITH_TIMEOUT(serverHeld.load(), kTimeoutMs);
  gone.kill();
  gone.waitForFinished(5000);
  holdServer.release();
  QTRY_VERIFY_WITH_TIMEOUT(serverRan, kTimeoutMs);
  QTRY_VERIFY_WITH_TIMEOUT(last.requests.isEmpty() && last.usedBlocks == 0, kTimeoutMs);
  QCOMPARE(client->num_unfinished_requests(), 0);
  QProcess metrics;
  metrics.start(QStringLiteral("curl"), {"-sS", v1.chopped(3) + "/metrics"});
  QVERIFY(finished(metrics));
  const QByteArray text = metrics.readAllStandardOutput();
  QVERIFY2(text.contains("finished_reason=\"abort\"") && text.contains("finished_reason=\"length\""), text.constData());

  // Off: the port is closed.
  server->stop();
  QVERIFY(!server->isRunning());
  QCOMPARE(server->address(), QString());
  QProcess refused;
  refused.start(QStringLiteral("curl"), {"-sS", "--max-time", "10", v1 + "/models"});
  QVERIFY(finished(refused));
  QCOMPARE(refused.exitCode(), 7);  // curl: failed to connect
}

void TestAppServer::networkAddressNeedsChoiceAndKey() {
  QTemporaryDir dir;
  MemoryApiKeyStore keys;
  AppOptions options = apptest::optionsFor(dir.path());
  options.modelPath.clear();  // no model: nothing to serve, but the checks come first
  AppController app(options, nullptr, nullptr, &keys);
  ApiServerController* server = app.server();
  QVERIFY(server->start(QStringLiteral("0.0.0.0"), 0, QStringLiteral("k"), false).contains("Allow other machines"));
  QVERIFY(server->start(QStringLiteral("0.0.0.0"), 0, QString(), true).contains("API key"));
  QVERIFY(server->start(QStringLiteral("127.0.0.1"), 70000, QString(), false).contains("65535"));
  QVERIFY(!server->isEnabled());
  // Allowed with a key: on (it listens once a model is loaded); the key is in the key store only.
  QCOMPARE(server->start(QStringLiteral("0.0.0.0"), 0, QStringLiteral("secret-k"), true), QString());
  QVERIFY(server->isEnabled());
  QVERIFY(!server->isRunning());
  QString stored;
  keys.readKey(QStringLiteral("pagedchat-server"), [&](const QString& key, const QString&) { stored = key; });
  QCOMPARE(stored, QStringLiteral("secret-k"));
  server->stop();
  QVERIFY(!server->isEnabled());
}

void TestAppServer::allowedOriginsReachTheServer() {
  // The "allowed web pages" setting: none by default (a request from a browser, which sends an
  // Origin header, is refused), a listed origin is answered, and the list is kept in pagedchat.ini.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  MemoryApiKeyStore keys;
  const QStringList allowed{QStringLiteral("http://example.test"), QStringLiteral("http://localhost:3000")};
  {
    AppController app(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
    ApiServerController* server = app.server();
    QCOMPARE(server->allowedOrigins(), QStringList());
    app.start();
    QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), kTimeoutMs);
    // Not origins: refused, nothing changes.
    for (const char* bad : {"example.test", "http://example.test/page", "http://user@example.test", "http://"})
      QVERIFY2(server->start(QStringLiteral("127.0.0.1"), 0, QString(), false, QString::fromLatin1(bad))
                   .contains(QLatin1String("origin")),
               bad);
    QVERIFY(!server->isEnabled());

    QCOMPARE(server->start(QStringLiteral("127.0.0.1"), 0, QString(), false), QString());
    QVERIFY2(server->isRunning(), qPrintable(server->error()));
    QByteArray headers = modelsHeadersFrom(server->address(), QStringLiteral("http://example.test"));
    QVERIFY2(headers.startsWith("HTTP/1.1 403"), headers.constData());  // browsers refused by default

    QCOMPARE(server->start(QStringLiteral("127.0.0.1"), 0, QString(), false,
                           QStringLiteral(" http://example.test, http://localhost:3000/ ")),
             QString());
    QVERIFY2(server->isRunning(), qPrintable(server->error()));
    QCOMPARE(server->allowedOrigins(), allowed);
    QCOMPARE(server->allowedOriginsText(), QStringLiteral("http://example.test, http://localhost:3000"));
    headers = modelsHeadersFrom(server->address(), QStringLiteral("http://example.test"));
    QVERIFY2(headers.startsWith("HTTP/1.1 200"), headers.constData());
    QVERIFY2(headers.toLower().contains("access-control-allow-origin: http://example.test"), headers.constData());
    headers = modelsHeadersFrom(server->address(), QStringLiteral("http://other.test"));
    QVERIFY2(headers.startsWith("HTTP/1.1 403"), headers.constData());  // only the listed ones
  }
  // Kept for the next start.
  QCOMPARE(QSettings(AppController::settingsFile(dir.path()), QSettings::IniFormat)
               .value(QStringLiteral("server/allowedOrigins"))
               .toStringList(),
           allowed);
  AppOptions options = apptest::optionsFor(dir.path());
  options.modelPath.clear();
  AppController next(options, nullptr, nullptr, &keys);
  QCOMPARE(next.server()->allowedOrigins(), allowed);
}

void TestAppServer::turningOffMidAnswerIsQuick() {
  // The server is turned off while it streams an answer with most of its 2000 tokens still to
  // come: stop() returns within a second (the GUI thread is not held until the answer would have
  // ended), the server is off, and the answer was cut short, not finished.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  MemoryApiKeyStore keys;
  AppController app(apptest::longContextOptions(dir.path()), nullptr, nullptr, &keys);  // room for 2000 tokens
  ApiServerController* server = app.server();
  app.start();
  LocalChatBackend* engine = app.engine();
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), kTimeoutMs);
  QCOMPARE(server->start(QStringLiteral("127.0.0.1"), 0, QString(), false), QString());
  QVERIFY2(server->isRunning(), qPrintable(server->error()));
  pagedchat::AsyncEngineClient* client = engine->worker()->serverClient();

  // The worker is held three steps into the answer (running, tokens sent), so that it cannot
  // finish first however fast the machine.
  QSemaphore hold;
  std::atomic<bool> held{false};
  std::atomic<int> steps{0};
  apptest::ReleaseOnExit release{hold, {}};
  release.connection = connect(
      engine->worker(), &EngineWorker::stepFinished, this,
      [&] {
        if (client->num_unfinished_requests() != 1) return;
        if (++steps >= 3 && !held.exchange(true)) hold.acquire();
      },
      Qt::DirectConnection);
  QProcess curl;
  startStream(curl, server->address(), 2000, servedModel(server->address()));
  QTRY_VERIFY2_WITH_TIMEOUT(held.load(), curl.readAllStandardError() + curl.readAllStandardOutput().left(600),
                            kTimeoutMs);
  QCOMPARE(client->num_unfinished_requests(), 1);

  hold.release();  // the answer goes on ...
  QElapsedTimer timer;
  timer.start();
  server->stop();  // ... and is stopped at once
  const qint64 stopMs = timer.elapsed();
  QVERIFY(!server->isRunning());
  QVERIFY(!server->isEnabled());
  QVERIFY2(stopMs < 1000, qPrintable(QStringLiteral("stop() took %1 ms").arg(stopMs)));

  QVERIFY(finished(curl));
  const QByteArray out = curl.readAllStandardOutput();
  QVERIFY2(!out.contains("\"finish_reason\":\"length\""), out.right(400).constData());  // not run to its end
  const qsizetype chunks = out.count("data: {");
  QVERIFY2(chunks > 0 && chunks < 1000, qPrintable(QString::number(chunks)));
  QTRY_COMPARE_WITH_TIMEOUT(client->num_unfinished_requests(), 0, kTimeoutMs);
}

// A body nested 60 000 levels deep (it overflowed the stack of a recursive dump and killed the
// app) sent to the app's server while a pane answers: a 400 naming the limit, and the pane's
// answer goes on to its end.
void TestAppServer::deepBodyWhileAPaneAnswers() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  MemoryApiKeyStore keys;
  AppController app(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
  app.start();
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), kTimeoutMs);
  ApiServerController* server = app.server();
  QCOMPARE(server->start(QStringLiteral("127.0.0.1"), 0, QString(), false), QString());
  QVERIFY2(server->isRunning(), qPrintable(server->error()));
  PaneState* session = app.panes()->paneAt(0);
  QVERIFY(session->settings()->apply({{"maxTokens", "300"}, {"temperature", "0"}}).isEmpty());
  QVERIFY(session->sendText(QStringLiteral("Once upon a time")));
  QTRY_VERIFY_WITH_TIMEOUT(session->isBusy(), kTimeoutMs);
  const QByteArray body = R"({"model": "stories260K", "messages": [{"role": "user", "content": "hi"}], )"
                          R"("chat_template_kwargs": {"k": )" +
                          QByteArray(60000, '[') + QByteArray(60000, ']') + "}}";
  QProcess curl;
  curl.start(QStringLiteral("curl"),
             {"-sS", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}", "-H", "Content-Type: application/json",
              "--data-binary", "@-", server->address() + "/chat/completions"});
  QVERIFY(curl.waitForStarted());
  curl.write(body);
  curl.closeWriteChannel();
  QVERIFY(finished(curl));
  const QByteArray out = curl.readAllStandardOutput();
  QVERIFY2(out.endsWith("400") && out.contains("deeper than 64"), out.left(400).constData());
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), kTimeoutMs);
  QVERIFY(!session->messages()->at(1).text.isEmpty());
  server->stop();
}

QTEST_GUILESS_MAIN(TestAppServer)
#include "test_app_server.moc"
