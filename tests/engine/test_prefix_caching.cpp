// Automatic prefix caching: outputs identical with caching on and off (cold, warm, partially
// shared prompts, salts), a second chat turn computes only its new tokens, eviction under load.
#include <QtTest>

#include "engine/llm.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {
const std::string kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big, red ball.";

std::vector<std::string> prompts() {
  return {kStory,                                            // cold
          kStory,                                            // warm: identical
          kStory + " She wanted to play with it",            // shares every block of the story
          "Once upon a time, there was a little girl named Lily. She loved to eat cake.",  // shares a few blocks
          "The cat sat on the mat and looked at the bird."};      // shares nothing
}

EngineConfig config(bool caching) {
  EngineConfig c = testutil::storiesConfig();
  c.enable_prefix_caching = caching;
  return c;
}
}  // namespace

class TestPrefixCaching : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin"); }

  void sameOutputsOnAndOff() {
    LLM on(config(true)), off(config(false));
    std::vector<RequestOutput> with, without;
    for (const auto& p : prompts()) {  // sequential: each request sees what the previous cached
      with.push_back(on.generate({p}, testutil::greedy(40))[0]);
      without.push_back(off.generate({p}, testutil::greedy(40))[0]);
    }
    for (size_t i = 0; i < with.size(); ++i) {
      QCOMPARE(with[i].outputs[0].token_ids, without[i].outputs[0].token_ids);
      QCOMPARE(with[i].outputs[0].text, without[i].outputs[0].text);
      QCOMPARE(without[i].num_cached_tokens, 0);
    }
    // Expected hits: the longest prefix shared with any sequence computed before (its prompt and
    // output, less the last sampled token, which was never fed), in whole blocks, leaving the
    // last prompt token to compute.
    const int bs = on.engine().engine_config().block_size;
    std::vector<std::vector<int>> computed;
    for (size_t i = 0; i < with.size(); ++i) {
      const auto& ids = with[i].prompt_token_ids;
      size_t best = 0;
      for (const auto& seq : computed) {
        size_t n = 0;
        while (n < ids.size() && n < seq.size() && ids[n] == seq[n]) ++n;
        best = std::max(best, n);
      }
      const int expected = int(std::min(best / bs, (ids.size() - 1) / bs)) * bs;
      QVERIFY2(with[i].num_cached_tokens == expected,
               qPrintable(QString("prompt %1: %2 cached tokens, expected %3").arg(i).arg(with[i].num_cached_tokens).arg(expected)));
      std::vector<int> seq = ids;
      seq.insert(seq.end(), with[i].outputs[0].token_ids.begin(), with[i].outputs[0].token_ids.end() - 1);
      computed.push_back(seq);
    }
    QCOMPARE(with[0].num_cached_tokens, 0);  // cold
    QVERIFY(with[1].num_cached_tokens > 0);  // warm
    QVERIFY(with[3].num_cached_tokens >= bs);  // partly shared
    QCOMPARE(with[4].num_cached_tokens, 0);  // unrelated
    const auto st = on.engine().stats();
    QVERIFY(st.prefix_cache_hits > 0 && st.prefix_cache_hits < st.prefix_cache_queries);
    QCOMPARE(off.engine().stats().prefix_cache_hits, 0LL);
  }

  // Batched too: identical prompts running together give identical greedy outputs.
  void batchedSharedPrompts() {
    LLM on(config(true)), off(config(false));
    const auto a = on.generate(prompts(), testutil::greedy(30));
    const auto b = off.generate(prompts(), testutil::greedy(30));
    for (size_t i = 0; i < a.size(); ++i) QCOMPARE(a[i].outputs[0].token_ids, b[i].outputs[0].token_ids);
  }

  // A second chat turn re-sends turn one (prompt + answer) plus a new message: only the new
  // tokens (and at most the partial last block) are computed.
  void secondChatTurnComputesOnlyNewTokens() {
    LLM llm(config(true));
    const auto turn1 = llm.generate({kStory}, testutil::greedy(50))[0];
    std::vector<int> turn2 = turn1.prompt_token_ids;
    turn2.insert(turn2.end(), turn1.outputs[0].token_ids.begin(), turn1.outputs[0].token_ids.end());
    const auto user2 = llm.engine().tokenizer().encode(" Then Lily asked her mom for help.", false);
    const int turn1_len = int(turn2.size());
    turn2.insert(turn2.end(), user2.begin(), user2.end());
    const auto out = llm.generate(std::vector<std::vector<int>>{turn2}, testutil::greedy(20))[0];
    const int bs = llm.engine().engine_config().block_size;
    // Everything turn one wrote to full blocks is reused (turn one's last sampled token was never fed).
    QCOMPARE(out.num_cached_tokens, ((turn1_len - 1) / bs) * bs);
    QVERIFY(int(turn2.size()) - out.num_cached_tokens <= int(user2.size()) + bs);
    LLM off(config(false));
    QCOMPARE(off.generate(std::vector<std::vector<int>>{turn2}, testutil::greedy(20))[0].outputs[0].token_ids,
             out.outputs[0].token_ids);
  }

  void saltSeparatesUsers() {
    LLMEngine engine(config(true));
    engine.add_request("a", kStory, testutil::greedy(5), {0, "alice"});
    testutil::runToCompletion(engine);
    engine.add_request("b", kStory, testutil::greedy(5), {0, "bob"});
    engine.add_request("c", kStory, testutil::greedy(5), {0, ""});
    auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("b").num_cached_tokens, 0);
    QCOMPARE(done.at("c").num_cached_tokens, 0);
    engine.add_request("a2", kStory, testutil::greedy(5), {0, "alice"});
    done = testutil::runToCompletion(engine);
    QVERIFY(done.at("a2").num_cached_tokens > 0);
  }

  // The engine view's block map: shared prefix blocks list both requests; all free at the end.
  void kvCacheSnapshot() {
    LLMEngine engine(config(true));
    engine.add_request("a", kStory, testutil::greedy(30));
    for (int i = 0; i < 5; ++i) engine.step();  // "a" has prefilled and cached its full blocks
    engine.add_request("b", kStory + " Then", testutil::greedy(30));
    engine.step();
    const auto blocks = engine.kv_cache_snapshot();
    QCOMPARE(int(blocks.size()), engine.stats().num_total_blocks);
    int shared = 0, used = 0;
    for (const auto& b : blocks) {
      if (b.ref_count > 0) ++used;
      QCOMPARE(int(b.request_ids.size()) <= b.ref_count, true);
      if (b.request_ids.size() == 2) {
        ++shared;
        QVERIFY(b.cached);
        QCOMPARE(b.ref_count, 2);
      }
    }
    QVERIFY(shared >= 1);
    QCOMPARE(used, engine.stats().num_total_blocks - engine.stats().num_free_blocks);
    testutil::runToCompletion(engine);
    for (const auto& b : engine.kv_cache_snapshot()) {
      QCOMPARE(b.ref_count, 0);
      QVERIFY(b.request_ids.empty());
    }
  }

  // Loading reports progress in bytes up to the file size.
  void loadProgress() {
    EngineConfig c = config(true);
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    c.load_progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
    LLMEngine engine(c);
    QVERIFY(!calls.empty());
    QCOMPARE(calls.back().first, calls.back().second);
    QVERIFY(calls.back().second >= QFileInfo(testpaths::stories260K() + "/stories260K.bin").size());
    for (size_t i = 1; i < calls.size(); ++i) QVERIFY(calls[i].first >= calls[i - 1].first);
  }

  // A small cache: cached blocks are evicted least recently used first, outputs stay right and
  // every block is free at the end.
  void evictionUnderPressure() {
    EngineConfig c = config(true);
    c.max_model_len = 96;
    c.num_blocks = 10;
    LLM llm(c), ref(config(false));
    for (int round = 0; round < 2; ++round)
      for (const auto& p : prompts()) {
        const auto got = llm.generate({p}, testutil::greedy(20))[0];
        const auto want = ref.generate({p}, testutil::greedy(20))[0];
        QCOMPARE(got.outputs[0].token_ids, want.outputs[0].token_ids);
      }
    const auto st = llm.engine().stats();
    QCOMPARE(st.num_free_blocks, st.num_total_blocks);
    QVERIFY(st.num_cached_blocks <= st.num_total_blocks);
    QVERIFY(llm.engine().reset_prefix_cache());
    QCOMPARE(llm.engine().stats().num_cached_blocks, 0);
  }
};

QTEST_GUILESS_MAIN(TestPrefixCaching)
#include "test_prefix_caching.moc"
