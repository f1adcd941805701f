#include "app/engine/server/worker_engine_proxy.h"

#include <QMetaObject>
#include <QObject>

#include <stdexcept>

const pagedchat::LLMEngine& WorkerEngineProxy::engine() const {
  const pagedchat::LLMEngine* e = loaded_engine();
  if (!e) throw std::runtime_error("no model is loaded");
  return *e;
}

const pagedchat::LLMEngine* WorkerEngineProxy::loaded_engine() const {
  std::lock_guard lk(mu_);
  return engine_;
}

// Under the lock: the worker swaps the engine (setEngine) under it too, so the engine asked here
// is not freed meanwhile. request_abort only takes the engine's own abort lock.
void WorkerEngineProxy::interrupt(const std::string& request_id) {
  std::lock_guard lk(mu_);
  if (engine_) engine_->request_abort(request_id);
}

void WorkerEngineProxy::wake() { QMetaObject::invokeMethod(worker_, onWake_, Qt::QueuedConnection); }

void WorkerEngineProxy::setEngine(pagedchat::LLMEngine* engine, const std::string& reason) {
  pagedchat::LLMEngine* old = nullptr;
  {
    std::lock_guard lk(mu_);
    old = engine_;
    engine_ = engine;
    if (!engine) commands_.clear();
    if (engine) stats_ = engine->stats();
  }
  if (!engine) fail_all(old, reason.empty() ? std::string("the model was unloaded") : reason);
}

bool WorkerEngineProxy::runQueued() {
  std::deque<Command> commands;
  pagedchat::LLMEngine* engine = nullptr;
  {
    std::lock_guard lk(mu_);
    commands.swap(commands_);
    engine = engine_;
  }
  if (commands.empty()) return false;
  if (!engine) {  // queued as the model went: those requests end at once
    fail_all(nullptr, "no model is loaded");
    return false;
  }
  run_commands(*engine, commands);
  return true;
}

void WorkerEngineProxy::deliverStep(const std::vector<pagedchat::RequestOutput>& outputs) {
  deliver(outputs);
  std::lock_guard lk(mu_);
  if (engine_) stats_ = engine_->stats();
}

void WorkerEngineProxy::failAll(const std::string& message) {
  pagedchat::LLMEngine* engine = nullptr;
  {
    std::lock_guard lk(mu_);
    engine = engine_;
  }
  fail_all(engine, message);
}
