#include "engine/async_llm.h"

#include <chrono>
#include <deque>
#include <exception>
#include <string>
#include <vector>

namespace pagedchat {

AsyncLLM::AsyncLLM(const EngineConfig& config) : engine_(std::make_unique<LLMEngine>(config)) {
  stats_ = engine_->stats();
  // /metrics during a long step (a prefill of thousands of tokens) shows what it runs.
  engine_->set_on_scheduled([this] {
    const EngineStats s = engine_->stats();
    std::lock_guard lk(mu_);
    stats_ = s;
  });
  thread_ = std::thread([this] { loop(); });
}

AsyncLLM::~AsyncLLM() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    closed_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void AsyncLLM::loop() {
  bool engine_busy = false;  // the engine holds unfinished requests or unreported outputs
  for (;;) {
    std::deque<Command> commands;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !commands_.empty() || engine_busy; });
      if (stop_) break;
      commands.swap(commands_);
    }
    const bool had_commands = !commands.empty();
    run_commands(*engine_, commands);
    std::vector<RequestOutput> outputs;
    try {
      outputs = engine_->step();
    } catch (const std::exception& e) {
      fail_all(engine_.get(), std::string("the engine step failed: ") + e.what());
      try {
        engine_->step();  // drop the abort outputs of the requests just failed
      } catch (const std::exception&) {
      }
    }
    deliver(outputs);
    engine_busy = engine_->has_unfinished_requests();
    {
      std::unique_lock lk(mu_);
      stats_ = engine_->stats();
      // Requests waiting for blocks that nothing running will free (the step scheduled nothing):
      // wait for a command instead of spinning.
      if (engine_busy && outputs.empty() && engine_->last_scheduled_request_ids().empty() && !had_commands)
        cv_.wait_for(lk, std::chrono::milliseconds(20), [&] { return stop_ || !commands_.empty(); });
    }
  }
  fail_all(engine_.get(), "the engine is shutting down");
}

}  // namespace pagedchat
