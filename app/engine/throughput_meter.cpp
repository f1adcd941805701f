#include "app/engine/throughput_meter.h"

#include "app/engine/local_chat_backend.h"

ThroughputMeter::ThroughputMeter(LocalChatBackend* engine, QObject* parent) : QObject(parent) {
  clock_.start();
  refreshTimer_.setInterval(kRefreshMs);
  connect(&refreshTimer_, &QTimer::timeout, this, [this] { refresh(clock_.elapsed()); });
  if (!engine) return;
  connect(engine, &LocalChatBackend::stepFinished, this, [this, engine](const QList<RequestDelta>& deltas) {
    int tokens = 0;
    for (const RequestDelta& d : deltas) tokens += d.newTokens;
    addStep(clock_.elapsed(), tokens, engine->numRunning());  // numRunning: after this step
  });
}

void ThroughputMeter::addStep(qint64 nowMs, int tokens, int running) {
  if (running <= 0) {  // the burst is over: no figure until the next one
    steps_.clear();
    refreshTimer_.stop();
    const bool changedState = active_ || rate_ >= 0.0;
    active_ = false;
    rate_ = -1.0;
    if (changedState) {
      lastEmitMs_ = nowMs;
      emit changed();
    }
    return;
  }
  const bool started = !active_;
  if (started) {
    active_ = true;
    burstStartMs_ = nowMs;  // the first step's tokens were made before it: not counted
    steps_.clear();
    refreshTimer_.start();
  } else {
    steps_.append({nowMs, tokens});
  }
  measure(nowMs, started);
}

void ThroughputMeter::refresh(qint64 nowMs) {
  if (active_) measure(nowMs, false);
}

void ThroughputMeter::measure(qint64 nowMs, bool force) {
  const qint64 from = qMax(burstStartMs_, nowMs - kWindowMs);
  while (!steps_.isEmpty() && steps_.first().first <= from) steps_.removeFirst();
  qint64 tokens = 0;
  for (const auto& step : std::as_const(steps_)) tokens += step.second;
  const qint64 spanMs = nowMs - from;
  const double rate = spanMs > 0 && nowMs > burstStartMs_ && (tokens > 0 || spanMs >= kRefreshMs)
                          ? 1000.0 * static_cast<double>(tokens) / static_cast<double>(spanMs)
                          : -1.0;
  rate_ = rate;
  if (force || lastEmitMs_ < 0 || nowMs - lastEmitMs_ >= kRefreshMs) {
    lastEmitMs_ = nowMs;
    emit changed();
  }
}
