#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace pagedchat::cpu {

namespace {

using Clock = std::chrono::steady_clock;

// Busy-waiting: pause for kPauseSpin, then yield the core (to whoever else wants it) until kSpin,
// then sleep. A decode step runs ~100 parallel regions a few hundred microseconds apart; sleeping
// between them would add a futex wake-up (tens of microseconds) to each.
constexpr auto kPauseSpin = std::chrono::microseconds(5);
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Spins until pred() or the spin budget is spent; returns pred().
template <typename Pred>
bool spin_until(const Pred& pred) {
  const auto start = Clock::now();
  for (int i = 0;; ++i) {
    if (pred()) return true;
    if ((i & 63) != 63) {
      cpu_relax();
      continue;
    }
    const auto waited = Clock::now() - start;
    if (waited > kSpin) return pred();
    if (waited > kPauseSpin) std::this_thread::yield();
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::take_chunks(int thread) {
  if (guided_) {
    const int64_t parts = 2 * int64_t(num_threads());
    int64_t b = next_.load(std::memory_order_relaxed);
    for (;;) {
      if (b >= n_) return;
      const int64_t c = std::max(chunk_, (n_ - b) / parts);
      if (!next_.compare_exchange_weak(b, b + c, std::memory_order_relaxed)) continue;  // b reloaded
      fn_(ctx_, b, std::min(n_, b + c), thread);
      b = next_.load(std::memory_order_relaxed);
    }
  }
  for (;;) {
    const int64_t b = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (b >= n_) return;
    fn_(ctx_, b, std::min(n_, b + chunk_), thread);
  }
}

void ThreadPool::worker_loop(int index) {
  uint32_t seen = 0;
  for (;;) {
    if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      sleepers_.fetch_add(1);
      generation_.wait(seen);  // returns at once if the generation moved meanwhile
      sleepers_.fetch_sub(1);
    }
    const uint32_t g = generation_.load(std::memory_order_acquire);
    if (g == seen) continue;  // spurious wake-up
    seen = g;
    if (stop_.load()) return;
    // Enter job g unless the caller has already closed it (or a later one): its context may be
    // gone, or the next job's being written. With both sides sequentially consistent, either the
    // caller sees us in active_ and waits, or we see the job closed.
    active_.fetch_add(1);
    if (int32_t(g - closed_.load()) > 0) take_chunks(index);
    if (active_.fetch_sub(1) == 1 && caller_sleeping_.load()) active_.notify_one();
  }
}

void ThreadPool::dispatch(Fn fn, const void* ctx, int64_t n, int64_t chunk, bool guided) {
  fn_ = fn;
  ctx_ = ctx;
  n_ = n;
  chunk_ = chunk;
  guided_ = guided;
  next_.store(0, std::memory_order_relaxed);
  const uint32_t g = generation_.fetch_add(1) + 1;  // publishes the job
  if (sleepers_.load() > 0) generation_.notify_all();
  take_chunks(0);
  closed_.store(g);  // every chunk is taken; late workers stay out
  if (active_.load() == 0) return;
  if (spin_until([&] { return active_.load(std::memory_order_acquire) == 0; })) return;
  caller_sleeping_.store(true);
  for (int a; (a = active_.load()) != 0;) active_.wait(a);
  caller_sleeping_.store(false);
}

}  // namespace pagedchat::cpu
