// A pane's tool calls as a user meets them: the app's MCP servers (Settings → Tools: the real
// @modelcontextprotocol/server-everything over stdio, from tests/js), a model that calls a tool
// (an OpenAI-compatible endpoint on loopback that streams tool_calls, as vLLM or PagedChat's server
// do), the call asked about, allowed, denied, always allowed or stopped, its result stored as a
// `tool` message and sent back, and the step limit.
#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <memory>

#include "app/controllers/app_controller.h"
#include "app/engine/remote/api_key_store.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/tools/tool_host.h"
#include "app_test_util.h"
#include "engine/entrypoints/mcp/mcp_client.h"
#include "tool_test_util.h"

using apptest::everything;
using apptest::everythingConfig;
using apptest::FakeModel;

namespace {

constexpr int kTimeoutMs = 60000;

/// A keychain that cannot be reached (as with no D-Bus session).
class FailingKeyStore : public ApiKeyStore {
 public:
  void readKey(const QString&, ReadCallback done) override { done(QString(), QStringLiteral("no keychain here")); }
  void writeKey(const QString&, const QString&, WriteCallback done) override {
    done(QStringLiteral("no keychain here"));
  }
};

QStringList rolesOf(PaneState* s) {
  QStringList roles;
  for (int i = 0; i < s->messages()->rowCount(); ++i) roles << messageRoleText(s->messages()->at(i).role);
  return roles;
}

QString stateOf(PaneState* s, int index) {
  const QVariantList calls = s->toolCalls();
  return index < calls.size() ? calls.at(index).toMap().value("state").toString() : QString();
}

}  // namespace

class TestPaneTools : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    const bool ci = qgetenv("CI") == "true";
    if (QStandardPaths::findExecutable("node").isEmpty() || !QFileInfo::exists(everything())) {
      if (ci) QFAIL("node or tests/js/node_modules is missing: run scripts/install-deps.sh");
      QSKIP("node or tests/js/node_modules is missing (scripts/install-deps.sh installs them)");
    }
  }

  void callsAskedRunAndAnswered() {
    QTemporaryDir dir;
    MemoryApiKeyStore keys;
    AppController app(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
    app.start();
    ToolHost* tools = app.tools();
    QVERIFY(tools->applyServersConfig(QStringLiteral("{\"mcpServers\": {\"x\": {}}}")).contains("x"));
    QCOMPARE(tools->serversConfig(), QString());  // refused: nothing kept
    QCOMPARE(tools->applyServersConfig(everythingConfig()), QString());
    QTRY_VERIFY_WITH_TIMEOUT(tools->toolCount() > 0, kTimeoutMs);
    QCOMPARE(tools->servers().first().toMap().value("state").toString(), QStringLiteral("ready"));
    QVERIFY(tools->toolsJson().contains("\"echo\""));

    FakeModel model;
    QVERIFY(model.listen());
    PaneState* s = app.panes()->paneAt(0);
    QCOMPARE(app.endpoints()->useRemote(0, model.url(), "m", {}, true), QString());
    QVERIFY(s->toolsOffered());

    // Asked, then allowed once: the result goes back and the model answers with it.
    model.calls = {{"echo", "{\"message\": \"안녕 tools\"}"}};
    QVERIFY(s->sendText(QStringLiteral("Echo something")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    QVERIFY(s->isBusy());
    QCOMPARE(s->toolCalls().first().toMap().value("name").toString(), QStringLiteral("echo"));
    QVERIFY(model.bodies.first().value("tools").toArray().size() == tools->toolCount());
    const QVariantList shown = s->messages()->data(s->messages()->index(1), MessageListModel::ToolCallsRole).toList();
    QCOMPARE(shown.size(), 1);
    QCOMPARE(shown.first().toMap().value("arguments").toString(), QStringLiteral("{\"message\": \"안녕 tools\"}"));
    s->allowToolCall(0);
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QCOMPARE(rolesOf(s), (QStringList{"user", "assistant", "tool", "assistant"}));
    const MessageRecord result = s->messages()->at(2);
    QVERIFY2(result.text.contains(QStringLiteral("안녕 tools")), qPrintable(result.text));
    QCOMPARE(QJsonDocument::fromJson(result.fields.toUtf8()).object().value("tool_call_id").toString(),
             QStringLiteral("call_0"));
    QVERIFY2(s->messages()->at(3).text.startsWith(QStringLiteral("Done: ")), qPrintable(s->messages()->at(3).text));
    QCOMPARE(model.bodies.size(), 2);
    const QJsonArray sent = model.bodies[1].value("messages").toArray();
    QCOMPARE(sent[1].toObject().value("tool_calls").toArray().first().toObject().value("id").toString(),
             QStringLiteral("call_0"));
    QCOMPARE(sent[2].toObject().value("role").toString(), QStringLiteral("tool"));
    QCOMPARE(sent[2].toObject().value("tool_call_id").toString(), QStringLiteral("call_0"));
    // The history holds the same: the calls in the reply's fields, the result as a tool message.
    const QList<MessageRecord> stored = app.store()->branch(s->conversationId());
    QCOMPARE(stored.size(), 4);
    QVERIFY(stored[1].fields.contains("\"echo\""));
    QVERIFY(stored[2].role == MessageRole::kTool);
    // Regenerated: a new answer to the same results, beside the first.
    QVERIFY(s->regenerate());
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QCOMPARE(rolesOf(s), (QStringList{"user", "assistant", "tool", "assistant"}));
    QCOMPARE(s->messages()->at(3).siblingCount, 2);
    QCOMPARE(model.bodies.size(), 3);
    QCOMPARE(model.bodies[2].value("messages").toArray().last().toObject().value("role").toString(),
             QStringLiteral("tool"));

    // Denied: the model is told, and answers.
    QVERIFY(s->sendText(QStringLiteral("Again")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    s->denyToolCall(0);
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QCOMPARE(s->messages()->at(s->messages()->rowCount() - 2).text, QStringLiteral("The user denied this tool call."));
    QCOMPARE(model.bodies.size(), 5);

    // Stopped while asking: answered "stopped", the model is not asked again.
    QVERIFY(s->sendText(QStringLiteral("And again")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    s->stop();
    QVERIFY(!s->isBusy());
    QCOMPARE(rolesOf(s).constLast(), QStringLiteral("tool"));
    QCOMPARE(model.bodies.size(), 6);

    // Always allowed: kept, and the next call runs without asking.
    QVERIFY(s->sendText(QStringLiteral("Once more")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    s->allowToolCall(0, /*always=*/true);
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QVERIFY(tools->isAlwaysAllowed(QStringLiteral("echo")));
    QCOMPARE(tools->alwaysAllowedCount(), 1);
    const int before = model.bodies.size();
    QVERIFY(s->sendText(QStringLiteral("No asking now")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QCOMPARE(model.bodies.size(), before + 2);
    QVERIFY(s->messages()->at(s->messages()->rowCount() - 1).text.startsWith(QStringLiteral("Done: ")));
    // Forgotten: asked again.
    tools->forgetAlwaysAllowed();
    QVERIFY(!tools->isAlwaysAllowed(QStringLiteral("echo")));
    QVERIFY(s->sendText(QStringLiteral("Asked again")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    s->denyToolCall(0);
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);

    // A call that cannot run (no such tool, arguments that are no object) is not asked about: the
    // model is told why and answers.
    model.calls = {{"no_such_tool", "{}"}, {"echo", "[1, 2]"}};
    QVERIFY(s->sendText(QStringLiteral("Bad calls")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    {
      const int n = s->messages()->rowCount();
      QVERIFY2(s->messages()->at(n - 3).text.contains(QStringLiteral("There is no tool named \"no_such_tool\"")),
               qPrintable(s->messages()->at(n - 3).text));
      QVERIFY(s->messages()->at(n - 2).text.contains(QStringLiteral("not a JSON object")));
      QVERIFY(s->messages()->at(n - 1).text.startsWith(QStringLiteral("Done: ")));
    }

    // The step limit: more calls than it allows are not run, and the pane says why.
    tools->setMaxToolSteps(1);
    model.calls = {{"echo", "{\"message\": \"a\"}"}, {"echo", "{\"message\": \"b\"}"}};
    QVERIFY(s->sendText(QStringLiteral("Two calls")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy() && s->messages()->rowCount() > 0 && rolesOf(s).constLast() == "tool",
                             kTimeoutMs);
    QVERIFY2(s->errorText().contains(QStringLiteral("1")), qPrintable(s->errorText()));
    QVERIFY(s->messages()->at(s->messages()->rowCount() - 1).text.startsWith(QStringLiteral("Not run")));

    // The conversation goes while a call waits: the pane is free at once, and says so.
    tools->setMaxToolSteps(8);
    model.calls = {{"echo", "{\"message\": \"x\"}"}};
    QVERIFY(s->sendText(QStringLiteral("Then deleted")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    QSignalSpy busy(s, &PaneState::busyChanged);
    s->closeConversation(/*deleted=*/true);
    QVERIFY(!s->isBusy());
    QVERIFY(busy.count() > 0);
    QVERIFY(s->toolCalls().isEmpty());

    // The pane's switch: no tools in its requests.
    QVERIFY(s->settings()->apply({{"tools", false}}).isEmpty());
    QVERIFY(!s->toolsOffered());
    model.calls = {};
    QVERIFY(s->sendText(QStringLiteral("Plain")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QVERIFY(!model.bodies.constLast().contains("tools"));
  }

  // A tool that returns a picture (server-everything's get-tiny-image: text, an image block, text):
  // the result keeps its text (the picture named in it) and the picture itself, shown with the
  // result, stored with it, exported; a remote model gets the text (OpenAI's tool messages take
  // text only).
  void resultPicturesShownAndStored() {
    QTemporaryDir dir;
    MemoryApiKeyStore keys;
    AppController app(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
    app.start();
    ToolHost* tools = app.tools();
    QCOMPARE(tools->applyServersConfig(everythingConfig()), QString());
    QTRY_VERIFY_WITH_TIMEOUT(tools->hasTool("get-tiny-image"), kTimeoutMs);
    FakeModel model;
    QVERIFY(model.listen());
    PaneState* s = app.panes()->paneAt(0);
    QCOMPARE(app.endpoints()->useRemote(0, model.url(), "m", {}, true), QString());
    model.calls = {{"get-tiny-image", "{}"}};
    QVERIFY(s->sendText(QStringLiteral("Show me a picture")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    s->allowToolCall(0);
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QCOMPARE(rolesOf(s), (QStringList{"user", "assistant", "tool", "assistant"}));
    const MessageRecord result = s->messages()->at(2);
    QVERIFY2(result.text.contains(QStringLiteral("[image: image/png")), qPrintable(result.text));
    QVERIFY(!result.text.contains(QChar(0xFFFC)));
    QCOMPARE(result.attachments.size(), 1);
    const ImageAttachment& picture = result.attachments.first();
    QCOMPARE(picture.mime, QStringLiteral("image/png"));
    QVERIFY(picture.width > 0 && picture.height > 0);
    // The same picture a user would attach: it decodes to the size stored.
    const std::optional<ImageAttachment> again = readImageAttachment(picture.bytes);
    QVERIFY(again);
    QCOMPARE(*again, picture);
    // Shown with the result (the bubble's thumbnails read this role).
    const QVariantList shown = s->messages()->data(s->messages()->index(2), MessageListModel::AttachmentsRole).toList();
    QCOMPARE(shown.size(), 1);
    QCOMPARE(shown.first().toMap().value("width").toInt(), picture.width);
    // Stored and exported with the tool message.
    const QList<MessageRecord> stored = app.store()->branch(s->conversationId());
    QCOMPARE(stored.size(), 4);
    QCOMPARE(stored[2].attachments, result.attachments);
    const QJsonArray exported =
        QJsonDocument::fromJson(app.store()->exportJson(s->conversationId())).object().value("messages").toArray();
    bool exportedPicture = false;
    for (const QJsonValue& m : exported)
      exportedPicture = exportedPicture || (m.toObject().value("role").toString() == "tool" &&
                                            m.toObject().value("attachments").toArray().size() == 1);
    QVERIFY(exportedPicture);
    // The remote model got the result's text, not a picture part.
    const QJsonObject sent = model.bodies.last().value("messages").toArray()[2].toObject();
    QCOMPARE(sent.value("role").toString(), QStringLiteral("tool"));
    QVERIFY(sent.value("content").isString());
    QVERIFY(sent.value("content").toString().contains(QStringLiteral("[image: image/png")));
    QVERIFY(!sent.value("content").toString().contains(QChar(0xFFFC)));
  }

  // What a result's image blocks become: pictures that decode, at most kMaxResultImages; the
  // others named in the text with the reason, never a crash.
  void resultImagesChecked() {
    QFile f(QStringLiteral(VISION_DIR) + QStringLiteral("/square.png"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const std::string png = f.readAll().toBase64().toStdString();
    pagedchat::mcp::ToolResult r;
    r.content = nlohmann::json::array({{{"type", "text"}, {"text", "here"}},
                                       {{"type", "image"}, {"mimeType", "image/png"}, {"data", png}},
                                       {{"type", "image"}, {"mimeType", "image/png"}, {"data", "not base64 !"}},
                                       {{"type", "image"}, {"mimeType", "image/png"}, {"data", "aGVsbG8="}},
                                       {{"type", "image"}, {"mimeType", "image/png"}, {"data", 42}},
                                       {{"type", "audio"}, {"mimeType", "audio/wav"}, {"data", png}}});
    QString text = QString::fromStdString(r.text());
    QList<ImageAttachment> images = ToolHost::resultImages(r, text);
    QCOMPARE(images.size(), 1);
    QCOMPARE(images.first().width, 32);
    QCOMPARE(images.first().mime, QStringLiteral("image/png"));
    QVERIFY2(text.contains(QStringLiteral("not base64")), qPrintable(text));
    QCOMPARE(text.count(QStringLiteral("is not shown")), 2);  // "hello" is no picture either
    QVERIFY(text.startsWith(QStringLiteral("here\n[image: image/png")));
    // A strip (sides 300 times apart): no picture for a model, named with the reason.
    QImage strip(1, 300, QImage::Format_RGB32);
    strip.fill(Qt::red);
    QByteArray stripPng;
    QBuffer buffer(&stripPng);
    QVERIFY(buffer.open(QIODevice::WriteOnly) && strip.save(&buffer, "PNG"));
    r.content = nlohmann::json::array(
        {{{"type", "image"}, {"mimeType", "image/png"}, {"data", stripPng.toBase64().toStdString()}}});
    text.clear();
    QVERIFY(ToolHost::resultImages(r, text).isEmpty());
    QVERIFY2(text.contains(QStringLiteral("200 times")), qPrintable(text));
    // More pictures than a result shows: the first kMaxResultImages, the rest named.
    r.content = nlohmann::json::array();
    for (int i = 0; i < ToolHost::kMaxResultImages + 2; ++i)
      r.content.push_back({{"type", "image"}, {"mimeType", "image/png"}, {"data", png}});
    text.clear();
    images = ToolHost::resultImages(r, text);
    QCOMPARE(images.size(), ToolHost::kMaxResultImages);
    QCOMPARE(text.count(QStringLiteral("at most")), 2);
  }

  void secretsInTheKeychain() {
    // env values go to the keychain, not pagedchat.ini nor the page; the server gets them back at
    // the next start; "(in the keychain)" applied again keeps them; without a keychain the page says
    // where they are.
    QTemporaryDir dir;
    const QString ini = dir.filePath("pagedchat.ini");
    const QString secret = QStringLiteral("s3cret-토큰");
    QJsonObject doc = QJsonDocument::fromJson(everythingConfig().toUtf8()).object();
    QJsonObject servers = doc.value("mcpServers").toObject();
    QJsonObject server = servers.value("everything").toObject();
    server.insert("env", QJsonObject{{"PAGEDCHAT_TEST_TOKEN", secret}});
    servers.insert("everything", server);
    doc.insert("mcpServers", servers);
    const QString withSecret = QString::fromUtf8(QJsonDocument(doc).toJson());
    MemoryApiKeyStore keys;
    {
      QSettings settings(ini, QSettings::IniFormat);
      ToolHost host(&settings, &keys);
      QCOMPARE(host.applyServersConfig(withSecret), QString());
      QVERIFY(!host.serversConfig().contains(secret));
      QVERIFY(host.serversConfig().contains(QLatin1String(ToolHost::kKeptSecret)));
      QVERIFY(host.secretsNote().isEmpty());
      // Applied again as shown: the secret stays.
      QCOMPARE(host.applyServersConfig(host.serversConfig()), QString());
      settings.sync();
    }
    QFile file(ini);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray kept = file.readAll();
    QVERIFY(!kept.contains(secret.toUtf8()) && !kept.contains("s3cret"));
    QString stored;
    keys.readKey("mcp-server:everything", [&](const QString& key, const QString&) { stored = key; });
    QVERIFY2(stored.contains(secret), qPrintable(stored));
    {
      QSettings settings(ini, QSettings::IniFormat);
      ToolHost host(&settings, &keys);
      QTRY_VERIFY_WITH_TIMEOUT(host.toolCount() > 0, kTimeoutMs);
      QSignalSpy done(&host, &ToolHost::callFinished);
      host.callTool("get-env", "{}");
      QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kTimeoutMs);
      QVERIFY2(done.at(0).at(1).toString().contains(secret), "the server did not get its secret back");
      // A document naming a kept value the keychain does not hold is refused.
      QString other = host.serversConfig();
      other.replace(QStringLiteral("PAGEDCHAT_TEST_TOKEN"), QStringLiteral("OTHER_TOKEN"));
      QVERIFY(host.applyServersConfig(other).contains("OTHER_TOKEN"));
    }
    // The keychain lost it: the server is listed failed, saying why.
    keys.writeKey("mcp-server:everything", QString(), [](const QString&) {});
    {
      QSettings settings(ini, QSettings::IniFormat);
      ToolHost host(&settings, &keys);
      QTRY_VERIFY_WITH_TIMEOUT(!host.servers().isEmpty(), kTimeoutMs);
      const QVariantMap entry = host.servers().first().toMap();
      QCOMPARE(entry.value("state").toString(), QStringLiteral("failed"));
      QVERIFY2(entry.value("error").toString().contains("keychain"), qPrintable(entry.value("error").toString()));
    }
    // No keychain: the whole document stays in pagedchat.ini, and the page says so.
    FailingKeyStore none;
    QSettings settings(dir.filePath("other.ini"), QSettings::IniFormat);
    ToolHost host(&settings, &none);
    QCOMPARE(host.applyServersConfig(withSecret), QString());
    QTRY_VERIFY(!host.secretsNote().isEmpty());
    QVERIFY(host.serversConfig().contains(secret));
    QVERIFY(settings.value("tools/mcpServers").toString().contains(secret));
  }

  void slowServerDelaysNoOther() {
    // A server that takes seconds to start (npx installing, say) and one that cannot start: the
    // others are ready and their calls run meanwhile; the failed one says why.
    QJsonObject doc = QJsonDocument::fromJson(everythingConfig().toUtf8()).object();
    QJsonObject servers = doc.value("mcpServers").toObject();
    const QString node = QStandardPaths::findExecutable("node");
    servers.insert("slow",
                   QJsonObject{{"command", "sh"},
                               {"args", QJsonArray{"-c", "sleep 30; exec \"$0\" \"$1\" stdio", node, everything()}}});
    servers.insert("broken", QJsonObject{{"command", "/nonexistent/mcp-server"}});
    doc.insert("mcpServers", servers);
    ToolHost host(nullptr);
    QCOMPARE(host.applyServersConfig(QString::fromUtf8(QJsonDocument(doc).toJson())), QString());
    QTRY_VERIFY_WITH_TIMEOUT(host.toolCount() > 0, kTimeoutMs);
    auto stateOfServer = [&host](const QString& name) {
      for (const QVariant& v : host.servers())
        if (v.toMap().value("name").toString() == name) return v.toMap().value("state").toString();
      return QString();
    };
    QCOMPARE(stateOfServer("slow"), QStringLiteral("starting"));
    QTRY_COMPARE_WITH_TIMEOUT(stateOfServer("broken"), QStringLiteral("failed"), kTimeoutMs);
    QSignalSpy done(&host, &ToolHost::callFinished);
    host.callTool("echo", "{\"message\": \"while slow starts\"}");
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 15000);  // not after the slow server (30 s)
    QVERIFY(done.at(0).at(1).toString().contains("while slow starts"));
    QCOMPARE(stateOfServer("slow"), QStringLiteral("starting"));
    // Once it is up, its tools join under their own names (the shared ones renamed).
    QTRY_VERIFY_WITH_TIMEOUT(host.hasTool("slow__echo"), kTimeoutMs);
    QVERIFY(host.hasTool("echo"));
  }

  // A pane turns one server's tools off: its requests offer the others' only, a call of an off
  // server's tool is answered "no such tool" without asking, and the choice is kept.
  void serversOffPerPane() {
    QTemporaryDir dir;
    MemoryApiKeyStore keys;
    QJsonObject doc = QJsonDocument::fromJson(everythingConfig().toUtf8()).object();
    QJsonObject servers = doc.value("mcpServers").toObject();
    servers.insert("second", servers.value("everything"));
    doc.insert("mcpServers", servers);
    {
      AppController app(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
      app.start();
      ToolHost* tools = app.tools();
      QCOMPARE(tools->applyServersConfig(QString::fromUtf8(QJsonDocument(doc).toJson())), QString());
      QTRY_VERIFY_WITH_TIMEOUT(tools->hasTool("echo") && tools->hasTool("second__echo"), kTimeoutMs);
      QCOMPARE(tools->serverOf("second__echo"), QStringLiteral("second"));
      FakeModel model;
      QVERIFY(model.listen());
      PaneState* s = app.panes()->paneAt(0);
      QCOMPARE(app.endpoints()->useRemote(0, model.url(), "m", {}, true), QString());
      QVERIFY(s->settings()->apply({{"toolServersOff", QStringList{"second"}}}).isEmpty());
      QVERIFY(s->toolsOffered());
      model.calls = {{"second__echo", "{\"message\": \"hi\"}"}};
      QVERIFY(s->sendText(QStringLiteral("Echo")));
      QTRY_VERIFY_WITH_TIMEOUT(!model.bodies.isEmpty(), kTimeoutMs);
      const QJsonArray offered = model.bodies.first().value("tools").toArray();
      QVERIFY(offered.size() > 0 && offered.size() * 2 == tools->toolCount());
      for (const QJsonValue& t : offered)
        QVERIFY(!t.toObject().value("function").toObject().value("name").toString().startsWith("second__"));
      // Not asked about: answered at once, and the model answers that.
      QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
      QVERIFY2(s->messages()->at(2).text.contains(QStringLiteral("no tool named")),
               qPrintable(s->messages()->at(2).text));
      // Every server off: no tools offered at all.
      QVERIFY(s->settings()->apply({{"toolServersOff", QStringList{"second", "everything"}}}).isEmpty());
      QVERIFY(!s->toolsOffered());
      QVERIFY(s->settings()->apply({{"toolServersOff", QStringList{"second"}}}).isEmpty());
    }
    AppController again(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
    QCOMPARE(again.panes()->paneAt(0)->settings()->toolServersOff(), QStringList{"second"});
  }

  // A pane whose model must call a tool (PaneSettings::toolChoice), on the local engine: a tiny
  // random-weight model with Qwen3's template, held by constrained decoding to get-env's
  // arguments (an object with no properties): the call is asked about, runs, and the model
  // answers the result freely (its reply after the result is not forced). A tool that is not offered is refused by
  // name; a remote pane sends the choice as tool_choice.
  void forcedCallLocalModel() {
    QTemporaryDir dir;
    MemoryApiKeyStore keys;
    AppOptions options = apptest::optionsFor(dir.path());
    options.modelPath = testpaths::modelFile(QStringLiteral("arch/qwen3-tiny.gguf"));
    REQUIRE_MODEL_FILE(options.modelPath);
    options.modelGiven = true;
    AppController app(options, nullptr, nullptr, &keys);
    app.start();
    QTRY_VERIFY2_WITH_TIMEOUT(app.engine()->isReady(), qPrintable(app.engine()->loadError()), kTimeoutMs);
    ToolHost* tools = app.tools();
    QCOMPARE(tools->applyServersConfig(everythingConfig()), QString());
    QTRY_VERIFY_WITH_TIMEOUT(tools->hasTool("get-env"), kTimeoutMs);
    QVERIFY(tools->toolNames().contains(QStringLiteral("get-env")));
    PaneState* s = app.panes()->paneAt(0);
    // Reasoning off: the reply is the call at once (a reasoning reply is held to the call after
    // its reasoning, which a random model never ends).
    QVERIFY(s->settings()
                ->apply({{"toolChoice", "get-env"}, {"maxTokens", "64"}, {"temperature", "0"}, {"reasoning", "off"}})
                .isEmpty());
    QVERIFY(s->toolsOffered());
    QVERIFY(s->sendText(QStringLiteral("What is in the environment?")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    QCOMPARE(s->toolCalls().first().toMap().value("name").toString(), QStringLiteral("get-env"));
    QCOMPARE(QJsonDocument::fromJson(s->toolCalls().first().toMap().value("arguments").toString().toUtf8()).object(),
             QJsonObject());
    QCOMPARE(s->messages()->at(1).text, QString());  // the forced JSON is the call, not text
    s->allowToolCall(0);
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QCOMPARE(s->errorText(), QString());
    QCOMPARE(rolesOf(s), (QStringList{"user", "assistant", "tool", "assistant"}));
    QVERIFY2(s->messages()->at(2).text.contains(QStringLiteral("PATH")),
             qPrintable(s->messages()->at(2).text.left(200)));
    QVERIFY(app.store()->branch(s->conversationId())[1].fields.contains("\"get-env\""));

    // A tool that is not offered: the request is refused, saying which.
    QVERIFY(s->settings()->apply({{"toolChoice", "no-such-tool"}}).isEmpty());
    QVERIFY(s->sendText(QStringLiteral("Again")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QVERIFY2(s->errorText().contains(QStringLiteral("no-such-tool")), qPrintable(s->errorText()));
    // Its server off for the pane: no tool is offered, and the pane still says which it must call.
    QVERIFY(s->settings()->apply({{"toolChoice", "get-env"}, {"toolServersOff", QStringList{"everything"}}}).isEmpty());
    QVERIFY(!s->toolsOffered());
    QVERIFY(tools->offeredToolNames({"everything"}).isEmpty());
    QVERIFY(s->sendText(QStringLiteral("Server off")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QVERIFY2(s->errorText().contains(QStringLiteral("get-env")), qPrintable(s->errorText()));
    // The tools switch off: no call is asked for, the model answers.
    QVERIFY(s->settings()->apply({{"tools", false}}).isEmpty());
    QVERIFY(s->sendText(QStringLiteral("No tools")));
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QCOMPARE(s->errorText(), QString());
    QVERIFY(s->settings()->apply({{"tools", true}, {"toolServersOff", QStringList{}}}).isEmpty());

    // A remote pane: sent as tool_choice ("required", then a named function).
    FakeModel model;
    QVERIFY(model.listen());
    QCOMPARE(app.endpoints()->useRemote(0, model.url(), "m", {}, true), QString());
    QVERIFY(s->settings()->apply({{"toolChoice", "required"}}).isEmpty());
    model.calls = {{"echo", "{\"message\": \"hi\"}"}};
    QVERIFY(s->sendText(QStringLiteral("Echo")));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(s, 0), QStringLiteral("asking"), kTimeoutMs);
    QCOMPARE(model.bodies.last().value("tool_choice").toString(), QStringLiteral("required"));
    s->denyToolCall(0);
    QTRY_VERIFY_WITH_TIMEOUT(!s->isBusy(), kTimeoutMs);
    QVERIFY(!model.bodies.last().contains("tool_choice"));  // the reply to the result: the model's choice
  }

  void keptAcrossStarts() {
    // The document, the tools always allowed and the limit live in pagedchat.ini.
    QTemporaryDir dir;
    QSettings settings(dir.filePath("pagedchat.ini"), QSettings::IniFormat);
    {
      ToolHost host(&settings);
      QCOMPARE(host.applyServersConfig(everythingConfig()), QString());
      QTRY_VERIFY_WITH_TIMEOUT(host.toolCount() > 0, kTimeoutMs);  // "echo" is known as everything's
      host.setAlwaysAllowed("echo", true);
      host.setMaxToolSteps(3);
    }
    // Kept as the server's tool: another server's "echo" would be asked about.
    QCOMPARE(settings.value("tools/alwaysAllowed").toStringList(), QStringList{"everything/echo"});
    ToolHost again(&settings);
    QCOMPARE(QJsonDocument::fromJson(again.serversConfig().toUtf8()),
             QJsonDocument::fromJson(everythingConfig().toUtf8()));
    QTRY_VERIFY_WITH_TIMEOUT(again.toolCount() > 0, kTimeoutMs);
    QVERIFY(again.isAlwaysAllowed("echo"));
    QCOMPARE(again.maxToolSteps(), 3);
    QTRY_VERIFY_WITH_TIMEOUT(again.toolCount() > 0, kTimeoutMs);
    // A call of a tool nobody offers is answered, not run.
    QSignalSpy done(&again, &ToolHost::callFinished);
    const int ticket = again.callTool("no_such_tool", "{}");
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kTimeoutMs);
    QCOMPARE(done.at(0).at(0).toInt(), ticket);
    QVERIFY(done.at(0).at(2).toBool());
    // Arguments that are no object: the model is told.
    const int bad = again.callTool("echo", "[1, 2]");
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, kTimeoutMs);
    QCOMPARE(done.at(1).at(0).toInt(), bad);
    QVERIFY2(done.at(1).at(1).toString().contains("JSON object"), qPrintable(done.at(1).at(1).toString()));
  }
};

QTEST_MAIN(TestPaneTools)
#include "test_pane_tools.moc"
