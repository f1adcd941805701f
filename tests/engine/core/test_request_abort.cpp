// LLMEngine::request_abort: a stop asked from another thread while a step runs. A step whose
// requests were all asked to stop ends between two layers (far sooner than its prefill chunk
// would), reports them aborted with every block free, and leaves nothing in the prefix cache: the
// same prompt afterwards computes from scratch and gives exactly what a fresh engine gives (a
// dense model, and a hybrid one whose recurrent checkpoints the stopped step had started to write).
// A step that also computes a request nobody stopped runs to its end.
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {

std::vector<int> promptIds(int n, int vocab, int seed) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ids[std::size_t(i)] = 3 + (seed * 131 + i * 37) % (vocab - 3);
  return ids;
}

SamplingParams greedyNoEos(int max_tokens) {
  SamplingParams p = testutil::greedy(max_tokens);
  p.ignore_eos = true;
  return p;
}

/// The request `ids` alone on a fresh engine of `config`, to the end.
std::vector<int> fresh(const EngineConfig& config, const std::vector<int>& ids, int max_tokens) {
  LLMEngine engine(config);
  engine.add_request("ref", ids, greedyNoEos(max_tokens));
  const auto done = testutil::runToCompletion(engine);
  return done.at("ref").outputs.front().token_ids;
}

EngineConfig qwen35Config() {
  EngineConfig c;
  c.model = archtest::archPath("qwen35-tiny.gguf").toStdString();
  c.max_model_len = 160;
  c.num_threads = 2;
  c.kv_cache_dtype = KvCacheDType::kFloat32;
  return c;
}

}  // namespace

class TestRequestAbort : public QObject {
  Q_OBJECT

 private:
  void abandonedStepLeavesNothing(const EngineConfig& config, int promptLen);

 private slots:
  void denseModel();
  void hybridModel();
  void sharedPrefixAbandoned();
  void stepWithOthersRunsOn();
  void stopsInsideALongChunk();
};

// The stop is asked from the step's own thread right before its forward (set_on_scheduled), so
// the forward sees it at its first check: deterministic on any machine.
void TestRequestAbort::abandonedStepLeavesNothing(const EngineConfig& config, int promptLen) {
  LLMEngine engine(config);
  const int vocab = engine.model_config().vocab_size;
  const std::vector<int> warm = promptIds(promptLen, vocab, 1);
  // A first turn computed in full: its blocks (and checkpoints) are in the prefix cache.
  engine.add_request("turn1", warm, greedyNoEos(4));
  testutil::runToCompletion(engine);
  const int cachedBefore = engine.stats().num_cached_blocks;
  QVERIFY(cachedBefore > 0);

  // The second turn extends it; stopped inside its first step.
  std::vector<int> extended = warm;
  for (int id : promptIds(promptLen, vocab, 2)) extended.push_back(id);
  engine.add_request("turn2", extended, greedyNoEos(8));
  bool asked = false;
  engine.set_on_scheduled([&] {
    if (!asked) engine.request_abort("turn2");
    asked = true;
  });
  const std::vector<RequestOutput> out = engine.step();
  engine.set_on_scheduled({});
  QVERIFY(asked);
  QCOMPARE(int(out.size()), 1);
  QCOMPARE(out.front().request_id, std::string("turn2"));
  QVERIFY(out.front().finished);
  QCOMPARE(out.front().outputs.front().finish_reason, std::optional(FinishReason::kAbort));
  QVERIFY(out.front().outputs.front().token_ids.empty());
  const EngineStats s = engine.stats();
  QCOMPARE(s.num_abandoned_steps, 1LL);
  QCOMPARE(s.num_free_blocks, s.num_total_blocks);
  QCOMPARE(s.num_cached_blocks, cachedBefore);  // the stopped step's blocks are not registered
  QVERIFY(!engine.has_unfinished_requests());

  // The same turn again: it may take the first turn's blocks, never the stopped step's, and gives
  // what a fresh engine gives.
  engine.add_request("turn2b", extended, greedyNoEos(8));
  const auto done = testutil::runToCompletion(engine);
  QCOMPARE(done.at("turn2b").outputs.front().token_ids, fresh(config, extended, 8));
  QVERIFY(done.at("turn2b").num_cached_tokens <= promptLen);
}

void TestRequestAbort::denseModel() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  abandonedStepLeavesNothing(testutil::storiesConfig(), 70);
}

void TestRequestAbort::hybridModel() {
  REQUIRE_MODEL_FILE(archtest::archPath("qwen35-tiny.gguf"));
  abandonedStepLeavesNothing(qwen35Config(), 60);
}

// "Send to all": two requests with one prompt in one step, the second sharing the blocks the first
// registered for tokens not computed yet; both stopped inside the step.
void TestRequestAbort::sharedPrefixAbandoned() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  const EngineConfig config = testutil::storiesConfig();
  LLMEngine engine(config);
  const std::vector<int> ids = promptIds(80, engine.model_config().vocab_size, 3);
  engine.add_request("a", ids, greedyNoEos(6));
  engine.add_request("b", ids, greedyNoEos(6));
  engine.set_on_scheduled([&] {
    engine.request_abort("a");
    engine.request_abort("b");
  });
  const std::vector<RequestOutput> out = engine.step();
  engine.set_on_scheduled({});
  QCOMPARE(int(out.size()), 2);
  for (const RequestOutput& o : out) QCOMPARE(o.outputs.front().finish_reason, std::optional(FinishReason::kAbort));
  const EngineStats s = engine.stats();
  QCOMPARE(s.num_abandoned_steps, 1LL);
  QCOMPARE(s.num_free_blocks, s.num_total_blocks);
  QCOMPARE(s.num_cached_blocks, 0);
  engine.add_request("c", ids, greedyNoEos(6));
  const auto done = testutil::runToCompletion(engine);
  QCOMPARE(done.at("c").num_cached_tokens, 0);
  QCOMPARE(done.at("c").outputs.front().token_ids, fresh(config, ids, 6));
}

// Only one of the step's two requests is stopped: the step runs to its end for the other, whose
// output is unchanged; the stopped one ends at the next step.
void TestRequestAbort::stepWithOthersRunsOn() {
  REQUIRE_MODEL_FILE(testpaths::stories260K());
  const EngineConfig config = testutil::storiesConfig();
  LLMEngine engine(config);
  const int vocab = engine.model_config().vocab_size;
  const std::vector<int> kept = promptIds(40, vocab, 4), stopped = promptIds(40, vocab, 5);
  engine.add_request("kept", kept, greedyNoEos(10));
  engine.add_request("stopped", stopped, greedyNoEos(10));
  engine.set_on_scheduled([&] { engine.request_abort("stopped"); });
  std::map<std::string, RequestOutput> done;
  for (int i = 0; i < 100 && engine.has_unfinished_requests(); ++i) {
    for (RequestOutput& o : engine.step())
      if (o.finished) done[o.request_id] = o;
    engine.set_on_scheduled({});
  }
  QCOMPARE(engine.stats().num_abandoned_steps, 0LL);
  QCOMPARE(done.at("stopped").outputs.front().finish_reason, std::optional(FinishReason::kAbort));
  QVERIFY(done.at("stopped").outputs.front().token_ids.size() <= 1);
  QCOMPARE(done.at("kept").outputs.front().token_ids, fresh(config, kept, 10));
}

// A 512-token prefill chunk at the stories110M shape (12 layers): the stop, asked from another
// thread once the step is inside its forward, ends the step in a small part of the chunk's time.
void TestRequestAbort::stopsInsideALongChunk() {
  EngineConfig config;
  config.model = "random:stories110M";
  config.num_threads = 2;
  config.max_model_len = 1024;
  config.max_num_batched_tokens = 512;
  LLMEngine engine(config);
  const int vocab = engine.model_config().vocab_size;
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };

  // The chunk's time, not stopped.
  engine.add_request("full", promptIds(512, vocab, 6), greedyNoEos(1));
  const Clock::time_point t0 = Clock::now();
  engine.step();
  const double full = seconds(Clock::now() - t0);
  testutil::runToCompletion(engine);

  std::atomic<bool> inForward{false};
  engine.set_on_scheduled([&] { inForward = true; });
  engine.add_request("stopped", promptIds(512, vocab, 7), greedyNoEos(1));
  std::vector<RequestOutput> out;
  Clock::time_point stepEnd;
  std::thread stepper([&] {
    out = engine.step();
    stepEnd = Clock::now();
  });
  while (!inForward) std::this_thread::yield();
  const Clock::time_point asked = Clock::now();
  engine.request_abort("stopped");
  stepper.join();
  engine.set_on_scheduled({});
  const double stop = seconds(stepEnd - asked);
  qInfo("512-token chunk: %.0f ms; stopped %.0f ms after the stop was asked", full * 1e3, stop * 1e3);
  QCOMPARE(int(out.size()), 1);
  QCOMPARE(out.front().outputs.front().finish_reason, std::optional(FinishReason::kAbort));
  QCOMPARE(engine.stats().num_abandoned_steps, 1LL);
  // Two checks a layer: at most about 1/24 of the chunk after the stop; half leaves room for a
  // loaded machine.
  QVERIFY2(stop < full / 2, qPrintable(QString("stopped after %1 s of a %2 s chunk").arg(stop).arg(full)));
}

QTEST_MAIN(TestRequestAbort)
#include "test_request_abort.moc"
