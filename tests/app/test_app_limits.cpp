// Input limits through the app: a 1 MB message is refused with a message that says why and stays in
// the input box; a conversation of 10 000 messages opens, and a new question in it is answered
// (the oldest turns make room in the context) — no crash, no hang.
#include <QTest>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "app/engine/local_chat_backend.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/finish_reason_text.h"
#include "app_test_util.h"
#include "test_paths.h"

using pagedchat::FinishReason;

class TestAppLimits : public QObject {
  Q_OBJECT

 private slots:
  void megabyteMessageIsRefusedAndKept() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    QTemporaryDir dir;
    ChatStore store(dir.path());
    LocalChatBackend engine(apptest::storiesConfig());
    QVERIFY(apptest::startEngine(engine));
    PaneState session(&store, &engine);
    QString text;
    while (text.size() < (1 << 20)) text += QStringLiteral("Once upon a time there was a little girl named Lily. ");
    session.setInputText(text);
    QElapsedTimer clock;
    clock.start();
    QVERIFY(session.send());  // taken, then refused by the engine
    QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 120000);
    qInfo("1 MB message refused after %lld ms: %s", static_cast<long long>(clock.elapsed()),
          qPrintable(session.errorText().left(200)));
    QVERIFY2(session.errorText().contains(QLatin1String("the model's context holds 512")),
             qPrintable(session.errorText().left(300)));
    QCOMPARE(session.inputText(), text);     // nothing lost
    QCOMPARE(store.conversationCount(), 0);  // the refused turn was taken back
  }

  void tenThousandMessages() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    QTemporaryDir dir;
    ChatStore store(dir.path());
    // Imported (one transaction) in the export format: 10 000 single commits would take a minute.
    QJsonArray messages;
    for (int i = 1; i <= 10000; ++i)
      messages.append(QJsonObject{{"id", i},
                                  {"parentId", i > 1 ? QJsonValue(i - 1) : QJsonValue()},
                                  {"role", i % 2 ? "user" : "assistant"},
                                  {"text", QStringLiteral("Message %1: Lily saw a big red ball.").arg(i)},
                                  {"finishReason", i % 2 ? "" : "stop"},
                                  {"createdAt", ""}});
    const QJsonObject file{{"format", ChatStore::kJsonFormat},
                           {"version", ChatStore::kJsonFormatVersion},
                           {"title", "long"},
                           {"createdAt", ""},
                           {"updatedAt", ""},
                           {"pinned", false},
                           {"currentLeafId", 10000},
                           {"messages", messages}};
    QElapsedTimer clock;
    clock.start();
    qint64 c = 0;
    try {
      c = store.importJson(QJsonDocument(file).toJson(QJsonDocument::Compact));
    } catch (const StoreError& e) {
      QFAIL(e.what());
    }
    const qint64 insertMs = clock.restart();
    LocalChatBackend engine(apptest::storiesConfig());
    QVERIFY(apptest::startEngine(engine));
    PaneState session(&store, &engine);
    clock.restart();
    session.openConversation(c, QStringLiteral("long"));
    const qint64 openMs = clock.restart();
    QCOMPARE(session.messages()->rowCount(), 10000);
    QSignalSpy finished(&session, &PaneState::replyFinished);
    session.setMaxTokens(20);
    QVERIFY(session.sendText(QStringLiteral("And then?")));
    QVERIFY(finished.wait(120000));
    const qint64 replyMs = clock.elapsed();
    qInfo("10 000 messages: inserted in %lld ms, opened in %lld ms, answered in %lld ms (finish %s, %d prompt tokens)",
          static_cast<long long>(insertMs), static_cast<long long>(openMs), static_cast<long long>(replyMs),
          qPrintable(finishReasonText(finished.constFirst().constFirst().value<FinishReason>())),
          session.promptTokens());
    QCOMPARE(session.errorText(), QString());
    QCOMPARE(session.messages()->rowCount(), 10002);
    QVERIFY(session.promptTokens() > 0 && session.promptTokens() <= 512);
    QCOMPARE(store.messages(c).size(), 10002);
  }
};

QTEST_MAIN(TestAppLimits)
#include "test_app_limits.moc"
