// AsyncLLM: requests added from several threads at once share the step loop and produce exactly
// the tokens the offline engine produces for each alone (batch invariance); aborts from another
// thread free the blocks; bad requests are refused at once.
#include <QTest>

#include <set>
#include <thread>

#include "engine/async_llm.h"
#include "engine/llm.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {

EngineConfig config() {
  EngineConfig c;
  c.model = testpaths::stories260K().toStdString();
  c.num_threads = 1;
  c.max_num_seqs = 8;
  return c;
}

// Takes every output of `stream`, concatenating the token ids of completion 0.
std::vector<int> drain(RequestStream& stream, std::optional<FinishReason>* finish_reason = nullptr) {
  std::vector<int> ids;
  while (!stream.done()) {
    auto out = stream.next(std::chrono::milliseconds(1000));
    if (!out) continue;
    for (const CompletionOutput& c : out->outputs) {
      ids.insert(ids.end(), c.token_ids.begin(), c.token_ids.end());
      if (c.finish_reason && finish_reason) *finish_reason = c.finish_reason;
    }
  }
  return ids;
}

}  // namespace

class TestAsyncLLM : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin"); }

  void concurrentAddsMatchOffline() {
    const std::vector<std::string> prompts = {"Once upon a time", "Lily and Tom", "The dog", "A big red ball",
                                              "One day",          "Tim was sad",  "The sun", "Mom said"};
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 24;
    std::vector<std::vector<int>> expected;
    {
      LLM llm(config());
      for (const auto& prompt : prompts) expected.push_back(llm.generate(prompt, p)[0].outputs[0].token_ids);
    }
    AsyncLLM engine(config());
    const Tokenizer& tok = engine.engine().tokenizer();
    std::vector<std::vector<int>> got(prompts.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < prompts.size(); ++i)
      threads.emplace_back([&, i] {
        auto stream = engine.add_request("r" + std::to_string(i), tok.encode(prompts[i], true), p);
        got[i] = drain(*stream);
      });
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < prompts.size(); ++i) QCOMPARE(got[i], expected[i]);
    QTRY_COMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
    QCOMPARE(engine.num_unfinished_requests(), 0);
  }

  void sharedStreamAndAbort() {
    AsyncLLM engine(config());
    SamplingParams p;
    p.max_tokens = 400;
    p.ignore_eos = true;
    auto stream = engine.add_request("a", {1, 100, 200}, p);
    engine.add_request("b", {1, 300}, p, {}, stream);  // two requests, one stream
    // Wait for tokens of both, then abort both from this thread.
    std::set<std::string> seen;
    while (seen.size() < 2) {
      auto out = stream->next(std::chrono::milliseconds(5000));
      QVERIFY(out.has_value());
      if (!out->outputs.empty() && !out->outputs[0].token_ids.empty()) seen.insert(out->request_id);
    }
    QVERIFY(engine.abort("a"));
    QVERIFY(engine.abort("b"));
    std::optional<FinishReason> reason;
    drain(*stream, &reason);
    QCOMPARE(reason, std::optional(FinishReason::kAbort));
    QVERIFY(stream->error().empty());
    QVERIFY(!engine.abort("a"));  // finished now
    QTRY_COMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  void refusesAtOnce() {
    AsyncLLM engine(config());
    SamplingParams bad;
    bad.top_p = 2;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.add_request("x", {1, 2}, bad));
    SamplingParams tooLong;
    tooLong.max_tokens = 100000;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.add_request("y", {1, 2}, tooLong));
    SamplingParams ok;
    ok.max_tokens = 300;
    ok.ignore_eos = true;
    auto s = engine.add_request("z", {1, 2}, ok);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.add_request("z", {1, 2}, ok));  // id in use
    QCOMPARE(engine.num_unfinished_requests(), 1);
    // Destroying the engine with a request running ends its stream ("abort", with the reason).
  }

  void shutdownEndsStreams() {
    std::shared_ptr<RequestStream> s;
    {
      AsyncLLM engine(config());
      SamplingParams p;
      p.max_tokens = 400;
      p.ignore_eos = true;
      s = engine.add_request("long", {1, 2, 3}, p);
    }
    std::optional<FinishReason> reason;
    drain(*s, &reason);
    QCOMPARE(reason, std::optional(FinishReason::kAbort));
    QVERIFY(s->done());
  }
};

QTEST_GUILESS_MAIN(TestAsyncLLM)
#include "test_async_llm.moc"
