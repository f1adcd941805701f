// Remote endpoints as panes, against our own OpenAI-compatible server (`pagedchat-cli serve`, a
// second process on a free loopback port) as the outside endpoint: a remote pane and a local pane
// answer the same greedy prompt identically (sent to all panes at once), regenerate and stop work,
// the stored reply names its backend, the API key lives in the key store and never in
// pagedchat.ini or the database; failures (401, unreachable port, a server killed mid-stream, a
// silent endpoint, a TLS handshake with a plain-text server) give the pane a clear message and
// keep what arrived, while the other panes go on. Also the SSE framing and the keychain's
// "unavailable" report.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <functional>
#include <memory>

#include "app/controllers/app_controller.h"
#include "app/engine/remote/api_key_store.h"
#include "app/engine/remote/remote_backend.h"
#include "app/engine/remote/sse_parser.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app_test_util.h"
#include "http_test_util.h"
#include "serve_process.h"

using apptest::answerRequests;
using pagedchat::FinishReason;

namespace {

constexpr int kTimeoutMs = 60000;

/// The last message of a pane (the reply).
MessageRecord lastMessage(PaneState* s) {
  const int n = s->messages()->rowCount();
  return n > 0 ? s->messages()->at(n - 1) : MessageRecord{};
}

/// `pagedchat-cli serve` arguments: stories260K served as "stories", then `extra`.
QStringList storiesArgs(const QStringList& extra = {}) {
  return QStringList{"--model", testpaths::stories260K(), "--served-model-name", "stories"} + extra;
}

/// A free loopback port nothing listens on (bound, then closed).
quint16 closedPort() {
  QTcpServer probe;
  if (!probe.listen(QHostAddress::LocalHost)) return 0;
  const quint16 port = probe.serverPort();
  probe.close();
  return port;
}

}  // namespace

class TestRemotePane : public QObject {
  Q_OBJECT

 private slots:
  void sseFraming();
  void remoteAndLocalAnswerAlike();
  void wrongKeyIs401();
  void unreachablePortWhileLocalPaneAnswers();
  void serverKilledMidStream();
  void serverShutDownMidStream();
  void htmlErrorPageIsShortened();
  void reasoningChoiceInRequest();
  void toolCallsFromTheStream();
  void silentEndpointTimesOut();
  void tlsHandshakeWithPlainServer();
  void keychainUnavailableIsReported();
  void redirectElsewhereKeepsTheKey();

 private:
  /// An app loading stories260K, its data in `dir`, keys in keys_.
  std::unique_ptr<AppController> startApp(const QTemporaryDir& dir);
  /// Starts `server` and returns its /v1 URL ("" and a failure when it does not come up).
  QString startServer(Server& server);
  /// Freezes process `pid` (SIGSTOP) the moment pane `s` receives its first text.
  void freezeAtFirstText(PaneState* s, qint64 pid);

  MemoryApiKeyStore keys_;
};

std::unique_ptr<AppController> TestRemotePane::startApp(const QTemporaryDir& dir) {
  auto app = std::make_unique<AppController>(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys_);
  app->start();
  return app;
}

QString TestRemotePane::startServer(Server& server) {
  if (!server.waitReady()) {
    qWarning("%s", server.stderrText().constData());
    return {};
  }
  return server.v1();
}

void TestRemotePane::freezeAtFirstText(PaneState* s, qint64 pid) {
  auto freeze = std::make_shared<QMetaObject::Connection>();
  *freeze = connect(s->remoteBackend(), &ChatBackend::stepFinished, this,
                    [pid, freeze](const QList<RequestDelta>& deltas) {
                      for (const RequestDelta& d : deltas)
                        if (!d.text.isEmpty() && pid > 0) {
                          ::kill(static_cast<pid_t>(pid), SIGSTOP);
                          QObject::disconnect(*freeze);
                          return;
                        }
                    });
}

void TestRemotePane::sseFraming() {
  // The HTML standard's event-stream rules: CRLF, LF and CR line ends (also split between two
  // reads), comments, multi-line data, a space after the colon dropped once, an event without
  // data dropped, bytes of one UTF-8 character in two reads.
  SseParser p;
  QCOMPARE(p.feed(": keep-alive\r\n\r\ndata: {\"a\":1}\r"), QList<QByteArray>{});
  QVERIFY(p.hasPartialEvent());
  QCOMPARE(p.feed("\n\r\n"), (QList<QByteArray>{"{\"a\":1}"}));
  QVERIFY(!p.hasPartialEvent());
  QCOMPARE(p.feed("data:first\ndata:  second\nevent: x\n\nevent: only\n\n"), (QList<QByteArray>{"first\n second"}));
  const QByteArray hangul = QStringLiteral("data: 한\n\n").toUtf8();
  QCOMPARE(p.feed(hangul.left(8)), QList<QByteArray>{});
  QCOMPARE(p.feed(hangul.mid(8)), (QList<QByteArray>{QStringLiteral("한").toUtf8()}));
  QCOMPARE(p.feed("data: [DONE]\r\rdata"), (QList<QByteArray>{"[DONE]"}));
  QVERIFY(p.hasPartialEvent());  // a stream ending here was cut
}

void TestRemotePane::remoteAndLocalAnswerAlike() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  Server server(storiesArgs());
  const QString v1 = startServer(server);
  QVERIFY(!v1.isEmpty());
  QTemporaryDir dir;
  auto app = startApp(dir);
  QTRY_VERIFY_WITH_TIMEOUT(app->engine()->isReady(), kTimeoutMs);
  PaneListModel* panes = app->panes();
  QVERIFY(panes->addPane());
  PaneState* local = panes->paneAt(0);
  PaneState* remote = panes->paneAt(1);

  // The model list, as the settings popup asks for it.
  QSignalSpy listed(app->endpoints(), &PaneEndpoints::modelsListed);
  app->endpoints()->listModels(v1, QString());
  QTRY_COMPARE_WITH_TIMEOUT(listed.size(), 1, kTimeoutMs);
  QCOMPARE(listed.at(0).at(1).toStringList(), QStringList{"stories"});
  QCOMPARE(listed.at(0).at(2).toString(), QString());

  QVERIFY(app->endpoints()->useRemote(1, QStringLiteral("ftp://x"), "stories", {}, false).contains("http"));
  QVERIFY(!remote->isRemote());
  QCOMPARE(app->endpoints()->useRemote(1, v1 + "/", "stories", QStringLiteral("key-1"), true), QString());
  QVERIFY(remote->isRemote());
  QCOMPARE(remote->endpointUrl(), v1);
  // The context length from its /v1/models entry (vLLM's max_model_len), as the local engine has it.
  QTRY_COMPARE_WITH_TIMEOUT(remote->contextLimit(), app->engine()->maxPositions(), kTimeoutMs);
  for (PaneState* s : {local, remote})
    QVERIFY(s->settings()->apply({{"temperature", "0"}, {"maxTokens", "40"}}).isEmpty());

  // One prompt to both panes: they stream at once and, greedy, answer the same text.
  QCOMPARE(panes->sendToAll(QStringLiteral("Once upon a time")), 2);
  QVERIFY(local->isBusy() && remote->isBusy());
  QTRY_VERIFY_WITH_TIMEOUT(!local->isBusy() && !remote->isBusy(), kTimeoutMs);
  QCOMPARE(remote->errorText(), QString());
  const MessageRecord a = lastMessage(local), b = lastMessage(remote);
  QVERIFY(!a.text.isEmpty());
  QCOMPARE(b.text, a.text);
  QCOMPARE(b.finishReason, a.finishReason);
  QCOMPARE(remote->promptTokens(), local->promptTokens());  // the server's usage counts
  // The store says who answered.
  const QList<MessageRecord> stored = app->store()->branch(remote->conversationId());
  QCOMPARE(stored.constLast().backend, QStringLiteral("remote:stories@%1").arg(v1));
  QCOMPARE(app->store()->branch(local->conversationId()).constLast().backend, QStringLiteral("local:stories260K"));

  // Regenerate on the remote pane: a sibling answer, greedy again, so the same text.
  QVERIFY(remote->regenerate());
  QTRY_VERIFY_WITH_TIMEOUT(!remote->isBusy(), kTimeoutMs);
  QCOMPARE(lastMessage(remote).text, a.text);
  QCOMPARE(lastMessage(remote).siblingCount, 2);

  // Stop: the reply ends "abort" and keeps what had arrived.
  QVERIFY(remote->settings()->apply({{"maxTokens", "400"}}).isEmpty());
  QSignalSpy finished(remote, &PaneState::replyFinished);
  QVERIFY(remote->sendText(QStringLiteral("Tom and his dog")));
  remote->stop();
  QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeoutMs);
  QCOMPARE(finished.at(0).at(0).value<FinishReason>(), FinishReason::kAbort);
  QVERIFY(!remote->isBusy());

  // The key is in the key store, not in pagedchat.ini nor the database; the pane's endpoint is
  // back after a restart, key included.
  bool stored_ = false;
  keys_.readKey(v1, [&](const QString& key, const QString&) { stored_ = key == QLatin1String("key-1"); });
  QVERIFY(stored_);
  app.reset();
  for (const QString& file : {AppController::settingsFile(dir.path()), dir.filePath("pagedchat.sqlite3")}) {
    QFile f(file);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(file));
    QVERIFY2(!f.readAll().contains("key-1"), qPrintable(file));
  }
  app = startApp(dir);
  PaneState* again = app->panes()->paneAt(1);
  QVERIFY(again->isRemote());
  QCOMPARE(again->endpointModel(), QStringLiteral("stories"));
  QTRY_VERIFY(again->remoteBackend()->hasApiKey());
  app->endpoints()->useLocal(1);
  QVERIFY(!again->isRemote());
}

void TestRemotePane::wrongKeyIs401() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  Server server(storiesArgs({"--api-key", "right"}));
  const QString v1 = startServer(server);
  QVERIFY(!v1.isEmpty());
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  QCOMPARE(app->endpoints()->useRemote(0, v1, "stories", QStringLiteral("wrong"), true), QString());
  QVERIFY(s->sendText(QStringLiteral("Hello")));
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  // Refused before anything was generated: the turn is taken back, the text is in the input box.
  QVERIFY2(s->errorText().contains("401") && s->errorText().contains("API key"), qPrintable(s->errorText()));
  QCOMPARE(s->messages()->rowCount(), 0);
  QCOMPARE(s->inputText(), QStringLiteral("Hello"));
  // The right key: it answers.
  QCOMPARE(app->endpoints()->useRemote(0, v1, "stories", QStringLiteral("right"), true), QString());
  QVERIFY(s->settings()->apply({{"maxTokens", "8"}}).isEmpty());
  QVERIFY(s->send());
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  QCOMPARE(s->errorText(), QString());
  QVERIFY(!lastMessage(s).text.isEmpty());
}

void TestRemotePane::unreachablePortWhileLocalPaneAnswers() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  auto app = startApp(dir);
  QTRY_VERIFY_WITH_TIMEOUT(app->engine()->isReady(), kTimeoutMs);
  PaneListModel* panes = app->panes();
  while (panes->count() < 2) QVERIFY(panes->addPane());
  const quint16 port = closedPort();
  QVERIFY(port != 0);
  QCOMPARE(app->endpoints()->useRemote(1, QStringLiteral("http://127.0.0.1:%1/v1").arg(port), "m", {}, true),
           QString());
  QVERIFY(panes->paneAt(0)->settings()->apply({{"maxTokens", "16"}}).isEmpty());
  QCOMPARE(panes->sendToAll(QStringLiteral("Once upon a time")), 2);
  PaneState* local = panes->paneAt(0);
  PaneState* remote = panes->paneAt(1);
  QTRY_VERIFY_WITH_TIMEOUT(!local->isBusy() && !remote->isBusy(), kTimeoutMs);
  QVERIFY2(remote->errorText().contains(QStringLiteral("Cannot reach 127.0.0.1:%1").arg(port)) &&
               remote->errorText().contains("refused"),
           qPrintable(remote->errorText()));
  QCOMPARE(remote->inputText(), QStringLiteral("Once upon a time"));
  // The local pane went on.
  QCOMPARE(local->errorText(), QString());
  QVERIFY(!lastMessage(local).text.isEmpty());
}

void TestRemotePane::serverKilledMidStream() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  Server server(storiesArgs());
  const QString v1 = startServer(server);
  QVERIFY(!v1.isEmpty());
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  QCOMPARE(app->endpoints()->useRemote(0, v1, "stories", {}, true), QString());
  QVERIFY(s->settings()->apply({{"maxTokens", "450"}, {"temperature", "1"}, {"seed", "7"}}).isEmpty());
  // The server is frozen (SIGSTOP) the moment the first text arrives, so it cannot finish the
  // answer, and then killed: the stream ends without its finish reason.
  const qint64 pid = server.process().processId();
  freezeAtFirstText(s, pid);
  QVERIFY(s->sendText(QStringLiteral("Once upon a time")));
  QTRY_VERIFY_WITH_TIMEOUT(!lastMessage(s).text.isEmpty(), kTimeoutMs);
  server.process().kill();
  QVERIFY(server.process().waitForFinished(10000));
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  const MessageRecord reply = lastMessage(s);
  QVERIFY(!reply.text.isEmpty());  // what arrived is kept...
  QCOMPARE(reply.finishReason, std::optional(FinishReason::kAbort));
  QVERIFY2(s->errorText().contains(server.base().section("//", 1)), qPrintable(s->errorText()));  // ...and said why
  QCOMPARE(app->store()->branch(s->conversationId()).constLast().text, reply.text);               // stored too
}

void TestRemotePane::serverShutDownMidStream() {
  // SIGTERM while a stream is open: the server aborts the request and ends the stream with
  // finish_reason "abort" and [DONE]; the pane keeps the text and says that the server stopped it
  // (not a silent "stopped", which is what a user's own Stop shows).
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  Server server(storiesArgs());
  const QString v1 = startServer(server);
  QVERIFY(!v1.isEmpty());
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  QVERIFY(app->endpoints()->useRemote(0, v1, QStringLiteral("  "), {}, true).contains("Choose a model"));
  QVERIFY(!s->isRemote());  // refused: the pane stays on the local engine
  QCOMPARE(app->endpoints()->useRemote(0, v1, "stories", {}, true), QString());
  QVERIFY(s->settings()->apply({{"maxTokens", "450"}, {"temperature", "1"}, {"seed", "7"}}).isEmpty());
  // Frozen at the first text (so the answer cannot finish), told to stop, then let go.
  const qint64 pid = server.process().processId();
  freezeAtFirstText(s, pid);
  QVERIFY(s->sendText(QStringLiteral("Once upon a time")));
  QTRY_VERIFY_WITH_TIMEOUT(!lastMessage(s).text.isEmpty(), kTimeoutMs);
  server.process().terminate();
  ::kill(static_cast<pid_t>(pid), SIGCONT);
  QVERIFY(server.process().waitForFinished(30000));
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  const MessageRecord reply = lastMessage(s);
  QVERIFY(!reply.text.isEmpty());
  QCOMPARE(reply.finishReason, std::optional(FinishReason::kAbort));
  QVERIFY2(s->errorText().contains(server.base().section("//", 1)) && s->errorText().contains("before it was complete"),
           qPrintable(s->errorText()));
}

void TestRemotePane::htmlErrorPageIsShortened() {
  // A web server's or proxy's HTML error page: the pane shows its title, not the markup.
  QTcpServer web;
  QVERIFY(web.listen(QHostAddress::LocalHost));
  connect(&web, &QTcpServer::newConnection, this, [&] {
    QTcpSocket* socket = web.nextPendingConnection();
    connect(socket, &QTcpSocket::readyRead, socket, [socket] {
      socket->readAll();
      const QByteArray page =
          "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><center>"
          "<h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n";
      socket->write("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: " +
                    QByteArray::number(page.size()) + "\r\nConnection: close\r\n\r\n" + page);
      socket->disconnectFromHost();
    });
  });
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  QCOMPARE(
      app->endpoints()->useRemote(0, QStringLiteral("http://127.0.0.1:%1/v1").arg(web.serverPort()), "m", {}, true),
      QString());
  QVERIFY(s->sendText(QStringLiteral("Hello")));
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  const QString error = s->errorText();
  QVERIFY2(error.contains("HTTP 502") && error.contains("502 Bad Gateway."), qPrintable(error));
  QVERIFY2(!error.contains('<') && !error.contains("nginx"), qPrintable(error));
}

void TestRemotePane::reasoningChoiceInRequest() {
  // The pane's reasoning choice goes to a server in the API's terms: an effort as OpenAI's
  // reasoning_effort, thinking on/off as chat_template_kwargs.enable_thinking; none by default.
  QTcpServer web;
  QVERIFY(web.listen(QHostAddress::LocalHost));
  QList<QJsonObject> bodies;
  connect(&web, &QTcpServer::newConnection, this, [&] {
    answerRequests(web.nextPendingConnection(), [&](const QByteArray& request) {
      if (request.startsWith("POST"))  // not the GET of /models
        bodies.append(QJsonDocument::fromJson(request.mid(request.indexOf("\r\n\r\n") + 4)).object());
      return QByteArray("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    });
  });
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  QCOMPARE(
      app->endpoints()->useRemote(0, QStringLiteral("http://127.0.0.1:%1/v1").arg(web.serverPort()), "m", {}, true),
      QString());
  for (const QString& choice : {QString(), QStringLiteral("high"), QStringLiteral("off")}) {
    QVERIFY(s->settings()->apply({{"reasoning", choice}}).isEmpty());
    QVERIFY(s->sendText(QStringLiteral("Hello")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  }
  QCOMPARE(bodies.size(), 3);
  QVERIFY(!bodies[0].contains("reasoning_effort") && !bodies[0].contains("chat_template_kwargs"));
  QCOMPARE(bodies[1].value("reasoning_effort").toString(), QStringLiteral("high"));
  QVERIFY(!bodies[1].contains("chat_template_kwargs"));
  QCOMPARE(bodies[2].value("chat_template_kwargs").toObject().value("enable_thinking"), QJsonValue(false));
  QVERIFY(!bodies[2].contains("reasoning_effort"));
}

void TestRemotePane::toolCallsFromTheStream() {
  // Tools go in the request, earlier calls and results with their fields; the calls a server
  // streams (the id and name once, the arguments in pieces, by index) come back whole on the
  // last delta.
  QTcpServer web;
  QVERIFY(web.listen(QHostAddress::LocalHost));
  QJsonObject body;
  const QByteArray events =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Checking.\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\","
      "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
      "{\"arguments\":\"{\\\"city\\\": \"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
      "{\"arguments\":\"\\\"서울\\\"}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\","
      "\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"arguments\":\"{}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
      "data: [DONE]\n\n";
  connect(&web, &QTcpServer::newConnection, this, [&] {
    answerRequests(web.nextPendingConnection(), [&](const QByteArray& request) {
      body = QJsonDocument::fromJson(request.mid(request.indexOf("\r\n\r\n") + 4)).object();
      return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
             QByteArray::number(events.size()) + "\r\nConnection: close\r\n\r\n" + events;
    });
  });
  RemoteChatBackend backend;
  backend.setEndpoint(QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(web.serverPort())), "m", {});
  QList<RequestDelta> deltas;
  connect(&backend, &ChatBackend::stepFinished, this, [&](const QList<RequestDelta>& d) { deltas += d; });
  const QString tools = QStringLiteral(
      "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}]");
  const QString calls = QStringLiteral(
      "{\"tool_calls\":[{\"id\":\"call_0\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
      "\"arguments\":\"{}\"}}]}");
  QList<PromptMessage> messages{{MessageRole::kUser, QStringLiteral("Weather?")},
                                {MessageRole::kAssistant, QString(), -1, -1, calls},
                                {MessageRole::kTool, QStringLiteral("sunny"), -1, -1,
                                 QStringLiteral("{\"tool_call_id\":\"call_0\",\"name\":\"get_weather\"}")},
                                {MessageRole::kUser, QStringLiteral("And now?")}};
  backend.submit(messages, pagedchat::SamplingParams{}, false, QString(), tools);
  QTRY_VERIFY_WITH_TIMEOUT(!deltas.isEmpty() && deltas.constLast().finished, kTimeoutMs);
  QCOMPARE(body.value("tools").toArray(), QJsonDocument::fromJson(tools.toUtf8()).array());
  const QJsonArray sent = body.value("messages").toArray();
  QCOMPARE(sent.size(), 4);
  QCOMPARE(sent[1].toObject().value("tool_calls").toArray().size(), 1);
  QCOMPARE(sent[2].toObject().value("role").toString(), QStringLiteral("tool"));
  QCOMPARE(sent[2].toObject().value("tool_call_id").toString(), QStringLiteral("call_0"));
  QCOMPARE(sent[2].toObject().value("content").toString(), QStringLiteral("sunny"));
  QString text;
  for (const RequestDelta& d : deltas) {
    text += d.text;
    if (!d.finished) QVERIFY(d.toolCalls.isEmpty());
  }
  QCOMPARE(text, QStringLiteral("Checking."));
  QVERIFY(deltas.constLast().finishReason == pagedchat::FinishReason::kStop);
  const QJsonArray got = QJsonDocument::fromJson(deltas.constLast().toolCalls.toUtf8()).array();
  QCOMPARE(got.size(), 2);
  QCOMPARE(got[0].toObject().value("id").toString(), QStringLiteral("call_a"));
  const QJsonObject f0 = got[0].toObject().value("function").toObject();
  QCOMPARE(f0.value("name").toString(), QStringLiteral("get_weather"));
  QCOMPARE(QJsonDocument::fromJson(f0.value("arguments").toString().toUtf8()).object().value("city").toString(),
           QStringLiteral("서울"));
  QCOMPARE(got[1].toObject().value("function").toObject().value("name").toString(), QStringLiteral("get_time"));
}

void TestRemotePane::silentEndpointTimesOut() {
  // An endpoint that accepts the connection and never answers.
  QTcpServer silent;
  QVERIFY(silent.listen(QHostAddress::LocalHost));
  QList<QTcpSocket*> held;
  connect(&silent, &QTcpServer::newConnection, this, [&] { held.append(silent.nextPendingConnection()); });
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  QCOMPARE(
      app->endpoints()->useRemote(0, QStringLiteral("http://127.0.0.1:%1/v1").arg(silent.serverPort()), "m", {}, true),
      QString());
  s->remoteBackend()->setTransferTimeout(300);
  QVERIFY(s->sendText(QStringLiteral("Hello")));
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  QVERIFY2(s->errorText().contains("sent nothing for 0.3 s"), qPrintable(s->errorText()));
  QVERIFY(!held.isEmpty());
}

void TestRemotePane::tlsHandshakeWithPlainServer() {
  // https:// to a server that answers in plain text: the TLS handshake fails.
  QTcpServer plain;
  QVERIFY(plain.listen(QHostAddress::LocalHost));
  connect(&plain, &QTcpServer::newConnection, this, [&] {
    QTcpSocket* socket = plain.nextPendingConnection();
    connect(socket, &QTcpSocket::readyRead, socket, [socket] {
      socket->readAll();
      socket->write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
      socket->disconnectFromHost();
    });
  });
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  QCOMPARE(
      app->endpoints()->useRemote(0, QStringLiteral("https://127.0.0.1:%1/v1").arg(plain.serverPort()), "m", {}, true),
      QString());
  QVERIFY(s->sendText(QStringLiteral("Hello")));
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  QVERIFY2(s->errorText().contains(QStringLiteral("TLS error with 127.0.0.1:%1").arg(plain.serverPort())),
           qPrintable(s->errorText()));
}

void TestRemotePane::keychainUnavailableIsReported() {
  // No D-Bus session bus (as in CI): the system keychain cannot be reached; the app says so and
  // goes on with the key for this session.
  qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/pagedchat-test-bus");
  KeychainApiKeyStore keychain;
  QString readError = QStringLiteral("(no answer)");
  keychain.readKey(QStringLiteral("http://127.0.0.1:1/v1"),
                   [&](const QString&, const QString& error) { readError = error; });
  QTRY_VERIFY_WITH_TIMEOUT(readError != QLatin1String("(no answer)"), kTimeoutMs);
  QVERIFY2(readError.contains("keychain is unavailable"), qPrintable(readError));

  QTemporaryDir dir;
  AppController app(apptest::optionsFor(dir.path()), nullptr, nullptr, &keychain);
  // Looking at a pane's settings (is a key stored?) says nothing yet: no key is needed.
  QSignalSpy known(app.endpoints(), &PaneEndpoints::keyKnown);
  app.endpoints()->checkStoredKey(QStringLiteral("http://127.0.0.1:1/v1"));
  QTRY_COMPARE_WITH_TIMEOUT(known.count(), 1, kTimeoutMs);
  QCOMPARE(known.at(0).at(1).toBool(), false);
  QCOMPARE(app.endpoints()->keychainError(), QString());
  QCOMPARE(app.endpoints()->useRemote(0, QStringLiteral("http://127.0.0.1:1/v1"), "m", QStringLiteral("k"), true),
           QString());
  QTRY_VERIFY_WITH_TIMEOUT(!app.endpoints()->keychainError().isEmpty(), kTimeoutMs);
  QVERIFY(app.endpoints()->keychainError().contains("not saved"));
  QVERIFY(app.panes()->paneAt(0)->remoteBackend()->hasApiKey());  // used all the same
}

void TestRemotePane::redirectElsewhereKeepsTheKey() {
  // An endpoint that answers 307 to another server (another port: another origin). The API key
  // goes with every request, so the redirect is not followed: the other server never sees the
  // key (nor the conversation), and the pane says why. The same for the model list.
  const QByteArray key = "sk-must-stay-home";
  QTcpServer other;
  QVERIFY(other.listen(QHostAddress::LocalHost));
  QList<QByteArray> reachedOther;
  connect(&other, &QTcpServer::newConnection, this, [&] {
    answerRequests(other.nextPendingConnection(), [&](const QByteArray& request) {
      reachedOther.append(request);
      return QByteArray("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    });
  });
  QTcpServer redirecting;
  QVERIFY(redirecting.listen(QHostAddress::LocalHost));
  int redirects = 0;
  connect(&redirecting, &QTcpServer::newConnection, this, [&] {
    answerRequests(redirecting.nextPendingConnection(), [&](const QByteArray& request) {
      ++redirects;
      const QByteArray path = request.split(' ').value(1);
      return "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:" + QByteArray::number(other.serverPort()) +
             path + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    });
  });
  QTemporaryDir dir;
  auto app = startApp(dir);
  PaneState* s = app->panes()->paneAt(0);
  const QString url = QStringLiteral("http://127.0.0.1:%1/v1").arg(redirecting.serverPort());
  QCOMPARE(app->endpoints()->useRemote(0, url, "m", QString::fromLatin1(key), true), QString());
  QVERIFY(s->sendText(QStringLiteral("Hello")));
  QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
  QVERIFY(redirects >= 1);  // (the pane may also have asked for the model's context length)
  QVERIFY2(s->errorText().contains(QLatin1String("redirected")) &&
               s->errorText().contains(QStringLiteral("127.0.0.1:%1").arg(other.serverPort())),
           qPrintable(s->errorText()));
  QSignalSpy listed(app->endpoints(), &PaneEndpoints::modelsListed);
  const int before = redirects;
  app->endpoints()->listModels(url, QString::fromLatin1(key));
  QVERIFY(listed.wait(kTimeoutMs));
  QCOMPARE(redirects, before + 1);
  const QString listError = listed.constFirst().at(2).toString();
  QVERIFY2(listError.contains(QLatin1String("redirected")), qPrintable(listError));
  // Neither request went on to the other server, so its key never did.
  for (const QByteArray& request : reachedOther) QVERIFY2(!request.contains(key), request.constData());
  QVERIFY2(reachedOther.isEmpty(), reachedOther.value(0).constData());
}

QTEST_GUILESS_MAIN(TestRemotePane)
#include "test_remote_pane.moc"
