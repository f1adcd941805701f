// AsyncEngineClient: the engine as a server sees it (vLLM's EngineClient protocol,
// vllm/engine/protocol.py): any thread adds requests and reads each request's outputs from its
// RequestStream, while one loop thread elsewhere owns the LLMEngine and steps it. Two loops drive
// one: AsyncLLM's own thread (pagedchat-cli serve), and the app's engine worker, whose steps then
// batch the server's requests together with the chat panes' (app/engine/server/worker_engine_proxy.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
  /// not finish (a failed step, shutdown) ends with FinishReason::kAbort and error() set.
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

/// The thread-safe half: requests and aborts are checked and queued here; the loop (a subclass)
/// takes the queue between steps (run_commands()) and hands each step's outputs to deliver(),
/// which routes them to the streams. Outputs of requests added to the engine some other way (the
/// app's panes) pass by untouched.
class AsyncEngineClient {
 public:
  virtual ~AsyncEngineClient() = default;

  /// Queues a request for the next step; its outputs go to `stream` (a new one when null), which
  /// is returned. `params.output_kind` is forced to kDelta. Checked here, at once (check_request,
  /// an id still in use): throws std::invalid_argument, and `stream` is left as it was; throws
  /// std::runtime_error when the engine is shutting down or has no model. Thread-safe.
  std::shared_ptr<RequestStream> add_request(const std::string& request_id, const std::vector<int>& prompt_token_ids,
                                             SamplingParams params, const RequestOptions& options = {},
                                             std::shared_ptr<RequestStream> stream = nullptr);
  /// Aborts a request (its stream gets the finished "abort" output at the next step) and frees its
  /// blocks; a step running now stops inside its forward or image encoding once every request it
  /// computes was asked to stop (LLMEngine::request_abort). False when the id is unknown or
  /// already finished. Thread-safe.
  bool abort(const std::string& request_id);
  /// Aborts every unfinished request. Thread-safe.
  void abort_all();

  /// The engine's counters after the latest step. Thread-safe.
  EngineStats stats() const;
  /// Requests added here and not yet finished (queued for the loop included). Thread-safe.
  int num_unfinished_requests() const;
  /// True when `request_id` was added here and is not finished. Thread-safe.
  bool owns(const std::string& request_id) const;
  /// The ids of the requests added here and not finished. Thread-safe.
  std::vector<std::string> request_ids() const;

  /// Called on the loop thread with every output of this client's requests (for metrics); must be
  /// quick and must not call back into this object. Set before the first request.
  void set_output_observer(std::function<void(const RequestOutput&)> observer);

  /// What stays fixed after loading (model and engine config, tokenizer, chat template, sampling
  /// defaults, backend name): these const members of the engine may be read from any thread.
  /// Never call step(), add_request() or abort_request() on it. Only while a model is loaded.
  virtual const LLMEngine& engine() const = 0;

 protected:
  struct Command {
    enum Kind { kAdd, kAbort } kind = kAdd;
    std::string request_id;
    std::vector<int> prompt_token_ids;
    SamplingParams params;
    RequestOptions options;
  };
  /// A command was queued: the loop should run (called without the lock held).
  virtual void wake() = 0;
  /// The engine add_request() checks against; nullptr = none loaded (requests refused).
  virtual const LLMEngine* loaded_engine() const = 0;
  /// Passes `request_id` to the loaded engine's request_abort() (thread-safe there), so that a
  /// step running now can stop early; called without the lock held. Nothing when none is loaded.
  virtual void interrupt(const std::string& request_id) = 0;

  // The loop's side, on its thread.
  /// Applies `commands` to `engine`; an add the engine refuses after all ends its stream.
  void run_commands(LLMEngine& engine, std::deque<Command>& commands);
  /// Routes a step's outputs to their streams (others are skipped).
  void deliver(const std::vector<RequestOutput>& outputs);
  /// Every open stream ends with an "abort" output carrying `message`; `engine` (if any) forgets them.
  void fail_all(LLMEngine* engine, const std::string& message);

  mutable std::mutex mu_;  ///< guards everything below
  std::deque<Command> commands_;
  EngineStats stats_;
  bool closed_ = false;  ///< add_request() refuses: shutting down

 private:
  struct Entry {
    std::shared_ptr<RequestStream> stream;
    int n = 1;  ///< completions of the request
  };
  std::function<void(const RequestOutput&)> observer_;
  std::unordered_map<std::string, Entry> streams_;  ///< unfinished requests
};

}  // namespace pagedchat
