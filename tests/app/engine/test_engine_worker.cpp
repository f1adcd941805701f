// EngineWorker: two requests submitted from the GUI thread run in the same engine steps, stream
// deltas through one signal per step, finish, and their concatenated deltas equal solo runs; a
// conversation's second turn is rendered on the worker and finds its first turn in the prefix cache.
#include <QFile>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <cstring>
#include <limits>

#include "app/engine/engine_worker.h"
#include "app/engine/local_chat_backend.h"
#include "app/store/finish_reason_text.h"
#include "app_test_util.h"
#include "engine/llm.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/llama2c/llama2c_loader.h"

using apptest::storiesConfig;
using pagedchat::FinishReason;

namespace {

pagedchat::SamplingParams greedy(int maxTokens) {
  pagedchat::SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = maxTokens;
  p.output_kind = pagedchat::RequestOutputKind::kDelta;
  return p;
}

QList<PromptMessage> userTurn(const QString& text) { return {{MessageRole::kUser, text}}; }

/// Owns a worker on its own thread, as LocalChatBackend does, without the status bookkeeping.
struct WorkerThread {
  explicit WorkerThread(const pagedchat::EngineConfig& config, const QString& chatTemplate = QStringLiteral("auto"))
      : worker(new EngineWorker(config, chatTemplate)) {
    worker->moveToThread(&thread);
    QObject::connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
    thread.start();
  }
  ~WorkerThread() {
    thread.quit();
    thread.wait();
  }
  void submit(const QString& id, const QList<PromptMessage>& messages, const pagedchat::SamplingParams& p) {
    QMetaObject::invokeMethod(worker, "submit", Qt::QueuedConnection, Q_ARG(QString, id),
                              Q_ARG(QList<PromptMessage>, messages), Q_ARG(pagedchat::SamplingParams, p));
  }
  void submit(const QString& id, const QString& prompt, const pagedchat::SamplingParams& p) {
    submit(id, userTurn(prompt), p);
  }
  QThread thread;
  EngineWorker* worker;
};

}  // namespace

class TestEngineWorker : public QObject {
  Q_OBJECT

 private slots:
  void twoRequestsShareSteps();
  void secondTurnReusesCache();
  void cancelReportsAbort();
  void speculativePerRequest();
  void loadErrorIsReported();
  void failedStepLeavesNothingRunning();
  void chatTemplateWarnings();
};

void TestEngineWorker::twoRequestsShareSteps() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  const QString promptA = QStringLiteral("Once upon a time");
  const QString promptB = QStringLiteral("Lily and Tom went to the park");
  constexpr int kMaxTokens = 40;

  // Solo runs through the offline LLM API: the reference text of each prompt.
  QString soloA, soloB;
  {
    pagedchat::LLM llm(storiesConfig());
    pagedchat::SamplingParams p = greedy(kMaxTokens);
    p.output_kind = pagedchat::RequestOutputKind::kCumulative;
    soloA = QString::fromStdString(llm.generate({promptA.toStdString()}, p).at(0).outputs.at(0).text);
    soloB = QString::fromStdString(llm.generate({promptB.toStdString()}, p).at(0).outputs.at(0).text);
  }
  QVERIFY(!soloA.isEmpty());
  QVERIFY(!soloB.isEmpty());

  WorkerThread w(storiesConfig());
  QSignalSpy loaded(w.worker, &EngineWorker::modelLoaded);
  QSignalSpy failed(w.worker, &EngineWorker::loadFailed);
  QSignalSpy rejected(w.worker, &EngineWorker::requestRejected);
  QSignalSpy steps(w.worker, &EngineWorker::stepFinished);
  QMetaObject::invokeMethod(w.worker, "loadModel", Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
  QCOMPARE(failed.count(), 0);

  // The GUI thread's view of the stream, through a queued connection as the app receives it.
  QList<RequestDelta> received;
  connect(
      w.worker, &EngineWorker::stepFinished, this,
      [&received](const QList<RequestDelta>& deltas) { received += deltas; }, Qt::QueuedConnection);
  auto finishedCount = [&received] {
    return std::count_if(received.cbegin(), received.cend(), [](const RequestDelta& d) { return d.finished; });
  };

  // Both submits reach the worker's queue before it runs a step (it is held at a gate meanwhile,
  // so a busy machine pausing this thread between them cannot let "a" finish alone); the
  // worker drains them together at its next step.
  apptest::WorkerGate gate(w.worker);
  w.submit(QStringLiteral("a"), promptA, greedy(kMaxTokens));
  w.submit(QStringLiteral("b"), promptB, greedy(kMaxTokens));
  gate.open();
  QTRY_COMPARE_WITH_TIMEOUT(finishedCount(), 2, 60000);
  // The worker is idle now (no unfinished requests): the spy's record is complete and stable.

  QString textA, textB;
  bool finishedA = false, finishedB = false, sameStep = false;
  int tokensA = 0, tokensB = 0;
  qsizetype totalDeltas = 0;
  for (const QList<QVariant>& args : std::as_const(steps)) {
    const auto deltas = args.at(0).value<QList<RequestDelta>>();
    totalDeltas += deltas.size();
    bool hasA = false, hasB = false;
    for (const RequestDelta& d : deltas) {
      QVERIFY2(d.requestId == QLatin1String("a") || d.requestId == QLatin1String("b"), qPrintable(d.requestId));
      const bool isA = d.requestId == QLatin1String("a");
      QVERIFY2(!(isA ? finishedA : finishedB), "delta after the request finished");
      (isA ? textA : textB) += d.text;
      (isA ? tokensA : tokensB) += d.newTokens;
      (isA ? hasA : hasB) = true;
      if (d.finished) {
        (isA ? finishedA : finishedB) = true;
        QVERIFY2(d.finishReason == FinishReason::kStop || d.finishReason == FinishReason::kLength,
                 qPrintable(finishReasonText(d.finishReason)));
      }
    }
    sameStep = sameStep || (hasA && hasB);
  }
  QCOMPARE(received.size(), totalDeltas);
  QCOMPARE(rejected.count(), 0);
  QVERIFY(finishedA);
  QVERIFY(finishedB);
  QVERIFY2(sameStep, "the two requests never ran in the same step");
  QVERIFY(steps.count() > 2);
  QVERIFY(tokensA > 0 && tokensA <= kMaxTokens);
  QVERIFY(tokensB > 0 && tokensB <= kMaxTokens);
  QCOMPARE(textA, soloA);
  QCOMPARE(textB, soloB);
}

void TestEngineWorker::secondTurnReusesCache() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  const QString u1 = QStringLiteral("Once upon a time"), u2 = QStringLiteral(" One day");
  constexpr int kMaxTokens = 40;
  WorkerThread w(storiesConfig());
  QSignalSpy loaded(w.worker, &EngineWorker::modelLoaded);
  QSignalSpy rejected(w.worker, &EngineWorker::requestRejected);
  QList<RequestDelta> received;
  connect(
      w.worker, &EngineWorker::stepFinished, this,
      [&received](const QList<RequestDelta>& deltas) { received += deltas; }, Qt::QueuedConnection);
  QMetaObject::invokeMethod(w.worker, "loadModel", Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
  // A llama2.c checkpoint carries no chat template: plain continuation.
  const QString details = LocalChatBackend::modelDetailsText(loaded.at(0).at(1).toMap());
  QVERIFY2(details.endsWith(QLatin1String("chat template none")), qPrintable(details));

  // Runs one turn; returns its text, prompt length and cached count (the same in every delta).
  auto turn = [&](const QString& id, const QList<PromptMessage>& messages, int& prompt, int& cached) {
    received.clear();
    w.submit(id, messages, greedy(kMaxTokens));
    if (!QTest::qWaitFor([&] { return !received.isEmpty() && received.constLast().finished; }, 60000)) return QString();
    QString text;
    prompt = received.constFirst().numPromptTokens;
    cached = received.constFirst().numCachedTokens;
    for (const RequestDelta& d : std::as_const(received)) {
      if (d.requestId != id || d.numPromptTokens != prompt || d.numCachedTokens != cached) return QString();
      text += d.text;
    }
    return text;
  };
  int prompt1 = 0, cached1 = -1, prompt2 = 0, cached2 = -1;
  const QString r1 = turn(QStringLiteral("t1"), userTurn(u1), prompt1, cached1);
  QVERIFY(!r1.isEmpty());
  QCOMPARE(cached1, 0);
  const QList<PromptMessage> conversation = {
      {MessageRole::kUser, u1}, {MessageRole::kAssistant, r1}, {MessageRole::kUser, u2}};
  const QList<MessageRecord> history = {MessageRecord{0, 0, MessageRole::kUser, u1, {}, {}},
                                        MessageRecord{0, 0, MessageRole::kAssistant, r1, FinishReason::kStop, {}}};
  QCOMPARE(buildChatMessages(QString(), history, u2), conversation);
  const QString r2 = turn(QStringLiteral("t2"), conversation, prompt2, cached2);
  QVERIFY(!r2.isEmpty());
  QCOMPARE(rejected.count(), 0);
  // The second prompt is the first turn (prompt + reply) plus the new message; its first blocks
  // were computed by the first turn and come from the prefix cache.
  QVERIFY2(prompt2 > prompt1 + 10, qPrintable(QString("%1 vs %2").arg(prompt2).arg(prompt1)));
  QVERIFY2(cached2 >= 16 && cached2 < prompt2, qPrintable(QString::number(cached2)));
  // "none" renders the concatenation: the reply is what the plain prompt gives.
  pagedchat::LLM llm(storiesConfig());
  pagedchat::SamplingParams p = greedy(kMaxTokens);
  p.output_kind = pagedchat::RequestOutputKind::kCumulative;
  QCOMPARE(r2, QString::fromStdString(llm.generate({(u1 + r1 + u2).toStdString()}, p).at(0).outputs.at(0).text));

  // A message longer than the whole context is refused with its length.
  w.submit(QStringLiteral("long"), QString(QStringLiteral("the dog ran. ")).repeated(200), greedy(4));
  QTRY_COMPARE_WITH_TIMEOUT(rejected.count(), 1, 10000);
  QVERIFY2(rejected.at(0).at(1).toString().contains(QLatin1String("context holds 512")),
           qPrintable(rejected.at(0).at(1).toString()));
}

// The engine speculates (n-gram, as the app loads it); a pane's "auto" and "mtp" choices draft by
// n-gram on a model without MTP layers, "off" proposes no drafts, and all give the same reply.
// The deltas carry the draft counters and the proposer.
void TestEngineWorker::speculativePerRequest() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  pagedchat::EngineConfig config = storiesConfig();
  config.speculative_config.method = pagedchat::SpeculativeConfig::Method::kNgram;
  config.speculative_config.num_speculative_tokens = 4;
  WorkerThread w(config);
  QSignalSpy loaded(w.worker, &EngineWorker::modelLoaded);
  QMetaObject::invokeMethod(w.worker, "loadModel", Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
  QMap<QString, QString> text;
  QMap<QString, RequestDelta> last;
  connect(
      w.worker, &EngineWorker::stepFinished, this,
      [&](const QList<RequestDelta>& deltas) {
        for (const RequestDelta& d : deltas) {
          text[d.requestId] += d.text;
          if (d.finished) last[d.requestId] = d;
        }
      },
      Qt::QueuedConnection);
  const auto prompt = userTurn(QStringLiteral("The cat sat on the mat. The cat sat on the mat. The cat sat on the"));
  EngineWorker* worker = w.worker;
  QMetaObject::invokeMethod(
      worker,
      [worker, prompt] {
        worker->submit(QStringLiteral("on"), prompt, greedy(80), false, QString(), QString(), QStringLiteral("auto"));
        worker->submit(QStringLiteral("mtp"), prompt, greedy(80), false, QString(), QString(), QStringLiteral("mtp"));
        worker->submit(QStringLiteral("off"), prompt, greedy(80), false, QString(), QString(), QStringLiteral("off"));
      },
      Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(last.size(), 3, 60000);
  QVERIFY(!text.value(QStringLiteral("on")).isEmpty());
  QCOMPARE(text.value(QStringLiteral("on")), text.value(QStringLiteral("off")));
  QCOMPARE(text.value(QStringLiteral("mtp")), text.value(QStringLiteral("off")));
  QCOMPARE(last.value(QStringLiteral("on")).specMethod, QStringLiteral("ngram"));
  QCOMPARE(last.value(QStringLiteral("mtp")).specMethod, QStringLiteral("ngram"));
  QCOMPARE(last.value(QStringLiteral("off")).specMethod, QString());
  QVERIFY(last.value(QStringLiteral("on")).numSpecDraftTokens > 0);
  QVERIFY(last.value(QStringLiteral("on")).numSpecAcceptedTokens > 0);
  QVERIFY(last.value(QStringLiteral("on")).numSpecAcceptedTokens <=
          last.value(QStringLiteral("on")).numSpecDraftTokens);
  QCOMPARE(last.value(QStringLiteral("off")).numSpecDraftTokens, 0);
}

void TestEngineWorker::cancelReportsAbort() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  WorkerThread w(storiesConfig());
  QSignalSpy loaded(w.worker, &EngineWorker::modelLoaded);
  QList<RequestDelta> received;
  connect(
      w.worker, &EngineWorker::stepFinished, this,
      [&received](const QList<RequestDelta>& deltas) { received += deltas; }, Qt::QueuedConnection);
  QMetaObject::invokeMethod(w.worker, "loadModel", Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);

  pagedchat::SamplingParams p = greedy(400);
  p.ignore_eos = true;
  w.submit(QStringLiteral("long"), QStringLiteral("Once upon a time"), p);
  QMetaObject::invokeMethod(w.worker, "cancel", Qt::QueuedConnection, Q_ARG(QString, QStringLiteral("long")));

  QTRY_VERIFY_WITH_TIMEOUT(!received.isEmpty() && received.constLast().finished, 30000);
  int tokens = 0;
  for (const RequestDelta& d : std::as_const(received)) tokens += d.newTokens;
  QCOMPARE(received.constLast().finishReason, std::optional(FinishReason::kAbort));
  QVERIFY(tokens < 400);
}

// A step that throws (here: stories260K with NaN token embeddings, so the sampler finds every
// logit NaN) rejects its requests, aborts them in the engine and shows the status again: nothing
// stays "running" (the status bar showed "1 running" for good), and so after the next one too.
void TestEngineWorker::failedStepLeavesNothingRunning() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(testpaths::writeNanStories260K(dir.path()));
  pagedchat::EngineConfig config;
  config.model = dir.path().toStdString();
  WorkerThread w(config);
  QSignalSpy loaded(w.worker, &EngineWorker::modelLoaded);
  QSignalSpy rejected(w.worker, &EngineWorker::requestRejected);
  QList<EngineStepStats> stats;
  QObject receiver;  // the connection's context: it ends with this test (queued calls included)
  connect(
      w.worker, &EngineWorker::stepFinished, &receiver,
      [&stats](const QList<RequestDelta>&, const EngineStepStats& s) { stats += s; }, Qt::QueuedConnection);
  QMetaObject::invokeMethod(w.worker, "loadModel", Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
  w.submit(QStringLiteral("a"), QStringLiteral("Once upon a time"), greedy(8));
  QTRY_COMPARE_WITH_TIMEOUT(rejected.count(), 1, 30000);
  QCOMPARE(rejected.at(0).at(0).toString(), QStringLiteral("a"));
  QVERIFY2(rejected.at(0).at(1).toString().contains(QStringLiteral("Engine error")),
           qPrintable(rejected.at(0).at(1).toString()));
  QTRY_VERIFY_WITH_TIMEOUT(!stats.isEmpty(), 10000);
  QCOMPARE(stats.constLast().numRunning, 0);
  QCOMPARE(stats.constLast().numWaiting, 0);
  // The next request fails on its own, and its status (queued after its rejection) shows none running.
  const qsizetype seen = stats.size();
  w.submit(QStringLiteral("b"), QStringLiteral("One day"), greedy(8));
  QTRY_COMPARE_WITH_TIMEOUT(rejected.count(), 2, 30000);
  QCOMPARE(rejected.at(1).at(0).toString(), QStringLiteral("b"));
  QTRY_VERIFY_WITH_TIMEOUT(stats.size() > seen, 10000);
  QCOMPARE(stats.constLast().numRunning, 0);
  // The worker's thread ends (and the worker with it) before the spies and `stats` it reports to.
  w.thread.quit();
  QVERIFY(w.thread.wait(30000));
}

void TestEngineWorker::loadErrorIsReported() {
  pagedchat::EngineConfig config;
  config.model = "/nonexistent/pagedchat-model.bin";
  WorkerThread w(config);
  QSignalSpy failed(w.worker, &EngineWorker::loadFailed);
  QSignalSpy rejected(w.worker, &EngineWorker::requestRejected);
  QMetaObject::invokeMethod(w.worker, "loadModel", Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
  QVERIFY(!failed.at(0).at(0).toString().isEmpty());
  w.submit(QStringLiteral("x"), QStringLiteral("hi"), greedy(4));
  QTRY_COMPARE_WITH_TIMEOUT(rejected.count(), 1, 10000);
  QCOMPARE(rejected.at(0).at(0).toString(), QStringLiteral("x"));

  // An unknown chat template name fails the load, listing the known ones.
  WorkerThread bad(storiesConfig(), QStringLiteral("llama2"));
  QSignalSpy badFailed(bad.worker, &EngineWorker::loadFailed);
  QMetaObject::invokeMethod(bad.worker, "loadModel", Qt::QueuedConnection);
  QTRY_COMPARE_WITH_TIMEOUT(badFailed.count(), 1, 30000);
  QVERIFY2(badFailed.at(0).at(0).toString().contains(QLatin1String("llama-2")),
           qPrintable(badFailed.at(0).at(0).toString()));
}

// A model whose own chat template does not parse, or fails on a conversation, still chats: its
// family's built-in renders the prompt, and the worker says why (once per kind of failure).
void TestEngineWorker::chatTemplateWarnings() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  QTemporaryDir dir;
  const pagedchat::LoadedModel model = pagedchat::load_llama2c(
      (testpaths::stories260K() + QStringLiteral("/stories260K.bin")).toStdString());
  auto folderWith = [&](const QString& name, const QByteArray& jinja) {
    const QString folder = dir.filePath(name);
    pagedchat::write_hf_folder(model, (testpaths::stories260K() + QStringLiteral("/tok512.model")).toStdString(),
                               folder.toStdString(), "f32");
    QFile f(folder + QStringLiteral("/chat_template.jinja"));
    if (!f.open(QIODevice::WriteOnly) || f.write(jinja) != jinja.size()) qFatal("cannot write the template");
    return folder;
  };
  struct Case {
    QString folder;
    bool atLoad;       // the warning comes with the load (the template does not parse)
    const char* says;  // part of the warning
  };
  const std::vector<Case> cases = {
      {folderWith(QStringLiteral("broken"), "{% for m in messages %}<|im_start|>{{ m.content }"), true, "chatml"},
      {folderWith(QStringLiteral("raising"), "{{ raise_exception('nope, not this one') }}<|im_start|>"), false,
       "nope, not this one"},
  };
  for (const Case& c : cases) {
    pagedchat::EngineConfig config;
    config.model = c.folder.toStdString();
    WorkerThread w(config);
    QSignalSpy loaded(w.worker, &EngineWorker::modelLoaded);
    QSignalSpy warned(w.worker, &EngineWorker::chatTemplateWarning);
    QList<RequestDelta> received;
    connect(
        w.worker, &EngineWorker::stepFinished, this,
        [&received](const QList<RequestDelta>& deltas) { received += deltas; }, Qt::QueuedConnection);
    QMetaObject::invokeMethod(w.worker, "loadModel", Qt::QueuedConnection);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
    QCOMPARE(warned.count(), c.atLoad ? 1 : 0);
    for (int turn = 0; turn < 2; ++turn) {  // the same failure is said once
      received.clear();
      w.submit(QStringLiteral("r%1").arg(turn), QStringLiteral("Once upon a time"), greedy(8));
      QTRY_VERIFY_WITH_TIMEOUT(!received.isEmpty() && received.constLast().finished, 30000);
      QCOMPARE(received.constLast().finishReason, std::optional(FinishReason::kLength));
    }
    QCOMPARE(warned.count(), 1);
    const QString warning = warned.at(0).at(0).toString();
    QVERIFY2(warning.contains(QLatin1String(c.says)) && warning.contains(QLatin1String("chatml")), qPrintable(warning));
  }
}

QTEST_GUILESS_MAIN(TestEngineWorker)
#include "test_engine_worker.moc"
