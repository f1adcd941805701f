#include "engine/async_engine_client.h"

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
    c.finish_reason = FinishReason::kAbort;
    out.outputs.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::shared_ptr<RequestStream> AsyncEngineClient::add_request(const std::string& request_id,
                                                              const std::vector<int>& prompt_token_ids,
                                                              SamplingParams params, const RequestOptions& options,
                                                              std::shared_ptr<RequestStream> stream) {
  params.output_kind = RequestOutputKind::kDelta;
  {
    std::lock_guard lk(mu_);
    if (closed_) throw std::runtime_error("the engine is shutting down");
  }
  const LLMEngine* engine = loaded_engine();
  if (!engine) throw std::runtime_error("no model is loaded");
  check_request(request_id, prompt_token_ids, params, engine->model_config().vocab_size,
                engine->engine_config().max_model_len);
  if (!stream) stream = std::make_shared<RequestStream>();
  {
    std::lock_guard lk(mu_);
    if (closed_) throw std::runtime_error("the engine is shutting down");
    if (streams_.count(request_id)) throw std::invalid_argument("request id '" + request_id + "' is already in use");
    stream->expect_request();
    streams_.emplace(request_id, Entry{stream, params.n});
    commands_.push_back({Command::kAdd, request_id, prompt_token_ids, params, options});
  }
  wake();
  return stream;
}

bool AsyncEngineClient::abort(const std::string& request_id) {
  {
    std::lock_guard lk(mu_);
    if (!streams_.count(request_id)) return false;
    commands_.push_back({Command::kAbort, request_id, {}, {}, {}});
  }
  interrupt(request_id);
  wake();
  return true;
}

void AsyncEngineClient::abort_all() {
  std::vector<std::string> ids;
  {
    std::lock_guard lk(mu_);
    for (const auto& [id, entry] : streams_) {
      commands_.push_back({Command::kAbort, id, {}, {}, {}});
      ids.push_back(id);
    }
  }
  for (const std::string& id : ids) interrupt(id);
  wake();
}

EngineStats AsyncEngineClient::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

int AsyncEngineClient::num_unfinished_requests() const {
  std::lock_guard lk(mu_);
  return static_cast<int>(streams_.size());
}

bool AsyncEngineClient::owns(const std::string& request_id) const {
  std::lock_guard lk(mu_);
  return streams_.count(request_id) > 0;
}

std::vector<std::string> AsyncEngineClient::request_ids() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> ids;
  ids.reserve(streams_.size());
  for (const auto& [id, entry] : streams_) ids.push_back(id);
  return ids;
}

void AsyncEngineClient::set_output_observer(std::function<void(const RequestOutput&)> observer) {
  std::lock_guard lk(mu_);
  observer_ = std::move(observer);
}

// An add the engine refuses after all (it should not: add_request checked it) ends its stream
// with that message.
void AsyncEngineClient::run_commands(LLMEngine& engine, std::deque<Command>& commands) {
  for (Command& c : commands) {
    if (c.kind == Command::kAbort) {
      engine.abort_request(c.request_id);
      continue;
    }
    try {
      engine.add_request(c.request_id, c.prompt_token_ids, c.params, c.options);
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

void AsyncEngineClient::deliver(const std::vector<RequestOutput>& outputs) {
  std::function<void(const RequestOutput&)> observer;
  {
    std::lock_guard lk(mu_);
    observer = observer_;
  }
  for (const RequestOutput& out : outputs) {
    std::shared_ptr<RequestStream> stream;
    {
      std::lock_guard lk(mu_);
      auto it = streams_.find(out.request_id);
      if (it == streams_.end()) continue;
      stream = it->second.stream;
      if (out.finished) streams_.erase(it);
    }
    if (observer) observer(out);
    stream->push(out);
  }
}

void AsyncEngineClient::fail_all(LLMEngine* engine, const std::string& message) {
  std::unordered_map<std::string, Entry> streams;
  {
    std::lock_guard lk(mu_);
    streams.swap(streams_);
  }
  for (auto& [id, entry] : streams) {
    if (engine) engine->abort_request(id);
    entry.stream->push(aborted_output(id, entry.n), message);
  }
}

}  // namespace pagedchat
