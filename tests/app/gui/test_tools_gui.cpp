// Tools in the real window, offscreen, as a user meets them: Settings → Tools takes an
// mcpServers document (the npm server-everything) and lists the server ready; a pane whose model
// (a loopback OpenAI-compatible endpoint) calls a tool shows the call with Allow once / Always
// allow / Deny, every control named; Allow runs it, the result shows framed as "Tool result: echo"
// and the model's answer follows. A screenshot of each step goes to screenshots/.
#include <QAccessible>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "app/controllers/app_controller.h"
#include "app/engine/remote/api_key_store.h"
#include "app/main_window.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/tools/tool_host.h"
#include "gui_test_util.h"
#include "tool_test_util.h"

using apptest::findItem;
using apptest::findVisibleItem;

namespace {
constexpr int kTimeoutMs = 60000;

/// Visible items whose text contains `text`.
bool showsText(QQuickItem* root, const QString& text) {
  if (!root || !root->isVisible()) return false;
  if (root->property("text").toString().contains(text)) return true;
  for (QQuickItem* child : root->childItems())
    if (showsText(child, text)) return true;
  return false;
}
}  // namespace

class TestToolsGui : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QAccessible::setActive(true);
    apptest::installWarningCollector();
    if (QStandardPaths::findExecutable("node").isEmpty() || !QFileInfo::exists(apptest::everything())) {
      if (qgetenv("CI") == "true") QFAIL("node or tests/js/node_modules is missing: run scripts/install-deps.sh");
      QSKIP("node or tests/js/node_modules is missing (scripts/install-deps.sh installs them)");
    }
  }

  void toolCallInTheWindow() {
    QTemporaryDir dir;
    MemoryApiKeyStore keys;
    AppController controller(apptest::optionsFor(dir.path()), nullptr, nullptr, &keys);
    QQmlApplicationEngine engine;
    QQuickWindow* window = loadMainWindow(engine, &controller);
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window));
    QQuickItem* root = window->contentItem();

    // Settings → Tools: the document pasted and applied; the server comes up ready.
    QVERIFY(QMetaObject::invokeMethod(window, "openSettings"));
    QTRY_VERIFY(findVisibleItem(root, QStringLiteral("settingsTabs")));
    QQuickItem* tabs = findItem(root, QStringLiteral("settingsTabs"));
    tabs->setProperty("currentIndex", 3);
    QTRY_VERIFY(findVisibleItem(root, QStringLiteral("toolsApplyButton")));
    findItem(root, QStringLiteral("toolsConfig"))->setProperty("text", QStringLiteral("{\"mcpServers\": {\"x\": 1}}"));
    QVERIFY(apptest::click(window, findVisibleItem(root, QStringLiteral("toolsApplyButton"))));
    QTRY_VERIFY(findVisibleItem(root, QStringLiteral("toolsError")));  // refused, said why
    // A server that cannot start is listed with its reason; the others work.
    QJsonObject doc = QJsonDocument::fromJson(apptest::everythingConfig().toUtf8()).object();
    QJsonObject servers = doc.value("mcpServers").toObject();
    servers.insert("broken", QJsonObject{{"command", "/nonexistent/mcp-server"}});
    doc.insert("mcpServers", servers);
    findItem(root, QStringLiteral("toolsConfig"))->setProperty("text", QString::fromUtf8(QJsonDocument(doc).toJson()));
    QVERIFY(apptest::click(window, findVisibleItem(root, QStringLiteral("toolsApplyButton"))));
    QTRY_VERIFY_WITH_TIMEOUT(controller.tools()->toolCount() > 0, kTimeoutMs);
    QTRY_VERIFY(showsText(root, QStringLiteral("everything: ready")));
    QTRY_VERIFY_WITH_TIMEOUT(showsText(root, QStringLiteral("broken: failed: ")), kTimeoutMs);
    QVERIFY(showsText(root, QStringLiteral("/nonexistent/mcp-server")));
    QVERIFY(!findVisibleItem(root, QStringLiteral("toolsError")));
    QVERIFY(apptest::saveScreenshot(window, QStringLiteral("tools-settings.png")));
    QVERIFY(QMetaObject::invokeMethod(apptest::findObject(window, QStringLiteral("settingsDialog")), "close"));
    QTRY_VERIFY(!findVisibleItem(root, QStringLiteral("settingsTabs")));

    // A model that calls echo: the call is shown with its three choices, all named.
    apptest::FakeModel model;
    QVERIFY(model.listen());
    // Arguments shown exactly (markup is text), their escapes as the characters they stand for.
    model.calls = {{"echo", "{\"message\": \"\\uc548\\ub155\\ud558\\uc138\\uc694 from a <i>tool</i>\"}"}};
    QCOMPARE(controller.endpoints()->useRemote(0, model.url(), "m", {}, true), QString());
    PaneState* pane = controller.panes()->paneAt(0);
    QVERIFY(pane->sendText(QStringLiteral("Use the echo tool")));
    QTRY_VERIFY_WITH_TIMEOUT(findVisibleItem(root, QStringLiteral("allowToolCall")), kTimeoutMs);
    QVERIFY(findVisibleItem(root, QStringLiteral("alwaysAllowToolCall")));
    QVERIFY(findVisibleItem(root, QStringLiteral("denyToolCall")));
    QVERIFY(showsText(root, QStringLiteral("Tool call: echo")));
    QQuickItem* args = findVisibleItem(root, QStringLiteral("toolCallArguments"));
    QVERIFY(args);
    QCOMPARE(args->property("text").toString(), QStringLiteral("{\"message\":\"안녕하세요 from a <i>tool</i>\"}"));
    QCOMPARE(args->property("textFormat").toInt(), 0);  // Text.PlainText
    for (const char* name : {"allowToolCall", "alwaysAllowToolCall", "denyToolCall"}) {
      QQuickItem* b = findVisibleItem(root, QString::fromLatin1(name));
      QAccessibleInterface* iface = QAccessible::queryAccessibleInterface(b);
      QVERIFY2(iface && iface->text(QAccessible::Name).contains(QStringLiteral("echo")), name);
    }
    QVERIFY(apptest::saveScreenshot(window, QStringLiteral("tools-asking.png")));

    // Allowed: the result, framed and labelled, and the model's answer.
    QVERIFY(apptest::click(window, findVisibleItem(root, QStringLiteral("allowToolCall"))));
    QTRY_VERIFY_WITH_TIMEOUT(!pane->isBusy(), kTimeoutMs);
    QTRY_VERIFY(showsText(root, QStringLiteral("Tool result: echo")));
    QVERIFY(showsText(root, QStringLiteral("안녕하세요 from a <i>tool</i>")));
    QTRY_VERIFY(showsText(root, QStringLiteral("Done: ")));
    QVERIFY(!findVisibleItem(root, QStringLiteral("allowToolCall")));
    QVERIFY(apptest::saveScreenshot(window, QStringLiteral("tools-answered.png")));

    // A tool that returns a picture: the result shows it as a picture (a thumbnail beside its text).
    model.calls = {{"get-tiny-image", "{}"}};
    QVERIFY(pane->sendText(QStringLiteral("Show me a picture")));
    QTRY_VERIFY_WITH_TIMEOUT(findVisibleItem(root, QStringLiteral("allowToolCall")), kTimeoutMs);
    QVERIFY(apptest::click(window, findVisibleItem(root, QStringLiteral("allowToolCall"))));
    QTRY_VERIFY_WITH_TIMEOUT(!pane->isBusy(), kTimeoutMs);
    QTRY_VERIFY(showsText(root, QStringLiteral("Tool result: get-tiny-image")));
    QTRY_VERIFY(findVisibleItem(root, QStringLiteral("messageImages")));
    QQuickItem* thumbnail = findVisibleItem(root, QStringLiteral("attachmentImage"));
    QVERIFY(thumbnail);
    QTRY_VERIFY(thumbnail->width() > 0 && thumbnail->height() > 0);
    QVERIFY(apptest::saveScreenshot(window, QStringLiteral("tools-picture.png")));

    // The pane's settings have the switch, naming how many tools there are.
    QVERIFY(QMetaObject::invokeMethod(findItem(root, QStringLiteral("chatPane0")), "openSettings"));
    QTRY_VERIFY(findVisibleItem(root, QStringLiteral("setting_tools")));
    QQuickItem* toolsBox = findVisibleItem(root, QStringLiteral("setting_tools"));
    QVERIFY(toolsBox->property("checked").toBool());
    QVERIFY2(toolsBox->property("text").toString().contains(QString::number(controller.tools()->toolCount())),
             qPrintable(toolsBox->property("text").toString()));
    // A switch per server: off for this pane once applied.
    QQuickItem* serverBox = findVisibleItem(root, QStringLiteral("setting_toolServer_everything"));
    QVERIFY(serverBox);
    QVERIFY(serverBox->property("checked").toBool());
    QVERIFY(QMetaObject::invokeMethod(serverBox, "toggle"));
    QVERIFY(QMetaObject::invokeMethod(serverBox, "toggled"));
    QVERIFY(QMetaObject::invokeMethod(findItem(root, QStringLiteral("applySettingsButton")), "clicked"));
    QTRY_VERIFY(!findVisibleItem(root, QStringLiteral("applySettingsButton")));
    QCOMPARE(controller.panes()->paneAt(0)->settings()->toolServersOff(), QStringList{"everything"});
    QVERIFY(!controller.panes()->paneAt(0)->toolsOffered());
    APPTEST_VERIFY_NO_WARNINGS();
  }
  void cleanupTestCase() { apptest::removeWarningCollector(); }
};

QTEST_MAIN(TestToolsGui)
#include "test_tools_gui.moc"
