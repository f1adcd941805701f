// Ctrl+C in `pagedchat-cli chat`, as ollama and llama-cli take it: while a reply streams it stops
// that reply and the session goes on; at the prompt (or while the model loads) it ends the program.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>

namespace pagedchat {
class LLMEngine;
}

namespace pagedchat::cli {

/// Takes SIGINT for the whole process (blocked in every thread; one watcher thread waits for it
/// with sigwait, so nothing runs in a signal handler). During a reply (begin_reply() ..
/// end_reply()) a SIGINT asks the engine to abort that request (LLMEngine::request_abort: a step
/// computing only it ends between two layers); otherwise it prints a newline and exits with
/// status 130 (128 + SIGINT, what a shell reports for a program Ctrl+C ended). Construct it before
/// any other thread starts (the engine's thread pool), so that they inherit the blocked mask.
/// One per process.
class InterruptWatch {
 public:
  InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  /// From here on a SIGINT stops `request_id` of `engine` (which must outlive end_reply()).
  void begin_reply(LLMEngine& engine, const std::string& request_id);
  /// Back to the prompt: a SIGINT exits again. True when a SIGINT stopped the reply.
  bool end_reply();

 private:
  void watch();

  std::mutex mutex_;
  LLMEngine* engine_ = nullptr;
  std::string request_id_;
  bool interrupted_ = false;
};

/// For a long job that must not leave half a result (convert): takes SIGINT, SIGTERM and SIGHUP
/// for the whole process as InterruptWatch does (blocked in every thread, one watcher thread in
/// sigwait); a signal the process was started with ignored (nohup's SIGHUP, SIGINT in a
/// script's background job) stays ignored. The first asks the job to stop through token(),
/// which it checks as it goes (and cleans up); a second one runs the cleanup given to
/// on_quit() and exits at once with 128 + its number. Construct it before any other thread
/// starts. One per process, not together with InterruptWatch.
class StopOnSignal {
 public:
  StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  std::stop_token token() const { return source_.get_token(); }
  /// The first signal taken (SIGINT, SIGTERM, SIGHUP), or 0 for none yet.
  int signal() const { return signal_.load(); }
  /// What a second signal runs (on the watcher thread) before the process exits: removing the
  /// job's partial output. `note` is printed after it.
  void on_quit(std::function<void()> cleanup, std::string note);

 private:
  void quit(int sig);

  std::stop_source source_;
  std::atomic<int> signal_{0};
  std::mutex mutex_;
  std::function<void()> cleanup_;
  std::string note_;
};

}  // namespace pagedchat::cli
