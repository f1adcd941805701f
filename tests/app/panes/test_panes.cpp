// The side-by-side panes without the GUI: PaneSettings validation and persistence, the sampling
// parameters they give, blind-compare votes in the store, send-to-all with the real model
// (stories260K: every pane streams at once), blind compare's rounds, and the Markdown splitter
// and block model the message view renders.
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/controllers/app_controller.h"
#include "app/engine/model_defaults.h"
#include "app/panes/blind_compare.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_settings.h"
#include "app/panes/pane_state.h"
#include "app/render/markdown_blocks.h"
#include "app/render/message_blocks_model.h"
#include "app/store/chat_store.h"
#include "app_test_util.h"
#include "engine/sample/sampling_defaults.h"

using Kind = MarkdownBlock::Kind;

class TestPanes : public QObject {
  Q_OBJECT

 private slots:
  void settingsValidation();
  void settingsSamplingParams();
  void settingsPersistPerPane();
  void settingsFollowTheModel();
  void appearancePersists();
  void compareVoteStorage();
  void sendToAllStreamsInEveryPane();
  void blindCompareRound();
  void markdownPlainProse();
  void markdownFences();
  void markdownUnclosedFenceWhileStreaming();
  void markdownTildesAndNestedBackticks();
  void markdownLongProseChunks();
  void blocksModelTouchesOnlyChangedRows();
  void blocksModelThrottlesWhileStreaming();
};

void TestPanes::settingsValidation() {
  PaneSettings s;
  QSignalSpy changed(&s, &PaneSettings::changed);
  // Everything wrong at once: each field says why, nothing changes.
  const QVariantMap errors = s.apply({{"temperature", "hot"},
                                      {"topP", "0"},
                                      {"topK", "2.5"},
                                      {"minP", "-0.1"},
                                      {"repetitionPenalty", "3"},
                                      {"maxTokens", "0"},
                                      {"seed", "-4"}});
  QCOMPARE(errors.size(), 7);
  QCOMPARE(errors.value("temperature").toString(), QStringLiteral("Temperature must be a number."));
  QCOMPARE(errors.value("topP").toString(), QStringLiteral("Top-p must be between 0.01 and 1."));
  QVERIFY(errors.value("topK").toString().contains("whole number"));
  QCOMPARE(errors.value("repetitionPenalty").toString(),
           QStringLiteral("Repetition penalty must be between 0.5 and 2."));
  QVERIFY(errors.value("seed").toString().contains("random"));
  QCOMPARE(changed.size(), 0);
  QCOMPARE(s.temperature(), 0.8);
  QCOMPARE(s.maxTokens(), 256);
  QCOMPARE(s.seed(), QStringLiteral("random"));

  // One bad field blocks the good ones too.
  QVERIFY(!s.apply({{"temperature", "0.5"}, {"maxTokens", "99999999"}}).isEmpty());
  QCOMPARE(s.temperature(), 0.8);

  // Valid text as typed (comma decimal, spaces) applies with one changed().
  QVERIFY(s.apply({{"systemPrompt", "Be brief."},
                   {"temperature", " 0,5 "},
                   {"topP", "0.9"},
                   {"topK", "40"},
                   {"minP", "0.05"},
                   {"repetitionPenalty", "1.1"},
                   {"maxTokens", "128"},
                   {"seed", "42"}})
              .isEmpty());
  QCOMPARE(changed.size(), 1);
  QCOMPARE(s.systemPrompt(), QStringLiteral("Be brief."));
  QCOMPARE(s.temperature(), 0.5);
  QCOMPARE(s.topK(), 40);
  QCOMPARE(s.seed(), QStringLiteral("42"));
  QVERIFY(s.summary().contains("seed 42"));
  // The same values again: no signal.
  QVERIFY(s.apply({{"temperature", 0.5}}).isEmpty());
  QCOMPARE(changed.size(), 1);
  QVERIFY(s.apply({{"seed", "Random"}}).isEmpty());
  QCOMPARE(s.seed(), QStringLiteral("random"));

  // Setters clamp; reset keeps the prompt unless asked.
  s.setTemperature(9);
  QCOMPARE(s.temperature(), 2.0);
  s.setMaxTokens(-3);
  QCOMPARE(s.maxTokens(), 1);
  s.reset();
  QCOMPARE(s.temperature(), 0.8);
  QCOMPARE(s.systemPrompt(), QStringLiteral("Be brief."));
  s.reset(true);
  QCOMPARE(s.systemPrompt(), QString());
}

void TestPanes::settingsSamplingParams() {
  PaneSettings s;
  pagedchat::SamplingParams p = s.samplingParams();
  QVERIFY(!p.seed.has_value());
  QCOMPARE(p.output_kind, pagedchat::RequestOutputKind::kDelta);
  QVERIFY(s.apply({{"temperature", "0"},
                   {"topP", "0.5"},
                   {"topK", "7"},
                   {"minP", "0.2"},
                   {"repetitionPenalty", "1.3"},
                   {"maxTokens", "33"},
                   {"seed", "1234"}})
              .isEmpty());
  p = s.samplingParams();
  QCOMPARE(p.temperature, 0.0f);
  QCOMPARE(p.top_p, 0.5f);
  QCOMPARE(p.top_k, 7);
  QCOMPARE(p.min_p, 0.2f);
  QCOMPARE(p.repetition_penalty, 1.3f);
  QCOMPARE(p.max_tokens, 33);
  QCOMPARE(p.seed.value(), quint64(1234));
  p.validate();  // the engine accepts them (throws otherwise)

  // Draft tokens: one of four proposers; an earlier version's on/off switch reads as auto/off.
  QCOMPARE(s.drafts(), QStringLiteral("auto"));
  QVERIFY(s.apply({{"drafts", "eagle"}}).contains(QStringLiteral("drafts")));
  QVERIFY(s.apply({{"drafts", "draft"}}).isEmpty());
  QVERIFY(s.apply({{"drafts", "mtp"}}).isEmpty());
  QCOMPARE(s.drafts(), QStringLiteral("mtp"));
  QCOMPARE(s.toMap().value(QStringLiteral("drafts")).toString(), QStringLiteral("mtp"));
  PaneSettings old;
  old.fromMap({{"speculative", false}});
  QCOMPARE(old.drafts(), QStringLiteral("off"));
  old.fromMap({{"speculative", "true"}});
  QCOMPARE(old.drafts(), QStringLiteral("auto"));
  // Tinting accepted draft text: off by default, a switch, kept in the map (pagedchat.ini).
  QCOMPARE(s.tintDrafts(), false);
  QVERIFY(s.apply({{"tintDrafts", "sometimes"}}).contains(QStringLiteral("tintDrafts")));
  QCOMPARE(s.tintDrafts(), false);
  QVERIFY(s.apply({{"tintDrafts", "true"}}).isEmpty());
  QCOMPARE(s.tintDrafts(), true);
  PaneSettings tinted;
  tinted.fromMap(s.toMap());
  QCOMPARE(tinted.tintDrafts(), true);
  // Tool calls: the model decides by default; "required" or a tool's name, kept; "" reads as auto.
  QCOMPARE(s.toolChoice(), QStringLiteral("auto"));
  QVERIFY(s.apply({{"toolChoice", "get-sum"}}).isEmpty());
  tinted.fromMap(s.toMap());
  QCOMPARE(tinted.toolChoice(), QStringLiteral("get-sum"));
  QVERIFY(s.apply({{"toolChoice", ""}}).isEmpty());
  QCOMPARE(s.toolChoice(), QStringLiteral("auto"));

  // A stored map with a bad field keeps the others.
  PaneSettings t;
  t.fromMap({{"temperature", 1.5}, {"maxTokens", "lots"}, {"seed", "7"}});
  QCOMPARE(t.temperature(), 1.5);
  QCOMPARE(t.maxTokens(), 256);
  QCOMPARE(t.seed(), QStringLiteral("7"));
  QCOMPARE(t.toJson().value("temperature").toDouble(), 1.5);
}

void TestPanes::settingsPersistPerPane() {
  QTemporaryDir dir;
  AppOptions options = apptest::optionsFor(dir.path());
  {
    AppController controller(options);
    QVERIFY(controller.panes()->addPane());
    PaneState* first = controller.panes()->paneAt(0);
    PaneState* second = controller.panes()->paneAt(1);
    QVERIFY(first->settings()->apply({{"systemPrompt", "You are A."}, {"temperature", "0.2"}}).isEmpty());
    QVERIFY(second->settings()->apply({{"seed", "99"}, {"maxTokens", "64"}, {"topK", "5"}}).isEmpty());
    QCOMPARE(first->temperature(), 0.2);  // the session's shortcut reads the settings
    QCOMPARE(first->systemPrompt(), QStringLiteral("You are A."));
  }
  AppController restored(options);
  QCOMPARE(restored.panes()->count(), 2);
  const PaneSettings* a = restored.panes()->paneAt(0)->settings();
  const PaneSettings* b = restored.panes()->paneAt(1)->settings();
  QCOMPARE(a->systemPrompt(), QStringLiteral("You are A."));
  QCOMPARE(a->temperature(), 0.2);
  QCOMPARE(a->seed(), QStringLiteral("random"));
  QCOMPARE(b->seed(), QStringLiteral("99"));
  QCOMPARE(b->maxTokens(), 64);
  QCOMPARE(b->topK(), 5);
  QCOMPARE(b->temperature(), 0.8);
  QVERIFY(b->customized().contains("topK") && b->customized().contains("maxTokens"));

  // pagedchat.ini holds them as readable keys, one group per pane (the README invites editing it).
  QFile ini(AppController::settingsFile(dir.path()));
  QVERIFY(ini.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(ini.readAll());
  QVERIFY2(!text.contains("@Variant"), qPrintable(text));
  QVERIFY2(text.contains("1\\systemPrompt=You are A.") && text.contains("1\\temperature=0.2") &&
               text.contains("2\\topK=5") && text.contains("size=2"),
           qPrintable(text));
  QVERIFY2(!text.contains("2\\temperature") && !text.contains("customized"), qPrintable(text));  // only the user's
  ini.close();

  // An edit by hand is taken; the form before (binary lists under panes/settings) is still read.
  {
    QSettings edit(AppController::settingsFile(dir.path()), QSettings::IniFormat);
    edit.setValue("panes/1/temperature", "1.3");
    edit.setValue("panes/2/minP", "0.2");  // a field added by hand is the user's too
  }
  {
    AppController edited(options);
    QCOMPARE(edited.panes()->paneAt(0)->settings()->temperature(), 1.3);
    QCOMPARE(edited.panes()->paneAt(1)->settings()->minP(), 0.2);
    QVERIFY(edited.panes()->paneAt(1)->settings()->customized().contains("minP"));
  }
  {
    QSettings old(AppController::settingsFile(dir.path()), QSettings::IniFormat);
    old.remove("panes");
    old.setValue("panes/conversations", QVariantList{0, 0, 0});
    old.setValue("panes/settings",
                 QVariantList{QVariantMap{{"temperature", 0.3}, {"customized", QStringList{"temperature"}}},
                              QVariantMap{}, QVariantMap{{"topP", 0.5}, {"customized", QStringList{"topP"}}}});
  }
  {
    AppController migrated(options);
    QCOMPARE(migrated.panes()->count(), 3);
    QCOMPARE(migrated.panes()->paneAt(0)->settings()->temperature(), 0.3);
    QCOMPARE(migrated.panes()->paneAt(2)->settings()->topP(), 0.5);
  }
  QFile after(AppController::settingsFile(dir.path()));
  QVERIFY(after.open(QIODevice::ReadOnly));
  QVERIFY(!after.readAll().contains("@Variant"));  // rewritten in the readable form
}

// The model's generation_config.json suggestions fill the fields the user has not set (as vLLM
// fills a request's unset fields); a field the user changed stays theirs across models and
// restarts; reset() gives everything back to the model.
void TestPanes::settingsFollowTheModel() {
  pagedchat::SamplingDefaults qwen3;  // Qwen3's generation_config.json
  qwen3.do_sample = true;
  qwen3.temperature = 0.6f;
  qwen3.top_k = 20;
  qwen3.top_p = 0.95f;
  pagedchat::SamplingDefaults greedy;  // {"do_sample": false, "temperature": 0.9}
  greedy.do_sample = false;
  greedy.temperature = 0.9f;
  QCOMPARE(modelDefaultsMap(greedy).value("temperature").toDouble(), 0.0);
  QVERIFY(modelDefaultsMap({}).isEmpty());

  PaneSettings s;
  const PaneSettings app;
  QSignalSpy changed(&s, &PaneSettings::changed);
  s.setModelDefaults(modelDefaultsMap(qwen3));
  QCOMPARE(changed.count(), 1);
  QCOMPARE(s.temperature(), double(0.6f));
  QCOMPARE(s.topK(), 20);
  QCOMPARE(s.topP(), double(0.95f));
  QCOMPARE(s.maxTokens(), app.maxTokens());  // the model sets none: the app's
  QVERIFY(s.customized().isEmpty());

  // The popup sends every field; only the one the user changed becomes theirs.
  QVariantMap form = s.toMap();
  form.insert("topK", "40");
  QVERIFY(s.apply(form).isEmpty());
  QCOMPARE(s.customized(), QStringList{"topK"});
  s.setModelDefaults(modelDefaultsMap(greedy));  // another model
  QCOMPARE(s.temperature(), 0.0);
  QCOMPARE(s.topK(), 40);
  QCOMPARE(s.topP(), app.topP());  // greedy's file has no top_p: back to the app's

  // Stored and restored: the list of the user's fields travels with the values.
  PaneSettings restored;
  restored.fromMap(s.toMap());
  QCOMPARE(restored.customized(), QStringList{"topK"});
  restored.setModelDefaults(modelDefaultsMap(qwen3));
  QCOMPARE(restored.temperature(), double(0.6f));
  QCOMPARE(restored.topK(), 40);
  // A map stored before there was such a list: fields off the app's default are the user's.
  PaneSettings old;
  old.fromMap({{"temperature", 0.8}, {"topK", 5}, {"maxTokens", 256}});
  QCOMPARE(old.customized(), QStringList{"topK"});

  // Setting a field back to the model's value, or reset(), follows the model again.
  form = s.toMap();
  form.insert("topK", "0");
  QVERIFY(s.apply(form).isEmpty());
  QVERIFY(s.customized().isEmpty());
  QVERIFY(s.apply({{"temperature", "1.1"}}).isEmpty());
  QCOMPARE(s.customized(), QStringList{"temperature"});
  s.reset();
  QVERIFY(s.customized().isEmpty());
  QCOMPARE(s.temperature(), 0.0);
}

void TestPanes::appearancePersists() {
  QTemporaryDir dir;
  AppOptions options = apptest::optionsFor(dir.path());
  {
    AppController controller(options);
    QCOMPARE(controller.appearance()->theme(), QStringLiteral("system"));
    QCOMPARE(controller.appearance()->fontSize(), Appearance::kDefaultFontSize);
    QSignalSpy spy(controller.appearance(), &Appearance::changed);
    controller.appearance()->setTheme(QStringLiteral("dark"));
    controller.appearance()->setTheme(QStringLiteral("purple"));  // ignored
    controller.appearance()->setFontSize(100);                    // clamped
    QCOMPARE(spy.size(), 2);
    QCOMPARE(controller.appearance()->theme(), QStringLiteral("dark"));
    QCOMPARE(controller.appearance()->fontSize(), Appearance::kMaxFontSize);
  }
  AppController restored(options);
  QCOMPARE(restored.appearance()->theme(), QStringLiteral("dark"));
  QCOMPARE(restored.appearance()->fontSize(), Appearance::kMaxFontSize);
}

void TestPanes::compareVoteStorage() {
  QTemporaryDir dir;
  QJsonArray panes;
  for (int i = 0; i < 2; ++i) {
    QJsonObject settings{{"temperature", 0.5 + i}, {"seed", "random"}};
    panes.append(QJsonObject{{"conversationId", 10 + i},
                             {"messageId", 20 + i},
                             {"label", QString(QChar('A' + i))},
                             {"settings", settings},
                             {"text", QStringLiteral("answer %1 ✓ 한국어").arg(i)}});
  }
  {
    ChatStore store(dir.path());
    QCOMPARE(store.compareVotes().size(), 0);
    const qint64 first = store.addCompareVote(QStringLiteral("Which story?"), 1, panes);
    const qint64 tie = store.addCompareVote(QStringLiteral("Again"), -1, panes);
    QVERIFY(first > 0 && tie > first);
    // Bad input: a clear error, nothing stored.
    QVERIFY_THROWS_EXCEPTION(StoreError, store.addCompareVote(QStringLiteral("x"), 2, panes));
    QVERIFY_THROWS_EXCEPTION(StoreError, store.addCompareVote(QStringLiteral("x"), 0, QJsonArray{panes.at(0)}));
    try {
      store.addCompareVote(QStringLiteral("x"), 5, panes);
    } catch (const StoreError& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains("winner pane 5"), e.what());
    }
  }
  ChatStore reopened(dir.path());  // survives a restart
  const QJsonArray votes = reopened.compareVotes();
  QCOMPARE(votes.size(), 2);
  const QJsonObject v = votes.at(0).toObject();
  QCOMPARE(v.value("prompt").toString(), QStringLiteral("Which story?"));
  QCOMPARE(v.value("winnerPane").toInt(), 1);
  QCOMPARE(v.value("panes").toArray(), panes);
  QVERIFY(!v.value("createdAt").toString().isEmpty());
  QCOMPARE(votes.at(1).toObject().value("winnerPane").toInt(), -1);
}

void TestPanes::sendToAllStreamsInEveryPane() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));
  controller.start();
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  PaneListModel* panes = controller.panes();
  QVERIFY(panes->addPane());
  QVERIFY(panes->addPane());
  panes->paneAt(0)->setInputText(QStringLiteral("my own draft"));
  for (PaneState* s : panes->panes()) QVERIFY(s->settings()->apply({{"maxTokens", "48"}}).isEmpty());
  // Pane 3 is greedy; the others sample.
  QVERIFY(panes->paneAt(2)->settings()->apply({{"temperature", "0"}}).isEmpty());

  QSignalSpy sent(panes, &PaneListModel::sentToAll);
  QCOMPARE(panes->sendToAll(QStringLiteral("   ")), 0);  // nothing to send
  QCOMPARE(panes->sendToAll(QStringLiteral("Once upon a time")), 3);
  QCOMPARE(sent.size(), 1);
  // All three run at once in the engine's batch.
  for (PaneState* s : panes->panes()) QVERIFY(s->isBusy());
  QVERIFY(panes->anyBusy());
  QCOMPARE(panes->paneAt(0)->inputText(), QStringLiteral("my own draft"));  // drafts untouched
  QCOMPARE(panes->sendToAll(QStringLiteral("again")), 0);                   // all busy: skipped
  QTRY_VERIFY_WITH_TIMEOUT(!panes->anyBusy(), 60000);
  QSet<qint64> conversations;
  for (PaneState* s : panes->panes()) {
    QCOMPARE(s->errorText(), QString());
    QVERIFY(s->conversationId() != 0);  // each created its own
    conversations.insert(s->conversationId());
    QCOMPARE(s->messages()->rowCount(), 2);
    QCOMPARE(s->messages()->textAt(0), QStringLiteral("Once upon a time"));
    QVERIFY(!s->messages()->textAt(1).isEmpty());
    QVERIFY(s->contextUsed() > s->promptTokens());
    QCOMPARE(s->contextLimit(), 512);  // stories260K's max positions
    QCOMPARE(controller.store()->messages(s->conversationId()).size(), 2);
  }
  QCOMPARE(conversations.size(), 3);
  QCOMPARE(controller.conversations()->rowCount(), 3);
}

void TestPanes::blindCompareRound() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));
  controller.start();
  BlindCompare* compare = controller.compare();
  QVERIFY(!compare->isAvailable());
  compare->setEnabled(true);  // one pane: cannot compare
  QVERIFY(!compare->isEnabled());
  QVERIFY(controller.panes()->addPane());
  QVERIFY(compare->isAvailable());
  compare->setEnabled(true);
  QVERIFY(compare->isEnabled() && compare->isHidden());
  QCOMPARE(compare->phase(), QStringLiteral("idle"));
  QVERIFY(!compare->vote(0));  // nothing to vote on yet
  QVERIFY(!compare->errorText().isEmpty());

  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  for (PaneState* s : controller.panes()->panes())
    QVERIFY(s->settings()->apply({{"maxTokens", "24"}, {"seed", "5"}}).isEmpty());
  QVERIFY(controller.panes()->paneAt(1)->settings()->apply({{"temperature", "1.5"}}).isEmpty());
  const QStringList shown = compare->labels();  // what the pane headers show now
  QCOMPARE(controller.panes()->sendToAll(QStringLiteral("Tom had a dog")), 2);
  QCOMPARE(compare->phase(), QStringLiteral("generating"));
  QCOMPARE(compare->labels(), shown);  // the first round keeps the labels already shown
  QStringList labels = compare->labels();
  labels.sort();
  QCOMPARE(labels, (QStringList{"A", "B"}));
  QCOMPARE(compare->paneForLabel(0), static_cast<int>(compare->labels().indexOf("A")));
  QTRY_COMPARE_WITH_TIMEOUT(compare->phase(), QStringLiteral("voting"), 60000);
  QVERIFY(compare->isHidden());

  const int winner = compare->paneForLabel(1);  // "B is better"
  QVERIFY(compare->vote(winner));
  QCOMPARE(compare->phase(), QStringLiteral("revealed"));
  QVERIFY(!compare->isHidden());
  QCOMPARE(compare->winnerPane(), winner);
  const QJsonArray votes = controller.store()->compareVotes();
  QCOMPARE(votes.size(), 1);
  const QJsonObject vote = votes.at(0).toObject();
  QCOMPARE(vote.value("prompt").toString(), QStringLiteral("Tom had a dog"));
  QCOMPARE(vote.value("winnerPane").toInt(), winner);  // the panes are stored in pane order
  const QJsonArray panes = vote.value("panes").toArray();
  QCOMPARE(panes.size(), 2);
  for (int i = 0; i < 2; ++i) {
    const QJsonObject p = panes.at(i).toObject();
    PaneState* s = controller.panes()->paneAt(i);
    QCOMPARE(p.value("conversationId").toInteger(), s->conversationId());
    QCOMPARE(p.value("messageId").toInteger(), s->messages()->at(1).id);
    QCOMPARE(p.value("text").toString(), s->messages()->textAt(1));
    QCOMPARE(p.value("label").toString(), compare->labelFor(i));
    QCOMPARE(p.value("settings").toObject().value("temperature").toDouble(), i == 1 ? 1.5 : 0.8);
  }
  QVERIFY(!compare->vote(0));  // once per round
  compare->setEnabled(false);
  QCOMPARE(compare->phase(), QStringLiteral("idle"));
}

void TestPanes::markdownPlainProse() {
  QCOMPARE(splitMarkdownBlocks(QString()).size(), 0);
  const QList<MarkdownBlock> b = splitMarkdownBlocks(QStringLiteral("Hello **world**\n\n- a\n- b\n"));
  QCOMPARE(b.size(), 1);
  QCOMPARE(b[0].kind, Kind::Prose);
  QCOMPARE(b[0].text, QStringLiteral("Hello **world**\n\n- a\n- b"));
  // Inline code and two backticks are prose.
  QCOMPARE(splitMarkdownBlocks(QStringLiteral("use `x` and ``y`` here")).size(), 1);
}

void TestPanes::markdownFences() {
  const QString text = QStringLiteral(
      "Intro\n\n```cpp title=\"a\"\nint main() {\n  return 0;\n}\n```\nBetween\n  ```\nindented\n    more\n  ```\nEnd");
  const QList<MarkdownBlock> b = splitMarkdownBlocks(text);
  QCOMPARE(b.size(), 5);
  QCOMPARE(b[0].text, QStringLiteral("Intro"));
  QCOMPARE(b[1].kind, Kind::Code);
  QCOMPARE(b[1].language, QStringLiteral("cpp"));
  QCOMPARE(b[1].text, QStringLiteral("int main() {\n  return 0;\n}"));
  QVERIFY(b[1].closed);
  QCOMPARE(b[2].text, QStringLiteral("Between"));
  QCOMPARE(b[3].language, QString());
  QCOMPARE(b[3].text, QStringLiteral("indented\n  more"));  // the fence's indent removed
  QCOMPARE(b[4].text, QStringLiteral("End"));
  // Four spaces of indent is not a fence; a backtick fence's info may not hold backticks.
  QCOMPARE(splitMarkdownBlocks(QStringLiteral("    ```\ncode?")).size(), 1);
  QCOMPARE(splitMarkdownBlocks(QStringLiteral("```a`b\nnot code")).at(0).kind, Kind::Prose);
  // CRLF line ends.
  const QList<MarkdownBlock> crlf = splitMarkdownBlocks(QStringLiteral("```py\r\nx = 1\r\n```\r\n"));
  QCOMPARE(crlf.size(), 1);
  QCOMPARE(crlf[0].text, QStringLiteral("x = 1"));
  QVERIFY(crlf[0].closed);
}

void TestPanes::markdownUnclosedFenceWhileStreaming() {
  // Streaming: the opening fence has come, the closing one not yet.
  QList<MarkdownBlock> b = splitMarkdownBlocks(QStringLiteral("Here:\n```python\nprint(1)\npri"));
  QCOMPARE(b.size(), 2);
  QCOMPARE(b[1].kind, Kind::Code);
  QCOMPARE(b[1].language, QStringLiteral("python"));
  QCOMPARE(b[1].text, QStringLiteral("print(1)\npri"));
  QVERIFY(!b[1].closed);
  // Half a closing fence is still code; the full one closes it.
  b = splitMarkdownBlocks(QStringLiteral("```\nx\n``"));
  QCOMPARE(b.size(), 1);
  QCOMPARE(b[0].text, QStringLiteral("x\n``"));
  QVERIFY(!b[0].closed);
  b = splitMarkdownBlocks(QStringLiteral("```\nx\n```"));
  QVERIFY(b[0].closed);
  QCOMPARE(b[0].text, QStringLiteral("x"));
  // Just the fence so far.
  b = splitMarkdownBlocks(QStringLiteral("```"));
  QCOMPARE(b.size(), 1);
  QCOMPARE(b[0].text, QString());
}

void TestPanes::markdownTildesAndNestedBackticks() {
  // ~~~ fences; ``` inside does not close them.
  QList<MarkdownBlock> b = splitMarkdownBlocks(QStringLiteral("~~~md\n```js\nx\n```\n~~~\nafter"));
  QCOMPARE(b.size(), 2);
  QCOMPARE(b[0].language, QStringLiteral("md"));
  QCOMPARE(b[0].text, QStringLiteral("```js\nx\n```"));
  QCOMPARE(b[1].text, QStringLiteral("after"));
  // A four-backtick fence holds ``` lines and closes only with four or more.
  b = splitMarkdownBlocks(QStringLiteral("````\n```\ninner\n```\n`````\ntail"));
  QCOMPARE(b.size(), 2);
  QCOMPARE(b[0].text, QStringLiteral("```\ninner\n```"));
  QVERIFY(b[0].closed);
  // A closing fence with text after it is content.
  b = splitMarkdownBlocks(QStringLiteral("```\n``` not closing\n```"));
  QCOMPARE(b.size(), 1);
  QCOMPARE(b[0].text, QStringLiteral("``` not closing"));
}

void TestPanes::markdownLongProseChunks() {
  QString text;
  for (int i = 0; i < 100; ++i) text += QStringLiteral("Paragraph %1 with some words in it.\n\n").arg(i);
  const QList<MarkdownBlock> b = splitMarkdownBlocks(text, 400);
  QVERIFY2(b.size() >= 8, qPrintable(QString::number(b.size())));
  QString joined;
  for (const MarkdownBlock& block : b) {
    QCOMPARE(block.kind, Kind::Prose);
    QVERIFY(block.text.size() < 500);
    joined += block.text + QStringLiteral("\n\n");
  }
  QCOMPARE(joined, text);  // nothing lost or reordered
}

void TestPanes::blocksModelTouchesOnlyChangedRows() {
  MessageBlocksModel model;
  model.setText(QStringLiteral("Intro\n\n```cpp\nint x;\n```\nTail"));
  QCOMPARE(model.rowCount(), 3);
  QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
  QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
  model.setText(QStringLiteral("Intro\n\n```cpp\nint x;\n```\nTail more"));
  QCOMPARE(changed.size(), 1);
  QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 2);  // only the last block
  QCOMPARE(inserted.size(), 0);
  model.setText(model.text() + QStringLiteral("\n```py\nprint"));
  QCOMPARE(model.rowCount(), 4);
  QCOMPARE(inserted.size(), 1);
  const QModelIndex last = model.index(3);
  QCOMPARE(last.data(MessageBlocksModel::KindRole).toString(), QStringLiteral("code"));
  QCOMPARE(last.data(MessageBlocksModel::LanguageRole).toString(), QStringLiteral("py"));
  QCOMPARE(last.data(MessageBlocksModel::ClosedRole).toBool(), false);
  QCOMPARE(model.index(1).data(MessageBlocksModel::TextRole).toString(), QStringLiteral("int x;"));
}

void TestPanes::blocksModelThrottlesWhileStreaming() {
  MessageBlocksModel model;
  model.setStreaming(true);
  model.setText(QStringLiteral("a"));
  const int first = model.updateCount();
  QCOMPARE(first, 1);  // the first text shows at once
  for (int i = 0; i < 200; ++i) model.setText(model.text() + QStringLiteral(" word"));
  QCOMPARE(model.updateCount(), first);  // coalesced
  QTRY_COMPARE_WITH_TIMEOUT(model.updateCount(), first + 1, 1000);
  QCOMPARE(model.index(0).data(MessageBlocksModel::TextRole).toString(), model.text());
  model.setText(model.text() + QStringLiteral(" end"));
  model.setStreaming(false);  // the end shows at once
  QCOMPARE(model.index(0).data(MessageBlocksModel::TextRole).toString(), model.text());
  model.setText(QStringLiteral("not streaming"));
  QCOMPARE(model.index(0).data(MessageBlocksModel::TextRole).toString(), QStringLiteral("not streaming"));
}

QTEST_MAIN(TestPanes)
#include "test_panes.moc"
