// PaneState without the GUI: conversation titles cut at grapheme boundaries; a request the
// engine refuses (prompt too long) leaves no trace in the pane or the store and gives the text
// back; a reply stopped before the engine's first delta still saves the turn. ThroughputMeter:
// no figure while idle, the rate over the last second while generating.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBoundaryFinder>

#include "app/engine/engine_worker.h"
#include "app/engine/local_chat_backend.h"
#include "app/engine/throughput_meter.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app_test_util.h"

using apptest::storiesConfig;
using pagedchat::FinishReason;

namespace {

/// True when `s` has no unpaired UTF-16 surrogate.
bool wellFormed(const QString& s) {
  for (qsizetype i = 0; i < s.size(); ++i) {
    if (s.at(i).isHighSurrogate()) {
      if (i + 1 >= s.size() || !s.at(i + 1).isLowSurrogate()) return false;
      ++i;
    } else if (s.at(i).isLowSurrogate()) {
      return false;
    }
  }
  return true;
}

int graphemeCount(const QString& s) {
  QTextBoundaryFinder f(QTextBoundaryFinder::Grapheme, s);
  int n = 0;
  while (f.toNextBoundary() != -1) ++n;
  return n;
}

/// A prompt far longer than stories260K's 512-token context.
QString tooLongPrompt() {
  return QStringLiteral("Once upon a time there was a little girl named Lily who loved to play. ").repeated(60);
}

}  // namespace

class TestPaneState : public QObject {
  Q_OBJECT

 private slots:
  void titles();
  void throughputMeter();
  void rejectedPromptLeavesNoTrace();
  void stopBeforeFirstDeltaSavesTurn();
  void replyRateIsDecodeOnly();
  void promptProgressWhileReading();
  void contextOverflowPolicies();
};

void TestPaneState::titles() {
  const QChar ellipsis(0x2026);
  // Short titles stay as they are (whitespace simplified); empty ones are "New chat".
  QCOMPARE(PaneState::titleFor(QStringLiteral("  Hi \n there ")), QStringLiteral("Hi there"));
  QCOMPARE(PaneState::titleFor(QStringLiteral("   ")), QStringLiteral("New chat"));
  const QString forty = QStringLiteral("a").repeated(40);
  QCOMPARE(PaneState::titleFor(forty), forty);
  QCOMPARE(PaneState::titleFor(forty + QLatin1Char('b')), QStringLiteral("a").repeated(39) + ellipsis);

  // The emoji sits at UTF-16 units 38..39: left(39) used to keep half of it.
  const QString party = QStringLiteral("abcdefghij abcdefghij abcdefghij abcde🎉 party");
  const QString partyTitle = PaneState::titleFor(party);
  QVERIFY(wellFormed(partyTitle));
  QCOMPARE(partyTitle, QStringLiteral("abcdefghij abcdefghij abcdefghij abcde🎉") + ellipsis);

  // Korean, precomposed (one UTF-16 unit per syllable) and decomposed into jamo (NFD: two or
  // three code points per syllable, one grapheme): cut at the same syllable either way.
  const QString korean = QStringLiteral(
      "오늘은 날씨가 정말 좋아서 친구들과 함께 공원에 가서 오랫동안 산책을 하고 맛있는 점심을 먹었습니다");
  const QString koreanTitle = PaneState::titleFor(korean);
  QVERIFY(koreanTitle.endsWith(ellipsis));
  QVERIFY(graphemeCount(koreanTitle) >= 38 && graphemeCount(koreanTitle) <= 40);  // trailing space trimmed
  QVERIFY(korean.startsWith(koreanTitle.chopped(1)));
  const QString decomposed = korean.normalized(QString::NormalizationForm_D);
  QVERIFY(decomposed.size() > korean.size());
  const QString decomposedTitle = PaneState::titleFor(decomposed);
  QCOMPARE(decomposedTitle.normalized(QString::NormalizationForm_C), koreanTitle);
  QVERIFY(decomposed.startsWith(decomposedTitle.chopped(1)));

  // A ZWJ family and a flag are single graphemes: never split.
  const QString family = QStringLiteral("👨‍👩‍👧‍👦");
  const QString flags = QStringLiteral("x").repeated(38) + family + QStringLiteral("🇰🇷 and more words");
  const QString flagsTitle = PaneState::titleFor(flags);
  QVERIFY(wellFormed(flagsTitle));
  QCOMPARE(flagsTitle, QStringLiteral("x").repeated(38) + family + ellipsis);
}

void TestPaneState::throughputMeter() {
  ThroughputMeter meter;
  QSignalSpy changed(&meter, &ThroughputMeter::changed);
  QVERIFY(!meter.isActive());
  QVERIFY(meter.tokensPerSecond() < 0);

  // A burst: the first step only starts the clock; then 10 tokens every 10 ms = 1000 tok/s.
  meter.addStep(1000, 10, 1);
  QVERIFY(meter.isActive());
  QVERIFY(meter.tokensPerSecond() < 0);  // nothing measured yet: no "0.0"
  for (int i = 1; i <= 50; ++i) meter.addStep(1000 + 10 * i, 10, 1);
  QCOMPARE(meter.tokensPerSecond(), 1000.0);
  // Slower for two seconds: the figure follows within the one-second window.
  for (int i = 1; i <= 200; ++i) meter.addStep(1500 + 10 * i, 2, 1);
  QCOMPARE(meter.tokensPerSecond(), 200.0);
  // Steps stop coming while a request still runs: the figure falls, rather than staying.
  meter.refresh(3500 + 500);
  QCOMPARE(meter.tokensPerSecond(), 100.0);
  meter.refresh(3500 + 1500);
  QCOMPARE(meter.tokensPerSecond(), 0.0);
  // Idle: no figure at all, and the next burst is measured on its own.
  const qsizetype before = changed.size();
  meter.addStep(6000, 3, 0);
  QVERIFY(!meter.isActive());
  QVERIFY(meter.tokensPerSecond() < 0);
  QVERIFY(changed.size() > before);
  meter.addStep(60000, 5, 2);
  meter.addStep(60100, 50, 2);
  QCOMPARE(meter.tokensPerSecond(), 500.0);
}

void TestPaneState::rejectedPromptLeavesNoTrace() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  ChatStore store(dir.path());
  LocalChatBackend engine(storiesConfig());
  QVERIFY(apptest::startEngine(engine));
  PaneState session(&store, &engine);

  // A new pane: the conversation send() created goes again.
  const QString draft = QStringLiteral("  ") + tooLongPrompt();
  session.setInputText(draft);
  QVERIFY(session.send());
  QCOMPARE(session.inputText(), QString());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(session.messages()->rowCount(), 0);
  QCOMPARE(session.conversationId(), 0);
  QCOMPARE(session.title(), QString());
  QCOMPARE(store.conversations().size(), 0);
  QCOMPARE(session.inputText(), draft);  // nothing typed is lost
  QVERIFY2(session.errorText().startsWith(QStringLiteral("Not sent:")), qPrintable(session.errorText()));
  QVERIFY2(!session.errorText().contains(QLatin1String("req-")), qPrintable(session.errorText()));

  // A conversation with history: the earlier turn stays, nothing new is stored, title unchanged.
  session.setInputText(QStringLiteral("Tom had a red ball"));
  QVERIFY(session.send());
  QCOMPARE(session.errorText(), QString());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  const qint64 conversation = session.conversationId();
  QVERIFY(conversation != 0);
  const QString title = session.title();
  QCOMPARE(store.messages(conversation).size(), 2);
  session.setInputText(tooLongPrompt());
  QVERIFY(session.send());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(session.messages()->rowCount(), 2);
  QCOMPARE(session.conversationId(), conversation);
  QCOMPARE(session.title(), title);
  const QList<MessageRecord> stored = store.messages(conversation);
  QCOMPARE(stored.size(), 2);
  QCOMPARE(stored.at(0).text, QStringLiteral("Tom had a red ball"));
  QVERIFY(stored.at(1).finishReason.has_value());
  QCOMPARE(session.inputText(), tooLongPrompt());
  QVERIFY(!session.errorText().isEmpty());

  // An empty "New chat" conversation renamed by send() gets its title back.
  const qint64 empty = store.createConversation(QStringLiteral("New chat"));
  session.openConversation(empty, QStringLiteral("New chat"));
  session.setInputText(tooLongPrompt());
  QVERIFY(session.send());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(session.conversationId(), empty);
  QCOMPARE(session.title(), QStringLiteral("New chat"));
  QCOMPARE(store.conversations().size(), 2);
  for (const ConversationRecord& c : store.conversations())
    if (c.id == empty) QCOMPARE(c.title, QStringLiteral("New chat"));
  QCOMPARE(store.messages(empty).size(), 0);

  // The next message goes through normally and clears the error.
  session.setInputText(QStringLiteral("Lily saw a bird"));
  QVERIFY(session.send());
  QCOMPARE(session.errorText(), QString());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(store.messages(empty).size(), 2);
}

void TestPaneState::stopBeforeFirstDeltaSavesTurn() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  ChatStore store(dir.path());
  LocalChatBackend engine(storiesConfig());
  QVERIFY(apptest::startEngine(engine));
  {
    PaneState session(&store, &engine);
    session.setInputText(QStringLiteral("Once upon a time"));
    QVERIFY(session.send());
    // The user's message is committed before generation starts (no event processed yet).
    const QList<MessageRecord> before = store.messages(session.conversationId());
    QCOMPARE(before.size(), 2);
    QCOMPARE(before.at(0).text, QStringLiteral("Once upon a time"));
    QCOMPARE(before.at(1).finishReason, std::nullopt);
    // Closing the pane (or quitting) before any delta arrived: the turn is saved as stopped.
  }
  const QList<ConversationRecord> conversations = store.conversations();
  QCOMPARE(conversations.size(), 1);
  const QList<MessageRecord> stored = store.messages(conversations.at(0).id);
  QCOMPARE(stored.size(), 2);
  QCOMPARE(stored.at(0).role, MessageRole::kUser);
  QCOMPARE(stored.at(0).text, QStringLiteral("Once upon a time"));
  QCOMPARE(stored.at(1).role, MessageRole::kAssistant);
  QCOMPARE(stored.at(1).finishReason, std::optional(FinishReason::kAbort));
}

// The header's tok/s of a finished reply: the tokens after the first over the engine's decode
// time, as the deltas carry it (the prompt's time not counted); none for a reply stopped at once.
void TestPaneState::replyRateIsDecodeOnly() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  ChatStore store(dir.path());
  LocalChatBackend engine(storiesConfig());
  QVERIFY(apptest::startEngine(engine));
  PaneState pane(&store, &engine);
  pane.settings()->setMaxTokens(40);
  pane.settings()->setTemperature(0.0);
  QSignalSpy steps(&engine, &LocalChatBackend::stepFinished);
  pane.setInputText(QStringLiteral("Once upon a time"));
  QVERIFY(pane.send());
  QTRY_VERIFY_WITH_TIMEOUT(!pane.isBusy(), 30000);
  int tokens = 0;
  double decode = 0.0;
  for (const QList<QVariant>& args : std::as_const(steps))
    for (const RequestDelta& d : args.at(0).value<QList<RequestDelta>>()) {
      tokens += d.newTokens;
      decode = std::max(decode, d.decodeSeconds);
    }
  QVERIFY2(tokens >= 2 && decode > 0.0, qPrintable(QStringLiteral("%1 tokens in %2 s").arg(tokens).arg(decode)));
  QCOMPARE(pane.lastReplyRate(), (tokens - 1) / decode);

  // Stopped before any token: no rate (not a tiny one), and the previous one is gone. The worker
  // is held while the send and the stop are queued (stories260K's first token could come first).
  {
    apptest::WorkerGate gate(engine.worker());
    pane.setInputText(QStringLiteral("Tom had a red ball"));
    QVERIFY(pane.send());
    pane.stop();
  }
  QTRY_VERIFY_WITH_TIMEOUT(!pane.isBusy(), 30000);
  QCOMPARE(pane.lastReplyRate(), -1.0);
}

// A prompt read in several chunks: the pane reports its progress (tokens read of the prompt's,
// rising, below the total) while it reads, and nothing once the reply streams; the engine counts
// the request as running while its first chunk runs.
void TestPaneState::promptProgressWhileReading() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  ChatStore store(dir.path());
  pagedchat::EngineConfig config = storiesConfig();
  config.max_num_batched_tokens = 32;  // a ~150-token prompt takes five steps
  LocalChatBackend engine(config);
  QVERIFY(apptest::startEngine(engine));
  PaneState pane(&store, &engine);
  pane.settings()->setMaxTokens(8);
  QList<QPair<int, int>> seen;
  connect(&pane, &PaneState::promptProgressChanged, this, [&] {
    seen.append({pane.promptTokensRead(), pane.promptTokensTotal()});
  });
  bool runningWhileReading = false;
  connect(&engine, &LocalChatBackend::statsChanged, this,
          [&] { runningWhileReading |= pane.promptTokensTotal() > 0 && engine.numRunning() > 0; });
  pane.setInputText(
      QStringLiteral("Once upon a time there was a little girl named Lily who loved to play. ").repeated(8));
  QVERIFY(pane.send());
  QTRY_VERIFY_WITH_TIMEOUT(!pane.isBusy(), 30000);
  QVERIFY2(seen.size() >= 3, qPrintable(QString::number(seen.size())));
  int last = -1, total = 0;
  for (const auto& [read, all] : std::as_const(seen)) {
    if (all == 0) continue;  // cleared
    QVERIFY(read < all);
    QVERIFY(read >= last);
    last = read;
    total = all;
  }
  QVERIFY(total > 100);
  QVERIFY(last >= 64);                    // several chunks were reported
  QCOMPARE(pane.promptTokensTotal(), 0);  // answered: no progress left
  QVERIFY(runningWhileReading);           // the status line counts it as running, not idle
}

// A conversation that outgrows a 160-token context, under each policy: the rows the model no
// longer sees are reported (the oldest after the first turn with truncateMiddle), and with
// stopAtLimit nothing is sent and the pane says why.
void TestPaneState::contextOverflowPolicies() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  const QString line = QStringLiteral("Lily and Tom went to the park to play with the big red ball. ");
  for (const auto policy : {pagedchat::ContextOverflow::kRollingWindow, pagedchat::ContextOverflow::kTruncateMiddle,
                            pagedchat::ContextOverflow::kStopAtLimit}) {
    QTemporaryDir dir;
    ChatStore store(dir.path());
    pagedchat::EngineConfig config = storiesConfig();
    config.max_model_len = 160;
    LocalChatBackend engine(config);
    engine.setContextOverflow(policy);
    QVERIFY(apptest::startEngine(engine));
    PaneState pane(&store, &engine);
    pane.settings()->setMaxTokens(16);
    pane.settings()->setTemperature(0.0);
    int sent = 0;
    bool refused = false;
    for (int turn = 0; turn < 8 && pane.unseenMessages() == 0 && !refused; ++turn) {
      pane.setInputText(line);
      QVERIFY(pane.send());
      QTRY_VERIFY_WITH_TIMEOUT(!pane.isBusy(), 30000);
      refused = !pane.errorText().isEmpty();
      if (!refused) ++sent;
    }
    if (policy == pagedchat::ContextOverflow::kStopAtLimit) {
      QVERIFY2(refused, "the conversation never outgrew the context");
      QVERIFY2(pane.errorText().contains(QLatin1String("conversation is")), qPrintable(pane.errorText()));
      QCOMPARE(pane.unseenMessages(), 0);
      QCOMPARE(pane.inputText(), line);  // nothing typed is lost
      continue;
    }
    QVERIFY2(pane.unseenMessages() > 0, qPrintable(QString::number(sent)));
    QVERIFY(pane.unseenMessages() % 2 == 0);  // whole turns
    const int first = policy == pagedchat::ContextOverflow::kTruncateMiddle ? 2 : 0;
    QCOMPARE(pane.unseenFirstRow(), first);
    QCOMPARE(pane.unseenLastRow(), first + pane.unseenMessages() - 1);
  }
}

QTEST_MAIN(TestPaneState)
#include "test_pane_state.moc"
