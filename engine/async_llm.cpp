#include "engine/async_llm.h"

#include <stdexcept>
#include <utility>

namespace pagedchat {

std::optional<RequestOutput> RequestStream::next(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  const auto ready = [&] { return !queue_.empty() || num_finished_taken_ == num_requests_; };
  if (!cv_.wait_for(lk, timeout, ready) || queue_.empty()) return std::nullopt;
  RequestOutput out = std::move(queue_.front());
  queue_.pop_front();
  if (out.finished) ++num_finished_taken_;
  return out;
}

bool RequestStream::done() const {
  std::lock_guard lk(mu_);
  return num_finished_taken_ == num_requests_ && queue_.empty();
}

std::string RequestStream::error() const {
  std::lock_guard lk(mu_);
  return error_;
}

void RequestStream::expect_request() {
  std::lock_guard lk(mu_);
  ++num_requests_;
}

void RequestStream::push(RequestOutput output, const std::string& error) {
  {
    std::lock_guard lk(mu_);
    if (!error.empty()) error_ = error;
    queue_.push_back(std::move(output));
  }
  cv_.notify_all();
}

namespace {

// The finished output of a request the engine can no longer report itself (a failed step, shutdown).
RequestOutput aborted_output(const std::string& id, int n) {
  RequestOutput out;
  out.request_id = id;
  out.finished = true;
  for (int i = 0; i < n; ++i) {
    CompletionOutput c;
    c.index = i;
    c.finish_reason = "abort";
    out.outputs.push_back(std::move(c));
  }
  return out;
}

}  // namespace

AsyncLLM::AsyncLLM(const EngineConfig& config) : engine_(std::make_unique<LLMEngine>(config)) {
  stats_ = engine_->stats();
  thread_ = std::thread([this] { loop(); });
}

AsyncLLM::~AsyncLLM() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<RequestStream> AsyncLLM::add_request(const std::string& request_id,
                                                     const std::vector<int>& prompt_token_ids, SamplingParams params,
                                                     const RequestOptions& options,
                                                     std::shared_ptr<RequestStream> stream) {
  params.output_kind = RequestOutputKind::kDelta;
  check_request(request_id, prompt_token_ids, params, engine_->model_config().vocab_size,
                engine_->engine_config().max_model_len);
  if (!stream) stream = std::make_shared<RequestStream>();
  {
    std::lock_guard lk(mu_);
    if (stop_) throw std::runtime_error("the engine is shutting down");
    if (streams_.count(request_id)) throw std::invalid_argument("request id '" + request_id + "' is already in use");
    stream->expect_request();
    streams_.emplace(request_id, Entry{stream, params.n});
    commands_.push_back({Command::kAdd, request_id, prompt_token_ids, params, options});
  }
  cv_.notify_all();
  return stream;
}

bool AsyncLLM::abort(const std::string& request_id) {
  {
    std::lock_guard lk(mu_);
    if (!streams_.count(request_id)) return false;
    commands_.push_back({Command::kAbort, request_id, {}, {}, {}});
  }
  cv_.notify_all();
  return true;
}

void AsyncLLM::abort_all() {
  {
    std::lock_guard lk(mu_);
    for (const auto& [id, entry] : streams_) commands_.push_back({Command::kAbort, id, {}, {}, {}});
  }
  cv_.notify_all();
}

EngineStats AsyncLLM::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

int AsyncLLM::num_unfinished_requests() const {
  std::lock_guard lk(mu_);
  return static_cast<int>(streams_.size());
}

void AsyncLLM::set_output_observer(std::function<void(const RequestOutput&)> observer) {
  std::lock_guard lk(mu_);
  observer_ = std::move(observer);
}

// Loop thread. An add the engine refuses after all (it should not: add_request checked it) ends
// its stream with that message.
void AsyncLLM::run_commands(std::deque<Command>& commands) {
  for (Command& c : commands) {
    if (c.kind == Command::kAbort) {
      engine_->abort_request(c.request_id);
      continue;
    }
    try {
      engine_->add_request(c.request_id, c.prompt_token_ids, c.params, c.options);
    } catch (const std::exception& e) {
      std::shared_ptr<RequestStream> stream;
      {
        std::lock_guard lk(mu_);
        auto it = streams_.find(c.request_id);
        if (it == streams_.end()) continue;
        stream = it->second.stream;
        streams_.erase(it);
      }
      stream->push(aborted_output(c.request_id, c.params.n), e.what());
    }
  }
}

void AsyncLLM::deliver(const std::vector<RequestOutput>& outputs) {
  std::function<void(const RequestOutput&)> observer;
  {
    std::lock_guard lk(mu_);
    observer = observer_;
  }
  for (const RequestOutput& out : outputs) {
    if (observer) observer(out);
    std::shared_ptr<RequestStream> stream;
    {
      std::lock_guard lk(mu_);
      auto it = streams_.find(out.request_id);
      if (it == streams_.end()) continue;
      stream = it->second.stream;
      if (out.finished) streams_.erase(it);
    }
    stream->push(out);
  }
}

// Loop thread: every stream still open ends with an "abort" output carrying `message`, and the
// engine forgets the requests.
void AsyncLLM::fail_all(const std::string& message) {
  std::unordered_map<std::string, Entry> streams;
  {
    std::lock_guard lk(mu_);
    streams.swap(streams_);
  }
  for (auto& [id, entry] : streams) {
    engine_->abort_request(id);
    entry.stream->push(aborted_output(id, entry.n), message);
  }
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
    run_commands(commands);
    std::vector<RequestOutput> outputs;
    try {
      outputs = engine_->step();
    } catch (const std::exception& e) {
      fail_all(std::string("the engine step failed: ") + e.what());
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
  fail_all("the engine is shutting down");
}

}  // namespace pagedchat
