// PaneState's message actions with the real engine (stories260K): regenerate and edit keep
// the old branch, switching branches, every request carries exactly the shown branch, continuing
// a cut-off answer appends to it, showing a search hit on another branch; and the continuation
// prompt of each chat template ends inside the assistant's reply.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/engine/local_chat_backend.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app_test_util.h"
#include "engine/text/chat_template.h"
#include "engine/text/tokenizer.h"

using apptest::storiesConfig;
using pagedchat::FinishReason;

namespace {

QStringList texts(const QList<PromptMessage>& messages) {
  QStringList out;
  for (const PromptMessage& m : messages) out << messageRoleText(m.role) + QLatin1Char(':') + m.text;
  return out;
}

QStringList rowTexts(const MessageListModel* model) {
  QStringList out;
  for (int i = 0; i < model->rowCount(); ++i) out << model->roleAt(i) + QLatin1Char(':') + model->textAt(i);
  return out;
}

int siblingIndex(const MessageListModel* m, int row) {
  return m->data(m->index(row), MessageListModel::SiblingIndexRole).toInt();
}
int siblingCount(const MessageListModel* m, int row) {
  return m->data(m->index(row), MessageListModel::SiblingCountRole).toInt();
}

/// A pane's session on stories260K, its chat store in a temporary folder; the engine is started
/// (a test waits for engine.isReady()).
struct PaneFixture {
  QTemporaryDir dir;
  ChatStore store{dir.path()};
  LocalChatBackend engine{storiesConfig()};
  PaneState session{&store, &engine};
  PaneFixture() { engine.start(); }
  struct Parts {
    ChatStore& store;
    LocalChatBackend& engine;
    PaneState& session;
  };
  Parts parts() { return {store, engine, session}; }
};

}  // namespace

class TestChatBranches : public QObject {
  Q_OBJECT

 private slots:
  void continuationPrompts();
  void regenerateEditSwitch();
  void continueCutOffAnswer();
  void regeneratedAnswerStartsLikeTheFirst();
  void contextUseOfAnOpenedConversation();
  void switchingBackShowsTheBranchSeenLast();
};

void TestChatBranches::continuationPrompts() {
  const std::vector<pagedchat::ChatMessage> m = {{"user", "Hi"}, {"assistant", "Hel"}};
  pagedchat::ChatRenderOptions o;
  o.continue_final_message = true;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  auto text = [&](const char* name) {
    return QString::fromStdString(pagedchat::ChatTemplate::builtin(name).render(m, o).text);
  };
  QCOMPARE(text("chatml"), QStringLiteral("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHel"));
  QCOMPARE(text("zephyr"), QStringLiteral("<|user|>\nHi</s>\n<|assistant|>\nHel"));
  QCOMPARE(text("llama-2"), QStringLiteral("<s>[INST] Hi [/INST] Hel"));
  QCOMPARE(text("mistral"), QStringLiteral("<s>[INST] Hi [/INST] Hel"));
  QVERIFY(text("vicuna").endsWith(QStringLiteral("USER: Hi ASSISTANT: Hel")));
  QCOMPARE(text("none"), QStringLiteral("HiHel"));
  // The prompt ends with the reply's text (data), never with EOS.
  const pagedchat::TemplatedText r = pagedchat::ChatTemplate::builtin("zephyr").render(m, o);
  QVERIFY(!r.is_template_text(r.text.size() - 3, r.text.size()));
  // Only an assistant message can be continued.
  QVERIFY_THROWS_EXCEPTION(pagedchat::ChatTemplateError, pagedchat::ChatTemplate::builtin("chatml").render(
                                                             std::vector<pagedchat::ChatMessage>{{"user", "Hi"}}, o));
}

void TestChatBranches::regenerateEditSwitch() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  PaneFixture f;
  QTRY_VERIFY_WITH_TIMEOUT(f.engine.isReady(), 60000);
  auto [store, engine, session] = f.parts();
  session.setMaxTokens(12);
  MessageListModel* rows = session.messages();

  session.setInputText(QStringLiteral("Tom had a red ball"));
  QVERIFY(session.send());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  const qint64 conversation = session.conversationId();
  QCOMPARE(rows->rowCount(), 2);
  const QString a1 = rows->textAt(1);
  QCOMPARE(siblingCount(rows, 1), 1);

  // Regenerate: a second answer beside the first; the request is the question alone.
  QVERIFY(!session.switchBranch(1, -1));  // nothing to switch to yet
  QVERIFY(session.regenerate());
  QVERIFY(!session.regenerate());  // busy
  QCOMPARE(texts(session.lastRequest()), QStringList{QStringLiteral("user:Tom had a red ball")});
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(rows->rowCount(), 2);
  QCOMPARE(siblingIndex(rows, 1), 1);
  QCOMPARE(siblingCount(rows, 1), 2);
  QCOMPARE(store.messages(conversation).size(), 3);
  const qint64 a2Id = rows->at(1).id;
  const QString a2 = rows->textAt(1);

  // Back to the first answer, then continue the conversation there.
  QVERIFY(session.switchBranch(1, -1));
  QCOMPARE(rows->textAt(1), a1);
  QCOMPARE(siblingIndex(rows, 1), 0);
  QVERIFY(!session.switchBranch(1, -1));  // already the first
  session.setInputText(QStringLiteral("Lily saw a bird"));
  QVERIFY(session.send());
  // The request is the shown branch: the first answer, not the regenerated one.
  QCOMPARE(texts(session.lastRequest()),
           (QStringList{QStringLiteral("user:Tom had a red ball"), QStringLiteral("assistant:") + a1,
                        QStringLiteral("user:Lily saw a bird")}));
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(rows->rowCount(), 4);
  const QString a3 = rows->textAt(3);

  // Edit the second question: a sibling question with its own answer; the old one stays.
  QVERIFY(!session.editMessage(1, QStringLiteral("not a user message")));
  QVERIFY(session.editMessage(2, QStringLiteral("Lily saw a cat")));
  QCOMPARE(texts(session.lastRequest()),
           (QStringList{QStringLiteral("user:Tom had a red ball"), QStringLiteral("assistant:") + a1,
                        QStringLiteral("user:Lily saw a cat")}));
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(rows->rowCount(), 4);
  QCOMPARE(rows->textAt(2), QStringLiteral("Lily saw a cat"));
  QCOMPARE(siblingIndex(rows, 2), 1);
  QCOMPARE(siblingCount(rows, 2), 2);
  QCOMPARE(store.messages(conversation).size(), 7);

  QVERIFY(session.switchBranch(2, -1));
  QCOMPARE(rowTexts(rows), (QStringList{QStringLiteral("user:Tom had a red ball"), QStringLiteral("assistant:") + a1,
                                        QStringLiteral("user:Lily saw a bird"), QStringLiteral("assistant:") + a3}));
  QVERIFY(session.switchBranch(2, +1));
  QCOMPARE(rows->textAt(2), QStringLiteral("Lily saw a cat"));

  // The shown branch is remembered: another pane (or the next start) opens the same one.
  PaneState other(&store, &engine);
  other.openConversation(conversation, session.title());
  QCOMPARE(rowTexts(other.messages()), rowTexts(rows));

  // A search hit on a branch not shown: showMessage() switches to it and says where it is.
  QSignalSpy shown(&other, &PaneState::messageShown);
  QVERIFY(other.showMessage(a2Id));
  QCOMPARE(shown.size(), 1);
  QCOMPARE(shown.at(0).at(0).toInt(), 1);
  QCOMPARE(other.messages()->textAt(1), a2);
  QCOMPARE(other.messages()->rowCount(), 2);
}

void TestChatBranches::continueCutOffAnswer() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  PaneFixture f;
  QTRY_VERIFY_WITH_TIMEOUT(f.engine.isReady(), 60000);
  auto [store, engine, session] = f.parts();
  session.setTemperature(0.0);
  session.setMaxTokens(6);
  MessageListModel* rows = session.messages();
  session.setInputText(QStringLiteral("Once upon a time"));
  QVERIFY(!session.canContinue());
  QVERIFY(session.send());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(rows->at(1).finishReason, std::optional(FinishReason::kLength));
  QVERIFY(session.canContinue());
  const QString before = rows->textAt(1);
  const qint64 replyId = rows->at(1).id;
  QVERIFY(!before.isEmpty());

  QVERIFY(session.continueReply());
  // The request ends with the partial answer (rendered open at the end by the worker).
  QCOMPARE(texts(session.lastRequest()),
           (QStringList{QStringLiteral("user:Once upon a time"), QStringLiteral("assistant:") + before}));
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(rows->rowCount(), 2);
  QCOMPARE(rows->at(1).id, replyId);
  QVERIFY2(rows->textAt(1).startsWith(before), qPrintable(rows->textAt(1)));
  QVERIFY2(rows->textAt(1).size() > before.size(), qPrintable(rows->textAt(1)));
  QVERIFY(rows->at(1).finishReason.has_value());
  // Saved in place: still one answer, with the longer text.
  const QList<MessageRecord> stored = store.messages(session.conversationId());
  QCOMPARE(stored.size(), 2);
  QCOMPARE(stored.at(1).text, rows->textAt(1));
  QCOMPARE(stored.at(1).finishReason, rows->at(1).finishReason);
}

void TestChatBranches::regeneratedAnswerStartsLikeTheFirst() {
  // Greedy sampling: a regenerated answer is the same request, so the very same text, leading
  // whitespace included: the first answer and a regenerated one are detokenized alike (the
  // detokenizer decodes each answer after the prompt's last tokens, so a leading space is the
  // model's own, e.g. "Tom" + " He liked", and never added or dropped by the request kind).
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  PaneFixture f;
  QTRY_VERIFY_WITH_TIMEOUT(f.engine.isReady(), 60000);
  auto [store, engine, session] = f.parts();
  session.setTemperature(0.0);
  session.setMaxTokens(8);
  MessageListModel* rows = session.messages();
  // Answers that start with punctuation, a space or a word piece: each regenerated alike, in the
  // first turn and in later ones (whose prompts end with earlier answers).
  for (const QString& question : {QStringLiteral("Once upon a time"), QStringLiteral("Lily saw a bird"),
                                  QStringLiteral("Tom"), QStringLiteral("Sue and Ben played")}) {
    session.setInputText(question);
    QVERIFY(session.send());
    QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
    const int last = rows->rowCount() - 1;
    const QString first = rows->textAt(last);
    QVERIFY(!first.isEmpty());
    QVERIFY(session.regenerate());
    QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
    const QString again = rows->textAt(last);
    QCOMPARE(siblingCount(rows, last), 2);
    QCOMPARE(again, first);
    QCOMPARE(store.messages(session.conversationId()).constLast().text, again);  // as stored
  }
}

void TestChatBranches::contextUseOfAnOpenedConversation() {
  // A conversation opened from the history shows its context use before any new request: the
  // engine counts it with the tokenizer and chat template; other branches count on their own.
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  PaneFixture f;
  QTRY_VERIFY_WITH_TIMEOUT(f.engine.isReady(), 60000);
  auto [store, engine, session] = f.parts();
  session.setTemperature(0.0);
  session.setMaxTokens(20);
  session.setInputText(QStringLiteral("Tom had a red ball"));
  QVERIFY(session.send());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  const int live = session.contextUsed();  // the request's prompt + reply, from the engine
  QVERIFY(live > 0);
  const qint64 id = session.conversationId();
  const QString reply = session.messages()->textAt(1);

  session.closeConversation();
  QCOMPARE(session.contextUsed(), 0);
  session.openConversation(id, QStringLiteral("Tom"));
  QTRY_VERIFY_WITH_TIMEOUT(session.contextUsed() > 0, 30000);
  // The same count as the tokenizer and template give for the stored messages as the next
  // request would send them ("none": BOS, the user's text, the reply's text, left open).
  const auto tokenizer_ptr = pagedchat::load_tokenizer(
      (testpaths::stories260K() + QStringLiteral("/tok512.model")).toStdString());
  const pagedchat::Tokenizer& tokenizer = *tokenizer_ptr;
  pagedchat::ChatEncodeOptions encode;
  encode.bos_id = 1;  // llama2.c's BOS
  encode.continue_final_message = true;
  const std::vector<int> ids = pagedchat::encode_chat(
      tokenizer, pagedchat::ChatTemplate::builtin("none"),
      {{"user", "Tom had a red ball"}, {"assistant", reply.toStdString()}}, false, encode);
  QCOMPARE(session.contextUsed(), static_cast<int>(ids.size()));
  // Re-tokenising the reply's text may merge or split a piece or two of what was generated.
  QVERIFY2(std::abs(session.contextUsed() - live) <= 3,
           qPrintable(QStringLiteral("%1 counted, %2 live").arg(session.contextUsed()).arg(live)));

  // Another branch (an edited question) counts on its own; switching back counts again.
  session.setMaxTokens(4);
  QVERIFY(session.editMessage(0, QStringLiteral("Lily")));
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  const int edited = session.contextUsed();
  QVERIFY(edited > 0 && edited < session.contextLimit());
  QVERIFY(session.switchBranch(0, -1));
  QCOMPARE(session.messages()->textAt(0), QStringLiteral("Tom had a red ball"));
  QTRY_COMPARE_WITH_TIMEOUT(session.contextUsed(), static_cast<int>(ids.size()), 30000);
  QVERIFY(session.switchBranch(0, 1));
  QTRY_VERIFY_WITH_TIMEOUT(session.contextUsed() > 0 && session.contextUsed() != static_cast<int>(ids.size()), 30000);
  QVERIFY2(std::abs(session.contextUsed() - edited) <= 3,
           qPrintable(QStringLiteral("%1 counted, %2 live: %3")
                          .arg(session.contextUsed())
                          .arg(edited)
                          .arg(rowTexts(session.messages()).join(QLatin1Char('|')))));

  // A conversation longer than the context counts as a request would send it: the oldest turns
  // are dropped, so it stays within the limit (the whole of it would not fit).
  const qint64 longId = store.createConversation(QStringLiteral("long"));
  QString turn;
  for (int i = 0; i < 12; ++i) turn += QStringLiteral("Lily and Tom went to the park to play with the big red ball. ");
  for (int i = 0; i < 8; ++i) {
    store.addMessage(longId, MessageRole::kUser, turn);
    store.addMessage(longId, MessageRole::kAssistant, turn, FinishReason::kLength);
  }
  session.openConversation(longId, QStringLiteral("long"));
  QTRY_VERIFY_WITH_TIMEOUT(session.contextUsed() > 0, 30000);
  QVERIFY2(session.contextUsed() <= session.contextLimit(),
           qPrintable(QStringLiteral("%1 / %2").arg(session.contextUsed()).arg(session.contextLimit())));
  QVERIFY(session.contextUsed() > session.contextLimit() / 2);  // not just the newest message
}

void TestChatBranches::switchingBackShowsTheBranchSeenLast() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  PaneFixture f;
  QTRY_VERIFY_WITH_TIMEOUT(f.engine.isReady(), 60000);
  auto [store, engine, session] = f.parts();
  session.setMaxTokens(6);
  MessageListModel* rows = session.messages();
  session.setInputText(QStringLiteral("Tom had a red ball"));
  QVERIFY(session.send());
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  const qint64 firstAnswer = rows->at(1).id;
  QVERIFY(session.regenerate());  // a second answer: the newest under the question
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QVERIFY(rows->at(1).id != firstAnswer);
  QVERIFY(session.switchBranch(1, -1));  // the user goes back to the first answer
  QCOMPARE(rows->at(1).id, firstAnswer);

  QVERIFY(session.editMessage(0, QStringLiteral("Lily")));  // another question beside the first
  QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), 30000);
  QCOMPARE(rows->textAt(0), QStringLiteral("Lily"));
  QVERIFY(session.switchBranch(0, -1));  // back to the first question: the answer seen there
  QCOMPARE(rows->textAt(0), QStringLiteral("Tom had a red ball"));
  QCOMPARE(rows->at(1).id, firstAnswer);
  QCOMPARE(siblingIndex(rows, 1), 0);
  QVERIFY(session.switchBranch(0, 1));  // and forward again: the edited question's answer
  QCOMPARE(rows->textAt(0), QStringLiteral("Lily"));
  QCOMPARE(rows->rowCount(), 2);

  // A remembered branch that was deleted: the newest one is shown instead.
  QVERIFY(session.switchBranch(0, -1));
  QVERIFY(session.switchBranch(1, 1));  // the second answer
  QVERIFY(session.switchBranch(0, 1));  // leave the first question, remembering the second answer
  const qint64 secondAnswer = store.siblings(firstAnswer).constLast().id;
  store.deleteMessage(secondAnswer);
  QVERIFY(session.switchBranch(0, -1));
  QCOMPARE(rows->at(1).id, firstAnswer);  // the only answer left
}

QTEST_MAIN(TestChatBranches)
#include "test_chat_branches.moc"
