// The app's QML loads without warnings (offscreen), and a prompt typed into a pane's input box
// and sent with Enter produces a streamed assistant reply in that pane's model and in the store;
// a pane's second turn sends the whole conversation and finds the first turn in the prefix cache.
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QScopeGuard>
#include <QSemaphore>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/engine/engine_worker.h"
#include "app/main_window.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_settings.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/finish_reason_text.h"
#include "app/store/store_health.h"
#include "gui_test_util.h"

using apptest::findItem;
using apptest::findVisibleItems;
using apptest::shownAndActive;
using apptest::waitForFrame;
using apptest::windowRect;
using pagedchat::FinishReason;

class TestGui : public QObject {
  Q_OBJECT

 private slots:
  // A QML engine destroyed at the end of the previous test may warn about delegates it was still
  // creating; each test counts only its own warnings.
  void init() { apptest::warnings().clear(); }
  void initTestCase();
  void loadsWithoutWarningsAndChats();
  void restartShowsConversation();
  void conversationActions();
  void secondTurnReusesCache();
  void commandLine();
  void messageBubbles();
  void fourPanesFit();
  void closingPanesWithMessages();
  void twoPanesStreamAtOnce();
  void quitShortcutAndIdleRate();
  void quitAsksWhenChangesWait();
  void errorWindow();
  void cleanupTestCase();

 private:
  QTemporaryDir dataDir_;
  qint64 conversationId_ = 0;
  QString replyText_;
};

void TestGui::initTestCase() {
  QVERIFY(dataDir_.isValid());
  apptest::installWarningCollector();
}

void TestGui::cleanupTestCase() { apptest::removeWarningCollector(); }

void TestGui::loadsWithoutWarningsAndChats() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  AppController controller(apptest::optionsFor(dataDir_.path()));
  controller.start();

  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QVERIFY(waitForFrame(window));  // deferred bindings and layouts settled
  APPTEST_VERIFY_NO_WARNINGS();

  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);

  // Type into the first pane's input box and press Enter, as a user would.
  auto* input = findItem(window->contentItem(), QStringLiteral("inputArea"));
  QVERIFY(input);
  PaneState* session = controller.panes()->paneAt(0);
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
  QCOMPARE(stored.at(0).role, MessageRole::kUser);
  QCOMPARE(stored.at(0).text, QStringLiteral("Once upon a time"));
  QCOMPARE(stored.at(1).role, MessageRole::kAssistant);
  QCOMPARE(stored.at(1).text, replyText_);
  QVERIFY2(stored.at(1).finishReason == FinishReason::kStop || stored.at(1).finishReason == FinishReason::kLength,
           qPrintable(finishReasonText(stored.at(1).finishReason)));
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
  PaneState* second = controller.panes()->paneAt(1);
  second->setMaxTokens(400);
  second->setInputText(QStringLiteral("Lily and Tom"));
  {
    // The worker waits at a gate until stop() has been called, so the reply cannot end by itself
    // first (stories260K can finish it on a fast machine before the abort arrives).
    apptest::WorkerGate gate(controller.engine()->worker());
    QVERIFY(second->send());
    second->stop();
  }
  QTRY_VERIFY_WITH_TIMEOUT(!second->isBusy(), 30000);
  QCOMPARE(second->messages()->rowCount(), 2);
  const QModelIndex replyIndex = second->messages()->index(1);
  QCOMPARE(replyIndex.data(MessageListModel::FinishReasonRole).toString(), QStringLiteral("abort"));
  QCOMPARE(replyIndex.data(MessageListModel::StreamingRole).toBool(), false);
  const QList<MessageRecord> stopped = controller.store()->messages(second->conversationId());
  QCOMPARE(stopped.size(), 2);
  QCOMPARE(stopped.at(1).finishReason, std::optional(FinishReason::kAbort));
  QCOMPARE(stopped.at(1).text, second->messages()->textAt(1));
  QCOMPARE(controller.conversations()->rowCount(), 2);
  controller.history()->deleteConversation(second->conversationId());
  QCOMPARE(second->conversationId(), 0);
  QCOMPARE(controller.conversations()->rowCount(), 1);

  QVERIFY(waitForFrame(window));
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestGui::conversationActions() {
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));  // no model needed
  PaneListModel* panes = controller.panes();
  QCOMPARE(panes->count(), 1);
  QCOMPARE(controller.conversations()->rowCount(), 0);

  controller.history()->newConversation();
  QCOMPARE(controller.conversations()->rowCount(), 1);
  const qint64 first = controller.conversations()->idAt(0);
  QCOMPARE(panes->paneAt(0)->conversationId(), first);
  QCOMPARE(controller.history()->currentConversationId(), first);
  controller.history()->newConversation();  // still empty: no second empty conversation
  QCOMPARE(controller.conversations()->rowCount(), 1);

  // A new pane is current; "new" fills it; opening the first focuses the pane showing it.
  QVERIFY(panes->addPane());
  QCOMPARE(panes->currentIndex(), 1);
  controller.history()->newConversation();
  const qint64 second = panes->paneAt(1)->conversationId();
  QVERIFY(second != 0 && second != first);
  controller.history()->openConversation(first);
  QCOMPARE(panes->currentIndex(), 0);
  QCOMPARE(panes->paneAt(1)->conversationId(), second);

  // Up to four panes; the last one cannot be closed.
  QVERIFY(panes->addPane());
  QVERIFY(panes->addPane());
  QVERIFY(!panes->addPane());
  QCOMPARE(panes->count(), PaneListModel::kMaxPanes);
  for (int i = 0; i < 5; ++i) panes->closePane(panes->count() - 1);
  QCOMPARE(panes->count(), 1);
  QCOMPARE(panes->paneAt(0)->conversationId(), first);

  controller.history()->deleteConversation(first);
  QCOMPARE(panes->paneAt(0)->conversationId(), 0);
  QCOMPARE(controller.conversations()->rowCount(), 1);
  QCOMPARE(controller.conversations()->idAt(0), second);
}

void TestGui::secondTurnReusesCache() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));
  controller.start();
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  PaneState* session = controller.panes()->paneAt(0);
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
  // No engine start needed: the store and panes restore.
  AppController controller(apptest::optionsFor(dataDir_.path()));
  QCOMPARE(controller.panes()->count(), 2);
  PaneState* first = controller.panes()->paneAt(0);
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
  if (saved.isNull())
    qunsetenv("PAGEDCHAT_MODEL");
  else
    qputenv("PAGEDCHAT_MODEL", saved);
}

void TestGui::messageBubbles() {
  // Short messages stay on one line (the bubble used to come out a fraction of a pixel too narrow
  // for its own text: "H / i", "Go / 4"); long ones wrap inside the pane; a reply cut off by a
  // crash (no finish reason) says "interrupted".
  QTemporaryDir dir;
  const QStringList shortTexts = {QStringLiteral("Hi"),
                                  QStringLiteral("Go 4"),
                                  QStringLiteral("Sue saw a cat"),
                                  QStringLiteral("The little dog"),
                                  QStringLiteral("Ok"),
                                  QStringLiteral("W"),
                                  QStringLiteral("Tim ran."),
                                  QStringLiteral("A big red ball"),
                                  QStringLiteral("Lily and Tom 🎉"),
                                  QStringLiteral("안녕하세요")};
  const QString longText = QStringLiteral("Once upon a time there was a little girl named Lily. ").repeated(8);
  qint64 conversation = 0;
  {
    ChatStore store(dir.path());
    conversation = store.createConversation(QStringLiteral("Bubbles"));
    for (const QString& t : shortTexts) {
      store.addMessage(conversation, MessageRole::kUser, t);
      store.addMessage(conversation, MessageRole::kAssistant, QLatin1Char(' ') + t, FinishReason::kStop);
    }
    store.addMessage(conversation, MessageRole::kUser, longText);
    store.addMessage(conversation, MessageRole::kAssistant, QStringLiteral(" Tom and"));  // crashed mid-reply
    store.addMessage(conversation, MessageRole::kUser, QStringLiteral("Go on"));
    store.addMessage(conversation, MessageRole::kAssistant, QString());  // crashed before any text
  }
  AppController controller(apptest::optionsFor(dir.path()));
  QCOMPARE(controller.panes()->paneAt(0)->conversationId(), conversation);

  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  window->resize(1280, 800);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  auto* list = qobject_cast<QQuickItem*>(findItem(window->contentItem(), QStringLiteral("messageList1")));
  QVERIFY(list);
  QVERIFY(waitForFrame(window));

  // Each row's text item, scrolled into view (a ListView only makes the delegates it shows, and
  // drops them again once out of view: read what is needed at once).
  struct Shown {
    QString text;
    int lineCount = 0;
    double width = 0;
    QStringList notes;
  };
  const int rows = static_cast<int>(shortTexts.size()) * 2 + 4;
  QCOMPARE(list->property("count").toInt(), rows);
  list->setProperty("followEnd", false);
  QList<Shown> shown;
  for (int row = 0; row < rows; ++row) {
    QVERIFY(QMetaObject::invokeMethod(list, "positionViewAtIndex", Q_ARG(int, row), Q_ARG(int, 4 /*Contain*/)));
    QQuickItem* delegate = nullptr;
    QTRY_VERIFY(QMetaObject::invokeMethod(list, "itemAtIndex", Q_RETURN_ARG(QQuickItem*, delegate), Q_ARG(int, row)) &&
                delegate);
    QVERIFY(waitForFrame(window));  // the delegate's layout settled
    QVERIFY(QMetaObject::invokeMethod(list, "itemAtIndex", Q_RETURN_ARG(QQuickItem*, delegate), Q_ARG(int, row)));
    QVERIFY(delegate);
    QQuickItem* text = findItem(delegate, QStringLiteral("messageText"));
    QVERIFY(text);
    Shown s;
    s.text = text->property("text").toString();
    s.lineCount = text->property("lineCount").toInt();
    s.width = text->width();
    for (QQuickItem* n : findVisibleItems(delegate, QStringLiteral("messageNote")))
      s.notes << n->property("text").toString();
    shown.append(s);
  }
  const double paneWidth = list->width();
  for (int i = 0; i < shortTexts.size() * 2; ++i) {
    QCOMPARE(shown.at(i).text, shortTexts.at(i / 2));
    QVERIFY2(shown.at(i).lineCount == 1, qPrintable(QStringLiteral("\"%1\" wraps: %2 lines at width %3")
                                                        .arg(shown.at(i).text)
                                                        .arg(shown.at(i).lineCount)
                                                        .arg(shown.at(i).width)));
    QVERIFY(shown.at(i).notes.isEmpty());
  }
  const int last = static_cast<int>(shortTexts.size()) * 2;
  QVERIFY(shown.at(last).lineCount > 2);  // the long one wraps, inside the pane
  QVERIFY(shown.at(last).width < paneWidth);
  QCOMPARE(shown.at(last + 1).text, QStringLiteral("Tom and"));
  QCOMPARE(shown.at(last + 1).notes, QStringList{QStringLiteral("interrupted")});
  QCOMPARE(shown.at(last + 2).text, QStringLiteral("Go on"));
  QCOMPARE(shown.at(last + 3).text, QStringLiteral("(no reply \u2014 interrupted)"));
  QCOMPARE(shown.at(last + 3).notes, QStringList());  // the empty one says it in its text
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestGui::fourPanesFit() {
  // At the default 1280x800 all four panes, with their close and Send buttons, are inside the
  // window; in a narrow window the row of panes scrolls and the current pane is scrolled into view.
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  window->resize(1280, 800);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  while (controller.panes()->canAddPane()) QVERIFY(controller.panes()->addPane());
  QCOMPARE(controller.panes()->count(), 4);
  QVERIFY(waitForFrame(window));

  const QRectF windowArea(0, 0, window->width(), window->height());
  QQuickItem* sidebar = findItem(window->contentItem(), QStringLiteral("conversationList"));
  QVERIFY(sidebar && sidebar->isVisible());
  for (int i = 0; i < 4; ++i) {
    QQuickItem* pane = findItem(window->contentItem(), QStringLiteral("chatPane%1").arg(i));
    QVERIFY(pane);
    for (const QString& name :
         {QStringLiteral("closePaneButton"), QStringLiteral("sendButton"), QStringLiteral("inputArea")}) {
      QQuickItem* item = findItem(pane, name);
      QVERIFY2(item, qPrintable(name));
      const QRectF r = windowRect(item);
      QVERIFY2(windowArea.contains(r), qPrintable(QStringLiteral("pane %1 %2 at x %3..%4, window %5")
                                                      .arg(i)
                                                      .arg(name)
                                                      .arg(r.left())
                                                      .arg(r.right())
                                                      .arg(window->width())));
      QVERIFY2(!r.intersects(windowRect(sidebar)), qPrintable(name));
    }
  }
  auto* scroller = findItem(window->contentItem(), QStringLiteral("paneScroller"));
  QVERIFY(scroller);
  QCOMPARE(scroller->property("overflows").toBool(), false);

  // Narrow window: the panes keep their minimum width and scroll; making the last pane current
  // brings its buttons into view.
  window->resize(800, 600);
  QTRY_VERIFY(scroller->property("overflows").toBool());
  controller.panes()->setCurrentIndex(0);
  controller.panes()->setCurrentIndex(3);
  QTRY_VERIFY(QRectF(0, 0, window->width(), window->height())
                  .contains(windowRect(findItem(findItem(window->contentItem(), QStringLiteral("chatPane3")),
                                                QStringLiteral("closePaneButton")))));
  // The tool bar button hides the conversation list.
  QQuickItem* toggle = findItem(window->contentItem(), QStringLiteral("sidebarToggle"));
  QVERIFY(toggle);
  QVERIFY(QMetaObject::invokeMethod(toggle, "clicked"));
  QTRY_VERIFY(!sidebar->isVisible());
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestGui::quitShortcutAndIdleRate() {
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));
  QQmlApplicationEngine engine;  // its quit() reaches QCoreApplication::quit(): a no-op outside exec()
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(shownAndActive(window));

  // No generation yet: the status line shows no rate rather than 0.0 or a stale figure.
  auto* status = findItem(window->contentItem(), QStringLiteral("statusLabel"));
  QVERIFY(status);
  const QString statusText = status->property("text").toString();
  if (!statusText.contains(QLatin1String("Loading")) && !statusText.contains(QLatin1String("No model")))
    QVERIFY2(statusText.contains(QStringLiteral("\u2014 tok/s")), qPrintable(statusText));

  QSignalSpy quit(&engine, &QQmlEngine::quit);
  auto* input = findItem(window->contentItem(), QStringLiteral("inputArea"));
  QVERIFY(input);
  input->forceActiveFocus();  // also while typing
  QTest::keyClick(window, Qt::Key_Q, Qt::ControlModifier);
  QCOMPARE(quit.size(), 1);
}

void TestGui::quitAsksWhenChangesWait() {
  // A rename the chat history cannot take yet (another program's lock) lives only in memory:
  // Ctrl+Q and the window's close ask first; "Keep PagedChat open" keeps it, and once it is
  // saved, quitting no longer asks.
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));
  const qint64 id = controller.store()->createConversation(QStringLiteral("Before"));
  controller.conversations()->reload();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(shownAndActive(window));
  QObject* dialog = window->findChild<QObject*>(QStringLiteral("unsavedQuitDialog"));
  QVERIFY(dialog);

  // Another program's write lock, released by releaseLock() (or at the end, whatever fails).
  const QString lockName = QStringLiteral("quit-lock");
  {
    QSqlDatabase lock = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), lockName);
    lock.setDatabaseName(controller.store()->databasePath());
    QVERIFY(lock.open());
    QVERIFY(QSqlQuery(lock).exec(QStringLiteral("BEGIN IMMEDIATE")));
  }
  auto releaseLock = [&] {
    if (!QSqlDatabase::contains(lockName)) return true;
    bool committed = false;
    {
      QSqlDatabase lock = QSqlDatabase::database(lockName, false);
      committed = QSqlQuery(lock).exec(QStringLiteral("COMMIT"));
      lock.close();
    }
    QSqlDatabase::removeDatabase(lockName);
    return committed;
  };
  auto releaseAtEnd = qScopeGuard([&] { releaseLock(); });
  controller.history()->renameConversation(id, QStringLiteral("After"));
  QCOMPARE(controller.errors()->unsavedCount(), 1);

  QSignalSpy quit(&engine, &QQmlEngine::quit);
  QTest::keyClick(window, Qt::Key_Q, Qt::ControlModifier);
  QTRY_VERIFY(dialog->property("opened").toBool());
  QCOMPARE(quit.size(), 0);
  QVERIFY(QMetaObject::invokeMethod(dialog, "reject"));  // Keep PagedChat open
  QTRY_VERIFY(!dialog->property("visible").toBool());
  QVERIFY(window->isVisible());
  window->close();  // the window's own close button asks the same way
  QTRY_VERIFY(dialog->property("opened").toBool());
  QVERIFY(window->isVisible());
  QVERIFY(QMetaObject::invokeMethod(dialog, "reject"));
  QTRY_VERIFY(!dialog->property("visible").toBool());

  QVERIFY(releaseLock());
  QTRY_COMPARE_WITH_TIMEOUT(controller.errors()->unsavedCount(), 0, 5 * StoreHealth::kRetryIntervalMs);
  QCOMPARE(controller.store()->conversation(id).title, QStringLiteral("After"));
  QTest::keyClick(window, Qt::Key_Q, Qt::ControlModifier);
  QCOMPARE(quit.size(), 1);  // nothing waits: no question
  QVERIFY(!dialog->property("visible").toBool());
}

void TestGui::errorWindow() {
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadErrorWindow(engine, QStringLiteral("PagedChat could not open its chat data."),
                                         QStringLiteral("ChatStore: the database is corrupt (database: /x)"));
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QVERIFY(waitForFrame(window));
  APPTEST_VERIFY_NO_WARNINGS();
  QCOMPARE(findItem(window->contentItem(), QStringLiteral("errorHeadline"))->property("text").toString(),
           QStringLiteral("PagedChat could not open its chat data."));
  QCOMPARE(findItem(window->contentItem(), QStringLiteral("errorDetails"))->property("text").toString(),
           QStringLiteral("ChatStore: the database is corrupt (database: /x)"));
  QVERIFY(!findItem(window->contentItem(), QStringLiteral("tryAgainButton"))->isVisible());  // not retryable
  QSignalSpy quit(&engine, &QQmlEngine::quit);
  QVERIFY(QMetaObject::invokeMethod(findItem(window->contentItem(), QStringLiteral("quitButton")), "clicked"));
  QCOMPARE(quit.size(), 1);

  // A problem that may pass (a lock): Try again ends the window's event loop with the code
  // main.cpp starts again on.
  QQmlApplicationEngine retryEngine;
  QQuickWindow* retryWindow = loadErrorWindow(
      retryEngine, QStringLiteral("PagedChat could not open its chat data."),
      QStringLiteral("The chat history could not be read: another program is using the chat history "
                     "file."),
      /*retryable=*/true);
  QVERIFY(retryWindow);
  QVERIFY(QTest::qWaitForWindowExposed(retryWindow));
  QQuickItem* tryAgain = findItem(retryWindow->contentItem(), QStringLiteral("tryAgainButton"));
  QVERIFY(tryAgain && tryAgain->isVisible());
  QSignalSpy exit(&retryEngine, &QQmlEngine::exit);
  QVERIFY(QMetaObject::invokeMethod(tryAgain, "clicked"));
  QCOMPARE(exit.size(), 1);
  QCOMPARE(exit.constFirst().constFirst().toInt(), kErrorWindowRetryExitCode);
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestGui::closingPanesWithMessages() {
  // Panes showing messages (prose and a code block) closed with their close buttons, a middle one
  // and then the last: each pane, its messages and its input go with their session without a
  // warning (C++ deletes the session while the Repeater still holds the pane for a moment; a
  // binding then reading the deleted session would print one).
  QTemporaryDir dir;
  qint64 ids[3] = {};
  {
    ChatStore store(dir.path());
    for (qint64& id : ids) {
      id = store.createConversation(QStringLiteral("Code"));
      store.addMessage(id, MessageRole::kUser, QStringLiteral("Show *code*"));
      store.addMessage(id, MessageRole::kAssistant, QStringLiteral("Here:\n```cpp\nint x;\n```\n"),
                       FinishReason::kStop);
    }
  }
  AppController controller(apptest::optionsFor(dir.path()));
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  PaneListModel* panes = controller.panes();
  for (const qint64 id : ids) {
    if (id == panes->paneAt(0)->conversationId()) continue;  // the first pane may show one
    if (panes->count() == 3) break;
    QVERIFY(panes->addPane());  // the new pane is current: the conversation opens in it
    controller.history()->openConversation(id);
    QCOMPARE(panes->paneAt(panes->count() - 1)->conversationId(), id);
  }
  QCOMPARE(panes->count(), 3);
  QVERIFY(waitForFrame(window));
  const qsizetype codeBlocks = findVisibleItems(window->contentItem(), QStringLiteral("copyCodeButton")).size();
  QVERIFY(codeBlocks >= 2);  // one in each new pane (and one in the first pane when it shows one)

  for (int closed = 1; closed <= 2; ++closed) {  // pane 2 of 3, then the last of 2: both "chatPane1"
    QQuickItem* pane = findItem(window->contentItem(), QStringLiteral("chatPane1"));
    QVERIFY(pane);
    QVERIFY(apptest::click(window, findItem(pane, QStringLiteral("closePaneButton"))));
    QTRY_COMPARE(panes->count(), 3 - closed);
    QVERIFY(waitForFrame(window));
  }
  QVERIFY(!findItem(window->contentItem(), QStringLiteral("chatPane1")));
  QCOMPARE(findVisibleItems(window->contentItem(), QStringLiteral("copyCodeButton")).size(), codeBlocks - 2);
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestGui::twoPanesStreamAtOnce() {
  // Two panes, "Send to all panes" ticked in the window, one prompt typed once and sent with
  // Enter: both panes stream at once (both busy, the engine running two requests) and each
  // message model ends with the prompt and its own reply, rendered in its own list.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));
  controller.start();
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  QVERIFY(controller.panes()->addPane());
  QTRY_VERIFY(findItem(window->contentItem(), QStringLiteral("chatPane1")));
  PaneState* first = controller.panes()->paneAt(0);
  PaneState* second = controller.panes()->paneAt(1);
  first->setMaxTokens(200);
  second->setMaxTokens(200);
  QVERIFY(second->settings()->apply({{QStringLiteral("temperature"), QStringLiteral("0")}}).isEmpty());

  QQuickItem* pane0 = findItem(window->contentItem(), QStringLiteral("chatPane0"));
  QQuickItem* toggle = findItem(pane0, QStringLiteral("sendToAllToggle"));
  QVERIFY(toggle && toggle->isVisible());
  QVERIFY(QMetaObject::invokeMethod(toggle, "toggle"));
  QVERIFY(QMetaObject::invokeMethod(toggle, "toggled"));
  QVERIFY(controller.panes()->sendToAllEnabled());
  QQuickItem* input = findItem(pane0, QStringLiteral("inputArea"));
  QVERIFY(input);
  input->forceActiveFocus();
  for (QChar c : QStringLiteral("Lily and Tom")) QTest::keyClick(window, c.toLatin1());
  QCOMPARE(first->inputText(), QStringLiteral("Lily and Tom"));
  // Both panes generating at the same moment (their requests go to the engine together).
  bool bothBusy = false;
  const QMetaObject::Connection busyConnection = QObject::connect(
      second, &PaneState::busyChanged, this, [&] { bothBusy = bothBusy || (first->isBusy() && second->isBusy()); });
  QTest::keyClick(window, Qt::Key_Return);
  // Sent to both at once (the engine may already be done: stories260K is fast).
  QCOMPARE(first->messages()->rowCount(), 2);
  QCOMPARE(second->messages()->rowCount(), 2);
  QCOMPARE(first->inputText(), QString());
  QTRY_VERIFY_WITH_TIMEOUT(!first->isBusy() && !second->isBusy(), 60000);
  QObject::disconnect(busyConnection);
  QVERIFY(bothBusy);

  for (PaneState* s : {first, second}) {
    QCOMPARE(s->errorText(), QString());
    MessageListModel* m = s->messages();
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(m->textAt(0), QStringLiteral("Lily and Tom"));
    QCOMPARE(m->roleAt(1), QStringLiteral("assistant"));
    QVERIFY(!m->textAt(1).trimmed().isEmpty());
    QVERIFY(s->contextUsed() > 0 && s->contextUsed() <= s->contextLimit());
  }
  QVERIFY(first->conversationId() != second->conversationId());
  // Each list shows its own reply.
  for (int pane = 0; pane < 2; ++pane) {
    auto* list = findItem(window->contentItem(), QStringLiteral("messageList%1").arg(pane + 1));
    QVERIFY(list);
    QTRY_COMPARE(list->property("count").toInt(), 2);
  }

  // Esc stops the reply in flight — every pane's, while sending to all.
  first->setMaxTokens(400);
  second->setMaxTokens(400);
  QSignalSpy finishedFirst(first, &PaneState::replyFinished);
  QSignalSpy finishedSecond(second, &PaneState::replyFinished);
  {
    // The worker waits at a gate until Esc has been pressed, so neither reply can finish first
    // (stories260K is fast enough to finish both on a loaded machine before the key arrives).
    apptest::WorkerGate gate(controller.engine()->worker());
    QCOMPARE(controller.panes()->sendToAll(QStringLiteral("Once upon a time")), 2);
    QVERIFY(controller.panes()->anyBusy());
    QTest::keyClick(window, Qt::Key_Escape);
  }
  QTRY_VERIFY_WITH_TIMEOUT(!controller.panes()->anyBusy(), 30000);
  QCOMPARE(finishedFirst.size(), 1);
  QCOMPARE(finishedSecond.size(), 1);
  QCOMPARE(finishedFirst.at(0).at(0).value<FinishReason>(), FinishReason::kAbort);
  QCOMPARE(finishedSecond.at(0).at(0).value<FinishReason>(), FinishReason::kAbort);
  APPTEST_VERIFY_NO_WARNINGS();
}

QTEST_MAIN(TestGui)
#include "test_gui.moc"
