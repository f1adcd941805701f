// Hostile input in the real window (offscreen): a reply's text comes from a model or a remote
// endpoint. Its links open only for http, https and mailto, and only after the user saw the full
// target and chose Open (a file: or javascript: link opens nothing, not even the question); its
// images are never fetched (their alt text is shown). A remote pane warns before an API key
// would go over plain http to another machine. The OpenAI server's failure to start shows in
// the main window's banner, and its allowed web pages (origins) are set on the Server page.
#include <QtQml/qqml.h>
#include <QDesktopServices>
#include <QQmlApplicationEngine>
#include <QQmlComponent>
#include <QQuickItem>
#include <QQuickTextDocument>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>

#include <QScopeGuard>

#include <memory>

#include "app/controllers/app_controller.h"
#include "app/engine/remote/api_key_store.h"
#include "app/main_window.h"
#include "app/render/link_policy.h"
#include "app/render/markdown_blocks.h"
#include "app/store/chat_store.h"
#include "gui_test_util.h"

using apptest::findItem;
using apptest::findVisibleItem;
using apptest::optionsFor;
using apptest::waitForFrame;
using pagedchat::FinishReason;

namespace {

constexpr int kTimeoutMs = 60000;

/// Records the URLs QDesktopServices::openUrl() hands to it (as the desktop's browser would get them).
class UrlCatcher : public QObject {
  Q_OBJECT
 public:
  QList<QUrl> opened;
 public slots:
  void open(const QUrl& url) { opened.append(url); }
};

/// The document of a prose block (a TextEdit) of a message.
QTextDocument* documentOf(QQuickItem* prose) {
  auto* doc = prose ? prose->property("textDocument").value<QQuickTextDocument*>() : nullptr;
  return doc ? doc->textDocument() : nullptr;
}

/// The visible prose block whose text contains `text` (nullptr when there is none).
QQuickItem* proseWith(QQuickWindow* window, const QString& text) {
  for (QQuickItem* prose : apptest::findVisibleItems(window->contentItem(), QStringLiteral("messageProse"))) {
    QTextDocument* doc = documentOf(prose);
    if (doc && doc->toPlainText().contains(text)) return prose;
  }
  return nullptr;
}

/// Clicks the middle of the first character of `text` in `prose`, as a user clicks a link.
bool clickText(QQuickWindow* window, QQuickItem* prose, const QString& text) {
  QTextDocument* doc = documentOf(prose);
  const int at = doc ? static_cast<int>(doc->toPlainText().indexOf(text)) : -1;
  if (at < 0) return false;
  apptest::scrollIntoView(prose);
  if (!waitForFrame(window)) return false;
  QRectF r;
  if (!QMetaObject::invokeMethod(prose, "positionToRectangle", Q_RETURN_ARG(QRectF, r), Q_ARG(int, at + 1)))
    return false;
  const QPointF p = prose->mapToScene(r.center());
  QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, p.toPoint());
  return true;
}

/// A conversation with `question` and the model's `answer`, in a new store in `dir`; its id.
qint64 conversationWith(const QTemporaryDir& dir, const QString& question, const QString& answer) {
  ChatStore store(dir.path());
  const qint64 id = store.createConversation(QStringLiteral("Hostile"));
  store.addMessage(id, MessageRole::kUser, question);
  store.addMessage(id, MessageRole::kAssistant, answer, FinishReason::kStop);
  return id;
}

}  // namespace

class TestHostileInput : public QObject {
  Q_OBJECT

 private slots:
  void init() { apptest::warnings().clear(); }
  void initTestCase() { apptest::installWarningCollector(); }
  void cleanupTestCase() { apptest::removeWarningCollector(); }
  void linkPolicy_data();
  void linkPolicy();
  void linksAskBeforeOpening();
  void remoteContentIsText_data();
  void remoteContentIsText();
  void imagesAreNeverFetched();
  void plainHttpKeyWarning();
  void serverErrorInTheWindow();
  void serverOriginsOnTheServerPage();
};

void TestHostileInput::linkPolicy_data() {
  QTest::addColumn<QString>("link");
  QTest::addColumn<bool>("openable");
  QTest::newRow("https") << "https://example.org/docs?q=1#top" << true;
  QTest::newRow("http") << "http://example.org" << true;
  QTest::newRow("mailto") << "mailto:someone@example.org" << true;
  QTest::newRow("scheme in capitals") << "HTTPS://EXAMPLE.ORG/" << true;
  QTest::newRow("mixed case") << "MailTo:someone@example.org" << true;
  QTest::newRow("file") << "file:///etc/passwd" << false;
  QTest::newRow("file, capitals") << "FILE:///etc/passwd" << false;
  QTest::newRow("data") << "data:text/html,<script>alert(1)</script>" << false;
  QTest::newRow("javascript") << "javascript:alert(1)" << false;
  QTest::newRow("javascript, mixed case") << "JavaScript:alert(1)" << false;
  QTest::newRow("ftp") << "ftp://example.org/file" << false;
  QTest::newRow("custom scheme") << "custom-scheme:do-something" << false;
  QTest::newRow("app scheme") << "vscode://file/etc/passwd" << false;
  QTest::newRow("relative") << "docs/page.html" << false;
  QTest::newRow("protocol-relative") << "//example.org/x" << false;
  QTest::newRow("absolute path") << "/etc/passwd" << false;
  QTest::newRow("empty") << "" << false;
  QTest::newRow("http without host") << "http:/etc/passwd" << false;
  QTest::newRow("mailto without address") << "mailto:" << false;
}

void TestHostileInput::linkPolicy() {
  QFETCH(QString, link);
  QFETCH(bool, openable);
  LinkPolicy policy;
  QCOMPARE(policy.isOpenable(link), openable);
  QCOMPARE(LinkPolicy::isOpenableLink(QUrl(link)), openable);
  QSignalSpy asked(&policy, &LinkPolicy::confirmationRequested);
  QSignalSpy refused(&policy, &LinkPolicy::refused);
  QCOMPARE(policy.request(link), openable);
  QCOMPARE(asked.size(), openable ? 1 : 0);
  QCOMPARE(refused.size(), openable ? 0 : 1);
  if (!openable) QVERIFY(!policy.open(link));  // never handed over, even when asked to
}

void TestHostileInput::linksAskBeforeOpening() {
  UrlCatcher catcher;
  for (const char* scheme : {"https", "http", "file", "javascript"})
    QDesktopServices::setUrlHandler(QString::fromLatin1(scheme), &catcher, "open");
  auto unset = qScopeGuard([] {
    for (const char* scheme : {"https", "http", "file", "javascript"})
      QDesktopServices::unsetUrlHandler(QString::fromLatin1(scheme));
  });
  QTemporaryDir dir;
  const qint64 id = conversationWith(dir, QStringLiteral("Links, please."),
                                     QStringLiteral("Read [the secret](file:///etc/passwd), run [the script]"
                                                    "(javascript:alert(1)) or visit [the page]"
                                                    "(https://example.test/page?q=1)."));
  AppController controller(optionsFor(dir));
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  auto* policy = engine.singletonInstance<LinkPolicy*>(qmlTypeId("PagedChat", 1, 0, "LinkPolicy"));
  QVERIFY(policy);
  QSignalSpy refused(policy, &LinkPolicy::refused);
  QSignalSpy asked(policy, &LinkPolicy::confirmationRequested);
  controller.history()->openConversation(id);
  QQuickItem* prose = nullptr;
  QTRY_VERIFY((prose = proseWith(window, QStringLiteral("the page"))));
  QObject* dialogObject = apptest::findObject(window, QStringLiteral("openLinkDialog"));
  QVERIFY(dialogObject);

  // file: and javascript: links: activated, refused, nothing opened and nothing asked.
  QVERIFY(clickText(window, prose, QStringLiteral("the secret")));
  QTRY_COMPARE(refused.size(), 1);
  QCOMPARE(refused.constLast().at(0).toString(), QStringLiteral("file:///etc/passwd"));
  QVERIFY(clickText(window, prose, QStringLiteral("the script")));
  QTRY_COMPARE(refused.size(), 2);
  QVERIFY(waitForFrame(window));
  QCOMPARE(asked.size(), 0);
  QVERIFY(!dialogObject->property("visible").toBool());
  QVERIFY(catcher.opened.isEmpty());

  // A web link: the question first, with the whole target; Cancel opens nothing.
  QVERIFY(clickText(window, prose, QStringLiteral("the page")));
  QTRY_VERIFY(dialogObject->property("opened").toBool());
  QCOMPARE(asked.size(), 1);
  QQuickItem* target = findVisibleItem(window->contentItem(), QStringLiteral("openLinkTarget"));
  QVERIFY(target);
  QCOMPARE(target->property("text").toString(), QStringLiteral("https://example.test/page?q=1"));
  QCOMPARE(dialogObject->property("title").toString(), QStringLiteral("Open this link?"));
  QVERIFY(catcher.opened.isEmpty());
  QVERIFY(apptest::click(window, findVisibleItem(window->contentItem(), QStringLiteral("openLinkCancelButton"))));
  QTRY_VERIFY(!dialogObject->property("visible").toBool());
  QVERIFY(waitForFrame(window));
  QVERIFY(catcher.opened.isEmpty());

  // Open: handed to the desktop (here the catcher) once, as it is.
  QVERIFY(clickText(window, prose, QStringLiteral("the page")));
  QTRY_VERIFY(dialogObject->property("opened").toBool());
  QVERIFY(apptest::click(window, findVisibleItem(window->contentItem(), QStringLiteral("openLinkButton"))));
  QTRY_COMPARE(catcher.opened.size(), 1);
  QCOMPARE(catcher.opened.constFirst(), QUrl(QStringLiteral("https://example.test/page?q=1")));
  QTRY_VERIFY(!dialogObject->property("visible").toBool());
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHostileInput::remoteContentIsText_data() {
  QTest::addColumn<QString>("prose");
  QTest::addColumn<QString>("shown");  // "~" stands for the inserted zero-width space
  QTest::newRow("markdown image") << "See ![a cat](http://h.test/cat.png)."
                                  << "See !~[a cat](http://h.test/cat.png).";
  QTest::newRow("reference image") << "![a cat][c]\n\n[c]: http://h.test/c.png"
                                   << "!~[a cat][c]\n\n[c]: http://h.test/c.png";
  QTest::newRow("img tag") << "<img src=\"http://h.test/i.png\">"
                           << "<~img src=\"http://h.test/i.png\">";
  QTest::newRow("IMG in capitals") << "<IMG SRC=http://h.test/i.png>"
                                   << "<~IMG SRC=http://h.test/i.png>";
  QTest::newRow("table background") << "<table background=\"http://h.test/b.png\"><tr><td>x</td></tr></table>"
                                    << "<~table background=\"http://h.test/b.png\"><tr><td>x</td></tr></table>";
  QTest::newRow("style") << "<span style=\"background-image:url(http://h.test/i)\">x</span>"
                         << "<~span style=\"background-image:url(http://h.test/i)\">x</span>";
  QTest::newRow("style sheet") << "<link rel=stylesheet href=\"file:///etc/passwd\">"
                               << "<~link rel=stylesheet href=\"file:///etc/passwd\">";
  QTest::newRow("comment") << "<!-- hidden -->"
                           << "<~!-- hidden -->";
  QTest::newRow("formatting tags") << "a<br>b <b>bold</b> H<sub>2</sub>O <br/>"
                                   << "a<br>b <b>bold</b> H<sub>2</sub>O <br/>";
  QTest::newRow("autolinks") << "<https://example.org/x> <someone@example.org>"
                             << "<https://example.org/x> <someone@example.org>";
  QTest::newRow("comparisons") << "a < b, x<y"
                               << "a < b, x<~y";
  QTest::newRow("links stay links") << "[the docs](https://example.org) !important"
                                    << "[the docs](https://example.org) !important";
}

void TestHostileInput::remoteContentIsText() {
  QFETCH(QString, prose);
  QFETCH(QString, shown);
  QCOMPARE(withoutRemoteContent(prose), shown.replace(QLatin1Char('~'), QChar(0x200B)));
  // What Qt's Markdown reader makes of it holds no image.
  QTextDocument doc;
  doc.setMarkdown(withoutRemoteContent(prose));
  QVERIFY2(!doc.toPlainText().contains(QChar::ObjectReplacementCharacter), qPrintable(doc.toPlainText()));
}

void TestHostileInput::imagesAreNeverFetched() {
  // A local web server stands for the remote one an image would tell the app to call (a tracking
  // pixel, a leak of the conversation in the URL). It answers 404 and notes every request.
  QTcpServer web;
  QVERIFY(web.listen(QHostAddress::LocalHost));
  QStringList requested;  // request paths
  connect(&web, &QTcpServer::newConnection, this, [&] {
    QTcpSocket* socket = web.nextPendingConnection();
    connect(socket, &QTcpSocket::readyRead, socket, [&requested, socket] {
      const QByteArray request = socket->readAll();
      requested.append(QString::fromLatin1(request.split(' ').value(1)));
      socket->write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      socket->disconnectFromHost();
    });
  });
  const QString base = QStringLiteral("http://127.0.0.1:%1").arg(web.serverPort());
  QTemporaryDir dir;
  const qint64 id = conversationWith(
      dir, QStringLiteral("Draw me a cat."),
      QStringLiteral(
          "Here it is:\n\n![a drawing of the cat](%1/cat.png)\n\n| in a table |\n|---|\n| ![cell](%1/cell.png) "
          "|\n\n<p>An HTML block: <img src=\"%1/block.png\" alt=\"block cat\"></p>\n\nInline HTML: <img "
          "src=\"%1/inline.png\" alt=\"inline cat\" /> too.\n")
          .arg(base));
  AppController controller(optionsFor(dir));
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  controller.history()->openConversation(id);
  QQuickItem* prose = nullptr;
  QTRY_VERIFY((prose = proseWith(window, QStringLiteral("Here it is"))));
  // Rendered: laid out, polished and drawn, the styling pass done.
  QVERIFY(waitForFrame(window));
  QVERIFY(waitForFrame(window));

  // The alt text is shown in place of the picture, as a link to it (opened only after the
  // question, as any link); no picture is left in the text to load.
  QTextDocument* doc = documentOf(prose);
  const QString shown = doc->toPlainText();
  QVERIFY2(shown.contains(QStringLiteral("a drawing of the cat")) && shown.contains(QStringLiteral("cell")),
           qPrintable(shown));
  QVERIFY2(!shown.contains(QChar::ObjectReplacementCharacter), qPrintable(shown));
  QStringList links;
  for (QTextBlock block = doc->begin(); block.isValid(); block = block.next())
    for (auto it = block.begin(); !it.atEnd(); ++it)
      if (it.fragment().charFormat().isImageFormat())
        links << QStringLiteral("image!");
      else if (it.fragment().charFormat().isAnchor())
        links << it.fragment().charFormat().anchorHref();
  QVERIFY2(links.contains(base + QStringLiteral("/cat.png")) && !links.contains(QStringLiteral("image!")),
           qPrintable(links.join(QLatin1Char(' '))));
  QVERIFY(prose->height() > 0);

  // The same engine does fetch a picture a QML Image asks for: once that request has arrived,
  // any the message had made (before it) would have too.
  QQmlComponent control(&engine);
  control.setData(QStringLiteral("import QtQuick\nImage { source: \"%1/control.png\" }").arg(base).toUtf8(), QUrl());
  std::unique_ptr<QObject> image(control.create());
  QVERIFY2(image, qPrintable(control.errorString()));
  QTRY_VERIFY_WITH_TIMEOUT(requested.contains(QStringLiteral("/control.png")), kTimeoutMs);
  QVERIFY(waitForFrame(window));
  QVERIFY2(requested == QStringList{QStringLiteral("/control.png")}, qPrintable(requested.join(" ")));
  image.reset();
  apptest::warnings().clear();  // the control image's 404
}

void TestHostileInput::plainHttpKeyWarning() {
  // A pane's server settings: an API key for plain http to another machine is warned about,
  // not for https or this computer.
  QTemporaryDir dir;
  MemoryApiKeyStore keys;
  AppController controller(optionsFor(dir), nullptr, nullptr, &keys);
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QQuickItem* root = window->contentItem();
  QQuickItem* pane = findItem(root, QStringLiteral("chatPane0"));
  QVERIFY(QMetaObject::invokeMethod(pane, "openSettings"));
  QTRY_VERIFY(findVisibleItem(root, QStringLiteral("applySettingsButton")));
  findItem(root, QStringLiteral("backendRemote"))->setProperty("checked", true);
  QQuickItem* url = findItem(root, QStringLiteral("endpointUrl"));
  QQuickItem* key = findItem(root, QStringLiteral("endpointKey"));
  QVERIFY(url && key);
  auto warning = [&] {
    QQuickItem* label = findVisibleItem(root, QStringLiteral("endpointKeyWarning"));
    return label ? label->property("text").toString() : QString();
  };
  url->setProperty("text", QStringLiteral("http://192.0.2.1:8000/v1"));
  key->setProperty("text", QStringLiteral("sk-secret"));
  QTRY_VERIFY(!warning().isEmpty());
  QVERIFY2(warning().contains(QLatin1String("192.0.2.1")) && warning().contains(QLatin1String("unencrypted")),
           qPrintable(warning()));
  for (const char* safe :
       {"https://192.0.2.1/v1", "http://127.0.0.1:8000/v1", "http://localhost:8000/v1", "http://[::1]:8000/v1"}) {
    url->setProperty("text", QString::fromLatin1(safe));
    QTRY_VERIFY2(warning().isEmpty(), safe);
  }
  url->setProperty("text", QStringLiteral("http://gpu-box.example:8000/v1"));
  QTRY_VERIFY(warning().contains(QLatin1String("gpu-box.example")));
  key->setProperty("text", QString());  // no key: nothing to warn about
  QTRY_VERIFY(warning().isEmpty());
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHostileInput::serverErrorInTheWindow() {
  // The server was on in the last run, on a network address whose key is gone: it is not
  // started, and the main window says so (not only Settings > Server). Turned off: the message goes.
  QTemporaryDir dir;
  {
    QSettings settings(AppController::settingsFile(dir.path()), QSettings::IniFormat);
    settings.setValue(QStringLiteral("server/enabled"), true);
    settings.setValue(QStringLiteral("server/host"), QStringLiteral("0.0.0.0"));
  }
  MemoryApiKeyStore keys;
  AppController controller(optionsFor(dir), nullptr, nullptr, &keys);
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  auto banner = [&] {
    QQuickItem* label = findVisibleItem(window->contentItem(), QStringLiteral("errorBannerText"));
    return label ? label->property("text").toString() : QString();
  };
  QTRY_VERIFY(!banner().isEmpty());
  QVERIFY2(
      banner().contains(QLatin1String("Settings > Server")) && banner().contains(QLatin1String("needs an API key")),
      qPrintable(banner()));
  controller.server()->stop();
  QTRY_VERIFY(banner().isEmpty());

  // The port is taken by another program: once the model is loaded the server cannot listen.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTcpServer other;
  QVERIFY(other.listen(QHostAddress(QStringLiteral("127.0.0.1"))));
  QCOMPARE(controller.server()->start(QStringLiteral("127.0.0.1"), other.serverPort(), QString(), false), QString());
  controller.start();
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), kTimeoutMs);
  QTRY_VERIFY(!banner().isEmpty());
  QVERIFY2(banner().contains(QStringLiteral("127.0.0.1:%1").arg(other.serverPort())), qPrintable(banner()));
  QVERIFY(!controller.server()->isRunning());
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHostileInput::serverOriginsOnTheServerPage() {
  // Settings > Server: the allowed web pages go with the other fields to the server; a word that
  // is not an origin is refused there, with the reason under the fields.
  QTemporaryDir dir;
  MemoryApiKeyStore keys;
  AppOptions options = optionsFor(dir);
  options.modelPath.clear();  // the settings are taken without a model (it listens once one is loaded)
  AppController controller(options, nullptr, nullptr, &keys);
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QQuickItem* root = window->contentItem();
  QVERIFY(QMetaObject::invokeMethod(window, "openSettings"));
  QTRY_VERIFY(findVisibleItem(root, QStringLiteral("settingsTabs")));
  findItem(root, QStringLiteral("settingsTabs"))->setProperty("currentIndex", 2);
  QQuickItem* origins = nullptr;
  QTRY_VERIFY((origins = findVisibleItem(root, QStringLiteral("serverAllowedOrigins"))));
  QCOMPARE(origins->property("text").toString(), QString());  // none by default
  findItem(root, QStringLiteral("serverPort"))->setProperty("text", QStringLiteral("0"));
  origins->setProperty("text", QStringLiteral("example.test"));
  QVERIFY(QMetaObject::invokeMethod(findVisibleItem(root, QStringLiteral("serverApplyButton")), "clicked"));
  QQuickItem* error = nullptr;
  QTRY_VERIFY((error = findVisibleItem(root, QStringLiteral("serverError"))));
  QVERIFY2(error->property("text").toString().contains(QLatin1String("origin")),
           qPrintable(error->property("text").toString()));
  QVERIFY(!controller.server()->isEnabled());
  origins->setProperty("text", QStringLiteral("http://example.test, http://localhost:3000"));
  QVERIFY(QMetaObject::invokeMethod(findVisibleItem(root, QStringLiteral("serverApplyButton")), "clicked"));
  QTRY_VERIFY(controller.server()->isEnabled());
  QCOMPARE(controller.server()->allowedOrigins(),
           (QStringList{QStringLiteral("http://example.test"), QStringLiteral("http://localhost:3000")}));
  QTRY_VERIFY(!findVisibleItem(root, QStringLiteral("serverError")));
  APPTEST_VERIFY_NO_WARNINGS();
}

QTEST_MAIN(TestHostileInput)
#include "test_hostile_input.moc"
