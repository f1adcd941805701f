// EngineMonitor: the data of the live engine view.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QTimer>
#include <QVariantList>

#include "app/engine/request_delta.h"

class LocalChatBackend;
class PaneListModel;

/// What the engine view shows, on the GUI thread: the worker's latest EngineSnapshot (taken after
/// a step, at most ~10 a second, only while `active`) with request ids mapped to panes (a pane's
/// PaneState knows its request id), block counts, the prefix-cache hit rate, and tokens/s
/// sampled every kSampleMs into a short history for a plot. Per block it keeps the owning pane
/// (0 = none, 1.. = pane number) and the snapshot's flags, read by BlockMapItem.
class EngineMonitor : public QObject {
  Q_OBJECT
  /// Snapshots flow while true (the engine view sets it while it is shown).
  Q_PROPERTY(bool active READ isActive WRITE setActive NOTIFY activeChanged)
  Q_PROPERTY(int numRunning READ numRunning NOTIFY snapshotChanged)
  Q_PROPERTY(int numWaiting READ numWaiting NOTIFY snapshotChanged)
  Q_PROPERTY(int totalBlocks READ totalBlocks NOTIFY snapshotChanged)
  Q_PROPERTY(int usedBlocks READ usedBlocks NOTIFY snapshotChanged)
  Q_PROPERTY(int freeBlocks READ freeBlocks NOTIFY snapshotChanged)
  Q_PROPERTY(int cachedBlocks READ cachedBlocks NOTIFY snapshotChanged)
  Q_PROPERTY(int sharedBlocks READ sharedBlocks NOTIFY snapshotChanged)
  Q_PROPERTY(qint64 numPreemptions READ numPreemptions NOTIFY snapshotChanged)
  Q_PROPERTY(int stateSlots READ stateSlots NOTIFY snapshotChanged)
  Q_PROPERTY(int stateSlotsHeld READ stateSlotsHeld NOTIFY snapshotChanged)
  Q_PROPERTY(int stateCheckpoints READ stateCheckpoints NOTIFY snapshotChanged)
  /// Prompt tokens found in the prefix cache / prompt tokens looked up, or -1 before any lookup.
  Q_PROPERTY(double hitRate READ hitRate NOTIFY snapshotChanged)
  /// Unfinished requests: maps {requestId, pane (1.., 0 = none), server (sent through the app's
  /// OpenAI server), running, promptTokens, computedTokens, outputTokens, blocks}, running first.
  Q_PROPERTY(QVariantList requests READ requests NOTIFY snapshotChanged)
  /// Tokens/s, one sample per kSampleMs, oldest first, at most kHistory samples.
  Q_PROPERTY(QVariantList rateHistory READ rateHistory NOTIFY rateHistoryChanged)
  Q_PROPERTY(double maxRate READ maxRate NOTIFY rateHistoryChanged)

 public:
  static constexpr int kSampleMs = 500;
  static constexpr int kHistory = 120;  ///< one minute

  EngineMonitor(LocalChatBackend* engine, PaneListModel* panes, QObject* parent = nullptr);

  bool isActive() const { return active_; }
  void setActive(bool on);
  /// Least time between two snapshots, in ms (default 100: ~10 a second); applies from the next
  /// setActive(true). Tests set 0 to see every step.
  void setSnapshotInterval(int ms) { intervalMs_ = ms; }
  int numRunning() const { return snap_.numRunning; }
  int numWaiting() const { return snap_.numWaiting; }
  int totalBlocks() const { return snap_.totalBlocks; }
  int usedBlocks() const { return snap_.usedBlocks; }
  int freeBlocks() const { return snap_.freeBlocks; }
  int cachedBlocks() const { return snap_.cachedBlocks; }
  int sharedBlocks() const { return snap_.sharedBlocks; }
  qint64 numPreemptions() const { return snap_.numPreemptions; }
  /// Recurrent state slots of a hybrid model (0 without recurrent layers), those running chats
  /// hold, and the prefix-cache checkpoints among them.
  int stateSlots() const { return snap_.stateSlots; }
  int stateSlotsHeld() const { return snap_.stateSlotsHeld; }
  int stateCheckpoints() const { return snap_.stateCheckpoints; }
  double hitRate() const;
  QVariantList requests() const { return requests_; }
  QVariantList rateHistory() const;
  double maxRate() const;

  /// Pane number (1..) owning block `block`, 0 when none (free, cached, or a request without pane).
  Q_INVOKABLE int blockPane(int block) const;
  /// EngineSnapshot::BlockFlag bits of block `block` (0 when out of range).
  Q_INVOKABLE int blockFlags(int block) const;
  /// Per block: the owning pane number (0 = none).
  const QList<qint8>& blockPanes() const { return blockPanes_; }
  /// Per block: EngineSnapshot::BlockFlag bits.
  const QByteArray& blockFlagBytes() const { return snap_.blockFlags; }
  /// The latest snapshot as received.
  const EngineSnapshot& snapshot() const { return snap_; }

  /// Takes `snapshot` as the latest (what the engine client's snapshotReady() does; tests may call it).
  void setSnapshot(const EngineSnapshot& snapshot);
  /// Appends one tokens/s sample measured at `nowMs` (what the timer does every kSampleMs).
  void sampleRate(qint64 nowMs);

 signals:
  void activeChanged();
  void snapshotChanged();
  void rateHistoryChanged();

 private:
  int paneOfRequest(const QString& requestId) const;

  LocalChatBackend* engine_;
  PaneListModel* panes_;
  bool active_ = false;
  int intervalMs_ = 100;
  EngineSnapshot snap_;
  QList<qint8> blockPanes_;
  QVariantList requests_;
  QTimer sampleTimer_;
  QElapsedTimer clock_;
  QList<double> rates_;
  qint64 lastSampleMs_ = -1;
  qint64 lastSampleTokens_ = 0;
};
