// The app's QML loads without warnings (offscreen), and a prompt typed into a pane's input box
// and sent with Enter produces a streamed assistant reply in that pane's model and in the store;
// a pane's second turn sends the whole conversation and finds the first turn in the prefix cache.
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtTest>

#include "app/app_controller.h"
#include "app/app_options.h"
#include "app/chat_session.h"
#include "app/main_window.h"
#include "app/message_list_model.h"
#include "test_paths.h"

namespace {

QStringList g_messages;  // warnings and errors seen while the handler is installed
QtMessageHandler g_previous = nullptr;

void failOnWarnings(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (type == QtWarningMsg || type == QtCriticalMsg || type == QtFatalMsg) g_messages.append(message);
  if (g_previous) g_previous(type, context, message);
}

/// Finds a visual descendant of `root` by objectName (delegates are not always QObject children).
QQuickItem* findItem(QQuickItem* root, const QString& name) {
  if (!root) return nullptr;
  if (root->objectName() == name) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, name)) return found;
  return nullptr;
}

}  // namespace

class TestGui : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void loadsWithoutWarningsAndChats();
  void restartShowsConversation();
  void conversationActions();
  void secondTurnReusesCache();
  void commandLine();
  void cleanupTestCase();

 private:
  QTemporaryDir dataDir_;
  qint64 conversationId_ = 0;
  QString replyText_;
};

void TestGui::initTestCase() {
  QVERIFY(dataDir_.isValid());
  g_previous = qInstallMessageHandler(failOnWarnings);
}

void TestGui::cleanupTestCase() { qInstallMessageHandler(g_previous); }

void TestGui::loadsWithoutWarningsAndChats() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  AppOptions options;
  options.modelPath = testpaths::stories260K();
  options.dataDir = dataDir_.path();
  AppController controller(options);
  controller.start();

  g_messages.clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QTest::qWait(50);  // let deferred bindings and layouts settle
  QVERIFY2(g_messages.isEmpty(), qPrintable(g_messages.join(QLatin1Char('\n'))));

  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);

  // Type into the first pane's input box and press Enter, as a user would.
  auto* input = findItem(window->contentItem(), QStringLiteral("inputArea"));
  QVERIFY(input);
  ChatSession* session = controller.panes()->sessionAt(0);
  QVERIFY(session);
  input->setProperty("text", QStringLiteral("Once upon a time"));
  QCOMPARE(session->inputText(), QStringLiteral("Once upon a time"));
  input->forceActiveFocus();
  QVERIFY(input->hasActiveFocus());
  QTest::keyClick(window, Qt::Key_Return);
  QTRY_VERIFY_WITH_TIMEOUT(session->isBusy() || session->messages()->rowCount() == 2, 5000);
  QCOMPARE(session->inputText(), QString());  // the box is cleared
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), 60000);
  QCOMPARE(session->errorText(), QString());

  MessageListModel* messages = session->messages();
  QCOMPARE(messages->rowCount(), 2);
  QCOMPARE(messages->roleAt(0), QStringLiteral("user"));
  QCOMPARE(messages->textAt(0), QStringLiteral("Once upon a time"));
  QCOMPARE(messages->roleAt(1), QStringLiteral("assistant"));
  replyText_ = messages->textAt(1);
  QVERIFY(!replyText_.trimmed().isEmpty());

  // The store has both messages, the reply with its final text and finish reason.
  conversationId_ = session->conversationId();
  QVERIFY(conversationId_ != 0);
  const QList<MessageRecord> stored = controller.store()->messages(conversationId_);
  QCOMPARE(stored.size(), 2);
  QCOMPARE(stored.at(0).role, QStringLiteral("user"));
  QCOMPARE(stored.at(0).text, QStringLiteral("Once upon a time"));
  QCOMPARE(stored.at(1).role, QStringLiteral("assistant"));
  QCOMPARE(stored.at(1).text, replyText_);
  QVERIFY2(stored.at(1).finishReason == "stop" || stored.at(1).finishReason == "length",
           qPrintable(stored.at(1).finishReason));
  QCOMPARE(controller.conversations()->rowCount(), 1);

  // Shift+Enter adds a line instead of sending.
  for (char c : {'T', 'o', 'm'}) QTest::keyClick(window, c);
  QTest::keyClick(window, Qt::Key_Return, Qt::ShiftModifier);
  QCOMPARE(session->inputText(), QStringLiteral("Tom\n"));
  QVERIFY(!session->isBusy());

  // A second pane, added through the same object the tool bar button calls.
  QVERIFY(QMetaObject::invokeMethod(controller.panes(), "addPane"));
  QCOMPARE(controller.panes()->count(), 2);
  QTRY_VERIFY(findItem(window->contentItem(), QStringLiteral("chatPane1")));

  // Stop right after sending in the second pane: the reply ends as "abort", text saved as shown.
  ChatSession* second = controller.panes()->sessionAt(1);
  second->setMaxTokens(400);
  second->setInputText(QStringLiteral("Lily and Tom"));
  QVERIFY(second->send());
  second->stop();
  QTRY_VERIFY_WITH_TIMEOUT(!second->isBusy(), 30000);
  QCOMPARE(second->messages()->rowCount(), 2);
  const QModelIndex replyIndex = second->messages()->index(1);
  QCOMPARE(replyIndex.data(MessageListModel::FinishReasonRole).toString(), QStringLiteral("abort"));
  QCOMPARE(replyIndex.data(MessageListModel::StreamingRole).toBool(), false);
  const QList<MessageRecord> stopped = controller.store()->messages(second->conversationId());
  QCOMPARE(stopped.size(), 2);
  QCOMPARE(stopped.at(1).finishReason, QStringLiteral("abort"));
  QCOMPARE(stopped.at(1).text, second->messages()->textAt(1));
  QCOMPARE(controller.conversations()->rowCount(), 2);
  controller.deleteConversation(second->conversationId());
  QCOMPARE(second->conversationId(), 0);
  QCOMPARE(controller.conversations()->rowCount(), 1);

  QTest::qWait(50);
  QVERIFY2(g_messages.isEmpty(), qPrintable(g_messages.join(QLatin1Char('\n'))));
}

void TestGui::conversationActions() {
  QTemporaryDir dir;
  AppOptions options;
  options.modelPath = testpaths::stories260K();
  options.dataDir = dir.path();
  AppController controller(options);  // no model needed
  PaneListModel* panes = controller.panes();
  QCOMPARE(panes->count(), 1);
  QCOMPARE(controller.conversations()->rowCount(), 0);

  controller.newConversation();
  QCOMPARE(controller.conversations()->rowCount(), 1);
  const qint64 first = controller.conversations()->idAt(0);
  QCOMPARE(panes->sessionAt(0)->conversationId(), first);
  QCOMPARE(controller.currentConversationId(), first);
  controller.newConversation();  // still empty: no second empty conversation
  QCOMPARE(controller.conversations()->rowCount(), 1);

  // A new pane is current; "new" fills it; opening the first focuses the pane showing it.
  QVERIFY(panes->addPane());
  QCOMPARE(panes->currentIndex(), 1);
  controller.newConversation();
  const qint64 second = panes->sessionAt(1)->conversationId();
  QVERIFY(second != 0 && second != first);
  controller.openConversation(first);
  QCOMPARE(panes->currentIndex(), 0);
  QCOMPARE(panes->sessionAt(1)->conversationId(), second);

  // Up to four panes; the last one cannot be closed.
  QVERIFY(panes->addPane());
  QVERIFY(panes->addPane());
  QVERIFY(!panes->addPane());
  QCOMPARE(panes->count(), PaneListModel::kMaxPanes);
  for (int i = 0; i < 5; ++i) panes->closePane(panes->count() - 1);
  QCOMPARE(panes->count(), 1);
  QCOMPARE(panes->sessionAt(0)->conversationId(), first);

  controller.deleteConversation(first);
  QCOMPARE(panes->sessionAt(0)->conversationId(), 0);
  QCOMPARE(controller.conversations()->rowCount(), 1);
  QCOMPARE(controller.conversations()->idAt(0), second);
}

void TestGui::secondTurnReusesCache() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppOptions options;
  options.modelPath = testpaths::stories260K();
  options.dataDir = dir.path();
  AppController controller(options);
  controller.start();
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  ChatSession* session = controller.panes()->sessionAt(0);
  session->setTemperature(0.0);  // greedy: a reply long enough to fill a KV block
  session->setMaxTokens(40);

  session->setInputText(QStringLiteral("Once upon a time"));
  QVERIFY(session->send());
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), 60000);
  const int firstPrompt = session->promptTokens();
  QVERIFY(firstPrompt > 0);
  QCOMPARE(session->cachedPromptTokens(), 0);

  session->setInputText(QStringLiteral("One day"));
  QVERIFY(session->send());
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), 60000);
  QCOMPARE(session->errorText(), QString());
  QCOMPARE(session->messages()->rowCount(), 4);
  QVERIFY(!session->messages()->textAt(3).isEmpty());
  // The second request's prompt is the whole conversation (stories260K: the texts concatenated),
  // so its leading blocks are the first turn's prompt and reply, already in the cache.
  QVERIFY2(session->promptTokens() > firstPrompt + 10, qPrintable(QString::number(session->promptTokens())));
  QVERIFY2(session->cachedPromptTokens() >= 16, qPrintable(QString::number(session->cachedPromptTokens())));
  QVERIFY(session->cachedPromptTokens() < session->promptTokens());
}

void TestGui::restartShowsConversation() {
  if (conversationId_ == 0) QSKIP("needs the previous test's conversation");
  AppOptions options;
  options.modelPath = testpaths::stories260K();
  options.dataDir = dataDir_.path();
  AppController controller(options);  // no engine start needed: the store and panes restore
  QCOMPARE(controller.panes()->count(), 2);
  ChatSession* first = controller.panes()->sessionAt(0);
  QCOMPARE(first->conversationId(), conversationId_);
  QCOMPARE(first->messages()->rowCount(), 2);
  QCOMPARE(first->messages()->textAt(1), replyText_);
  QCOMPARE(controller.conversations()->rowCount(), 1);
}

void TestGui::commandLine() {
  const AppOptions given = parseAppOptions({QStringLiteral("pagedchat"), QStringLiteral("--model"),
                                            QStringLiteral("/m/model.bin"), QStringLiteral("--tokenizer"),
                                            QStringLiteral("/m/tok.model"), QStringLiteral("--data-dir"),
                                            QStringLiteral("/d")});
  QCOMPARE(given.modelPath, QStringLiteral("/m/model.bin"));
  QCOMPARE(given.tokenizerPath, QStringLiteral("/m/tok.model"));
  QCOMPARE(given.dataDir, QStringLiteral("/d"));
  QCOMPARE(QString::fromStdString(engineConfigFor(given).model), QStringLiteral("/m/model.bin"));

  const QByteArray saved = qgetenv("PAGEDCHAT_MODEL");
  qunsetenv("PAGEDCHAT_MODEL");
  const AppOptions defaults = parseAppOptions({QStringLiteral("pagedchat")});
  QVERIFY2(defaults.modelPath.endsWith(QLatin1String("/stories260K")), qPrintable(defaults.modelPath));
  QVERIFY(QDir::isAbsolutePath(defaults.modelPath));
  QCOMPARE(defaults.dataDir, defaultDataDir());
  qputenv("PAGEDCHAT_MODEL", "/env/model");
  QCOMPARE(parseAppOptions({QStringLiteral("pagedchat")}).modelPath, QStringLiteral("/env/model"));
  QCOMPARE(parseAppOptions({QStringLiteral("pagedchat"), QStringLiteral("--model"), QStringLiteral("/cli")}).modelPath,
           QStringLiteral("/cli"));
  if (saved.isNull()) qunsetenv("PAGEDCHAT_MODEL");
  else qputenv("PAGEDCHAT_MODEL", saved);
}

QTEST_MAIN(TestGui)
#include "test_gui.moc"
