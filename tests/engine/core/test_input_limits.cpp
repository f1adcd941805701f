// Input limits of the engine API: a 1 MB prompt is refused with a message naming the limit
// (and the engine goes on serving); 100 concurrent requests on a KV cache that holds 4 full-length
// sequences are queued and preempted, never refused or crashed, all finish, and every block is
// free again afterwards.
#include <QTest>

#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include "engine/llm_engine.h"
#include "engine_test_utils.h"
#include "test_paths.h"

using namespace pagedchat;

class TestInputLimits : public QObject {
  Q_OBJECT

 private slots:
  void megabytePromptIsRefusedClearly() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    LLMEngine engine(testutil::storiesConfig());
    std::string prompt;
    while (prompt.size() < (1u << 20)) prompt += "Once upon a time there was a little girl named Lily. ";
    QString message;
    try {
      engine.add_request("huge", prompt, testutil::greedy(10));
    } catch (const std::invalid_argument& e) {
      message = QString::fromStdString(e.what());
    }
    QVERIFY2(message.contains(QLatin1String("more than max_model_len 512")), qPrintable(message));
    QVERIFY(!engine.has_unfinished_requests());
    // The engine is as before: the next request runs.
    engine.add_request("after", "Once upon a time", testutil::greedy(20));
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("after").outputs[0].token_ids.size(), size_t(20));
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  // EngineConfig::host_memory_budget: weights plus KV cache stay within it; the cache shrinks
  // (a configured one with a warning), and below one full-length sequence the load fails.
  void hostMemoryBudgetBoundsWeightsAndCache() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    const EngineConfig base = testutil::storiesConfig();
    LLMEngine unbounded(base);
    const std::size_t weights = unbounded.packed_weight_bytes();
    const EngineConfig& resolved = unbounded.engine_config();
    const std::size_t blockBytes = resolved.kv_cache_bytes / std::size_t(resolved.num_blocks);
    const int blocksPerSeq = resolved.max_model_len / resolved.block_size;
    QVERIFY(weights > 0);
    QVERIFY2(resolved.num_blocks >= 4 * blocksPerSeq, "the automatic cache holds several sequences");

    EngineConfig bounded = base;
    bounded.host_memory_budget = weights + 3 * std::size_t(blocksPerSeq) * blockBytes + blockBytes / 2;
    LLMEngine three(bounded);
    QCOMPARE(three.engine_config().num_blocks, 3 * blocksPerSeq);
    QVERIFY(three.packed_weight_bytes() + three.engine_config().kv_cache_bytes <= bounded.host_memory_budget);
    // Room to spare: the automatic size stays.
    bounded.host_memory_budget = weights + std::size_t(resolved.num_blocks + 10) * blockBytes;
    QCOMPARE(LLMEngine(bounded).engine_config().num_blocks, resolved.num_blocks);

    // A configured cache larger than the budget leaves is lowered, and the warning says so.
    EngineConfig configured = base;
    configured.kv_cache_bytes = std::size_t(8 * blocksPerSeq) * blockBytes;
    configured.host_memory_budget = weights + std::size_t(4 * blocksPerSeq) * blockBytes;
    std::string warning;
    configured.on_warning = [&warning](const std::string& w) { warning += w; };
    LLMEngine lowered(configured);
    QCOMPARE(lowered.engine_config().num_blocks, 4 * blocksPerSeq);
    QVERIFY2(QString::fromStdString(warning).contains(QLatin1String("KV cache lowered")), warning.c_str());

    // Not even one sequence of max_model_len: refused, naming the numbers.
    bounded.host_memory_budget = weights + std::size_t(blocksPerSeq) * blockBytes - 1;
    QString message;
    try {
      LLMEngine tooSmall(bounded);
    } catch (const std::runtime_error& e) {
      message = QString::fromStdString(e.what());
    }
    QVERIFY2(message.contains(QLatin1String("not enough memory")), qPrintable(message));
    QVERIFY2(message.contains(QLatin1String("max_model_len 512")), qPrintable(message));
  }

  void hundredRequestsOnCacheForFour() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    EngineConfig cfg = testutil::storiesConfig();
    cfg.max_model_len = 128;
    cfg.num_blocks = 4 * (128 / cfg.block_size);  // four full-length sequences
    LLMEngine engine(cfg);
    std::mt19937 rng(15);
    const char* starts[] = {"Once upon a time", "Lily and Tom", "The cat sat", "One day a big dog"};
    std::map<std::string, int> wanted;
    for (int i = 0; i < 100; ++i) {
      SamplingParams p = testutil::greedy(20 + static_cast<int>(rng() % 90));
      p.ignore_eos = true;  // every request takes its whole budget: the cache really runs out
      const std::string id = "r" + std::to_string(i);
      engine.add_request(id, starts[i % 4], p);
      wanted[id] = p.max_tokens;
    }
    QCOMPARE(engine.stats().num_waiting, 100);
    int peakRunning = 0;
    std::map<std::string, RequestOutput> done;
    for (int step = 0; step < 100000 && engine.has_unfinished_requests(); ++step) {
      for (RequestOutput& o : engine.step())
        if (o.finished) done[o.request_id] = std::move(o);
      peakRunning = std::max(peakRunning, engine.stats().num_running);
      QVERIFY(engine.stats().num_free_blocks >= 0);
    }
    QVERIFY2(!engine.has_unfinished_requests(), "a request got stuck");
    QCOMPARE(done.size(), size_t(100));
    for (const auto& [id, output] : done) {
      QCOMPARE(output.outputs[0].finish_reason, std::optional(FinishReason::kLength));
      QCOMPARE(static_cast<int>(output.outputs[0].token_ids.size()), wanted.at(id));
    }
    const EngineStats stats = engine.stats();
    qInfo("100 requests on %d blocks: peak %d running, %lld preemptions, %lld steps", stats.num_total_blocks,
          peakRunning, stats.num_preemptions, stats.num_steps);
    QVERIFY2(stats.num_preemptions > 0, "the cache for four should have forced preemption");
    QCOMPARE(stats.num_free_blocks, stats.num_total_blocks);
    QCOMPARE(stats.num_running + stats.num_waiting, 0);
  }
};

QTEST_GUILESS_MAIN(TestInputLimits)
#include "test_input_limits.moc"
