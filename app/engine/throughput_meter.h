// ThroughputMeter: the tokens/s figure of the status line.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPair>
#include <QTimer>

class LocalChatBackend;

/// Generation speed measured from the engine's per-step deltas (LocalChatBackend::stepFinished): the
/// tokens generated over the last second (kWindowMs) divided by the time they took, counted from
/// the burst's first step when it is younger than that. While no request runs, `active` is false
/// and the status line shows no figure; while one runs the figure follows the current speed and
/// falls when steps stop coming (a timer re-measures it every kRefreshMs).
class ThroughputMeter : public QObject {
  Q_OBJECT
  Q_PROPERTY(bool active READ isActive NOTIFY changed)
  /// Tokens per second, or -1 while there is nothing to measure yet (idle, first step).
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY changed)

 public:
  static constexpr qint64 kWindowMs = 1000;
  static constexpr int kRefreshMs = 250;  ///< also the most often changed() is emitted

  /// Measures `engine`'s steps; with nullptr, only what addStep() is given (tests).
  explicit ThroughputMeter(LocalChatBackend* engine = nullptr, QObject* parent = nullptr);

  /// One engine step finished at `nowMs` (any monotonic clock in ms) having generated `tokens`
  /// tokens, with `running` requests still running after it.
  void addStep(qint64 nowMs, int tokens, int running);
  /// Re-measures at `nowMs` without a new step (what the refresh timer does).
  void refresh(qint64 nowMs);

  bool isActive() const { return active_; }
  double tokensPerSecond() const { return rate_; }

 signals:
  void changed();

 private:
  void measure(qint64 nowMs, bool force);

  QElapsedTimer clock_;
  QTimer refreshTimer_;
  QList<QPair<qint64, int>> steps_;  ///< (ms, tokens) of the burst's steps, the last kWindowMs
  qint64 burstStartMs_ = 0;          ///< when the burst's first step finished
  qint64 lastEmitMs_ = -1;
  bool active_ = false;
  double rate_ = -1.0;
};
