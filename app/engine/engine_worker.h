// EngineWorker: owns the LLMEngine on its own thread and runs its step loop.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QString>
#include <QVariantMap>

#include <memory>
#include <optional>
#include <string>

#include "app/engine/chat_prompt.h"
#include "app/engine/request_delta.h"
#include "app/engine/tool_reply.h"
#include "engine/config.h"
#include "engine/multimodal/mm_input.h"
#include "engine/sample/sampling_params.h"

namespace pagedchat {
class AsyncEngineClient;
class LLMEngine;
}  // namespace pagedchat
class WorkerEngineProxy;

Q_DECLARE_METATYPE(pagedchat::SamplingParams)
Q_DECLARE_METATYPE(pagedchat::EngineConfig)

/// Lives on a worker QThread and owns the LLMEngine (which is not thread-safe). Every public slot
/// is meant to be called through a queued connection (QMetaObject::invokeMethod with
/// Qt::QueuedConnection) from the GUI thread, which therefore never waits on the engine.
///
/// The loop: submit()/cancel() only append a command and schedule a step. A scheduled step is a
/// queued call to itself, so commands the GUI queued meanwhile are delivered first; the step then
/// drains all pending commands into the engine, runs exactly one LLMEngine::step() over every
/// unfinished request (so all panes' requests share the batch), emits ONE stepFinished() with
/// every request's delta, and schedules the next step while requests remain.
///
/// The OpenAI server the app can run (app/engine/server/) submits through serverClient(), which any
/// thread may call: its requests are taken in the same drain and run in the same steps as the
/// panes' (one continuous batch); their outputs go to the server's streams, not to stepFinished().
class EngineWorker : public QObject {
  Q_OBJECT

 public:
  /// `chatTemplate` names the chat template (pagedchat::chat_template_names()), or "auto" / ""
  /// for the one detected from the model's files when it loads.
  explicit EngineWorker(const pagedchat::EngineConfig& config, const QString& chatTemplate = QStringLiteral("auto"),
                        QObject* parent = nullptr);
  ~EngineWorker() override;

  /// Most snapshots a second the worker sends while monitoring (setMonitoring()).
  static constexpr int kMaxSnapshotsPerSecond = 10;
  /// Most load progress signals a second (the first and the last are always sent).
  static constexpr int kMaxProgressPerSecond = 20;

  /// The engine as the OpenAI server sees it (thread-safe; see the class comment). Lives as long
  /// as the worker; refuses requests while no model is loaded.
  pagedchat::AsyncEngineClient* serverClient() const;

  /// True once loadModel() succeeded. Worker thread only.
  bool isLoaded() const { return engine_ != nullptr; }
  /// The chat template in use once loaded (e.g. "none" for a llama2.c checkpoint). Worker thread only.
  QString chatTemplate() const { return chatTemplate_ ? QString::fromStdString(chatTemplate_->name()) : QString(); }

 public slots:
  /// Loads the model and tokenizer (may take a while) and resolves the chat template. Emits
  /// modelLoaded() or loadFailed() (also for an unknown template name).
  void loadModel();
  /// Replaces the model: stops every request first (each gets its final delta with finish reason
  /// "abort", so a pane keeps the text so far), frees the engine, then loads `config` with chat
  /// template `chatTemplate` ("auto" = from the files), reporting loadProgress() on the way.
  /// Emits modelLoaded() or loadFailed() carrying `generation`, so that the GUI can ignore the
  /// outcome of a load it has since replaced.
  void loadModelWith(const pagedchat::EngineConfig& config, const QString& chatTemplate, int generation);
  /// Stops every request (final deltas "abort"), frees the engine and emits modelUnloaded().
  void unloadModel(int generation);
  /// While on, a snapshotReady() follows engine steps (at most one per `minIntervalMs`, by default
  /// 1000 / kMaxSnapshotsPerSecond; always one when the engine goes idle); one is also sent at
  /// once when switched on.
  void setMonitoring(bool on, int minIntervalMs = 1000 / kMaxSnapshotsPerSecond);
  /// Queues a chat request: `messages` is the conversation (buildChatMessages()), rendered and
  /// tokenized here with the chat template (pagedchat::fit_chat): the oldest turns are dropped
  /// when it does not fit the context, max_tokens is clamped to what the context leaves, and
  /// the template's stop strings are added. `params.output_kind` is forced to kDelta. A request
  /// the engine refuses (duplicate id, bad params or roles, newest message longer than the
  /// context, no model) is reported by requestRejected(). With `continueLast` the last message
  /// is an assistant reply the model continues (the prompt ends inside it, not after its turn).
  /// `reasoning` (PaneSettings::reasoning) sets the template's thinking switch or effort where
  /// it has one (pagedchat::apply_reasoning_choice); otherwise the template's default holds.
  /// `tools` (an OpenAI tools array's JSON text, "" = none) goes to the template's `tools`
  /// variable, and the reply's calls, in the template's call format, are taken out of its text
  /// into the last delta's toolCalls (ToolReplySplitter). A tools text that is no JSON array is
  /// refused (requestRejected()). `toolChoice` "required" or a tool's name forces a call by
  /// constrained decoding (openai::tool_choice_schema(), as the server's tool_choice does): the
  /// reply is the call's JSON, none of it shown, all of it in toolCalls; a tool the grammar cannot
  /// enforce is left out of the choice, and a request with none left is refused.
  void submit(const QString& requestId, const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params,
              bool continueLast = false, const QString& reasoning = QString(), const QString& tools = QString(),
              const QString& drafts = QStringLiteral("auto"), const QString& toolChoice = QStringLiteral("auto"));
  /// Stops a request; its final delta (finish reason "abort") comes with the next step.
  void cancel(const QString& requestId);
  /// What happens to a conversation that outgrows the context, from the next request on.
  void setContextOverflow(pagedchat::ContextOverflow policy);
  /// Any thread (the GUI's, while this thread is inside a step): asks the engine to stop
  /// `requestId` now (LLMEngine::request_abort), so that a step computing only stopped requests
  /// ends between two layers instead of after its whole prefill chunk. cancel() is still queued
  /// after it, for the bookkeeping; with no model loaded this does nothing.
  void requestAbort(const QString& requestId);
  /// Counts the tokens of `messages` as the next request would send them (pagedchat::fit_chat
  /// with the chat template and `maxTokens`: the oldest turns dropped when they do not fit; a
  /// last assistant message left open, as when it is continued) and emits tokenCountReady() with
  /// `ticket`. A conversation whose newest turn alone is too long counts whole (over the limit);
  /// -1 when no model is loaded or the template refuses the messages.
  void countTokens(int ticket, const QList<PromptMessage>& messages, int maxTokens);
  /// serverClient() queued a command: schedules a step (queued from the server's threads).
  void wakeForServer();

 signals:
  /// `numBlocks`: KV-cache blocks; `generation` as given to loadModelWith() (0 for loadModel()).
  /// `details`: the model's facts for the status line (LocalChatBackend::modelDetailsText()).
  void modelLoaded(const QString& modelName, const QVariantMap& details, int numBlocks, int generation);
  /// `message` names the file and the reason.
  void loadFailed(const QString& message, int generation);
  /// Bytes of the weight files read so far while loading (`total` > 0), non-decreasing.
  void loadProgress(qint64 done, qint64 total, int generation);
  void modelUnloaded(int generation);
  /// The engine's state for the engine view (see setMonitoring()).
  void snapshotReady(const EngineSnapshot& snapshot);
  /// The context length of every request (max_model_len), emitted just before modelLoaded().
  void contextLengthKnown(int maxPositions);
  /// Whether the loaded model has no chat format (template "none": a llama2.c story model, a base
  /// model): it continues the text it is given. Emitted just before modelLoaded().
  void chatFormatKnown(bool continuesText);
  /// The sampling settings the model's files suggest (generation_config.json), keyed as
  /// PaneSettings' properties (temperature, topP, topK, minP, repetitionPenalty, maxTokens; only
  /// those the model sets; "do_sample": false is temperature 0). Emitted just before modelLoaded().
  void samplingDefaultsKnown(const QVariantMap& defaults);
  void requestRejected(const QString& requestId, const QString& message);
  /// fit_chat left out `count` messages of the request from index `first` (ChatBackend::contextTrimmed).
  void contextTrimmed(const QString& requestId, int first, int count);
  /// The model's chat template could not be used as it is (it does not parse, or it failed on a
  /// conversation) and a built-in renders its format instead; `message` says why. Emitted at load
  /// and the first time each kind of failure happens.
  void chatTemplateWarning(const QString& message);
  /// A warning of the engine while it loads, in its words (EngineConfig::on_warning: a
  /// max_model_len above the model's metadata, a GPU that failed its load-time check so the CPU
  /// runs instead, ...); emitted before modelLoaded().
  void engineWarning(const QString& message);
  /// The answer to countTokens(`ticket`).
  void tokenCountReady(int ticket, int count);
  /// Emitted once per engine step with the delta of every request that made progress or finished.
  void stepFinished(const QList<RequestDelta>& deltas, const EngineStepStats& stats);
  /// A step is about to run its forward (LLMEngine::set_on_scheduled): the counters counting its
  /// requests as running, and for each pane request still reading its prompt a progress delta
  /// (numPromptTokens, numComputedPromptTokens; no text, no tokens). A long prefill chunk thus
  /// shows as running, with its progress, while it runs.
  void stepStarted(const QList<RequestDelta>& progress, const EngineStepStats& stats);

 private:
  struct Command {
    bool isCancel = false;
    QString requestId;
    QList<PromptMessage> messages;
    pagedchat::SamplingParams params;
    bool continueLast = false;
    QString reasoning;
    QString tools;
    QString drafts = QStringLiteral("auto");
    QString toolChoice = QStringLiteral("auto");
  };

  /// The loaded model's suggestions for the panes' settings (modelDefaultsMap()):
  /// generation_config.json's, the context as the max tokens of a model that reasons, and the
  /// reasoning choices its chat template offers.
  QVariantMap modelDefaults() const;

  void scheduleStep();
  void runStep();
  /// Progress deltas of the pane requests the last scheduled step computes and that have prompt
  /// tokens left (after `afterStep`: the step's own tokens counted).
  QList<RequestDelta> promptProgress() const;
  EngineStepStats stepStats(double stepMs) const;
  void drainCommands();
  /// The pictures of the messages `prompt` kept, placed in it (its ids re-tokenized with each
  /// picture's positions): the request's RequestOptions::images. Throws std::invalid_argument
  /// when the model reads no images, pagedchat::ImageError for a picture that does not decode,
  /// ChatTooLongError when the pictures take the context.
  std::vector<pagedchat::MultiModalPlaceholder> placeImages(const QList<PromptMessage>& messages,
                                                            pagedchat::ChatPrompt& prompt,
                                                            const pagedchat::ChatEncodeOptions& encode);
  /// Rejects every active request with `message` and aborts it in the engine (a failed step).
  void failAllActive(const QString& message);
  /// Aborts every active request and emits their final "abort" deltas in one stepFinished();
  /// the server's requests end "abort" too (the model is going).
  void abortAll();
  /// Frees the model (after abortAll()).
  void freeEngine();
  /// Loads config_ (engine_ must be empty); emits modelLoaded()/loadFailed() with `generation`.
  void load(int generation);
  void maybeSnapshot(bool force);
  EngineSnapshot takeSnapshot() const;
  /// How the loaded model's chat prompts are encoded (its BOS rule). engine_ must be set.
  pagedchat::ChatEncodeOptions chatEncodeOptions() const;

  pagedchat::EngineConfig config_;
  QString chatTemplateOverride_;
  pagedchat::ContextOverflow contextOverflow_ = pagedchat::ContextOverflow::kRollingWindow;
  std::optional<pagedchat::ChatTemplate> chatTemplate_;  ///< resolved at load
  std::string lastTemplateWarning_;                      ///< the template's last fallback warning (logged once)
  std::unique_ptr<pagedchat::LLMEngine> engine_;
  /// Held by requestAbort() (another thread) while it uses engine_, and here while engine_ is set
  /// or freed: never during a step, so the step itself takes no lock.
  QMutex engineMutex_;
  std::unique_ptr<WorkerEngineProxy> server_;  ///< the server's requests (serverClient())
  QList<Command> pending_;
  QSet<QString> active_;             ///< submitted, not yet reported finished
  QSet<QString> abortedUnreported_;  ///< aborted, final delta not yet emitted
  QSet<QString> reasoningOpened_;    ///< replies whose prompt opened <think>: first delta gets the tag
  /// Requests that offered tools: their replies' calls are taken out of the text.
  QHash<QString, std::shared_ptr<ToolReplySplitter>> toolReplies_;
  bool stepScheduled_ = false;
  bool monitoring_ = false;
  int snapshotIntervalMs_ = 1000 / kMaxSnapshotsPerSecond;
  qint64 lastSnapshotMs_ = -1;
  QElapsedTimer clock_;
};
