// EngineWorker: two requests submitted from the GUI thread run in the same engine steps, stream
// deltas through one signal per step, finish, and their concatenated deltas equal solo runs.
#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include <algorithm>

#include "app/engine_worker.h"
#include "engine/llm.h"
#include "test_paths.h"

namespace {

pagedchat::EngineConfig storiesConfig() {
  pagedchat::EngineConfig config;
  config.model = testpaths::stories260K().toStdString();
  return config;
}

pagedchat::SamplingParams greedy(int maxTokens) {
  pagedchat::SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = maxTokens;
  p.output_kind = pagedchat::RequestOutputKind::kDelta;
  return p;
}

/// Owns a worker on its own thread, as EngineClient does, without the status bookkeeping.
struct WorkerThread {
  explicit WorkerThread(const pagedchat::EngineConfig& config) : worker(new EngineWorker(config)) {
    worker->moveToThread(&thread);
    QObject::connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
    thread.start();
  }
  ~WorkerThread() {
    thread.quit();
    thread.wait();
  }
  void submit(const QString& id, const QString& prompt, const pagedchat::SamplingParams& p) {
    QMetaObject::invokeMethod(worker, "submit", Qt::QueuedConnection, Q_ARG(QString, id),
                              Q_ARG(QString, prompt), Q_ARG(pagedchat::SamplingParams, p));
  }
  QThread thread;
  EngineWorker* worker;
};

}  // namespace

class TestEngineWorker : public QObject {
  Q_OBJECT

 private slots:
  void twoRequestsShareSteps();
  void cancelReportsAbort();
  void loadErrorIsReported();
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
  connect(w.worker, &EngineWorker::stepFinished, this,
          [&received](const QList<RequestDelta>& deltas) { received += deltas; }, Qt::QueuedConnection);
  auto finishedCount = [&received] {
    return std::count_if(received.cbegin(), received.cend(), [](const RequestDelta& d) { return d.finished; });
  };

  // Both submits leave the GUI thread back to back; the worker drains them between steps.
  w.submit(QStringLiteral("a"), promptA, greedy(kMaxTokens));
  w.submit(QStringLiteral("b"), promptB, greedy(kMaxTokens));
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
        QVERIFY2(d.finishReason == "stop" || d.finishReason == "length", qPrintable(d.finishReason));
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

void TestEngineWorker::cancelReportsAbort() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  WorkerThread w(storiesConfig());
  QSignalSpy loaded(w.worker, &EngineWorker::modelLoaded);
  QList<RequestDelta> received;
  connect(w.worker, &EngineWorker::stepFinished, this,
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
  QCOMPARE(received.constLast().finishReason, QStringLiteral("abort"));
  QVERIFY(tokens < 400);
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
}

QTEST_GUILESS_MAIN(TestEngineWorker)
#include "test_engine_worker.moc"
