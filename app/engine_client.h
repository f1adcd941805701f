// EngineClient: the GUI thread's handle on the engine worker thread.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QThread>

#include "app/chat_prompt.h"
#include "app/request_delta.h"
#include "engine/config.h"
#include "engine/sampling_params.h"

class EngineWorker;

/// GUI-thread facade over an EngineWorker running on its own QThread. submit() and cancel()
/// post queued calls and return at once; per-step deltas come back through stepFinished().
/// Also keeps what the status line shows: model name, load state and error, tokens per second.
class EngineClient : public QObject {
  Q_OBJECT
  Q_PROPERTY(bool loading READ isLoading NOTIFY stateChanged)
  Q_PROPERTY(bool ready READ isReady NOTIFY stateChanged)
  Q_PROPERTY(QString loadError READ loadError NOTIFY stateChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY stateChanged)
  Q_PROPERTY(QString modelDetails READ modelDetails NOTIFY stateChanged)
  Q_PROPERTY(QString modelPath READ modelPath CONSTANT)
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statsChanged)
  Q_PROPERTY(int numRunning READ numRunning NOTIFY statsChanged)
  /// The context length requests get (the engine's max_model_len: the model's max positions
  /// unless configured lower); 0 until the model is loaded.
  Q_PROPERTY(int maxPositions READ maxPositions NOTIFY stateChanged)

 public:
  /// `chatTemplate`: a chat template name, or "auto" to take it from the model files.
  explicit EngineClient(const pagedchat::EngineConfig& config, QObject* parent = nullptr,
                        const QString& chatTemplate = QStringLiteral("auto"));
  /// Stops the worker thread (waits for the step in progress, at most one).
  ~EngineClient() override;

  /// Starts the worker thread and loads the model there. Call once.
  void start();

  /// Queues a chat turn: `messages` is the whole conversation (buildChatMessages()); the worker
  /// thread renders it with the model's chat template. Returns the request id ("req-N"). Deltas
  /// arrive via stepFinished().
  QString submit(const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params);
  /// Asks the worker to stop a request; its last delta has finish reason "abort".
  void cancel(const QString& requestId);

  bool isLoading() const { return loading_; }
  bool isReady() const { return !loading_ && loadError_.isEmpty(); }
  QString loadError() const { return loadError_; }
  QString modelName() const { return modelName_; }
  QString modelDetails() const { return modelDetails_; }
  QString modelPath() const { return modelPath_; }
  double tokensPerSecond() const { return tokensPerSecond_; }
  int numRunning() const { return numRunning_; }
  int maxPositions() const { return maxPositions_; }
  /// Milliseconds on the client's monotonic clock (for per-pane throughput meters).
  qint64 clockMs() const { return clock_.elapsed(); }

  /// The worker (lives on the engine thread; use only through queued calls / connections).
  EngineWorker* worker() const { return worker_; }

 signals:
  void stateChanged();
  void statsChanged();
  /// One per engine step, in the GUI thread.
  void stepFinished(const QList<RequestDelta>& deltas);
  void requestRejected(const QString& requestId, const QString& message);

 private:
  void onModelLoaded(const QString& name, const QString& details);
  void onLoadFailed(const QString& message);
  void onStepFinished(const QList<RequestDelta>& deltas, const EngineStepStats& stats);

  QThread thread_;
  EngineWorker* worker_ = nullptr;
  QString modelPath_;
  bool started_ = false;
  bool loading_ = true;
  QString loadError_;
  QString modelName_;
  QString modelDetails_;
  qint64 nextRequestId_ = 1;

  QElapsedTimer clock_;
  QList<QPair<qint64, qint64>> rateWindow_;  ///< (ms, total generated tokens), last ~second
  qint64 lastStatsEmitMs_ = -1;
  double tokensPerSecond_ = 0.0;
  int numRunning_ = 0;
  int maxPositions_ = 0;
};
