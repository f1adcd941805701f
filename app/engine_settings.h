// EngineSettings: the engine page of the settings dialog (KV cache, sequences, block size, threads).
#pragma once

#include <QObject>
#include <QString>

#include "engine/config.h"

class QSettings;

/// The engine settings the user chose, kept in pagedchat.ini under "engine/": KV-cache size in
/// MiB (0 = automatic: room for 8 full-length sequences), most sequences running at once, tokens
/// per KV block, CPU threads (0 = all cores). apply() validates (validationError() says what is
/// wrong, in words), saves and emits applied(); the controller then reloads the model with them.
class EngineSettings : public QObject {
  Q_OBJECT
  Q_PROPERTY(int kvCacheMiB READ kvCacheMiB NOTIFY changed)
  Q_PROPERTY(int maxNumSeqs READ maxNumSeqs NOTIFY changed)
  Q_PROPERTY(int blockSize READ blockSize NOTIFY changed)
  Q_PROPERTY(int numThreads READ numThreads NOTIFY changed)
  Q_PROPERTY(int maxKvCacheMiB READ maxKvCacheMiB CONSTANT)
  Q_PROPERTY(int maxThreads READ maxThreads CONSTANT)

 public:
  static constexpr int kMaxNumSeqs = 1024;
  static constexpr int kMaxBlockSize = 1024;

  /// Reads the saved values from `settings` (which must outlive this object); values saved out of
  /// range (a hand-edited file) fall back to the defaults.
  explicit EngineSettings(QSettings* settings, QObject* parent = nullptr);

  int kvCacheMiB() const { return kvCacheMiB_; }
  int maxNumSeqs() const { return maxNumSeqs_; }
  int blockSize() const { return blockSize_; }
  int numThreads() const { return numThreads_; }
  /// Largest KV cache accepted: half the physical memory (or 64 GiB when unknown), in MiB.
  int maxKvCacheMiB() const;
  /// Largest thread count accepted: 4 x the hardware threads.
  int maxThreads() const;

  /// "" when the values are acceptable, else a sentence saying which value is wrong and why.
  Q_INVOKABLE QString validationError(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads) const;
  /// Validates, saves and emits applied() (also when nothing changed: the model reloads).
  /// Returns validationError() (nothing is saved then).
  Q_INVOKABLE QString apply(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads);
  /// Copies the settings into the engine configuration `config`.
  void applyTo(pagedchat::EngineConfig& config) const;

 signals:
  void changed();
  /// New values were saved: reload the model with them.
  void applied();

 private:
  QSettings* settings_;
  int kvCacheMiB_ = 0;
  int maxNumSeqs_ = 64;
  int blockSize_ = 16;
  int numThreads_ = 0;
};
