// Two local models side by side (LocalModels): a pane picks another model, which loads beside the
// main one with its own engine; each pane's greedy answer is its own model's; the memory rule
// refuses a model that would not fit (before loading, and in the engine); a model no pane uses is
// freed; the choice is kept in pagedchat.ini across a restart.
#include <QPointer>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include "app/controllers/app_controller.h"
#include "app/controllers/local_models.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app_test_util.h"
#include "test_paths.h"

namespace {
// Two models of stories260K's shape with different random weights (and the story tokenizer); a
// separate classifier (tied=0): tied random weights would repeat the prompt's last word.
const QString kModelA = QStringLiteral("random:stories260K,seed=11,tied=0");
const QString kModelB = QStringLiteral("random:stories260K,seed=22,tied=0");
const QString kModelC = QStringLiteral("random:stories260K,seed=33,tied=0");
const QString kPrompt = QStringLiteral("Once upon a time");

QString tokenizer() { return testpaths::modelFile(QStringLiteral("stories260K/tok512.model")); }

AppOptions optionsWith(const QString& dataDir, const QString& model) {
  AppOptions o = apptest::optionsFor(dataDir);
  o.modelPath = model;
  o.tokenizerPath = tokenizer();
  o.modelGiven = true;
  return o;
}

/// Greedy, 24 tokens, no end-of-story stop: the answer is a function of the model alone.
void makeGreedy(PaneState* pane) {
  QVERIFY(pane->settings()->apply({{"temperature", "0"}, {"maxTokens", "24"}}).isEmpty());
}

/// The greedy answer of `model` as the main model of a fresh app (one pane).
QString answerAlone(const QString& model) {
  QTemporaryDir dir;
  AppController controller(optionsWith(dir.path(), model));
  controller.start();
  if (!QTest::qWaitFor([&] { return controller.engine()->isReady(); }, 60000)) return QStringLiteral("<no load>");
  PaneState* pane = controller.panes()->paneAt(0);
  makeGreedy(pane);
  pane->setInputText(kPrompt);
  if (!pane->send()) return QStringLiteral("<not sent>");
  if (!QTest::qWaitFor([&] { return !pane->isBusy(); }, 60000)) return QStringLiteral("<no answer>");
  return pane->messages()->textAt(1);
}
}  // namespace

class TestLocalModels : public QObject {
  Q_OBJECT

 private slots:
  void twoModelsAnswerSideBySide();
  void memoryRuleRefusesWhatDoesNotFit();
  void choiceSurvivesRestart();
};

void TestLocalModels::twoModelsAnswerSideBySide() {
  REQUIRE_MODEL_FILE(tokenizer());
  const QString aloneA = answerAlone(kModelA), aloneB = answerAlone(kModelB);
  QVERIFY2(!aloneA.isEmpty() && !aloneA.startsWith(QLatin1Char('<')) && !aloneB.startsWith(QLatin1Char('<')),
           qPrintable(aloneA + QLatin1String(" / ") + aloneB));
  QVERIFY2(aloneA != aloneB, qPrintable(QLatin1String("the same story from two random models: ") + aloneA));

  QTemporaryDir dir;
  AppController controller(optionsWith(dir.path(), kModelA));
  controller.models()->recentModels()->setTokenizerFor(kModelB, tokenizer());
  controller.start();
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  PaneListModel* panes = controller.panes();
  PaneState* first = panes->paneAt(0);
  PaneState* second = panes->addPane();
  QVERIFY(second);
  LocalModels* models = controller.localModels();
  QCOMPARE(models->usePaneModel(1, kModelB), QString());
  QVERIFY(second->usesOtherLocalModel() && !first->usesOtherLocalModel());
  QVERIFY(second->localEngine() != controller.engine());
  QCOMPARE(models->paneModelPath(1), kModelB);
  QCOMPARE(models->paneModelPath(0), QString());
  QCOMPARE(models->others().size(), 1);
  // The main model picked again is the main one: nothing more loads.
  PaneState* third = panes->addPane();
  QCOMPARE(models->usePaneModel(2, kModelA), QString());
  QVERIFY(!third->usesOtherLocalModel());
  QCOMPARE(models->others().size(), 1);
  // Each engine then runs one request, as alone (a batch of two may round differently, and a
  // random model's logits are near ties).
  panes->closePane(2);

  QTRY_VERIFY_WITH_TIMEOUT(second->localEngine()->isReady(), 60000);
  QVERIFY(second->localEngine()->memoryBytes() > 0);
  QCOMPARE(second->contextLimit(), 512);
  for (PaneState* p : panes->panes()) makeGreedy(p);
  QCOMPARE(panes->sendToAll(kPrompt), 2);  // both engines run at once, each with its own batch
  QTRY_VERIFY_WITH_TIMEOUT(!panes->anyBusy(), 60000);
  for (PaneState* p : panes->panes()) QCOMPARE(p->errorText(), QString());
  QCOMPARE(first->messages()->textAt(1), aloneA);
  QCOMPARE(second->messages()->textAt(1), aloneB);
  // Each reply is stored with the model that wrote it (what blind compare's votes name).
  const QList<MessageRecord> stored = controller.store()->messages(second->conversationId());
  QCOMPARE(stored.size(), 2);
  QCOMPARE(stored.at(1).backend, QStringLiteral("local:") + kModelB);
  QCOMPARE(controller.store()->messages(first->conversationId()).at(1).backend, QStringLiteral("local:") + kModelA);

  // Back to the main model: the other one, used by no pane, is freed.
  QPointer<LocalChatBackend> other = second->localEngine();
  QCOMPARE(models->usePaneModel(1, QString()), QString());
  QVERIFY(!second->usesOtherLocalModel());
  QCOMPARE(models->others().size(), 0);
  QTRY_VERIFY_WITH_TIMEOUT(other.isNull(), 10000);
  // Picked again and the pane closed: freed too.
  QCOMPARE(models->usePaneModel(1, kModelB), QString());
  other = second->localEngine();
  QVERIFY(other != controller.engine());
  panes->closePane(1);
  QCOMPARE(models->others().size(), 0);
  QTRY_VERIFY_WITH_TIMEOUT(other.isNull(), 10000);
}

void TestLocalModels::memoryRuleRefusesWhatDoesNotFit() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  AppController controller(apptest::optionsFor(dir.path()));  // stories260K from its file
  controller.models()->recentModels()->setTokenizerFor(kModelB, tokenizer());
  controller.start();
  QTRY_VERIFY_WITH_TIMEOUT(controller.engine()->isReady(), 60000);
  LocalModels* models = controller.localModels();
  PaneState* second = controller.panes()->addPane();
  QVERIFY(second);

  // Less free than the reserve: refused before anything loads, the numbers named.
  models->setMemoryProbe([] { return LocalModels::kReservedBytes / 2; });
  const QString refused = models->usePaneModel(1, kModelB);
  QVERIFY2(refused.contains(QLatin1String("does not fit in memory")), qPrintable(refused));
  QVERIFY2(refused.contains(QLatin1String("kept for the system")), qPrintable(refused));
  QVERIFY(!second->usesOtherLocalModel());
  QCOMPARE(models->others().size(), 0);
  // A path that is no model, or does not exist, is refused at once, saying why.
  models->setMemoryProbe([] { return std::uint64_t(64) << 30; });
  const QString missing = models->usePaneModel(1, dir.filePath(QStringLiteral("missing.gguf")));
  QVERIFY2(missing.contains(QLatin1String("cannot be opened")), qPrintable(missing));
  QVERIFY(!second->usesOtherLocalModel());
  QCOMPARE(models->others().size(), 0);

  // A model whose size is not known before it loads (random weights here) gets what is left as
  // its budget (EngineConfig::host_memory_budget): the engine refuses the load, naming the
  // numbers, and the pane says so when asked to send.
  QVERIFY(controller.engine()->memoryBytes() > 0);
  models->setMemoryProbe([] { return LocalModels::kReservedBytes + 64 * 1024; });  // 64 KiB: less than its weights
  QCOMPARE(models->usePaneModel(1, kModelB), QString());
  QVERIFY(second->usesOtherLocalModel());
  QTRY_VERIFY_WITH_TIMEOUT(!second->localEngine()->isLoading(), 60000);
  QVERIFY(!second->localEngine()->isLoaded());
  QVERIFY2(second->localEngine()->loadError().contains(QLatin1String("not enough memory")),
           qPrintable(second->localEngine()->loadError()));
  second->setInputText(kPrompt);
  QVERIFY(!second->send());
  QVERIFY2(second->errorText().contains(QLatin1String("not enough memory")), qPrintable(second->errorText()));

  // While another model is loaded, a reload of the main one is held to the same rule.
  models->setMemoryProbe([] { return LocalModels::kReservedBytes / 2; });
  controller.models()->openModel(testpaths::stories260K());
  QTRY_VERIFY_WITH_TIMEOUT(!controller.engine()->isLoading(), 60000);
  QVERIFY2(controller.engine()->loadError().contains(QLatin1String("not enough memory")),
           qPrintable(controller.engine()->loadError()));
}

void TestLocalModels::choiceSurvivesRestart() {
  REQUIRE_MODEL_FILE(tokenizer());
  QTemporaryDir dir;
  {
    AppController controller(optionsWith(dir.path(), kModelA));
    controller.models()->recentModels()->setTokenizerFor(kModelC, tokenizer());
    controller.start();
    QVERIFY(controller.panes()->addPane());
    QCOMPARE(controller.localModels()->usePaneModel(1, kModelC), QString());
  }
  QSettings ini(AppController::settingsFile(dir.path()), QSettings::IniFormat);
  QCOMPARE(ini.value(QStringLiteral("panes/2/localModel")).toString(), kModelC);

  AppController restored(optionsWith(dir.path(), kModelA));
  restored.start();
  QCOMPARE(restored.panes()->count(), 2);
  PaneState* second = restored.panes()->paneAt(1);
  QVERIFY(second->usesOtherLocalModel());
  QCOMPARE(restored.localModels()->paneModelPath(1), kModelC);
  QTRY_VERIFY_WITH_TIMEOUT(second->localEngine()->isReady(), 60000);
  QCOMPARE(second->localEngine()->modelName(), kModelC);
}

QTEST_MAIN(TestLocalModels)
#include "test_local_models.moc"
