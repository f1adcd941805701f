// Every QAbstractItemModel of the app under QAbstractItemModelTester (Qt's checker of the model
// contract: row counts, indexes, signals in the right order with the right ranges), through the
// operations the app does on it: the message list of a pane while replies stream, branch and
// regenerate; the conversation list paged and reloaded; the panes; the recent models; the
// Markdown blocks of a streaming message.
#include <QTest>

#include <QAbstractItemModelTester>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <memory>

#include "app/controllers/conversation_list_model.h"
#include "app/controllers/recent_models_model.h"
#include "app/engine/local_chat_backend.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "app/render/draft_marks.h"
#include "app/render/message_blocks_model.h"
#include "app/store/chat_store.h"
#include "app_test_util.h"
#include "test_paths.h"

using pagedchat::FinishReason;

namespace {
using Tester = QAbstractItemModelTester;

std::unique_ptr<Tester> tester(QAbstractItemModel* model) {
  return std::make_unique<Tester>(model, Tester::FailureReportingMode::QtTest);
}

MessageRecord message(qint64 id, MessageRole role, const QString& text, qint64 parent) {
  MessageRecord m;
  m.id = id;
  m.role = role;
  m.text = text;
  m.parentId = parent;
  return m;
}
}  // namespace

class TestItemModels : public QObject {
  Q_OBJECT

 private slots:
  void messageListModel();
  void messageListWhileStreaming();
  void conversationListModel();
  void paneListModel();
  void recentModelsModel();
  void messageBlocksModel();
};

void TestItemModels::messageListModel() {
  MessageListModel model;
  auto check = tester(&model);
  model.setMessages({message(1, MessageRole::kUser, QStringLiteral("Hi"), 0),
                     message(2, MessageRole::kAssistant, QStringLiteral("Hello"), 1)});
  const int row = model.append(message(0, MessageRole::kAssistant, QString(), 2), /*streaming=*/true);
  for (int i = 0; i < 30; ++i) model.appendText(row, QStringLiteral("word%1 ").arg(i));
  model.flushTextChanges();
  model.setMessageId(row, 3);
  model.setSiblings(row, 1, 2);
  model.finish(row, FinishReason::kStop);
  model.setStreaming(row, true);
  model.appendText(row, QStringLiteral("<think>more"));
  model.finish(row, FinishReason::kLength);
  model.removeFrom(1);
  QCOMPARE(model.rowCount(), 1);

  // A reply's accepted draft text: kept per row from the deltas' spans, marked in the reasoning
  // and answer roles (for display), never in the text.
  const int reply = model.append(message(0, MessageRole::kAssistant, QString(), 1), /*streaming=*/true);
  const QModelIndex at = model.index(reply);
  QCOMPARE(at.data(MessageListModel::MarkedAnswerRole).toString(), QString());
  model.appendText(reply, QStringLiteral("<think>\nplan it"), {8, 12});  // "plan"
  model.appendText(reply, QStringLiteral("</think>\n\nThe answer"), {});
  model.appendText(reply, QStringLiteral(" is here"), {1, 3});  // "is"
  model.flushTextChanges();
  const QChar b = draftmarks::kBegin, e = draftmarks::kEnd;
  QCOMPARE(at.data(MessageListModel::MarkedReasoningRole).toString(), QString(b) + "plan" + e + " it");
  QCOMPARE(at.data(MessageListModel::MarkedAnswerRole).toString(), QString("The answer ") + b + "is" + e + " here");
  QCOMPARE(at.data(MessageListModel::AnswerRole).toString(), QStringLiteral("The answer is here"));
  QVERIFY(!model.textAt(reply).contains(b));
  model.clear();
  model.setMessages({});
  QCOMPARE(model.rowCount(), 0);
}

void TestItemModels::messageListWhileStreaming() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  ChatStore store(dir.path());
  LocalChatBackend engine(apptest::storiesConfig());
  QVERIFY(apptest::startEngine(engine));
  PaneState session(&store, &engine);
  auto check = tester(session.messageModel());
  session.setMaxTokens(40);
  QSignalSpy finished(&session, &PaneState::replyFinished);
  QVERIFY(session.sendText(QStringLiteral("Once upon a time")));
  QVERIFY(finished.wait(60000));
  QVERIFY(session.regenerate());
  QVERIFY(finished.wait(60000));
  QVERIFY(session.switchBranch(1, -1));
  QVERIFY(session.editMessage(0, QStringLiteral("Lily saw a bird")));
  QVERIFY(finished.wait(60000));
  QVERIFY(session.continueReply() || !session.canContinue());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 60000);
  const qint64 conversation = session.conversationId();
  session.closeConversation();
  session.openConversation(conversation, QStringLiteral("again"));
  QCOMPARE(session.messages()->rowCount(), 2);
}

void TestItemModels::conversationListModel() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  QList<qint64> ids;
  for (int i = 0; i < 30; ++i) ids.append(store.createConversation(QStringLiteral("conversation %1").arg(i)));
  ConversationListModel model(&store);
  auto check = tester(&model);
  model.setPageSize(7);
  model.reload();
  while (model.canFetchMore(QModelIndex())) model.fetchMore(QModelIndex());
  QCOMPARE(model.rowCount(), 30);
  store.setPinned(ids.at(3), true);
  store.softDeleteConversation(ids.at(5));
  store.addMessage(ids.at(10), MessageRole::kUser, QStringLiteral("newest"));
  model.reload();
  model.setNow(QDateTime(QDate(2020, 5, 2), QTime(8, 0), Qt::UTC));
  model.setNow(QDateTime::currentDateTime());
  while (model.canFetchMore(QModelIndex())) model.fetchMore(QModelIndex());
  QCOMPARE(model.rowCount(), 29);
  store.purgeDeletedConversations();
  for (int i = 0; i < 20; ++i) store.deleteConversation(ids.at(i));
  model.reload();
  QCOMPARE(model.rowCount(), 10);
}

void TestItemModels::paneListModel() {
  QTemporaryDir dir;
  ChatStore store(dir.path());
  LocalChatBackend engine(pagedchat::EngineConfig{});  // no model: panes only
  PaneListModel model(&store, &engine);
  auto check = tester(&model);
  while (model.canAddPane()) QVERIFY(model.addPane());
  QCOMPARE(model.rowCount(), PaneListModel::kMaxPanes);
  model.setCurrentIndex(2);
  model.closePane(1);
  model.closePane(0);
  model.addPane();
  while (model.canClosePane()) model.closePane(model.count() - 1);
  QCOMPARE(model.rowCount(), 1);
}

void TestItemModels::recentModelsModel() {
  QTemporaryDir dir;
  QSettings settings(dir.filePath(QStringLiteral("pagedchat.ini")), QSettings::IniFormat);
  RecentModelsModel model(&settings);
  auto check = tester(&model);
  QStringList files;
  for (int i = 0; i < 4; ++i) {
    files.append(dir.filePath(QStringLiteral("model%1.gguf").arg(i)));
    QFile f(files.constLast());
    QVERIFY(f.open(QIODevice::WriteOnly));
  }
  for (const QString& f : files) model.add(f);
  model.add(files.at(1));  // to the front
  model.add(dir.filePath(QStringLiteral("missing.gguf")));
  model.remove(files.at(2));
  QFile::remove(files.at(3));
  model.refresh();
  QVERIFY(model.removeMissing() >= 1);
  QCOMPARE(model.rowCount(), 2);  // model0 and model1 remain
}

void TestItemModels::messageBlocksModel() {
  {
    // A model's U+FFFC (Qt's inline-object marker, which blanked the whole bubble) is shown as U+FFFD.
    MessageBlocksModel objects;
    objects.setText(QStringLiteral("Hello \uFFFC world.\n\n```\ncode \uFFFC\n```\n"));
    objects.flush();
    QVERIFY(objects.rowCount() >= 2);
    for (int r = 0; r < objects.rowCount(); ++r) {
      const QString t = objects.data(objects.index(r), MessageBlocksModel::TextRole).toString();
      QVERIFY2(!t.contains(QChar::ObjectReplacementCharacter) && t.contains(QChar::ReplacementCharacter),
               qPrintable(t));
    }
  }
  MessageBlocksModel model;
  auto check = tester(&model);
  model.setStreaming(true);
  QString text;
  const QStringList pieces = {QStringLiteral("# Title\n\n"), QStringLiteral("Some *text* "),
                              QStringLiteral("and more.\n\n```cpp\nint x"), QStringLiteral(" = 1;\n```\n\n- a\n- b\n"),
                              QStringLiteral("\n| a | b |\n|---|---|\n| 1 | 2 |\n")};
  for (const QString& piece : pieces) {
    text += piece;
    model.setText(text);
    model.flush();
  }
  model.setStreaming(false);
  model.flush();
  QVERIFY(model.rowCount() >= 3);  // text, the code block, text
  model.setText(QStringLiteral("short"));
  model.flush();
  model.setText(QString());
  model.flush();
  QCOMPARE(model.rowCount(), 0);
}

QTEST_MAIN(TestItemModels)
#include "test_item_models.moc"
