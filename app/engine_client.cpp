#include "app/engine_client.h"

#include <QFileInfo>

#include "app/engine_worker.h"

namespace {
constexpr qint64 kRateWindowMs = 1000;   // tokens/s is measured over the last second
constexpr qint64 kStatsIntervalMs = 200; // at most 5 status updates a second
}  // namespace

EngineClient::EngineClient(const pagedchat::EngineConfig& config, QObject* parent, const QString& chatTemplate)
    : QObject(parent), modelPath_(QString::fromStdString(config.model)) {
  modelName_ = QFileInfo(modelPath_).completeBaseName();
  thread_.setObjectName(QStringLiteral("EngineWorker"));
  worker_ = new EngineWorker(config, chatTemplate);
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(worker_, &EngineWorker::modelLoaded, this, &EngineClient::onModelLoaded);
  connect(worker_, &EngineWorker::loadFailed, this, &EngineClient::onLoadFailed);
  connect(worker_, &EngineWorker::contextLengthKnown, this, [this](int n) { maxPositions_ = n; });
  connect(worker_, &EngineWorker::stepFinished, this, &EngineClient::onStepFinished);
  connect(worker_, &EngineWorker::requestRejected, this, &EngineClient::requestRejected);
  clock_.start();
}

EngineClient::~EngineClient() {
  thread_.quit();
  thread_.wait();
  if (!started_) delete worker_;  // never ran: finished() did not fire
}

void EngineClient::start() {
  if (started_) return;
  started_ = true;
  thread_.start();
  QMetaObject::invokeMethod(worker_, &EngineWorker::loadModel, Qt::QueuedConnection);
}

QString EngineClient::submit(const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params) {
  const QString id = QStringLiteral("req-%1").arg(nextRequestId_++);
  QMetaObject::invokeMethod(worker_, "submit", Qt::QueuedConnection, Q_ARG(QString, id),
                            Q_ARG(QList<PromptMessage>, messages), Q_ARG(pagedchat::SamplingParams, params));
  return id;
}

void EngineClient::cancel(const QString& requestId) {
  QMetaObject::invokeMethod(worker_, "cancel", Qt::QueuedConnection, Q_ARG(QString, requestId));
}

void EngineClient::onModelLoaded(const QString& name, const QString& details) {
  loading_ = false;
  loadError_.clear();
  if (!name.isEmpty()) modelName_ = name;
  modelDetails_ = details;
  emit stateChanged();
}

void EngineClient::onLoadFailed(const QString& message) {
  loading_ = false;
  loadError_ = message.isEmpty() ? tr("The model could not be loaded.") : message;
  emit stateChanged();
}

void EngineClient::onStepFinished(const QList<RequestDelta>& deltas, const EngineStepStats& stats) {
  const qint64 now = clock_.elapsed();
  if (numRunning_ == 0) rateWindow_.clear();  // a new burst after idling: measure it alone
  rateWindow_.append({now, stats.numGenerationTokens});
  while (rateWindow_.size() > 2 && now - rateWindow_.first().first > kRateWindowMs) rateWindow_.removeFirst();
  const qint64 spanMs = now - rateWindow_.first().first;
  const bool runningChanged = stats.numRunning != numRunning_;
  numRunning_ = stats.numRunning;
  if (spanMs > 0) {
    tokensPerSecond_ =
        1000.0 * static_cast<double>(stats.numGenerationTokens - rateWindow_.first().second) / spanMs;
  }
  if (runningChanged || lastStatsEmitMs_ < 0 || now - lastStatsEmitMs_ >= kStatsIntervalMs) {
    lastStatsEmitMs_ = now;
    emit statsChanged();
  }
  emit stepFinished(deltas);
}
