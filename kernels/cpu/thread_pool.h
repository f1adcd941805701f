// ThreadPool: a fixed set of worker threads sized to the cores, for the CPU kernels (one pool per
// backend). A job is a range of items cut into chunks that every thread (the caller included)
// takes from a shared counter, so the caller never waits for a worker that has not started: when
// the OS has not scheduled a worker (the machine is busy, or has fewer cores than threads), the
// caller runs every chunk itself. Dispatch is one atomic generation bump; workers spin briefly
// (pause, then yield) after each job, because the next parallel region of a forward usually
// follows within microseconds, then sleep on the generation word (C++20 atomic wait: a futex).
// No mutex and no allocation per job.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace pagedchat::cpu {

class ThreadPool {
 public:
  /// `num_threads` <= 0 means std::thread::hardware_concurrency(). The calling thread is thread 0,
  /// so num_threads - 1 workers are started.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(begin, end, thread_index) on chunks of `chunk` items covering [0, n), each chunk
  /// once (with one thread, or n <= chunk, a single call for all of [0, n)), on whichever thread
  /// takes it (thread_index < num_threads() is unique among threads
  /// running at once: use it for per-thread scratch). Returns when all are done. Which thread runs
  /// a chunk must not change what it computes. Not reentrant.
  template <typename F>
  void parallel_chunks(int64_t n, int64_t chunk, const F& fn) {
    run_job(n, chunk, fn, false);
  }

  /// As parallel_chunks, but guided (self-scheduling with shrinking chunks): each claim takes
  /// max(min_chunk, remaining / (2 * num_threads())) items, so the first chunks are large and the
  /// last ones small, and the threads finish close together. Not reentrant.
  template <typename F>
  void parallel_guided(int64_t n, int64_t min_chunk, const F& fn) {
    run_job(n, min_chunk, fn, true);
  }

  /// Splits [0, n) into at most num_threads() contiguous ranges, each at least `grain` long, and
  /// calls fn(begin, end) on each (any thread may run any range).
  template <typename F>
  void parallel_for(int64_t n, const F& fn, int64_t grain = 1) {
    const int64_t threads = num_threads();
    int64_t chunk = (n + threads - 1) / threads;
    if (chunk < grain) chunk = grain;
    parallel_chunks(n, chunk, [&](int64_t b, int64_t e, int) { fn(b, e); });
  }

 private:
  using Fn = void (*)(const void*, int64_t, int64_t, int);
  // Both job kinds: nothing for n <= 0; one call on this thread when there are no workers or a
  // single chunk covers [0, n); else a dispatched job.
  template <typename F>
  void run_job(int64_t n, int64_t chunk, const F& fn, bool guided) {
    if (n <= 0) return;
    if (chunk < 1) chunk = 1;
    if (workers_.empty() || n <= chunk) {
      fn(int64_t(0), n, 0);
      return;
    }
    dispatch(&invoke<F>, &fn, n, chunk, guided);
  }
  template <typename F>
  static void invoke(const void* f, int64_t b, int64_t e, int thread) {
    (*static_cast<const F*>(f))(b, e, thread);
  }
  void dispatch(Fn fn, const void* ctx, int64_t n, int64_t chunk, bool guided);
  void take_chunks(int thread);
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  // The current job (written by the caller before the generation bump publishes it).
  Fn fn_ = nullptr;
  const void* ctx_ = nullptr;
  int64_t n_ = 0, chunk_ = 0;  // chunk_: the chunk, or when guided_ the smallest one
  bool guided_ = false;
  alignas(64) std::atomic<int64_t> next_{0};         // first item not yet taken
  alignas(64) std::atomic<uint32_t> generation_{0};  // job number; bumped to publish a job
  std::atomic<uint32_t> closed_{0};                  // last job whose chunks are all taken
  std::atomic<int> sleepers_{0};                     // workers asleep on generation_
  alignas(64) std::atomic<int> active_{0};           // workers inside the current job
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
};

}  // namespace pagedchat::cpu
