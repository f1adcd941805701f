// kernels/cpu/thread_pool: every item of a job runs exactly once, thread indices are in range and
// unique among concurrent chunks, guided chunks shrink, back-to-back jobs do not mix, and more threads than cores still
// finish promptly (the caller takes the chunks a descheduled worker would have).
#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include "kernels/cpu/thread_pool.h"

using pagedchat::cpu::ThreadPool;

class TestThreadPool : public QObject {
  Q_OBJECT
 private slots:
  void everyItemOnce() {
    for (int threads : {1, 2, 3, 8}) {
      ThreadPool pool(threads);
      QCOMPARE(pool.num_threads(), threads);
      for (int64_t n : {1, 2, 7, 64, 1000})
        for (int64_t chunk : {1, 3, 16, 5000}) {
          std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
          std::vector<std::atomic<int>> busy(static_cast<size_t>(threads));
          std::atomic<bool> bad{false};
          pool.parallel_chunks(n, chunk, [&](int64_t b, int64_t e, int thread) {
            if (thread < 0 || thread >= threads || busy[size_t(thread)].fetch_add(1) != 0) bad = true;
            if ((threads > 1 && e - b > chunk) || b >= e) bad = true;
            for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
            busy[size_t(thread)].fetch_sub(1);
          });
          QVERIFY(!bad);
          for (auto& h : hits) QCOMPARE(h.load(), 1);
        }
    }
  }

  // Guided jobs: every item once, no chunk below the minimum (but the last) nor above
  // max(min, n / (2 * threads)), and a chunk never bigger than one claimed before it on the same
  // job (they shrink as the range runs out).
  void guidedChunksShrink() {
    for (int threads : {1, 2, 3, 8}) {
      ThreadPool pool(threads);
      for (int64_t n : {1, 2, 7, 64, 1000, 4096})
        for (int64_t min_chunk : {1, 2, 16}) {
          std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
          std::vector<std::pair<int64_t, int64_t>> chunks;
          std::atomic_flag lock = ATOMIC_FLAG_INIT;
          pool.parallel_guided(n, min_chunk, [&](int64_t b, int64_t e, int) {
            for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
            while (lock.test_and_set()) {
            }
            chunks.emplace_back(b, e);
            lock.clear();
          });
          for (auto& h : hits) QCOMPARE(h.load(), 1);
          if (threads == 1 || n <= min_chunk) {
            QCOMPARE(int(chunks.size()), 1);
            continue;
          }
          std::sort(chunks.begin(), chunks.end());
          const int64_t first_max = std::max(min_chunk, n / (2 * threads));
          QCOMPARE(chunks[0].second - chunks[0].first, std::min(n, first_max));  // the first claim is large
          for (size_t c = 0; c < chunks.size(); ++c) {
            const int64_t len = chunks[c].second - chunks[c].first;
            QVERIFY2(len <= first_max, qPrintable(QString("n=%1 chunk of %2").arg(n).arg(len)));
            if (chunks[c].second < n) QVERIFY(len >= min_chunk);
            if (c > 0) QVERIFY(len <= chunks[c - 1].second - chunks[c - 1].first);
          }
          if (n >= 64 * min_chunk * threads) QVERIFY(chunks.size() > size_t(2 * threads));  // really shrinking
        }
    }
  }

  void parallelForRanges() {
    ThreadPool pool(3);
    std::vector<std::atomic<int>> hits(100);
    std::atomic<int> ranges{0};
    pool.parallel_for(100, [&](int64_t b, int64_t e) {
      ranges.fetch_add(1);
      for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
    });
    QVERIFY(ranges.load() <= 3);
    for (auto& h : hits) QCOMPARE(h.load(), 1);
  }

  // Many short jobs back to back, each checking its own items: a late worker must never run a
  // chunk of a job that has already returned (its lambda, on the caller's stack, is gone).
  void backToBackJobs() {
    ThreadPool pool(4);
    const auto start = std::chrono::steady_clock::now();
    for (int job = 0; job < 20000; ++job) {
      std::atomic<int64_t> sum{0};
      const int64_t n = 1 + job % 9;
      pool.parallel_chunks(n, 1, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) sum.fetch_add(i + job);
      });
      QCOMPARE(sum.load(), n * (n - 1) / 2 + n * job);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    qInfo("20000 jobs on 4 threads: %.1f us per job", s / 20000 * 1e6);
    QVERIFY(s < 20.0);
  }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
