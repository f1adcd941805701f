// AsyncLLM: the engine behind a thread-safe front, in the shape of vLLM v1's AsyncLLM
// (vllm/v1/engine/async_llm.py): one thread owns the LLMEngine and runs its step loop; any thread
// adds requests and reads each request's outputs from its RequestStream (AsyncEngineClient). Every
// request running at a time shares the loop's steps (continuous batching), whoever submitted it.
#pragma once

#include <condition_variable>
#include <memory>
#include <thread>

#include "engine/async_engine_client.h"

namespace pagedchat {

class AsyncLLM : public AsyncEngineClient {
 public:
  /// Loads the model (throws as LLMEngine's constructor) and starts the step loop thread.
  explicit AsyncLLM(const EngineConfig& config);
  /// Aborts every unfinished request (their streams get a finished "abort" output) and joins the loop.
  ~AsyncLLM() override;
  AsyncLLM(const AsyncLLM&) = delete;
  AsyncLLM& operator=(const AsyncLLM&) = delete;

  const LLMEngine& engine() const override { return *engine_; }

 protected:
  void wake() override { cv_.notify_all(); }
  const LLMEngine* loaded_engine() const override { return engine_.get(); }
  void interrupt(const std::string& request_id) override { engine_->request_abort(request_id); }

 private:
  void loop();

  std::unique_ptr<LLMEngine> engine_;
  std::condition_variable cv_;  ///< with mu_: commands queued, or stop
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace pagedchat
