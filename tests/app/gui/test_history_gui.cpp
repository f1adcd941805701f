// The history features through AppController and the real window (offscreen, no model needed):
// delete with undo (and for good after the undo time, or on the next start), rename and pin,
// export / import through files (bad files give an error and import nothing), search and
// opening a result; the window shows date sections, Ctrl+F opens the search panel, and no QML
// warning is printed on the way.
#include <sys/stat.h>

#include <QClipboard>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlApplicationEngine>
#include <QQmlComponent>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <memory>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/controllers/conversation_list_model.h"
#include "app/main_window.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "gui_test_util.h"

using apptest::findItem;
using apptest::findVisibleItem;
using apptest::optionsFor;
using apptest::waitForFrame;
using pagedchat::FinishReason;

namespace {
/// A conversation as ChatStore::exportJson() writes it (format pagedchat-conversation 1), dated
/// `createdAt` (ISO 8601) and last active at `updatedAt`.
QByteArray exportedConversation(const QString& title, const QString& createdAt, const QString& updatedAt,
                                const QJsonArray& messages, bool pinned = false) {
  const QJsonObject root{{"format", "pagedchat-conversation"},
                         {"version", 1},
                         {"title", title},
                         {"pinned", pinned},
                         {"createdAt", createdAt},
                         {"updatedAt", updatedAt},
                         {"messages", messages}};
  return QJsonDocument(root).toJson();
}
}  // namespace

class TestHistoryGui : public QObject {
  Q_OBJECT

 private slots:
  // A QML engine destroyed at the end of the previous test may warn about delegates it was still
  // creating; each test counts only its own warnings.
  void init() { apptest::warnings().clear(); }
  void initTestCase() { apptest::installWarningCollector(); }
  void cleanupTestCase() { apptest::removeWarningCollector(); }
  void deleteUndoRenamePin();
  void exportImportFiles();
  void searchOpensMessage();
  void windowSectionsAndSearchPanel();
  void listLoadsPagesWhileScrolling();
  void severalPendingDeletes();
  void undoKeepsTheCurrentPane();
  void replySavedMovesToToday();
  void sectionHeadingsFollowTheList();
  void fileDialogsOpen();
  void titlesArePlainText();
  void copyTakesTheShownText();
  void restoredPaneAndSearchJumpInTheWindow();
};

void TestHistoryGui::deleteUndoRenamePin() {
  QTemporaryDir dir;
  qint64 a = 0, b = 0;
  {
    AppController controller(optionsFor(dir));
    ChatStore* store = controller.store();
    a = store->createConversation(QStringLiteral("Alpha"));
    store->addMessage(a, MessageRole::kUser, QStringLiteral("hello"));
    b = store->createConversation(QStringLiteral("Beta"));
    controller.conversations()->reload();
    controller.history()->openConversation(a);
    QCOMPARE(controller.history()->currentConversationId(), a);

    // Hidden at once, restorable with its messages.
    QSignalSpy undoChanged(controller.history(), &HistoryController::undoDeleteChanged);
    controller.history()->deleteConversation(a);
    QCOMPARE(controller.conversations()->rowCount(), 1);
    QCOMPARE(controller.history()->currentConversationId(), 0);
    QCOMPARE(controller.history()->undoDeleteTitle(), QStringLiteral("Alpha"));
    QVERIFY(undoChanged.size() >= 1);
    controller.history()->undoDelete();
    QCOMPARE(controller.history()->undoDeleteTitle(), QString());
    QCOMPARE(controller.conversations()->rowCount(), 2);
    QCOMPARE(controller.history()->currentConversationId(), a);
    QCOMPARE(store->messages(a).size(), 1);

    // Rename and pin.
    controller.history()->renameConversation(a, QStringLiteral("  Alpha   renamed "));
    QCOMPARE(store->conversation(a).title, QStringLiteral("Alpha renamed"));
    QCOMPARE(controller.panes()->paneAt(0)->title(), QStringLiteral("Alpha renamed"));
    controller.history()->renameConversation(a, QStringLiteral("   "));  // ignored
    QCOMPARE(store->conversation(a).title, QStringLiteral("Alpha renamed"));
    QCOMPARE(controller.conversations()->idAt(0), b);  // the newest
    controller.history()->setPinned(a, true);
    QCOMPARE(controller.conversations()->idAt(0), a);
    controller.history()->setPinned(a, false);
    QCOMPARE(controller.conversations()->idAt(0), b);

    // After the undo time the deletion is final.
    controller.history()->setUndoTimeout(50);
    controller.history()->deleteConversation(a);
    QTRY_COMPARE(controller.history()->undoDeleteTitle(), QString());
    QVERIFY_THROWS_EXCEPTION(StoreError, store->conversation(a));
    // A deletion still undoable when the app quits is final on the next start.
    controller.history()->setUndoTimeout(60000);
    controller.history()->deleteConversation(b);
    QCOMPARE(controller.history()->undoDeleteTitle(), QStringLiteral("Beta"));
  }
  AppController again(optionsFor(dir));
  QCOMPARE(again.conversations()->rowCount(), 0);
  QVERIFY_THROWS_EXCEPTION(StoreError, again.store()->conversation(b));
}

void TestHistoryGui::exportImportFiles() {
  QTemporaryDir dir;
  AppController controller(optionsFor(dir));
  ChatStore* store = controller.store();
  const qint64 id = store->createConversation(QStringLiteral("Export me"));
  store->addMessage(id, MessageRole::kUser, QStringLiteral("질문"));
  store->addMessage(id, MessageRole::kAssistant, QStringLiteral("answer"), FinishReason::kStop);
  controller.conversations()->reload();

  const QString md = dir.filePath(QStringLiteral("out.md"));
  const QString json = dir.filePath(QStringLiteral("out.json"));
  QVERIFY(controller.history()->exportConversation(id, QUrl::fromLocalFile(md), QStringLiteral("markdown")));
  QVERIFY(controller.history()->exportConversation(id, QUrl::fromLocalFile(json), QStringLiteral("json")));
  QFile mdFile(md);
  QVERIFY(mdFile.open(QIODevice::ReadOnly));
  QVERIFY(QString::fromUtf8(mdFile.readAll()).contains(QStringLiteral("질문")));
  QVERIFY(!controller.history()->exportConversation(
      id, QUrl::fromLocalFile(dir.filePath(QStringLiteral("no/such/dir/x.md"))), QStringLiteral("markdown")));
  QVERIFY(controller.errors()->text().contains(QStringLiteral("Cannot write")));
  QVERIFY(controller.errors()->text().contains(QStringLiteral("does not exist")));
  // An absolute path typed into the save dialog's name field comes back appended to its folder.
  QTemporaryDir other;
  const QString typed = other.filePath(QStringLiteral("lt.json"));
  QVERIFY(controller.history()->exportConversation(
      id, QUrl(QStringLiteral("file:///root/Documents/") + QUrl::fromLocalFile(typed).path()), QStringLiteral("json")));
  QVERIFY2(QFileInfo::exists(typed), qPrintable(controller.errors()->text()));
  QCOMPARE(HistoryController::localPathOf(QUrl(QStringLiteral("file:///home/me/Documents//tmp/pcexp/lt.json"))),
           QStringLiteral("/tmp/pcexp/lt.json"));
  QCOMPARE(HistoryController::localPathOf(QUrl::fromLocalFile(QStringLiteral("/tmp/a/./b.md"))),
           QStringLiteral("/tmp/a/b.md"));
  QVERIFY(QFileInfo(controller.history()->documentsFolder().toLocalFile()).isDir());

  const qint64 imported = controller.history()->importConversation(QUrl::fromLocalFile(json));
  QVERIFY(imported != 0 && imported != id);
  QCOMPARE(controller.errors()->text(), QString());
  QCOMPARE(controller.history()->currentConversationId(), imported);
  QCOMPARE(controller.panes()->paneAt(0)->messages()->rowCount(), 2);
  QCOMPARE(controller.conversations()->rowCount(), 2);

  const QString bad = dir.filePath(QStringLiteral("bad.json"));
  QFile f(bad);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("{\"format\": \"something-else\", \"version\": 1}");
  f.close();
  QCOMPARE(controller.history()->importConversation(QUrl::fromLocalFile(bad)), 0);
  QVERIFY2(controller.errors()->text().contains(QStringLiteral("not a PagedChat conversation")),
           qPrintable(controller.errors()->text()));
  QCOMPARE(controller.history()->importConversation(QUrl::fromLocalFile(dir.filePath(QStringLiteral("missing.json")))),
           0);
  QVERIFY(controller.errors()->text().contains(QStringLiteral("Cannot import")));
  QCOMPARE(store->conversationCount(), 2);

  // Special files: a device that never ends, a FIFO no one writes (opening it would block), a
  // folder. Each is refused at once, without reading, and the window stays responsive.
  const QString fifo = dir.filePath(QStringLiteral("pipe.json"));
  QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
  for (const QString& special : {QStringLiteral("/dev/zero"), fifo, dir.path()}) {
    QCOMPARE(controller.history()->importConversation(QUrl::fromLocalFile(special)), 0);
    QVERIFY2(controller.errors()->text().contains(QStringLiteral("not a regular file")),
             qPrintable(controller.errors()->text()));
  }
  QCOMPARE(store->conversationCount(), 2);
}

void TestHistoryGui::searchOpensMessage() {
  QTemporaryDir dir;
  AppController controller(optionsFor(dir));
  ChatStore* store = controller.store();
  const qint64 c = store->createConversation(QStringLiteral("Fruit"));
  const qint64 u = store->addMessage(c, MessageRole::kUser, QStringLiteral("tell me about apples"));
  const qint64 first = store->addMessage(c, MessageRole::kAssistant, QStringLiteral("Apples are red"));
  store->addMessage(c, MessageRole::kAssistant, QStringLiteral("Pears are green"), std::nullopt, u);  // shown
  store->createConversation(QStringLiteral("Other"));
  controller.conversations()->reload();

  const QVariantList hits = controller.history()->search(QStringLiteral("apples red"));
  QCOMPARE(hits.size(), 1);
  const QVariantMap hit = hits.at(0).toMap();
  QCOMPARE(hit.value(QStringLiteral("messageId")).toLongLong(), first);
  QCOMPARE(hit.value(QStringLiteral("title")).toString(), QStringLiteral("Fruit"));
  QVERIFY(hit.value(QStringLiteral("snippet")).toString().contains(QStringLiteral("<b>Apples</b>")));
  QCOMPARE(controller.history()->search(QStringLiteral("\"")).size(), 0);

  PaneState* session = controller.panes()->paneAt(0);
  QSignalSpy shown(session, &PaneState::messageShown);
  controller.history()->openSearchResult(c, first);
  QCOMPARE(session->conversationId(), c);
  QCOMPARE(shown.size(), 1);
  QCOMPARE(session->messages()->textAt(1), QStringLiteral("Apples are red"));  // its branch
}

void TestHistoryGui::windowSectionsAndSearchPanel() {
  QTemporaryDir dir;
  {
    ChatStore store(dir.path());
    const qint64 p = store.createConversation(QStringLiteral("Pinned one"));
    store.setPinned(p, true);
    const qint64 c = store.createConversation(QStringLiteral("Today one"));
    const qint64 u = store.addMessage(c, MessageRole::kUser, QStringLiteral("find the walrus"));
    store.addMessage(c, MessageRole::kAssistant, QStringLiteral("a walrus"), FinishReason::kLength);
    store.addMessage(c, MessageRole::kAssistant, QStringLiteral("another walrus"), FinishReason::kStop, u);
  }
  AppController controller(optionsFor(dir));
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QVERIFY(waitForFrame(window));

  const qint64 today = controller.conversations()->idAt(1);  // after the pinned one
  controller.history()->openConversation(today);
  auto* list = findItem(window->contentItem(), QStringLiteral("conversationListView"));
  QVERIFY(list);
  QCOMPARE(list->property("count").toInt(), 2);
  // The branch switcher of the regenerated answer: "2/2".
  QQuickItem* label = nullptr;
  QTRY_VERIFY((label = findVisibleItem(window->contentItem(), QStringLiteral("branchLabel"))));
  QCOMPARE(label->property("text").toString(), QStringLiteral("2/2"));
  // Screenshots for a look (in the test's working folder, i.e. the build tree).
  window->grabWindow().save(QStringLiteral("history-sidebar.png"));

  // Ctrl+F opens the search panel with the focus in its field (showing the sidebar if it was
  // hidden); typing finds the message.
  window->setProperty("sidebarOpen", false);
  auto* sidebar = findItem(window->contentItem(), QStringLiteral("conversationList"));
  QTRY_VERIFY(!sidebar->isVisible());
  QTest::keyClick(window, Qt::Key_F, Qt::ControlModifier);
  QTRY_VERIFY(sidebar->isVisible());
  auto* panel = findItem(window->contentItem(), QStringLiteral("searchPanel"));
  QVERIFY(panel);
  QTRY_VERIFY(panel->isVisible());
  auto* field = findItem(window->contentItem(), QStringLiteral("searchField"));
  QTRY_VERIFY(field->hasActiveFocus());
  for (const char c : {'w', 'a', 'l', 'r'}) QTest::keyClick(window, c);
  auto* results = findItem(window->contentItem(), QStringLiteral("searchResults"));
  QTRY_COMPARE(results->property("count").toInt(), 3);
  QVERIFY(waitForFrame(window));
  window->grabWindow().save(QStringLiteral("history-search.png"));
  // Clicking the hit on the other branch ("a walrus", 1/2) shows that branch, scrolled to and
  // highlighting the message.
  QQuickItem* hitItem = nullptr;
  auto* content = results->property("contentItem").value<QQuickItem*>();
  for (QQuickItem* child : content->childItems())
    if (child->property("index").toInt() == 1 && child->isVisible()) hitItem = child;
  QVERIFY(hitItem);
  QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier,
                    hitItem->mapToScene(QPointF(hitItem->width() / 2, hitItem->height() / 2)).toPoint());
  PaneState* session = controller.panes()->paneAt(0);
  QTRY_COMPARE(session->messages()->textAt(1), QStringLiteral("a walrus"));
  auto* messages = findItem(window->contentItem(), QStringLiteral("messageList1"));
  QVERIFY(messages);
  QTRY_COMPARE(messages->property("highlightedRow").toInt(), 1);
  QVERIFY(waitForFrame(window));
  window->grabWindow().save(QStringLiteral("history-search-opened.png"));

  field->forceActiveFocus();
  QTest::keyClick(window, Qt::Key_Escape);
  QTRY_VERIFY(!panel->isVisible());

  // Delete shows the undo banner; Undo brings the row back.
  controller.history()->deleteConversation(controller.conversations()->idAt(1));
  auto* banner = findItem(window->contentItem(), QStringLiteral("undoDeleteBanner"));
  QTRY_VERIFY(banner->isVisible());
  QCOMPARE(list->property("count").toInt(), 1);
  controller.history()->undoDelete();
  QTRY_VERIFY(!banner->isVisible());
  QCOMPARE(list->property("count").toInt(), 2);

  QVERIFY(waitForFrame(window));
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHistoryGui::listLoadsPagesWhileScrolling() {
  QTemporaryDir dir;
  {
    ChatStore store(dir.path());
    for (int i = 0; i < 250; ++i) store.createConversation(QStringLiteral("Chat %1").arg(i));
  }
  AppController controller(optionsFor(dir));
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  auto* list = findItem(window->contentItem(), QStringLiteral("conversationListView"));
  QVERIFY(list);
  QVERIFY(list->property("count").toInt() < 250);  // a page or two, not all
  // Scrolling to the end makes the view ask for the next page, and again.
  QTRY_VERIFY((QMetaObject::invokeMethod(list, "positionViewAtEnd"), list->property("count").toInt() == 250));
  QCOMPARE(controller.conversations()->totalCount(), 250);
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHistoryGui::severalPendingDeletes() {
  // Two quick deletions: both stay undoable (the first is not deleted for good by the second);
  // Undo brings back the most recent; the rest is purged on the next start.
  QTemporaryDir dir;
  qint64 a = 0, b = 0, c = 0;
  {
    AppController controller(optionsFor(dir));
    ChatStore* store = controller.store();
    a = store->createConversation(QStringLiteral("A"));
    store->addMessage(a, MessageRole::kUser, QStringLiteral("keep a"));
    b = store->createConversation(QStringLiteral("B"));
    c = store->createConversation(QStringLiteral("C"));
    controller.conversations()->reload();
    controller.history()->deleteConversation(a);
    controller.history()->deleteConversation(b);
    controller.history()->deleteConversation(b);  // a second click on the same row changes nothing
    QCOMPARE(controller.history()->undoDeleteCount(), 2);
    QCOMPARE(controller.history()->undoDeleteTitle(), QStringLiteral("B"));
    QCOMPARE(controller.conversations()->rowCount(), 1);
    QVERIFY(store->conversation(a).deletedAt.isValid());  // hidden, not gone
    QCOMPARE(store->messages(a).size(), 1);
    controller.history()->undoDelete();
    QCOMPARE(controller.history()->undoDeleteCount(), 1);
    QCOMPARE(controller.history()->undoDeleteTitle(), QStringLiteral("A"));
    QVERIFY(!store->conversation(b).deletedAt.isValid());
    controller.history()->undoDelete();  // the earlier one is still undoable
    QCOMPARE(controller.history()->undoDeleteCount(), 0);
    QCOMPARE(controller.history()->undoDeleteTitle(), QString());
    QCOMPARE(store->messages(a).size(), 1);
    QCOMPARE(controller.conversations()->rowCount(), 3);

    // Each pending deletion has its own undo time.
    controller.history()->setUndoTimeout(60000);
    controller.history()->deleteConversation(c);
    controller.history()->setUndoTimeout(30);
    controller.history()->deleteConversation(b);
    QTRY_COMPARE(controller.history()->undoDeleteCount(), 1);
    QVERIFY_THROWS_EXCEPTION(StoreError, store->conversation(b));
    QCOMPARE(controller.history()->undoDeleteTitle(), QStringLiteral("C"));
    QVERIFY(store->conversation(c).deletedAt.isValid());
    controller.history()->setUndoTimeout(60000);
    controller.history()->deleteConversation(a);
    QCOMPARE(controller.history()->undoDeleteCount(), 2);
  }
  // Quitting with two pending: both gone at the next start.
  AppController again(optionsFor(dir));
  QCOMPARE(again.conversations()->rowCount(), 0);
  QVERIFY_THROWS_EXCEPTION(StoreError, again.store()->conversation(a));
  QVERIFY_THROWS_EXCEPTION(StoreError, again.store()->conversation(c));
}

void TestHistoryGui::undoKeepsTheCurrentPane() {
  QTemporaryDir dir;
  AppController controller(optionsFor(dir));
  ChatStore* store = controller.store();
  const qint64 a = store->createConversation(QStringLiteral("Shown"));
  const qint64 b = store->createConversation(QStringLiteral("Deleted"));
  controller.conversations()->reload();
  controller.history()->openConversation(a);
  QCOMPARE(controller.history()->currentConversationId(), a);
  controller.history()->deleteConversation(b);  // not shown anywhere
  controller.history()->undoDelete();
  QCOMPARE(controller.history()->currentConversationId(), a);  // the pane still shows what it showed
  QVERIFY(controller.conversations()->rowOf(b) >= 0);          // back in the list
  // An empty current pane shows the restored conversation.
  controller.history()->deleteConversation(a);
  QCOMPARE(controller.history()->currentConversationId(), 0);
  controller.history()->undoDelete();
  QCOMPARE(controller.history()->currentConversationId(), a);
}

void TestHistoryGui::replySavedMovesToToday() {
  // Continuing (or regenerating) an answer in an old conversation moves it under "Today".
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController controller(optionsFor(dir));
  auto oldConversation = [&](const QString& title, const QString& finish) {
    QJsonArray messages{
        QJsonObject{
            {"id", 1}, {"role", "user"}, {"text", "Once upon a time"}, {"createdAt", "2024-01-01T10:00:00.000Z"}},
        QJsonObject{{"id", 2},
                    {"parentId", 1},
                    {"role", "assistant"},
                    {"text", "there was a"},
                    {"finishReason", finish},
                    {"createdAt", "2024-01-01T10:00:01.000Z"}}};
    return controller.store()->importJson(
        exportedConversation(title, "2024-01-01T10:00:00.000Z", "2024-01-01T10:00:01.000Z", messages));
  };
  const qint64 cont = oldConversation(QStringLiteral("Continue me"), QStringLiteral("length"));
  const qint64 regen = oldConversation(QStringLiteral("Regenerate me"), QStringLiteral("stop"));
  ConversationListModel* list = controller.conversations();
  list->reload();
  auto sectionOf = [&](qint64 id) {
    const int row = list->rowOf(id);
    return row < 0 ? QString() : list->data(list->index(row), ConversationListModel::SectionRole).toString();
  };
  const QString older = ConversationListModel::groupTitle(ConversationListModel::Group::Older);
  const QString today = ConversationListModel::groupTitle(ConversationListModel::Group::Today);
  QCOMPARE(sectionOf(cont), older);
  QCOMPARE(sectionOf(regen), older);

  controller.start();
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  PaneState* session = controller.panes()->currentPane();
  session->setMaxTokens(4);
  controller.history()->openConversation(cont);
  QVERIFY(session->continueReply());
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), 30000);
  QCOMPARE(sectionOf(cont), today);
  QCOMPARE(list->idAt(0), cont);  // newest first

  controller.history()->openConversation(regen);
  QVERIFY(session->regenerate());
  QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), 30000);
  QCOMPARE(sectionOf(regen), today);
  QCOMPARE(list->idAt(0), regen);
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHistoryGui::sectionHeadingsFollowTheList() {
  // Each row of the sidebar sits under the heading of its group (Pinned, Today, ..., Older), also
  // after rows came, went and moved between groups while the window is open.
  QTemporaryDir dir;
  {
    ChatStore store(dir.path());
    store.createConversation(QStringLiteral("Today one"));
  }
  AppController controller(optionsFor(dir));
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  auto* list = findItem(window->contentItem(), QStringLiteral("conversationListView"));
  QVERIFY(list);
  ConversationListModel* model = controller.conversations();
  // The heading above each shown row, as drawn, against the row's group in the model.
  auto mismatches = [&] {
    QList<QPair<qreal, QString>> headings;
    QList<QPair<qreal, qint64>> rows;
    auto* content = list->property("contentItem").value<QQuickItem*>();
    for (QQuickItem* child : content->childItems()) {
      if (!child->isVisible()) continue;
      if (child->objectName() == QLatin1String("sectionHeading"))
        headings.append({child->y(), child->property("text").toString()});
      else if (child->property("conversationId").isValid())
        rows.append({child->y(), static_cast<qint64>(child->property("conversationId").toDouble())});
    }
    QStringList bad;
    for (const auto& [y, id] : rows) {
      QString above;
      qreal best = -1e9;
      for (const auto& [hy, text] : headings)
        if (hy <= y && hy > best) {
          best = hy;
          above = text;
        }
      const QString want = model->data(model->index(model->rowOf(id)), ConversationListModel::SectionRole).toString();
      if (above != want) bad << QStringLiteral("%1 under \"%2\", not \"%3\"").arg(id).arg(above, want);
    }
    if (rows.size() != model->rowCount()) bad << QStringLiteral("%1 rows shown").arg(rows.size());
    return bad.join(QLatin1String("; "));
  };
  QTRY_COMPARE(mismatches(), QString());
  auto importOld = [&](const QString& title, int daysAgo, bool pinned) {
    const QString stamp = QDateTime::currentDateTimeUtc().addDays(-daysAgo).toString(Qt::ISODateWithMs);
    const QJsonArray messages{QJsonObject{{"id", 1}, {"role", "user"}, {"text", title}, {"createdAt", stamp}}};
    const QString file = dir.filePath(title + QStringLiteral(".json"));
    QFile f(file);
    if (!f.open(QIODevice::WriteOnly)) return qint64(0);
    f.write(exportedConversation(title, stamp, stamp, messages, pinned));
    f.close();
    return controller.history()->importConversation(QUrl::fromLocalFile(file));
  };
  QVERIFY(importOld(QStringLiteral("Yesterday one"), 1, false));
  QTRY_COMPARE(mismatches(), QString());
  const qint64 pinned = importOld(QStringLiteral("Pinned old one"), 30, true);
  QVERIFY(pinned);
  QTRY_COMPARE(mismatches(), QString());
  QVERIFY(importOld(QStringLiteral("Last week"), 4, false));
  QTRY_COMPARE(mismatches(), QString());
  QVERIFY(importOld(QStringLiteral("Long ago"), 40, false));
  QTRY_COMPARE(mismatches(), QString());
  controller.history()->setPinned(pinned, false);
  QTRY_COMPARE(mismatches(), QString());
  controller.history()->deleteConversation(model->idAt(0));
  QTRY_COMPARE(mismatches(), QString());
  // A language switch renames the headings.
  controller.appearance()->setLanguage(QStringLiteral("ko"));
  QTRY_COMPARE(mismatches(), QString());
  controller.appearance()->setLanguage(QStringLiteral("en"));
  QTRY_COMPARE(mismatches(), QString());
}

void TestHistoryGui::fileDialogsOpen() {
  // The export / import dialogs (QtQuick.Dialogs FileDialog, the non-native one under the
  // offscreen platform) load and show; one that cannot be shown is reported in the banner.
  QTemporaryDir dir;
  AppController controller(optionsFor(dir));
  const qint64 id = controller.store()->createConversation(QStringLiteral("Dialog test"));
  controller.conversations()->reload();
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  QQuickItem* sidebar = findItem(window->contentItem(), QStringLiteral("conversationList"));
  QVERIFY(sidebar);
  QObject* importDialog = window->findChild<QObject*>(QStringLiteral("importDialog"));
  QObject* exportDialog = window->findChild<QObject*>(QStringLiteral("exportDialog"));
  QVERIFY(importDialog);
  QVERIFY(exportDialog);

  QVERIFY(QMetaObject::invokeMethod(sidebar, "openImport"));
  QTRY_VERIFY(importDialog->property("visible").toBool());
  QCOMPARE(controller.errors()->text(), QString());
  QVERIFY(waitForFrame(window));
  window->grabWindow().save(QStringLiteral("history-import-dialog.png"));
  QVERIFY(QMetaObject::invokeMethod(importDialog, "reject"));
  QTRY_VERIFY(!importDialog->property("visible").toBool());

  exportDialog->setProperty("conversationId", static_cast<double>(id));
  QVERIFY(QMetaObject::invokeMethod(sidebar, "openDialog", Q_ARG(QVariant, QVariant::fromValue(exportDialog))));
  QTRY_VERIFY(exportDialog->property("visible").toBool());
  QCOMPARE(controller.errors()->text(), QString());
  QCOMPARE(exportDialog->property("fileMode").toInt(), 2);  // FileDialog.SaveFile
  QCOMPARE(exportDialog->property("acceptLabel").toString(), QStringLiteral("Save"));
  QCOMPARE(importDialog->property("fileMode").toInt(), 0);  // FileDialog.OpenFile
  QCOMPARE(importDialog->property("currentFolder").toUrl(), controller.history()->documentsFolder());
  QCOMPARE(importDialog->property("nameFilters").toStringList().value(0), QStringLiteral("JSON files (*.json)"));
  QVERIFY(QMetaObject::invokeMethod(exportDialog, "reject"));
  QTRY_VERIFY(!exportDialog->property("visible").toBool());
  APPTEST_VERIFY_NO_WARNINGS();

  // A dialog whose open() shows nothing (as when its implementation fails to load): the user is told.
  QQmlComponent broken(&engine);
  broken.setData("import QtQml\nQtObject { property bool visible: false; function open() {} }", QUrl());
  std::unique_ptr<QObject> fake(broken.create());
  QVERIFY2(fake, qPrintable(broken.errorString()));
  QVERIFY(QMetaObject::invokeMethod(sidebar, "openDialog", Q_ARG(QVariant, QVariant::fromValue(fake.get()))));
  QVERIFY2(controller.errors()->text().contains(QStringLiteral("file dialog could not be opened")),
           qPrintable(controller.errors()->text()));
  // The module the non-native dialog needs is missing: the dialog is not opened (Qt 6.4 would
  // crash in open()), and the banner says why.
  controller.errors()->clear();
  sidebar->setProperty("fileDialogModule", QStringLiteral("Qt.labs.nosuchmodule"));
  sidebar->setProperty("fileDialogModuleFound", -1);
  QVERIFY(QMetaObject::invokeMethod(sidebar, "openImport"));
  QVERIFY(!importDialog->property("visible").toBool());
  QVERIFY2(controller.errors()->text().contains(QStringLiteral("qml6-module-qt-labs-folderlistmodel")),
           qPrintable(controller.errors()->text()));
  QCOMPARE(sidebar->property("fileDialogModuleFound").toInt(), 0);
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHistoryGui::titlesArePlainText() {
  // Titles are shown as they are: markup in a title is text (no bold, no image fetched).
  const QString title = QStringLiteral("<b>Bold</b> <img src=\"http://127.0.0.1:9/x.png\"> &amp;");
  QTemporaryDir dir;
  qint64 id = 0;
  {
    ChatStore store(dir.path());
    id = store.createConversation(title);
    store.addMessage(id, MessageRole::kUser, QStringLiteral("marmalade"));
  }
  AppController controller(optionsFor(dir));
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  controller.history()->openConversation(id);
  const int plainText = 0;  // Text.PlainText
  auto checkLabel = [&](const QString& name, const QString& expected) {
    QQuickItem* label = nullptr;
    QTRY_VERIFY2((label = findVisibleItem(window->contentItem(), name)), qPrintable(name));
    QCOMPARE(label->property("textFormat").toInt(), plainText);
    QCOMPARE(label->property("text").toString(), expected);
  };
  checkLabel(QStringLiteral("conversationTitle"), title);
  if (QTest::currentTestFailed()) return;
  checkLabel(QStringLiteral("paneTitle"), title);
  if (QTest::currentTestFailed()) return;
  // The search result's title.
  QTest::keyClick(window, Qt::Key_F, Qt::ControlModifier);
  auto* field = findItem(window->contentItem(), QStringLiteral("searchField"));
  QTRY_VERIFY(field && field->hasActiveFocus());
  for (const char c : {'m', 'a', 'r', 'm'}) QTest::keyClick(window, c);
  checkLabel(QStringLiteral("searchResultTitle"), title);
  if (QTest::currentTestFailed()) return;
  QTest::keyClick(window, Qt::Key_Escape);
  // The undo banner.
  controller.history()->deleteConversation(id);
  QQuickItem* undo = nullptr;
  QTRY_VERIFY((undo = findVisibleItem(window->contentItem(), QStringLiteral("undoDeleteLabel"))));
  QCOMPARE(undo->property("textFormat").toInt(), plainText);
  QVERIFY2(undo->property("text").toString().contains(title), qPrintable(undo->property("text").toString()));
  // The error banner with a file name in it.
  controller.history()->importConversation(QUrl::fromLocalFile(dir.filePath(QStringLiteral("<i>missing</i>.json"))));
  QVERIFY(controller.errors()->text().contains(QStringLiteral("<i>missing</i>.json")));
  QQuickItem* banner = nullptr;
  QTRY_VERIFY((banner = findVisibleItem(window->contentItem(), QStringLiteral("errorBannerText"))));
  QCOMPARE(banner->property("textFormat").toInt(), plainText);
  QCOMPARE(banner->property("text").toString(), controller.errors()->text());
  APPTEST_VERIFY_NO_WARNINGS();
}

void TestHistoryGui::copyTakesTheShownText() {
  // A story model's answer often starts with a space (it continues the prompt); the window
  // shows it without, and Copy copies what is shown.
  QTemporaryDir dir;
  qint64 id = 0;
  {
    ChatStore store(dir.path());
    id = store.createConversation(QStringLiteral("Story"));
    store.addMessage(id, MessageRole::kUser, QStringLiteral("Once upon a time"));
    store.addMessage(id, MessageRole::kAssistant, QStringLiteral(" there was a cat"), FinishReason::kStop);
  }
  AppController controller(optionsFor(dir));
  apptest::warnings().clear();
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  controller.history()->openConversation(id);
  QList<QQuickItem*> buttons;
  std::function<void(QQuickItem*)> collect = [&](QQuickItem* item) {
    if (!item || !item->isVisible()) return;
    if (item->objectName() == QLatin1String("copyButton")) buttons << item;
    for (QQuickItem* child : item->childItems()) collect(child);
  };
  QQuickItem* copy = nullptr;
  QTRY_VERIFY([&] {
    buttons.clear();
    collect(window->contentItem());
    for (QQuickItem* b : buttons)
      for (QQuickItem* p = b->parentItem(); p; p = p->parentItem())
        if (p->property("role").toString() == QLatin1String("assistant") && p->property("row").isValid()) {
          copy = b;
          return true;
        }
    return false;
  }());
  QGuiApplication::clipboard()->clear();
  QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier,
                    copy->mapToScene(QPointF(copy->width() / 2, copy->height() / 2)).toPoint());
  QTRY_COMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("there was a cat"));
  APPTEST_VERIFY_NO_WARNINGS();
}

namespace {
/// True when `row`'s delegate exists in `list` and at least half of it (or of the view) is inside
/// the list's viewport.
bool rowVisible(QQuickItem* list, int row) {
  QQuickItem* item = nullptr;
  if (!QMetaObject::invokeMethod(list, "itemAtIndex", Q_RETURN_ARG(QQuickItem*, item), Q_ARG(int, row)) || !item)
    return false;
  const qreal top = item->mapToItem(list, QPointF(0, 0)).y();
  const qreal bottom = top + item->height();
  const qreal overlap = std::min(bottom, list->height()) - std::max(top, qreal(0));
  return overlap >= std::min(item->height(), list->height()) / 2;
}
}  // namespace

void TestHistoryGui::restoredPaneAndSearchJumpInTheWindow() {
  QTemporaryDir dir;
  qint64 c = 0;
  QList<qint64> ids;
  {
    ChatStore store(dir.path());
    c = store.createConversation(QStringLiteral("Long one"));
    qint64 parent = 0;
    for (int i = 0; i < 40; ++i) {
      QString text = QStringLiteral("Message %1. ").arg(i);
      for (int k = 0; k < (i % 5) * 6; ++k) text += QStringLiteral("Some longer filler text that wraps. ");
      if (i == 8 || i == 16) text += QStringLiteral("The magic word is here.");
      parent = store.addMessage(c, i % 2 ? MessageRole::kAssistant : MessageRole::kUser, text,
                                i % 2 ? std::optional(FinishReason::kStop) : std::nullopt, parent);
      ids.append(parent);
    }
  }
  AppController controller(optionsFor(dir));  // restores a pane with the newest conversation
  QCOMPARE(controller.history()->currentConversationId(), c);
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  QVERIFY(window);
  QVERIFY(QTest::qWaitForWindowExposed(window));
  auto* list = findItem(window->contentItem(), QStringLiteral("messageList1"));
  QVERIFY(list);
  QTRY_COMPARE(list->property("count").toInt(), 40);
  // Opened at the latest message, not at the top.
  QTRY_VERIFY(rowVisible(list, 39));
  // Still there once the view has come to rest (no late jump back to the top).
  QTRY_VERIFY(!list->property("moving").toBool());
  QVERIFY(waitForFrame(window));
  QVERIFY(rowVisible(list, 39));
  QVERIFY(!rowVisible(list, 0));

  // A search result far above: highlighted and in view, also after the rows settled.
  for (int row : {16, 8, 30, 2}) {
    controller.history()->openSearchResult(c, ids.at(row));
    QTRY_COMPARE(list->property("highlightedRow").toInt(), row);
    QTRY_VERIFY2(rowVisible(list, row), qPrintable(QString::number(row)));
    QTRY_COMPARE(list->property("jumpRow").toInt(), -1);  // MessageList has stopped placing it
    QVERIFY(waitForFrame(window));
    QVERIFY2(rowVisible(list, row), qPrintable(QString::number(row)));
    QCOMPARE(list->property("highlightedRow").toInt(), row);
  }
  window->grabWindow().save(QStringLiteral("history-search-jump.png"));
}

QTEST_MAIN(TestHistoryGui)
#include "test_history_gui.moc"
