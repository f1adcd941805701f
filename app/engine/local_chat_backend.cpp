#include "app/engine/local_chat_backend.h"

#include <QDir>
#include <QFileInfo>

#include "app/engine/engine_worker.h"

namespace {
constexpr qint64 kRateWindowMs = 1000;    // tokens/s is measured over the last second
constexpr qint64 kStatsIntervalMs = 200;  // at most 5 status updates a second
}  // namespace

LocalChatBackend::LocalChatBackend(const pagedchat::EngineConfig& config, QObject* parent, const QString& chatTemplate)
    : ChatBackend(parent),
      config_(config),
      chatTemplate_(chatTemplate),
      modelPath_(config.model.empty() ? QString() : QDir::cleanPath(QString::fromStdString(config.model))) {
  config_.load_progress = nullptr;  // the worker installs its own
  modelName_ = QFileInfo(modelPath_).completeBaseName();
  thread_.setObjectName(QStringLiteral("EngineWorker"));
  worker_ = new EngineWorker(config_, chatTemplate);
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(worker_, &EngineWorker::modelLoaded, this, &LocalChatBackend::onModelLoaded);
  connect(worker_, &EngineWorker::loadFailed, this, &LocalChatBackend::onLoadFailed);
  connect(worker_, &EngineWorker::loadProgress, this, &LocalChatBackend::onLoadProgress);
  connect(worker_, &EngineWorker::modelUnloaded, this, &LocalChatBackend::onModelUnloaded);
  connect(worker_, &EngineWorker::contextLengthKnown, this, [this](int n) { maxPositions_ = n; });
  connect(worker_, &EngineWorker::chatFormatKnown, this, [this](bool continues) { continuesText_ = continues; });
  connect(worker_, &EngineWorker::samplingDefaultsKnown, this,
          [this](const QVariantMap& d) { modelSamplingDefaults_ = d; });
  connect(worker_, &EngineWorker::stepFinished, this, &LocalChatBackend::onStepFinished);
  connect(worker_, &EngineWorker::stepStarted, this, &LocalChatBackend::onStepStarted);
  connect(this, &LocalChatBackend::stateChanged, this, &LocalChatBackend::modelDetailsChanged);
  connect(worker_, &EngineWorker::requestRejected, this, &LocalChatBackend::requestRejected);
  connect(worker_, &EngineWorker::contextTrimmed, this, &LocalChatBackend::contextTrimmed);
  connect(worker_, &EngineWorker::chatTemplateWarning, this, &LocalChatBackend::chatTemplateWarning);
  connect(worker_, &EngineWorker::engineWarning, this, &LocalChatBackend::engineWarning);
  connect(worker_, &EngineWorker::snapshotReady, this, &LocalChatBackend::snapshotReady);
  connect(worker_, &EngineWorker::tokenCountReady, this, &LocalChatBackend::tokenCountReady);
  clock_.start();
}

LocalChatBackend::~LocalChatBackend() {
  thread_.quit();
  thread_.wait();
  if (!started_) delete worker_;  // never ran: finished() did not fire
}

void LocalChatBackend::ensureThread() {
  if (started_) return;
  started_ = true;
  thread_.start();
}

void LocalChatBackend::start() {
  if (started_) return;
  ensureThread();
  if (modelPath_.isEmpty()) {
    loading_ = false;
    emit stateChanged();
    return;
  }
  QMetaObject::invokeMethod(worker_, &EngineWorker::loadModel, Qt::QueuedConnection);
}

void LocalChatBackend::loadModel(const QString& rawPath, const QString& chatTemplate, const QString& tokenizer) {
  ensureThread();
  // Asked while the current model's memory still counts as ours (LocalModels gives it back).
  config_.host_memory_budget = memoryBudget_ ? memoryBudget_() : 0;
  emit aboutToReplaceModel();
  const QString path = QDir::cleanPath(rawPath);
  config_.model = path.toStdString();
  if (!tokenizer.isEmpty())
    config_.tokenizer = tokenizer.toStdString();
  else if (path != modelPath_)
    config_.tokenizer.clear();  // an explicit tokenizer went with the old model
  chatTemplate_ = chatTemplate.isEmpty() ? QStringLiteral("auto") : chatTemplate;
  modelPath_ = path;
  modelName_ = QFileInfo(path).completeBaseName();
  modelDetails_.clear();
  loadError_.clear();
  loading_ = true;
  loaded_ = false;  // the old model goes first
  numKvBlocks_ = 0;
  loadProgress_ = 0.0;
  const int generation = ++generation_;
  QMetaObject::invokeMethod(
      worker_,
      [w = worker_, config = config_, tmpl = chatTemplate_, generation] { w->loadModelWith(config, tmpl, generation); },
      Qt::QueuedConnection);
  emit loadProgressChanged();
  emit stateChanged();
}

void LocalChatBackend::unloadModel() {
  ensureThread();
  emit aboutToReplaceModel();
  const int generation = ++generation_;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, generation] { w->unloadModel(generation); }, Qt::QueuedConnection);
  modelPath_.clear();
  config_.model.clear();
  modelName_.clear();
  modelDetails_.clear();
  loadError_.clear();
  loading_ = false;
  loaded_ = false;
  numKvBlocks_ = 0;
  maxPositions_ = 0;  // no model, no context: the panes' headers stop showing the old one's
  loadProgress_ = 0.0;
  emit loadProgressChanged();
  emit stateChanged();
}

void LocalChatBackend::setEngineConfig(const pagedchat::EngineConfig& config) {
  const std::string model = config_.model, tokenizer = config_.tokenizer;
  config_ = config;
  config_.model = model;
  config_.tokenizer = tokenizer;
  config_.load_progress = nullptr;
  if (!modelPath_.isEmpty()) loadModel(modelPath_, chatTemplate_);
}

void LocalChatBackend::setMonitoring(bool on, int minIntervalMs) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, on, minIntervalMs] { w->setMonitoring(on, minIntervalMs); }, Qt::QueuedConnection);
}

QString LocalChatBackend::submit(const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params,
                                 bool continueLast, const QString& reasoning, const QString& tools,
                                 const QString& drafts, const QString& toolChoice) {
  const QString id = QStringLiteral("req-%1").arg(nextRequestId_++);
  QMetaObject::invokeMethod(
      worker_,
      [w = worker_, id, messages, params, continueLast, reasoning, tools, drafts, toolChoice] {
        w->submit(id, messages, params, continueLast, reasoning, tools, drafts, toolChoice);
      },
      Qt::QueuedConnection);
  return id;
}

int LocalChatBackend::countTokens(const QList<PromptMessage>& messages, int maxTokens) {
  ensureThread();
  const int ticket = nextCountTicket_++;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, ticket, messages, maxTokens] { w->countTokens(ticket, messages, maxTokens); },
      Qt::QueuedConnection);
  return ticket;
}

void LocalChatBackend::setContextOverflow(pagedchat::ContextOverflow policy) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, policy] { w->setContextOverflow(policy); }, Qt::QueuedConnection);
}

void LocalChatBackend::cancel(const QString& requestId) {
  worker_->requestAbort(requestId);  // at once, even inside a step (thread-safe)
  QMetaObject::invokeMethod(
      worker_, [w = worker_, requestId] { w->cancel(requestId); }, Qt::QueuedConnection);
}

QString LocalChatBackend::modelDetailsText(const QVariantMap& d) {
  if (d.isEmpty()) return QString();
  const QString chatTemplate =
      d.value(QStringLiteral("builtinTemplate")).toBool()
          ? d.value(QStringLiteral("template")).toString()
          : tr("the model's own (%1 format)").arg(d.value(QStringLiteral("templateFamily")).toString());
  return tr("%1: %2 layers, dim %3, vocab %4, weights %5, %n KV block(s), chat template %6", "",
            d.value(QStringLiteral("blocks")).toInt())
      .arg(d.value(QStringLiteral("architecture")).toString())
      .arg(d.value(QStringLiteral("layers")).toInt())
      .arg(d.value(QStringLiteral("dim")).toInt())
      .arg(d.value(QStringLiteral("vocab")).toInt())
      .arg(d.value(QStringLiteral("weights")).toString(), chatTemplate);
}

void LocalChatBackend::onModelLoaded(const QString& name, const QVariantMap& details, int numBlocks, int generation) {
  if (generation != generation_) return;  // replaced by a later load or unload
  loading_ = false;
  loaded_ = true;
  loadError_.clear();
  if (!name.isEmpty()) modelName_ = name;
  modelDetails_ = details;
  numKvBlocks_ = numBlocks;
  if (loadProgress_ != 1.0) {
    loadProgress_ = 1.0;
    emit loadProgressChanged();
  }
  emit stateChanged();
  const QString path = modelPath_;  // copies: a receiver may start another load
  emit modelLoadFinished(true, path, QString());
}

void LocalChatBackend::onLoadFailed(const QString& message, int generation) {
  if (generation != generation_) return;
  loading_ = false;
  loaded_ = false;
  loadError_ = message.isEmpty() ? tr("The model could not be loaded.") : message;
  emit stateChanged();
  const QString path = modelPath_, error = loadError_;  // copies: a receiver may start another load
  emit modelLoadFinished(false, path, error);
}

void LocalChatBackend::onLoadProgress(qint64 done, qint64 total, int generation) {
  if (generation != generation_ || total <= 0) return;
  const double p = qBound(0.0, static_cast<double>(done) / static_cast<double>(total), 1.0);
  if (p <= loadProgress_) return;
  loadProgress_ = p;
  emit loadProgressChanged();
}

void LocalChatBackend::onModelUnloaded(int generation) {
  Q_UNUSED(generation);  // the state changed when unloadModel() was called
}

void LocalChatBackend::onStepStarted(const QList<RequestDelta>& progress, const EngineStepStats& stats) {
  if (!progress.isEmpty()) emit stepFinished(progress);  // the panes first: the status line then counts them
  if (stats.numRunning != numRunning_) {
    if (numRunning_ == 0) rateWindow_.clear();
    numRunning_ = stats.numRunning;
    emit statsChanged();
  }
}

void LocalChatBackend::onStepFinished(const QList<RequestDelta>& deltas, const EngineStepStats& stats) {
  const qint64 now = clock_.elapsed();
  if (numRunning_ == 0) rateWindow_.clear();  // a new burst after idling: measure it alone
  rateWindow_.append({now, stats.numGenerationTokens});
  while (rateWindow_.size() > 2 && now - rateWindow_.first().first > kRateWindowMs) rateWindow_.removeFirst();
  const qint64 spanMs = now - rateWindow_.first().first;
  const bool runningChanged = stats.numRunning != numRunning_;
  numRunning_ = stats.numRunning;
  if (spanMs > 0) {
    tokensPerSecond_ = 1000.0 * static_cast<double>(stats.numGenerationTokens - rateWindow_.first().second) / spanMs;
  }
  if (runningChanged || lastStatsEmitMs_ < 0 || now - lastStatsEmitMs_ >= kStatsIntervalMs) {
    lastStatsEmitMs_ = now;
    emit statsChanged();
  }
  emit stepFinished(deltas);
}
