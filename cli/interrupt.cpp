#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "engine/llm_engine.h"

namespace pagedchat::cli {

InterruptWatch::InterruptWatch() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Detached: it lives as long as the process (sigwait cannot be woken otherwise); it touches
  // the engine only between begin_reply() and end_reply(), under the mutex.
  std::thread([this] { watch(); }).detach();
}

void InterruptWatch::watch() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    if (engine_ && !request_id_.empty()) {
      engine_->request_abort(request_id_);
      interrupted_ = true;
      continue;
    }
    static const char newline = '\n';
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, &newline, 1);
    std::_Exit(128 + SIGINT);
  }
}

void InterruptWatch::begin_reply(LLMEngine& engine, const std::string& request_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  engine_ = &engine;
  request_id_ = request_id;
  interrupted_ = false;
}

StopOnSignal::StopOnSignal() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    if (sigaction(s, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;  // nohup's: kept
    sigaddset(&signals, s);
  }
  if (sigisemptyset(&signals)) return;  // all three ignored: nothing to watch
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Detached, as InterruptWatch's: it lives as long as the process.
  std::thread([this, signals] {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      int none = 0;
      if (!signal_.compare_exchange_strong(none, sig)) quit(sig);  // a second one: now
      static const char note[] = "\npagedchat-cli: stopping (the partial output is removed; again to quit at once)\n";
      [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, note, sizeof note - 1);
      source_.request_stop();
    }
  }).detach();
}

void StopOnSignal::on_quit(std::function<void()> cleanup, std::string note) {
  std::lock_guard<std::mutex> lock(mutex_);
  cleanup_ = std::move(cleanup);
  note_ = std::move(note);
}

void StopOnSignal::quit(int sig) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cleanup_) cleanup_();
  if (!note_.empty()) {
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, note_.data(), note_.size());
  }
  std::_Exit(128 + sig);
}

bool InterruptWatch::end_reply() {
  std::lock_guard<std::mutex> lock(mutex_);
  engine_ = nullptr;
  request_id_.clear();
  return interrupted_;
}

}  // namespace pagedchat::cli
