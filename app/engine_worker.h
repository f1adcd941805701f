// EngineWorker: owns the LLMEngine on its own thread and runs its step loop.
#pragma once

#include <QList>
#include <QObject>
#include <QSet>
#include <QString>

#include <memory>
#include <string>

#include "app/chat_prompt.h"
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
  /// `chatTemplate` names the chat template (pagedchat::chat_template_names()), or "auto" / ""
  /// for the one detected from the model's files when it loads.
  explicit EngineWorker(const pagedchat::EngineConfig& config, const QString& chatTemplate = QStringLiteral("auto"),
                        QObject* parent = nullptr);
  ~EngineWorker() override;

  /// True once loadModel() succeeded. Worker thread only.
  bool isLoaded() const { return engine_ != nullptr; }
  /// The chat template in use once loaded (e.g. "none" for a llama2.c checkpoint). Worker thread only.
  QString chatTemplate() const { return QString::fromStdString(templateName_); }

 public slots:
  /// Loads the model and tokenizer (may take a while) and resolves the chat template. Emits
  /// modelLoaded() or loadFailed() (also for an unknown template name).
  void loadModel();
  /// Queues a chat request: `messages` is the conversation (buildChatMessages()), rendered and
  /// tokenized here with the chat template (pagedchat::fit_chat): the oldest turns are dropped
  /// when it does not fit the context, max_tokens is clamped to what the context leaves, and
  /// the template's stop strings are added. `params.output_kind` is forced to kDelta. A request
  /// the engine refuses (duplicate id, bad params or roles, newest message longer than the
  /// context, no model) is reported by requestRejected().
  void submit(const QString& requestId, const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params);
  /// Stops a request; its final delta (finish reason "abort") comes with the next step.
  void cancel(const QString& requestId);

 signals:
  void modelLoaded(const QString& modelName, const QString& details);
  void loadFailed(const QString& message);
  /// The context length of every request (max_model_len), emitted just before modelLoaded().
  void contextLengthKnown(int maxPositions);
  void requestRejected(const QString& requestId, const QString& message);
  /// Emitted once per engine step with the delta of every request that made progress or finished.
  void stepFinished(const QList<RequestDelta>& deltas, const EngineStepStats& stats);

 private:
  struct Command {
    bool isCancel = false;
    QString requestId;
    QList<PromptMessage> messages;
    pagedchat::SamplingParams params;
  };

  void scheduleStep();
  void runStep();
  void drainCommands();
  void failAllActive(const QString& message);

  pagedchat::EngineConfig config_;
  QString chatTemplateOverride_;
  std::string templateName_;  ///< resolved at load
  std::unique_ptr<pagedchat::LLMEngine> engine_;
  QList<Command> pending_;
  QSet<QString> active_;            ///< submitted, not yet reported finished
  QSet<QString> abortedUnreported_; ///< aborted, final delta not yet emitted
  bool stepScheduled_ = false;
};
