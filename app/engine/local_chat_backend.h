// LocalChatBackend: the GUI thread's handle on the engine worker thread.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QThread>

#include <functional>

#include "app/engine/chat_backend.h"
#include "app/engine/chat_prompt.h"
#include "app/engine/request_delta.h"
#include "engine/config.h"
#include "engine/sample/sampling_params.h"

class EngineWorker;

/// GUI-thread facade over an EngineWorker running on its own QThread. submit() and cancel()
/// post queued calls and return at once; per-step deltas come back through stepFinished().
/// Also keeps what the status line shows: model name, load state, progress and error, tokens per
/// second. Models are loaded, replaced and unloaded on the worker thread; the GUI never waits.
class LocalChatBackend : public ChatBackend {
  Q_OBJECT
  Q_PROPERTY(bool loading READ isLoading NOTIFY stateChanged)
  /// A model is loaded and no other is loading: requests run.
  Q_PROPERTY(bool ready READ isReady NOTIFY stateChanged)
  /// A model is loaded (it may be being replaced: see loading).
  Q_PROPERTY(bool loaded READ isLoaded NOTIFY stateChanged)
  /// Why the last load failed (names the file), or "".
  Q_PROPERTY(QString loadError READ loadError NOTIFY stateChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY stateChanged)
  /// Worded in the current language: it changes with the model and with a language switch.
  Q_PROPERTY(QString modelDetails READ modelDetails NOTIFY modelDetailsChanged)
  /// Who can propose the loaded model's draft tokens (SpeculativeConfig::method_name(): "ngram",
  /// "mtp", "draft_model"; empty without a model or speculation): a pane's choice of another
  /// falls back to the engine's default.
  Q_PROPERTY(QStringList draftMethods READ draftMethods NOTIFY modelDetailsChanged)
  /// The loaded model reads images (an image projector was loaded beside it: an mmproj file).
  Q_PROPERTY(bool readsImages READ readsImages NOTIFY modelDetailsChanged)
  /// The model loaded, being loaded, or that failed to load ("" after unloadModel()).
  Q_PROPERTY(QString modelPath READ modelPath NOTIFY stateChanged)
  /// KV-cache blocks of the loaded model (0 when none).
  Q_PROPERTY(int numKvBlocks READ numKvBlocks NOTIFY stateChanged)
  /// The loaded model has no chat format: it continues the text it is given (a story model).
  Q_PROPERTY(bool continuesText READ continuesText NOTIFY stateChanged)
  /// Fraction of the weight bytes read while loading, 0 to 1.
  Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statsChanged)
  Q_PROPERTY(int numRunning READ numRunning NOTIFY statsChanged)
  /// The context length requests get (the engine's max_model_len: the model's max positions
  /// unless configured lower); 0 until the model is loaded.
  Q_PROPERTY(int maxPositions READ maxPositions NOTIFY stateChanged)

 public:
  /// `chatTemplate`: a chat template name, or "auto" to take it from the model files.
  explicit LocalChatBackend(const pagedchat::EngineConfig& config, QObject* parent = nullptr,
                            const QString& chatTemplate = QStringLiteral("auto"));
  /// Stops the worker thread (waits for the step in progress, at most one).
  ~LocalChatBackend() override;

  /// Starts the worker thread and loads the model given to the constructor there (none when its
  /// path is empty). Call once.
  void start();

  /// Loads `path` (a model file or folder) on the worker thread in place of the current model,
  /// with the current engine settings; running requests are stopped first (their replies keep
  /// the text so far). `chatTemplate` as in the constructor. Progress: loadProgress; outcome:
  /// modelLoadFinished(). Starts the worker thread if start() was not called.
  /// `tokenizer`: a tokenizer file to use instead of the model's own ("" = the model's; when
  /// reloading the same path, the one it was loaded with stays).
  Q_INVOKABLE void loadModel(const QString& path, const QString& chatTemplate = QStringLiteral("auto"),
                             const QString& tokenizer = QString());
  /// Stops every request and frees the model; sending is refused until a model is loaded.
  Q_INVOKABLE void unloadModel();
  /// Replaces the engine settings (block size, KV cache, sequences, threads; the model and
  /// tokenizer fields are ignored) and reloads the current model with them, if there is one.
  void setEngineConfig(const pagedchat::EngineConfig& config);
  /// The engine settings models are loaded with (model = the current path).
  const pagedchat::EngineConfig& engineConfig() const { return config_; }
  /// Called on every load (loadModel(), a settings reload) for the EngineConfig's
  /// host_memory_budget (0 = none); LocalModels sets it while other models are loaded.
  void setMemoryBudget(std::function<std::size_t()> budget) { memoryBudget_ = std::move(budget); }
  /// Memory the loaded model holds: its weights as the engine keeps them and its KV cache, in
  /// bytes (0 when none is loaded).
  quint64 memoryBytes() const { return modelDetails_.value(QStringLiteral("memoryBytes")).toULongLong(); }
  /// Turns the worker's snapshots (snapshotReady()) on or off; at most one per `minIntervalMs`
  /// (tests pass 0 to see every step).
  void setMonitoring(bool on, int minIntervalMs = 100);

  /// Queues a chat turn: `messages` is the whole conversation (buildChatMessages()); the worker
  /// thread renders it with the model's chat template. Returns the request id ("req-N"). Deltas
  /// arrive via stepFinished(). With `continueLast` the last message is an assistant reply the
  /// model continues (a cut-off answer): the prompt ends inside it.
  QString submit(const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params,
                 bool continueLast = false, const QString& reasoning = QString(), const QString& tools = QString(),
                 const QString& drafts = QStringLiteral("auto"),
                 const QString& toolChoice = QStringLiteral("auto")) override;
  /// Asks the worker to stop a request; its last delta has finish reason "abort".
  void cancel(const QString& requestId) override;
  /// "local:<model name>".
  QString backendLabel() const override { return QStringLiteral("local:") + modelName_; }

  bool isLoading() const { return loading_; }
  bool isReady() const { return !loading_ && loaded_; }
  bool isLoaded() const { return loaded_; }
  QString loadError() const { return loadError_; }
  QString modelName() const { return modelName_; }
  /// Worded now (a language switch re-reads it: QQmlEngine::retranslate).
  QString modelDetails() const { return modelDetailsText(modelDetails_); }
  QStringList draftMethods() const { return modelDetails_.value(QStringLiteral("draftMethods")).toStringList(); }
  bool readsImages() const { return modelDetails_.value(QStringLiteral("readsImages")).toBool(); }
  /// "llama: 5 layers, dim 64, vocab 512, weights f32 x 12, 83 KV blocks, chat template none"
  /// from EngineWorker::modelLoaded's facts, in the current language; "" for {}.
  static QString modelDetailsText(const QVariantMap& details);
  QString modelPath() const { return modelPath_; }
  QString chatTemplate() const { return chatTemplate_; }
  int numKvBlocks() const { return numKvBlocks_; }
  bool continuesText() const { return continuesText_; }
  /// What happens to a conversation that outgrows the context, from the next request on
  /// (EngineSettings::contextOverflow; the worker's fit_chat).
  void setContextOverflow(pagedchat::ContextOverflow policy);
  double loadProgress() const { return loadProgress_; }
  double tokensPerSecond() const { return tokensPerSecond_; }
  int numRunning() const { return numRunning_; }
  int maxPositions() const { return maxPositions_; }
  /// The loaded model's sampling suggestions (EngineWorker::samplingDefaultsKnown), set before
  /// modelLoadFinished(true); {} when it has none.
  QVariantMap modelSamplingDefaults() const { return modelSamplingDefaults_; }
  /// Milliseconds on the client's monotonic clock (for per-pane throughput meters).
  qint64 clockMs() const { return clock_.elapsed(); }

  /// Asks the worker to count the tokens of `messages` as a request with `maxTokens` would send
  /// them (see EngineWorker::countTokens()); the answer comes as tokenCountReady() with the
  /// returned ticket.
  int countTokens(const QList<PromptMessage>& messages, int maxTokens);

  /// The worker (lives on the engine thread; use only through queued calls / connections).
  EngineWorker* worker() const { return worker_; }

 signals:
  /// The model or the language changed (AppController connects Appearance::languageChanged).
  void modelDetailsChanged();
  void stateChanged();
  /// Emitted (directly, before anything changes) when the model is about to be replaced or
  /// unloaded: the app's OpenAI server stops before the engine it reads goes.
  void aboutToReplaceModel();
  void statsChanged();
  void loadProgressChanged();
  /// A load finished: `ok`, or not with `error` (names the file and the reason).
  void modelLoadFinished(bool ok, const QString& path, const QString& error);
  // stepFinished() (one per engine step) and requestRejected() come from ChatBackend.
  /// The model's chat template is replaced by a built-in (EngineWorker::chatTemplateWarning).
  void chatTemplateWarning(const QString& message);
  /// The engine warned while loading (EngineWorker::engineWarning).
  void engineWarning(const QString& message);
  /// Tokens counted for countTokens(`ticket`); -1 when they could not be counted (no model).
  void tokenCountReady(int ticket, int count);
  /// The worker's engine snapshot (only while monitoring).
  void snapshotReady(const EngineSnapshot& snapshot);

 private:
  void ensureThread();
  void onModelLoaded(const QString& name, const QVariantMap& details, int numBlocks, int generation);
  void onLoadFailed(const QString& message, int generation);
  void onLoadProgress(qint64 done, qint64 total, int generation);
  void onModelUnloaded(int generation);
  void onStepFinished(const QList<RequestDelta>& deltas, const EngineStepStats& stats);
  void onStepStarted(const QList<RequestDelta>& progress, const EngineStepStats& stats);

  QThread thread_;
  EngineWorker* worker_ = nullptr;
  pagedchat::EngineConfig config_;
  QString chatTemplate_;
  QString modelPath_;
  bool started_ = false;
  bool loading_ = true;
  bool loaded_ = false;
  int generation_ = 0;  ///< of the latest load/unload asked for; older outcomes are ignored
  QString loadError_;
  QString modelName_;
  QVariantMap modelDetails_;
  int numKvBlocks_ = 0;
  bool continuesText_ = false;
  double loadProgress_ = 0.0;
  qint64 nextRequestId_ = 1;
  int nextCountTicket_ = 1;

  QElapsedTimer clock_;
  QList<QPair<qint64, qint64>> rateWindow_;  ///< (ms, total generated tokens), last ~second
  qint64 lastStatsEmitMs_ = -1;
  double tokensPerSecond_ = 0.0;
  int numRunning_ = 0;
  int maxPositions_ = 0;
  QVariantMap modelSamplingDefaults_;
  std::function<std::size_t()> memoryBudget_;
};
