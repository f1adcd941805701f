// `pagedchat-cli bench memory`: the machine's memory read bandwidth with N threads, the
// denominator of the single-stream decode roofline (decode reads every weight once per token, so
// tokens/s <= bandwidth / weight bytes). Each thread sums its own slice of a buffer much larger
// than the caches (default 1 GiB, written once so its pages are resident), with vector loads, 4
// streams in flight and a software prefetch, as the weight kernels read; the figure is the best
// of --runs passes (the least disturbed by other tenants), GB/s = 1e9 bytes per second.
// With --device cuda[:N] it measures the GPU's memory instead: device-to-device copies of a buffer
// (Backend::copy_in_backend), each byte read once and written once, so GB/s counts both: the
// HBM roofline of GPU decode (bytes of weights / this bandwidth = the least time per token).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "cli/bench_common.h"
#include "engine/core/host_memory.h"
#include "kernels/backend_factory.h"

namespace pagedchat::cli::bench {

namespace {
struct MemoryBenchOptions {
  double size_mb = 1024;
  int threads = 2;
  int runs = 5;
  bool json = false;
  std::string device = "cpu";
};

// Sum of n uint64 values, read as kStreams contiguous quarters in lockstep: each step loads 64
// bytes (16-byte vector loads, SSE2, in every x86-64) from every stream into its own
// accumulators, with a software prefetch 1 KiB ahead per stream. Several streams in flight per
// thread are what the decode kernels do too (a single row reads 4 weight panels at once,
// kernels/cpu/quant_impl.inc); one sequential stream per thread measures about half of what the
// memory delivers on some CPUs (AMD EPYC, 2 threads: 30 against 60-65 GB/s).
constexpr int kStreams = 4;

uint64_t sum_slice(const uint64_t* p, std::size_t n) {
  typedef uint64_t v2 __attribute__((vector_size(16)));
  v2 acc[kStreams][4] = {};
  const std::size_t per = n / kStreams / 8 * 8;  // words per stream, whole 64-byte steps
  for (std::size_t i = 0; i < per; i += 8) {
    for (int s = 0; s < kStreams; ++s) {
      const uint64_t* q = p + std::size_t(s) * per + i;
      __builtin_prefetch(q + 128);
      for (int j = 0; j < 4; ++j) {
        v2 x;
        std::memcpy(&x, q + 2 * j, 16);
        acc[s][j] += x;
      }
    }
  }
  v2 a = {0, 0};
  for (auto& row : acc)
    for (const v2& v : row) a += v;
  uint64_t sum = a[0] + a[1];
  for (std::size_t i = kStreams * per; i < n; ++i) sum += p[i];
  return sum;
}

void report(const MemoryBenchOptions& o, const char* what, std::size_t bytes, std::vector<double> gbs) {
  std::vector<double> sorted = gbs;
  std::sort(sorted.begin(), sorted.end());
  const double best = sorted.back(), median = sorted[sorted.size() / 2];
  if (o.json) {
    nlohmann::json j = {{"benchmark", "memory"},          {"device", o.device},     {"bytes", bytes},
                        {"threads", o.threads},           {"runs", o.runs},         {"read_gb_per_s", best},
                        {"read_gb_per_s_median", median}, {"samples_gb_per_s", gbs}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%s, %.0f MB buffer: best %.2f GB/s, median %.2f GB/s (%d runs)\n", what, double(bytes) / 1e6, best,
                median, o.runs);
  }
}

// The device's copy bandwidth: 4 copies per run between two buffers, timed to a one-word read-back.
int run_device(const MemoryBenchOptions& o) {
  std::string note;
  auto backend = kernels::make_backend({o.device, o.threads}, &note);
  if (!note.empty()) std::cerr << "pagedchat-cli: " << note << "\n";
  const std::size_t bytes = std::max<std::size_t>(1 << 20, std::size_t(o.size_mb * 1e6)) / 256 * 256;
  auto a = backend->allocate(bytes), b = backend->allocate(bytes);
  uint32_t sink = 0;
  backend->copy_in_backend(b->data(), a->data(), bytes);  // warm-up
  backend->copy_to_host(&sink, b->data(), sizeof sink);
  std::vector<double> gbs;
  for (int r = 0; r < o.runs; ++r) {
    const double t0 = now_s();
    for (int i = 0; i < 4; ++i)
      backend->copy_in_backend(i % 2 ? a->data() : b->data(), i % 2 ? b->data() : a->data(), bytes);
    backend->copy_to_host(&sink, a->data(), sizeof sink);
    gbs.push_back(2.0 * 4.0 * double(bytes) / (now_s() - t0) / 1e9);
  }
  report(o, ("device copy bandwidth (read + write), " + backend->description()).c_str(), bytes, gbs);
  return 0;
}

// The buffer size, checked before anything is allocated: a number (CLI::Range lets NaN through),
// and for the CPU no more than this machine's memory (a larger one failed with std::bad_alloc).
bool size_ok(const MemoryBenchOptions& o) {
  if (!std::isfinite(o.size_mb) || o.size_mb < 1.0) {
    std::cerr << "pagedchat-cli: bench memory: --size-mb must be a number of MB from 1 to 1000000\n";
    return false;
  }
  const double ram_mb = double(pagedchat::physical_memory_bytes()) / 1e6;  // 0: unknown, not checked
  if (o.device == "cpu" && ram_mb > 0 && o.size_mb > ram_mb) {
    std::cerr << "pagedchat-cli: bench memory: --size-mb " << o.size_mb << " is more than this machine's memory ("
              << std::llround(ram_mb) << " MB)\n";
    return false;
  }
  return true;
}

int run(const MemoryBenchOptions& o) {
  if (!size_ok(o)) return 2;
  if (o.device != "cpu") return run_device(o);
  const std::size_t words = std::max<std::size_t>(1024, std::size_t(o.size_mb * 1e6) / sizeof(uint64_t));
  const ReadBuffer buf(words * sizeof(uint64_t));
  std::vector<double> gbs;
  uint64_t check = 0;
  for (int r = 0; r < o.runs; ++r) {
    uint64_t sum = 0;
    gbs.push_back(read_pass_gbs(buf, o.threads, &sum));
    check += sum;
  }
  // The sum of 0..words-1 per run: a check that every word was read (and the loop not dropped).
  const uint64_t expect = uint64_t(o.runs) * (uint64_t(words) * (uint64_t(words) - 1) / 2);
  if (check != expect) {
    std::cerr << "pagedchat-cli: bench memory: wrong checksum\n";
    return 1;
  }
  report(o, ("memory read bandwidth, " + std::to_string(o.threads) + " threads").c_str(), words * sizeof(uint64_t),
         gbs);
  return 0;
}
}  // namespace

ReadBuffer::ReadBuffer(std::size_t bytes) : size_(std::max<std::size_t>(1024, bytes / sizeof(uint64_t))) {
  const std::size_t huge = std::size_t(2) << 20;
  const std::size_t rounded = (size_ * sizeof(uint64_t) + huge - 1) / huge * huge;
  auto* p = static_cast<uint64_t*>(std::aligned_alloc(huge, rounded));
  if (!p) throw std::bad_alloc();
#if defined(__linux__)
  ::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  words_.reset(p);
  for (std::size_t i = 0; i < size_; ++i) p[i] = i;
}

void ReadBuffer::Free::operator()(uint64_t* p) const { std::free(p); }

double read_pass_gbs(const ReadBuffer& buf, int threads, uint64_t* sum) {
  const std::size_t words = buf.size();
  std::vector<uint64_t> sums(static_cast<std::size_t>(threads));
  const double t0 = now_s();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::size_t b = words * std::size_t(t) / std::size_t(threads);
      const std::size_t e = words * std::size_t(t + 1) / std::size_t(threads);
      sums[std::size_t(t)] = sum_slice(buf.data() + b, e - b);
    });
  for (auto& th : pool) th.join();
  const double dt = now_s() - t0;
  if (sum) {
    *sum = 0;
    for (uint64_t v : sums) *sum += v;
  }
  return double(words * sizeof(uint64_t)) / dt / 1e9;
}

Command add_memory_bench_command(CLI::App& bench) {
  auto opt = std::make_shared<MemoryBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("memory", "Memory read bandwidth with N threads (the decode roofline's GB/s)");
  cmd->add_option("--size-mb", opt->size_mb, "buffer size in MB (default 1024)")->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--threads", opt->threads, "reading threads (default 2)")->check(CLI::Range(1, 1024));
  cmd->add_option("--runs", opt->runs, "passes; the best is reported (default 5)")->check(CLI::Range(1, 1000));
  cmd->add_flag("--json", opt->json, "print the figures as JSON");
  cmd->add_option("--device", opt->device, "cpu (default: read bandwidth), or cuda / cuda:N (device copy bandwidth)");
  return [opt]() { return run(*opt); };
}

}  // namespace pagedchat::cli::bench
