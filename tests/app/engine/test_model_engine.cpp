// Loading, replacing and unloading models through the app (the real engine, stories260K, real
// files): a truncated model file reports its name and the reason and the app stays usable; unload
// then load again; load progress is non-decreasing and ends at 100 %; engine settings applied by a
// reload give the new KV block count; the engine monitor's snapshot while two panes generate.
#include <QDir>
#include <QFile>
#include <QSemaphore>
#include <QSettings>

#include <atomic>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/app_options.h"
#include "app/controllers/app_controller.h"
#include "app/controllers/engine_monitor.h"
#include "app/controllers/recent_models_model.h"
#include "app/engine/engine_worker.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/finish_reason_text.h"
#include "app_test_util.h"
#include "engine/llm.h"
#include "engine/model/kv_cache.h"

using apptest::longContextOptions;
using apptest::optionsFor;
using pagedchat::FinishReason;

namespace {

/// A copy of stories260K's checkpoint cut to `bytes`, beside its tokenizer, in `dir`.
QString truncatedCopy(const QTemporaryDir& dir, qint64 bytes) {
  const QString src = testpaths::modelFile(QStringLiteral("stories260K/stories260K.bin"));
  QFile in(src);
  if (!in.open(QIODevice::ReadOnly)) return {};
  const QString path = dir.filePath(QStringLiteral("broken.bin"));
  QFile out(path);
  if (!out.open(QIODevice::WriteOnly)) return {};
  out.write(in.read(bytes));
  QFile::copy(testpaths::modelFile(QStringLiteral("stories260K/tok512.model")),
              dir.filePath(QStringLiteral("tok512.model")));
  return path;
}

/// Sends `text` in `session` and waits until its reply finished; returns the finish reason.
QString chat(PaneState* session, const QString& text) {
  QSignalSpy finished(session, &PaneState::replyFinished);
  session->setInputText(text);
  if (!session->send()) return QStringLiteral("not sent: ") + session->errorText();
  if (!finished.wait(60000) && finished.isEmpty()) return QStringLiteral("timeout");
  return finishReasonText(finished.at(0).at(0).value<FinishReason>());
}

}  // namespace

class TestModelEngine : public QObject {
  Q_OBJECT

 private slots:
  void truncatedFileReportsNameAndReason();
  void unloadThenLoadAgain();
  void openingAModelStopsRunningReplies();
  void progressIsMonotonic();
  void settingsReloadChangesBlockCount();
  void savedTooSmallKvCacheFallsBackToAutomatic();
  void rememberedModelLoadsNextStart();
  void randomModelInRecents();
  void monitorSnapshotWhileTwoPanesGenerate();
};

void TestModelEngine::truncatedFileReportsNameAndReason() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir models, data;
  {
    // Started on a broken file, nothing loaded before: no model; sending is refused with the
    // reason and nothing is lost.
    const QString broken = truncatedCopy(models, 20);
    QVERIFY(!broken.isEmpty());
    AppOptions options = optionsFor(data.path());
    options.modelPath = broken;
    AppController app(options);
    app.start();
    QTRY_VERIFY_WITH_TIMEOUT(!app.engine()->isLoading(), 60000);
    QVERIFY(!app.engine()->isLoaded());
    QVERIFY2(app.models()->loadError().contains(QLatin1String("broken.bin")), qPrintable(app.models()->loadError()));
    PaneState* session = app.panes()->paneAt(0);
    session->setInputText(QStringLiteral("Hello"));
    QVERIFY(!session->send());
    QVERIFY2(session->errorText().contains(QLatin1String("broken.bin")), qPrintable(session->errorText()));
    QCOMPARE(session->inputText(), QStringLiteral("Hello"));
  }

  AppController app(optionsFor(data.path()));
  app.start();
  LocalChatBackend* engine = app.engine();
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  const QString good = engine->modelPath();
  for (const qint64 bytes : {qint64(0), qint64(20), qint64(100000)}) {
    const QString broken = truncatedCopy(models, bytes);
    QVERIFY(!broken.isEmpty());
    QSignalSpy done(engine, &LocalChatBackend::modelLoadFinished);
    app.models()->openModel(broken);
    QVERIFY(engine->isLoading());
    QVERIFY(app.models()->loadError().isEmpty());  // a new attempt clears the last one's message
    // The broken file fails with its name and a reason; then the model loaded before is back.
    QTRY_VERIFY_WITH_TIMEOUT(done.count() >= 2, 60000);
    QCOMPARE(done.at(0).at(0).toBool(), false);
    QCOMPARE(done.at(0).at(1).toString(), broken);
    const QString error = done.at(0).at(2).toString();
    QVERIFY2(error.contains(QLatin1String("broken.bin")), qPrintable(error));
    QVERIFY2(error.size() > QStringLiteral("broken.bin").size() + 10, qPrintable(error));  // and a reason
    QCOMPARE(done.at(1).at(0).toBool(), true);
    QCOMPARE(done.at(1).at(1).toString(), good);
    QVERIFY(engine->isReady());
    QCOMPARE(engine->modelPath(), good);
    QVERIFY2(
        app.models()->loadError().startsWith(error) && app.models()->loadError().contains(QLatin1String("stories260K")),
        qPrintable(app.models()->loadError()));
    QCOMPARE(app.errors()->text(), app.models()->loadError());
    QVERIFY(!app.models()->recentModels()->paths().contains(broken));  // only loaded models are remembered
    QCOMPARE(app.models()->recentModels()->paths().value(0), good);
    // The app stays usable with the model it had.
    const QString reason = chat(app.panes()->paneAt(0), QStringLiteral("Once upon a time"));
    QVERIFY2(reason == QLatin1String("stop") || reason == QLatin1String("length"), qPrintable(reason));
  }

  // Opening the good model again (or unloading) clears the message.
  app.models()->openModel(good);
  QVERIFY(app.models()->loadError().isEmpty());
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  QVERIFY(engine->loadError().isEmpty());
}

void TestModelEngine::unloadThenLoadAgain() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  AppController app(optionsFor(data.path()));
  app.start();
  LocalChatBackend* engine = app.engine();
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  PaneState* session = app.panes()->paneAt(0);
  session->setMaxTokens(8);
  QCOMPARE(chat(session, QStringLiteral("Once upon a time")), QStringLiteral("length"));

  // A long reply running while the model is unloaded stops with its text so far kept.
  session->setMaxTokens(400);
  QSignalSpy finished(session, &PaneState::replyFinished);
  QSignalSpy steps(engine, &LocalChatBackend::stepFinished);
  session->setInputText(QStringLiteral("Lily went to the park"));
  QVERIFY(session->send());
  QVERIFY(steps.wait(30000));
  app.models()->unloadModel();
  QVERIFY(!engine->isLoaded());
  QVERIFY(!engine->isReady());
  QVERIFY(engine->modelPath().isEmpty());
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
  const QString reason = finishReasonText(finished.at(0).at(0).value<FinishReason>());
  QVERIFY2(reason == QLatin1String("abort") || reason == QLatin1String("length") || reason == QLatin1String("stop"),
           qPrintable(reason));
  const int rows = session->messages()->rowCount();
  QCOMPARE(rows, 4);
  QVERIFY(!session->isBusy());

  // No model: sending says so.
  session->setInputText(QStringLiteral("Hello"));
  QVERIFY(!session->send());
  QVERIFY2(session->errorText().contains(QLatin1String("No model is loaded")), qPrintable(session->errorText()));
  QCOMPARE(session->messages()->rowCount(), rows);
  QVERIFY2(session->errorText().contains(QLatin1String("Model button")), qPrintable(session->errorText()));
  // Regenerate and Continue are refused too and leave the last answer (and its actions) in place.
  const QString lastText = session->messages()->textAt(rows - 1);
  QVERIFY(!session->regenerate());
  QVERIFY(!session->continueReply());
  QCOMPARE(session->messages()->rowCount(), rows);
  QCOMPARE(session->messages()->textAt(rows - 1), lastText);
  QVERIFY(!session->isBusy());

  // Load again: chatting works.
  app.models()->openModel(testpaths::stories260K());
  QVERIFY(engine->isLoading());
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  session->setMaxTokens(8);
  QCOMPARE(chat(session, QStringLiteral("Hello")), QStringLiteral("length"));
  QCOMPARE(session->messages()->rowCount(), rows + 2);
}

void TestModelEngine::openingAModelStopsRunningReplies() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  AppController app(optionsFor(data.path()));
  app.start();
  LocalChatBackend* engine = app.engine();
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  PaneState* session = app.panes()->paneAt(0);
  session->setMaxTokens(400);
  session->setTemperature(0.0);

  // The worker is held (on its thread) inside the step that produced the first tokens, so the
  // new model's load is queued while the request is certainly still running.
  QSemaphore hold;
  std::atomic<bool> held{false};
  apptest::ReleaseOnExit release{hold, {}};  // whatever fails, the worker is let go
  release.connection = connect(
      engine->worker(), &EngineWorker::stepFinished, this,
      [&] {
        if (!held.exchange(true)) hold.acquire();
      },
      Qt::DirectConnection);
  QSignalSpy finished(session, &PaneState::replyFinished);
  session->setInputText(QStringLiteral("Once upon a time"));
  QVERIFY(session->send());
  QTRY_VERIFY_WITH_TIMEOUT(held.load(), 30000);
  const QString gguf = QDir::cleanPath(testpaths::modelFile(QStringLiteral("stories260K/stories260K.gguf")));
  app.models()->openModel(gguf);
  QVERIFY(engine->isLoading());
  hold.release();
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
  QCOMPARE(finished.at(0).at(0).value<FinishReason>(), FinishReason::kAbort);
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  QCOMPARE(engine->modelPath(), gguf);
  QCOMPARE(session->messages()->rowCount(), 2);
  QVERIFY(!session->messages()->at(1).text.isEmpty());  // the text so far is kept
  QCOMPARE(app.store()->messages(session->conversationId()).at(1).text, session->messages()->at(1).text);
}

void TestModelEngine::progressIsMonotonic() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  for (const QString& file : {QStringLiteral("stories260K/stories260K.gguf"), QStringLiteral("stories260K")}) {
    pagedchat::EngineConfig config;
    config.model = testpaths::modelFile(file).toStdString();
    LocalChatBackend engine(pagedchat::EngineConfig{}, nullptr);
    engine.start();  // no model
    QVERIFY(!engine.isLoading());
    QVERIFY(!engine.isLoaded());
    QList<double> values;
    connect(&engine, &LocalChatBackend::loadProgressChanged, this, [&] { values.append(engine.loadProgress()); });
    // The worker's own figures: bytes done never decrease and end at the total.
    QList<QPair<qint64, qint64>> bytes;
    connect(
        engine.worker(), &EngineWorker::loadProgress, this,
        [&](qint64 done, qint64 total, int) {
          bytes.append({done, total});
        },
        Qt::QueuedConnection);
    engine.loadModel(testpaths::modelFile(file));
    QTRY_VERIFY_WITH_TIMEOUT(engine.isReady(), 60000);
    QTRY_VERIFY(!bytes.isEmpty() && bytes.last().first == bytes.last().second);
    QVERIFY(values.size() >= 2);
    QCOMPARE(values.first(), 0.0);  // reset when the load starts
    QCOMPARE(values.last(), 1.0);
    for (qsizetype i = 1; i < values.size(); ++i) QVERIFY(values[i] >= values[i - 1]);
    for (qsizetype i = 0; i < bytes.size(); ++i) {
      QVERIFY(bytes[i].second > 0);
      QVERIFY(bytes[i].first <= bytes[i].second);
      if (i > 0) QVERIFY(bytes[i].first >= bytes[i - 1].first);
    }
    QVERIFY(bytes.last().second >=
            QFileInfo(testpaths::modelFile(QStringLiteral("stories260K/stories260K.bin"))).size() / 2);
  }
}

void TestModelEngine::settingsReloadChangesBlockCount() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  AppController app(longContextOptions(data.path()));
  app.start();
  LocalChatBackend* engine = app.engine();
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  const int autoBlocks = engine->numKvBlocks();
  QVERIFY(autoBlocks > 0);
  pagedchat::ModelConfig mc;
  {
    const AppOptions o = longContextOptions(data.path());
    pagedchat::LLM llm({.model = o.modelPath.toStdString(), .tokenizer = o.tokenizerPath.toStdString()});
    mc = llm.engine().model_config();
  }

  // Bad values: a message, nothing reloads.
  QVERIFY(!app.models()->applyEngineSettings(2, 4, 0, 1).isEmpty());
  QVERIFY(!engine->isLoading());
  QCOMPARE(engine->numKvBlocks(), autoBlocks);

  for (const auto& [mib, block] : {std::pair{2, 16}, std::pair{4, 32}}) {
    QSignalSpy done(engine, &LocalChatBackend::modelLoadFinished);
    QCOMPARE(app.models()->applyEngineSettings(mib, 4, block, 1), QString());
    QVERIFY(engine->isLoading());
    QVERIFY(done.wait(60000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(2).toString()));
    const int expected = static_cast<int>(
        (std::size_t(mib) << 20) / pagedchat::KVCache::bytes_per_block(
                                       mc, block, pagedchat::resolve_kv_cache_dtype(pagedchat::KvCacheDType::kAuto)));
    QCOMPARE(engine->numKvBlocks(), expected);
    QCOMPARE(engine->engineConfig().block_size, block);
    QCOMPARE(engine->engineConfig().max_num_seqs, 4);
    QVERIFY(engine->modelDetails().contains(QString::number(expected)));
    // The details name the architecture and the weights' types (stories260K: llama, float32).
    QVERIFY2(engine->modelDetails().startsWith(QLatin1String("llama: ")), qPrintable(engine->modelDetails()));
    QVERIFY2(engine->modelDetails().contains(QLatin1String("weights f32 x ")), qPrintable(engine->modelDetails()));
  }
  const QString reason = chat(app.panes()->paneAt(0), QStringLiteral("Once upon a time"));
  QVERIFY2(reason == QLatin1String("stop") || reason == QLatin1String("length"), qPrintable(reason));

  // Too small a cache for one sequence: said in the settings' terms, the saved settings and the
  // model stay (reloaded with them), nothing bad is saved.
  const int blocksBefore = engine->numKvBlocks();
  QSignalSpy done(engine, &LocalChatBackend::modelLoadFinished);
  QSignalSpy reverted(app.models()->engineSettings(), &EngineSettings::reverted);
  QCOMPARE(app.models()->applyEngineSettings(1, 4, 1024, 1), QString());  // 1 MiB holds 1 block of 1024 tokens, not 2
  QTRY_VERIFY_WITH_TIMEOUT(done.count() > 0, 60000);
  QCOMPARE(reverted.count(), 1);  // the settings page is told why
  QCOMPARE(reverted.at(0).at(0).toString(), app.errors()->text());
  QVERIFY(!done.at(0).at(0).toBool());
  QVERIFY2(done.at(0).at(2).toString().contains(QLatin1String("KV cache too small")),
           qPrintable(done.at(0).at(2).toString()));
  QVERIFY2(app.errors()->text().contains(QLatin1String("KV cache size (MiB) too small for this model: needs at least")),
           qPrintable(app.errors()->text()));
  QCOMPARE(app.models()->engineSettings()->kvCacheMiB(), 4);
  QCOMPARE(app.models()->engineSettings()->blockSize(), 32);
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  QCOMPARE(engine->numKvBlocks(), blocksBefore);
  QCOMPARE(engine->engineConfig().block_size, 32);
  {
    QSettings ini(AppController::settingsFile(data.path()), QSettings::IniFormat);
    QCOMPARE(ini.value(QStringLiteral("engine/kvCacheMiB")).toInt(), 4);
    QCOMPARE(ini.value(QStringLiteral("engine/blockSize")).toInt(), 32);
  }
  QCOMPARE(app.models()->applyEngineSettings(0, 64, 16, 0), QString());
  QTRY_VERIFY_WITH_TIMEOUT(engine->isReady(), 60000);
  QCOMPARE(engine->numKvBlocks(), autoBlocks);
}

void TestModelEngine::savedTooSmallKvCacheFallsBackToAutomatic() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  {
    QSettings ini(AppController::settingsFile(data.path()), QSettings::IniFormat);
    ini.setValue(QStringLiteral("engine/kvCacheMiB"), 1);
    ini.setValue(QStringLiteral("engine/blockSize"), 1024);  // 1 MiB < one sequence: fails to load
  }
  AppController app(longContextOptions(data.path()));
  QSignalSpy done(app.engine(), &LocalChatBackend::modelLoadFinished);
  app.start();
  QVERIFY(done.wait(60000));
  QVERIFY(!done.at(0).at(0).toBool());
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  QCOMPARE(app.models()->engineSettings()->kvCacheMiB(), 0);
  QVERIFY2(app.errors()->text().contains(QLatin1String("set back to automatic")), qPrintable(app.errors()->text()));
  QSettings ini(AppController::settingsFile(data.path()), QSettings::IniFormat);
  QCOMPARE(ini.value(QStringLiteral("engine/kvCacheMiB")).toInt(), 0);
}

void TestModelEngine::randomModelInRecents() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  const QString spec = QStringLiteral("random:stories260K");
  const QString tokenizer = testpaths::modelFile(QStringLiteral("stories260K/tok512.model"));
  {
    AppOptions o = optionsFor(data.path());
    o.modelPath = spec;
    o.tokenizerPath = tokenizer;
    o.modelGiven = true;
    AppController app(o);
    app.start();
    QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
    RecentModelsModel* recent = app.models()->recentModels();
    QCOMPARE(recent->lastModel(), spec);
    QVERIFY(recent->data(recent->index(0), RecentModelsModel::ExistsRole).toBool());  // not "missing"
    QCOMPARE(recent->removeMissing(), 0);
    // Another model, then the random one again from the recent list: loads, with its tokenizer.
    app.models()->openModel(testpaths::stories260K());
    QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
    app.models()->openModel(recent->data(recent->index(1), RecentModelsModel::PathRole).toString());
    QTRY_VERIFY_WITH_TIMEOUT(!app.engine()->isLoading(), 60000);
    QVERIFY2(app.engine()->isReady(), qPrintable(app.engine()->loadError()));
    QCOMPARE(app.engine()->modelPath(), spec);
    QCOMPARE(QString::fromStdString(app.engine()->engineConfig().tokenizer), QFileInfo(tokenizer).absoluteFilePath());
    const QString reason = chat(app.panes()->paneAt(0), QStringLiteral("Once"));
    QVERIFY2(reason == QLatin1String("stop") || reason == QLatin1String("length"), qPrintable(reason));
  }
  AppController again(optionsFor(data.path()));  // no --model: the random one, with its tokenizer
  QCOMPARE(again.engine()->modelPath(), spec);
  QCOMPARE(QString::fromStdString(again.engine()->engineConfig().tokenizer), QFileInfo(tokenizer).absoluteFilePath());
}

void TestModelEngine::rememberedModelLoadsNextStart() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  const QString gguf = QDir::cleanPath(testpaths::modelFile(QStringLiteral("stories260K/stories260K.gguf")));
  {
    AppController app(optionsFor(data.path()));
    app.start();
    QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
    app.models()->openModel(gguf);
    QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
    QCOMPARE(app.models()->recentModels()->lastModel(), gguf);
    QCOMPARE(app.models()->recentModels()->count(), 2);
  }
  {
    AppController app(optionsFor(data.path()));  // no --model: the remembered one
    QCOMPARE(app.engine()->modelPath(), gguf);
    app.start();
    QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  }
  AppOptions given = optionsFor(data.path());
  given.modelGiven = true;  // --model wins
  AppController app(given);
  QCOMPARE(app.engine()->modelPath(), QDir::cleanPath(testpaths::stories260K()));
}

void TestModelEngine::monitorSnapshotWhileTwoPanesGenerate() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir data;
  AppController app(optionsFor(data.path()));
  app.start();
  QTRY_VERIFY_WITH_TIMEOUT(app.engine()->isReady(), 60000);
  PaneState* one = app.panes()->paneAt(0);
  PaneState* two = app.panes()->addPane();
  QVERIFY(two);
  EngineMonitor* monitor = app.monitor();
  monitor->setSnapshotInterval(0);  // every step
  QSignalSpy snapshots(monitor, &EngineMonitor::snapshotChanged);
  monitor->setActive(true);
  QVERIFY(snapshots.wait(10000));
  QCOMPARE(monitor->usedBlocks(), 0);
  QVERIFY(monitor->totalBlocks() > 0);
  QCOMPARE(monitor->freeBlocks() + monitor->cachedBlocks(), monitor->totalBlocks());

  // The same long prompt in both panes at once, after a third chat (no pane) left it in the
  // prefix cache: both requests take its full blocks from the cache and share them.
  const QString prompt = QStringLiteral(
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park "
      "with her friends. One day, she saw a big red ball under a tree and ran to get it.");
  {
    PaneState warm(app.store(), app.engine());
    warm.setMaxTokens(4);
    const QString reason = chat(&warm, prompt);
    QVERIFY2(reason == QLatin1String("stop") || reason == QLatin1String("length"), qPrintable(reason));
  }
  QTRY_VERIFY_WITH_TIMEOUT(monitor->cachedBlocks() > 0 && monitor->usedBlocks() == 0, 10000);

  // Every snapshot while both run is checked as it arrives.
  int seen = 0, sharedSeen = 0;
  QStringList problems;
  auto check = [&] {
    if (monitor->numRunning() != 2 || monitor->requests().size() != 2) return;
    ++seen;
    QSet<int> panes;
    for (const QVariant& r : monitor->requests()) panes.insert(r.toMap().value(QStringLiteral("pane")).toInt());
    if (panes != QSet<int>{1, 2}) problems << QStringLiteral("requests not mapped to panes 1 and 2");
    if (monitor->usedBlocks() + monitor->freeBlocks() + monitor->cachedBlocks() != monitor->totalBlocks())
      problems << QStringLiteral("used + free + cached != total");
    int ownedBy1 = 0, ownedBy2 = 0, flaggedShared = 0, used = 0;
    for (int b = 0; b < monitor->totalBlocks(); ++b) {
      const int flags = monitor->blockFlags(b);
      const int pane = monitor->blockPane(b);
      if (flags & EngineSnapshot::kUsed) {
        ++used;
        if (pane == 1)
          ++ownedBy1;
        else if (pane == 2)
          ++ownedBy2;
        else
          problems << QStringLiteral("used block %1 has pane %2").arg(b).arg(pane);
      } else if (pane != 0) {
        problems << QStringLiteral("free block %1 has pane %2").arg(b).arg(pane);
      }
      if (flags & EngineSnapshot::kShared) {
        if (!(flags & EngineSnapshot::kUsed)) problems << QStringLiteral("shared block %1 not used").arg(b);
        ++flaggedShared;
      }
    }
    if (used != monitor->usedBlocks()) problems << QStringLiteral("used count");
    if (flaggedShared != monitor->sharedBlocks()) problems << QStringLiteral("shared count");
    if (ownedBy1 == 0 || ownedBy2 == 0) problems << QStringLiteral("a pane owns no block");
    sharedSeen = std::max(sharedSeen, flaggedShared);
  };
  connect(monitor, &EngineMonitor::snapshotChanged, this, check);
  for (PaneState* s : {one, two}) {
    s->setMaxTokens(300);
    s->setTemperature(0.0);  // greedy: the same reply, of the same length, in both panes
  }
  // The worker thread waits at a gate while both panes send (stories260K is fast enough to finish
  // one reply while the GUI thread writes the other turn to the store), so that both requests
  // enter the same step.
  apptest::WorkerGate gate(app.engine()->worker());
  one->setInputText(prompt);
  two->setInputText(prompt);
  const bool sentOne = one->send(), sentTwo = two->send();
  gate.open();
  QVERIFY(sentOne && sentTwo);
  QTRY_VERIFY_WITH_TIMEOUT(!one->isBusy() && !two->isBusy(), 60000);
  disconnect(monitor, &EngineMonitor::snapshotChanged, this, nullptr);
  problems.removeDuplicates();
  QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
  QVERIFY2(seen > 0, "no snapshot showed both requests running");
  QVERIFY2(sharedSeen > 0, "the same prompt in two panes shares no prefix block");
  QVERIFY(monitor->hitRate() > 0.0);

  // Both finished: nothing in use, the prompts stay in the prefix cache.
  QTRY_COMPARE_WITH_TIMEOUT(monitor->usedBlocks(), 0, 10000);
  QVERIFY(monitor->cachedBlocks() > 0);
  QCOMPARE(monitor->numRunning(), 0);
  QVERIFY(monitor->requests().isEmpty());

  // Tokens/s history: samples from the counters.
  monitor->setActive(false);
  const qsizetype before = monitor->rateHistory().size();
  monitor->sampleRate(10000000);
  monitor->sampleRate(10001000);
  QCOMPARE(monitor->rateHistory().size(), before + 1);
  QCOMPARE(monitor->rateHistory().last().toDouble(), 0.0);  // idle
}

QTEST_GUILESS_MAIN(TestModelEngine)
#include "test_model_engine.moc"
