// EngineWorker: owns the LLMEngine on its own thread and runs its step loop.
#pragma once

#include <QList>
#include <QObject>
#include <QSet>
#include <QString>

#include <memory>

#include "app/request_delta.h"
#include "engine/config.h"
#include "engine/sampling_params.h"

namespace pagedchat { class LLMEngine; }

Q_DECLARE_METATYPE(pagedchat::SamplingParams)

/// Lives on a worker QThread and owns the LLMEngine (which is not thread-safe). Every public slot
/// is meant to be called through a queued connection (QMetaObject::invokeMethod with
/// Qt::QueuedConnection) from the GUI thread, which therefore never waits on the engine.
///
/// The loop: submit()/cancel() only append a command and schedule a step. A scheduled step is a
/// queued call to itself, so commands the GUI queued meanwhile are delivered first; the step then
/// drains all pending commands into the engine, runs exactly one LLMEngine::step() over every
/// unfinished request (so all panes' requests share the batch), emits ONE stepFinished() with
/// every request's delta, and schedules the next step while requests remain.
class EngineWorker : public QObject {
  Q_OBJECT

 public:
  explicit EngineWorker(const pagedchat::EngineConfig& config, QObject* parent = nullptr);
  ~EngineWorker() override;

  /// True once loadModel() succeeded. Worker thread only.
  bool isLoaded() const { return engine_ != nullptr; }

 public slots:
  /// Loads the model and tokenizer (may take a while). Emits modelLoaded() or loadFailed().
  void loadModel();
  /// Queues a request; `params.output_kind` is forced to kDelta. A request the engine refuses
  /// (duplicate id, bad params, prompt too long, no model) is reported by requestRejected().
  void submit(const QString& requestId, const QString& prompt, const pagedchat::SamplingParams& params);
  /// Stops a request; its final delta (finish reason "abort") comes with the next step.
  void cancel(const QString& requestId);

 signals:
  void modelLoaded(const QString& modelName, const QString& details);
  void loadFailed(const QString& message);
  void requestRejected(const QString& requestId, const QString& message);
  /// Emitted once per engine step with the delta of every request that made progress or finished.
  void stepFinished(const QList<RequestDelta>& deltas, const EngineStepStats& stats);

 private:
  struct Command {
    bool isCancel = false;
    QString requestId;
    QString prompt;
    pagedchat::SamplingParams params;
  };

  void scheduleStep();
  void runStep();
  void drainCommands();
  void failAllActive(const QString& message);

  pagedchat::EngineConfig config_;
  std::unique_ptr<pagedchat::LLMEngine> engine_;
  QList<Command> pending_;
  QSet<QString> active_;            ///< submitted, not yet reported finished
  QSet<QString> abortedUnreported_; ///< aborted, final delta not yet emitted
  bool stepScheduled_ = false;
};
