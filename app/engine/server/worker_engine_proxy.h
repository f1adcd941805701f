// WorkerEngineProxy: the app's engine worker as the OpenAI server's engine, so that the server's
// requests and the chat panes' run in the same engine steps.
#pragma once

#include <deque>
#include <functional>
#include <utility>

#include "engine/async_engine_client.h"

class QObject;

/// An AsyncEngineClient whose loop is the EngineWorker's (app/engine/engine_worker.h), not a thread of its
/// own: the server's HTTP threads add requests here (checked and queued under a mutex), wake()
/// posts a queued call to the worker, and the worker takes the queue between steps (runQueued()),
/// steps once for the panes' and the server's requests together, and hands the server's outputs
/// back through deliverStep(). No Qt here but the one queued call; the worker owns this object.
class WorkerEngineProxy : public pagedchat::AsyncEngineClient {
 public:
  /// `onWake` runs on `worker`'s thread (a queued call) when a command is queued.
  WorkerEngineProxy(QObject* worker, std::function<void()> onWake) : worker_(worker), onWake_(std::move(onWake)) {}

  /// The loaded model (only while one is: the server is stopped before a model goes).
  const pagedchat::LLMEngine& engine() const override;

  // Worker thread only.
  /// The worker loaded `engine`, or (nullptr) freed its model: open streams then end "abort" with
  /// `reason` and queued commands are dropped.
  void setEngine(pagedchat::LLMEngine* engine, const std::string& reason = {});
  /// Applies the queued commands to the engine; false when there were none.
  bool runQueued();
  /// Routes the server's outputs of one step (the others are the panes') and keeps the stats.
  void deliverStep(const std::vector<pagedchat::RequestOutput>& outputs);
  /// A step failed: every server request ends "abort" with `message`.
  void failAll(const std::string& message);

 protected:
  void wake() override;
  const pagedchat::LLMEngine* loaded_engine() const override;
  void interrupt(const std::string& request_id) override;

 private:
  QObject* worker_;
  std::function<void()> onWake_;
  pagedchat::LLMEngine* engine_ = nullptr;  ///< guarded by mu_
};
