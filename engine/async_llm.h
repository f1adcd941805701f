// AsyncLLM: the engine behind a thread-safe front, in the shape of vLLM v1's AsyncLLM
// (vllm/v1/engine/async_llm.py): one thread owns the LLMEngine and runs its step loop; any thread
// adds requests and reads each request's outputs from its RequestStream. Every request running
// at a time shares the loop's steps (continuous batching), whoever submitted it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/llm_engine.h"

namespace pagedchat {

/// The outputs of one or several requests (an API call with several prompts shares one stream) as
/// the step loop reports them (RequestOutputKind::kDelta: each holds what is new). Filled by the
/// loop thread, read by one consumer thread.
class RequestStream {
 public:
  /// The next output; waits up to `timeout` for one. nullopt when none came in time, or when every
  /// request's finished output has been taken (then done() is true). A request the engine could
  /// not finish (a failed step, shutdown) ends with finish_reason "abort" and error() set.
  std::optional<RequestOutput> next(std::chrono::milliseconds timeout);
  /// True once every request of the stream has had its finished output taken by next().
  bool done() const;
  /// Why the engine stopped a request early, or "".
  std::string error() const;

  /// AsyncLLM: one more request reports here.
  void expect_request();
  /// Loop thread: appends an output (`error` marks an engine failure).
  void push(RequestOutput output, const std::string& error = {});

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RequestOutput> queue_;
  std::string error_;
  int num_requests_ = 0;
  int num_finished_taken_ = 0;
};

class AsyncLLM {
 public:
  /// Loads the model (throws as LLMEngine's constructor) and starts the step loop thread.
  explicit AsyncLLM(const EngineConfig& config);
  /// Aborts every unfinished request (their streams get a finished "abort" output) and joins the loop.
  ~AsyncLLM();
  AsyncLLM(const AsyncLLM&) = delete;
  AsyncLLM& operator=(const AsyncLLM&) = delete;

  /// Queues a request for the next step; its outputs go to `stream` (a new one when null), which
  /// is returned. `params.output_kind` is forced to kDelta. Checked here, at once (check_request,
  /// an id still in use): throws std::invalid_argument, and `stream` is left as it was. Thread-safe.
  std::shared_ptr<RequestStream> add_request(const std::string& request_id, const std::vector<int>& prompt_token_ids,
                                             SamplingParams params, const RequestOptions& options = {},
                                             std::shared_ptr<RequestStream> stream = nullptr);
  /// Aborts a request (its stream gets the finished "abort" output at the next step) and frees its
  /// blocks. False when the id is unknown or already finished. Thread-safe.
  bool abort(const std::string& request_id);

  /// Aborts every unfinished request (shutdown). Thread-safe.
  void abort_all();

  /// The engine's counters after the latest step. Thread-safe.
  EngineStats stats() const;
  /// Requests added and not yet finished (queued for the loop included). Thread-safe.
  int num_unfinished_requests() const;

  /// Called on the loop thread with every output a step reports (for metrics); must be quick and
  /// must not call back into this AsyncLLM. Set before the first request.
  void set_output_observer(std::function<void(const RequestOutput&)> observer);

  /// What stays fixed after loading (model and engine config, tokenizer, chat template, sampling
  /// defaults, backend name): these const members of the engine may be read from any thread.
  /// Never call step(), add_request() or abort_request() on it.
  const LLMEngine& engine() const { return *engine_; }

 private:
  struct Command {
    enum Kind { kAdd, kAbort } kind = kAdd;
    std::string request_id;
    std::vector<int> prompt_token_ids;
    SamplingParams params;
    RequestOptions options;
  };
  void loop();
  void run_commands(std::deque<Command>& commands);
  void deliver(const std::vector<RequestOutput>& outputs);
  void fail_all(const std::string& message);

  std::unique_ptr<LLMEngine> engine_;
  std::function<void(const RequestOutput&)> observer_;
  mutable std::mutex mu_;  ///< guards everything below
  std::condition_variable cv_;
  std::deque<Command> commands_;
  struct Entry {
    std::shared_ptr<RequestStream> stream;
    int n = 1;  ///< completions of the request
  };
  std::unordered_map<std::string, Entry> streams_;  ///< unfinished requests
  EngineStats stats_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace pagedchat
