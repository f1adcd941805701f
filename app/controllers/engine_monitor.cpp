#include "app/controllers/engine_monitor.h"

#include <QVariantMap>

#include <algorithm>

#include "app/engine/local_chat_backend.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"

EngineMonitor::EngineMonitor(LocalChatBackend* engine, PaneListModel* panes, QObject* parent)
    : QObject(parent), engine_(engine), panes_(panes) {
  qRegisterMetaType<EngineSnapshot>();
  clock_.start();
  sampleTimer_.setInterval(kSampleMs);
  connect(&sampleTimer_, &QTimer::timeout, this, [this] { sampleRate(clock_.elapsed()); });
  if (engine_) connect(engine_, &LocalChatBackend::snapshotReady, this, &EngineMonitor::setSnapshot);
}

void EngineMonitor::setActive(bool on) {
  if (on == active_) return;
  active_ = on;
  if (engine_) engine_->setMonitoring(on, intervalMs_);
  if (on) {
    lastSampleMs_ = -1;
    sampleTimer_.start();
  } else {
    sampleTimer_.stop();
  }
  emit activeChanged();
}

double EngineMonitor::hitRate() const {
  if (snap_.prefixCacheQueries <= 0) return -1.0;
  return static_cast<double>(snap_.prefixCacheHits) / static_cast<double>(snap_.prefixCacheQueries);
}

QVariantList EngineMonitor::rateHistory() const {
  QVariantList list;
  list.reserve(rates_.size());
  for (double r : rates_) list.append(r);
  return list;
}

double EngineMonitor::maxRate() const {
  return rates_.isEmpty() ? 0.0 : *std::max_element(rates_.cbegin(), rates_.cend());
}

int EngineMonitor::blockPane(int block) const {
  return block >= 0 && block < blockPanes_.size() ? blockPanes_.at(block) : 0;
}

int EngineMonitor::blockFlags(int block) const {
  return block >= 0 && block < snap_.blockFlags.size() ? static_cast<quint8>(snap_.blockFlags.at(block)) : 0;
}

int EngineMonitor::paneOfRequest(const QString& requestId) const {
  if (!panes_) return 0;
  const QList<PaneState*>& sessions = panes_->panes();
  for (int i = 0; i < sessions.size(); ++i)
    if (sessions.at(i)->requestId() == requestId) return i + 1;
  return 0;
}

void EngineMonitor::setSnapshot(const EngineSnapshot& snapshot) {
  snap_ = snapshot;
  QList<qint8> paneOfIndex;
  requests_.clear();
  for (const EngineRequestInfo& r : std::as_const(snap_.requests)) {
    const int pane = paneOfRequest(r.requestId);
    paneOfIndex.append(static_cast<qint8>(pane));
    requests_.append(QVariantMap{{QStringLiteral("requestId"), r.requestId},
                                 {QStringLiteral("pane"), pane},
                                 {QStringLiteral("server"), r.fromServer},
                                 {QStringLiteral("running"), r.running},
                                 {QStringLiteral("promptTokens"), r.promptTokens},
                                 {QStringLiteral("computedTokens"), r.computedTokens},
                                 {QStringLiteral("outputTokens"), r.outputTokens},
                                 {QStringLiteral("blocks"), r.blocks}});
  }
  blockPanes_.resize(snap_.blockOwner.size());
  for (qsizetype b = 0; b < snap_.blockOwner.size(); ++b) {
    const qint32 owner = snap_.blockOwner.at(b);
    blockPanes_[b] = owner >= 0 && owner < paneOfIndex.size() ? paneOfIndex.at(owner) : qint8(0);
  }
  emit snapshotChanged();
}

void EngineMonitor::sampleRate(qint64 nowMs) {
  const qint64 tokens = snap_.numGenerationTokens;
  if (lastSampleMs_ < 0 || tokens < lastSampleTokens_ || nowMs <= lastSampleMs_) {
    // First sample, or a new engine (counters restart): start measuring from here.
    lastSampleMs_ = nowMs;
    lastSampleTokens_ = tokens;
    return;
  }
  const double rate = 1000.0 * static_cast<double>(tokens - lastSampleTokens_) /
                      static_cast<double>(nowMs - lastSampleMs_);
  lastSampleMs_ = nowMs;
  lastSampleTokens_ = tokens;
  rates_.append(rate);
  while (rates_.size() > kHistory) rates_.removeFirst();
  emit rateHistoryChanged();
}
