// Helpers shared by the app tests (tests/app) that need no window: the options and engine
// configuration that load the default test model (stories260K, see test_paths.h), and a guard
// that releases a semaphore holding the engine worker whatever way a test leaves its frame.
// The window helpers (finding items, clicking, screenshots, collecting QML warnings) are in
// gui_test_util.h.
#pragma once

#include <QMetaObject>
#include <QObject>
#include <QSemaphore>
#include <QString>
#include <QTemporaryDir>

#include <QTest>

#include <memory>

#include "app/app_options.h"
#include "app/engine/local_chat_backend.h"
#include "engine/config.h"
#include "test_paths.h"

namespace apptest {

/// AppController options that load stories260K and keep the store and settings in `dataDir`.
inline AppOptions optionsFor(const QString& dataDir) {
  AppOptions options;
  options.modelPath = testpaths::stories260K();
  options.dataDir = dataDir;
  return options;
}

/// optionsFor() with the data in `dir`.
inline AppOptions optionsFor(const QTemporaryDir& dir) { return optionsFor(dir.path()); }

/// stories260K's shape with 2048 positions (random weights, its tokenizer). One sequence needs
/// 1.25 MiB of KV cache in bfloat16 (the app's kv_cache_dtype: auto), more than the engine
/// settings' smallest size, 1 MiB; stories260K itself (512 positions: 320 KiB) fits in any.
inline AppOptions longContextOptions(const QString& dataDir) {
  AppOptions o = optionsFor(dataDir);
  o.modelPath = QStringLiteral("random:stories260K,max_seq_len=2048");
  o.tokenizerPath = testpaths::modelFile(QStringLiteral("stories260K/tok512.model"));
  o.modelGiven = true;
  return o;
}

/// An engine configuration for stories260K with every other setting at its default.
inline pagedchat::EngineConfig storiesConfig() {
  pagedchat::EngineConfig config;
  config.model = testpaths::stories260K().toStdString();
  return config;
}

/// Starts `engine` and waits (on the condition, not a fixed time) until its model is loaded;
/// false when it is not within `timeoutMs`.
[[nodiscard]] inline bool startEngine(LocalChatBackend& engine, int timeoutMs = 60000) {
  engine.start();
  return QTest::qWaitFor([&engine] { return engine.isReady(); }, timeoutMs);
}

/// Holds the engine worker inside a signal handler: on leaving scope it disconnects `connection`
/// (the handler that acquires `semaphore` on the worker's thread) and then releases `semaphore`,
/// so a failing test never leaves the worker waiting or calling into a finished frame.
struct ReleaseOnExit {
  QSemaphore& semaphore;
  QMetaObject::Connection connection;
  ~ReleaseOnExit() {
    QObject::disconnect(connection);
    semaphore.release();
  }
};

/// Holds a worker thread (`worker`: an object living on it) at a gate: the constructor queues a
/// call on the worker that waits until open() or the destructor, and returns once the worker is
/// waiting there. Whatever the thread queues on the worker afterwards (a submit, an abort) runs
/// after the gate opens. The semaphores are shared with the queued call, which outlives this
/// object when the worker is slow to come to it (a stack semaphore captured by reference was
/// destroyed under it: the worker then waited forever on freed memory).
class WorkerGate {
 public:
  explicit WorkerGate(QObject* worker)
      : gate_(std::make_shared<QSemaphore>()), entered_(std::make_shared<QSemaphore>()) {
    QMetaObject::invokeMethod(
        worker,
        [gate = gate_, entered = entered_] {
          entered->release();
          gate->acquire();
        },
        Qt::QueuedConnection);
    entered_->acquire();
  }
  ~WorkerGate() { open(); }
  WorkerGate(const WorkerGate&) = delete;
  WorkerGate& operator=(const WorkerGate&) = delete;
  /// Lets the worker go (once).
  void open() {
    if (!opened_) gate_->release();
    opened_ = true;
  }

 private:
  std::shared_ptr<QSemaphore> gate_, entered_;
  bool opened_ = false;
};

}  // namespace apptest
