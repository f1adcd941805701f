// Automatic prefix caching: outputs identical with caching on and off (cold, warm, partially
// shared prompts, salts), a second chat turn computes only its new tokens, eviction under load;
// one prompt sent to several requests before one step ("send to all panes") is computed once
// (blocks registered when allocated), also with chunked prefill, aborts and n > 1.
#include <QTest>

#include <cstring>

#include "engine/llm.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {
const std::string kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big, red ball.";

std::vector<std::string> prompts() {
  return {kStory,                                  // cold
          kStory,                                  // warm: identical
          kStory + " She wanted to play with it",  // shares every block of the story
          "Once upon a time, there was a little girl named Lily. She loved to eat cake.",  // shares a few blocks
          "The cat sat on the mat and looked at the bird."};                               // shares nothing
}

EngineConfig config(bool caching) {
  EngineConfig c = testutil::storiesConfig();
  c.enable_prefix_caching = caching;
  return c;
}

// Greedy with the top-20 logprobs of every token: comparing them bitwise compares the logits.
SamplingParams greedyWithLogprobs(int max_tokens) {
  SamplingParams p = testutil::greedy(max_tokens);
  p.logprobs = 20;
  return p;
}

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Token ids, and every logprob bit for bit (ids, ranks and values of the top-20 alternatives).
void compareBitwise(const CompletionOutput& got, const CompletionOutput& want, const std::string& what) {
  QVERIFY2(got.token_ids == want.token_ids, what.c_str());
  QVERIFY2(got.logprobs && want.logprobs && got.logprobs->size() == want.logprobs->size(), what.c_str());
  for (size_t i = 0; i < got.logprobs->size(); ++i) {
    const auto &g = (*got.logprobs)[i], &w = (*want.logprobs)[i];
    QVERIFY2(g.size() == w.size(), what.c_str());
    for (auto gi = g.begin(), wi = w.begin(); gi != g.end(); ++gi, ++wi) {
      QVERIFY2(gi->first == wi->first && gi->second.rank == wi->second.rank, what.c_str());
      QVERIFY2(sameBits(gi->second.logprob, wi->second.logprob),
               qPrintable(QString("%1: token %2, id %3: logprob %4 vs %5")
                              .arg(QString::fromStdString(what))
                              .arg(i)
                              .arg(gi->first)
                              .arg(double(gi->second.logprob), 0, 'g', 9)
                              .arg(double(wi->second.logprob), 0, 'g', 9)));
    }
  }
}

// Each prompt alone on a fresh engine without prefix caching: the reference.
RequestOutput solo(const std::vector<int>& ids, const SamplingParams& p, EngineConfig c = config(false)) {
  c.enable_prefix_caching = false;
  LLMEngine engine(c);
  engine.add_request("solo", ids, p);
  return testutil::runToCompletion(engine).at("solo");
}

// Prompt tokens a request admitted after requests holding `earlier` prompts computes: all but the
// leading full blocks it shares with one of them, capped to leave its last token (vLLM's rule:
// a fully cached prompt recomputes its whole last block).
int expectedComputed(const std::vector<int>& ids, const std::vector<std::vector<int>>& earlier, int bs) {
  size_t best = 0;
  for (const auto& e : earlier) {
    size_t n = 0;
    while (n < ids.size() && n < e.size() && ids[n] == e[n]) ++n;
    best = std::max(best, n);
  }
  const int cached = int(std::min(best / bs, (ids.size() - 1) / bs)) * bs;
  return int(ids.size()) - cached;
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
      QVERIFY2(
          with[i].num_cached_tokens == expected,
          qPrintable(
              QString("prompt %1: %2 cached tokens, expected %3").arg(i).arg(with[i].num_cached_tokens).arg(expected)));
      std::vector<int> seq = ids;
      seq.insert(seq.end(), with[i].outputs[0].token_ids.begin(), with[i].outputs[0].token_ids.end() - 1);
      computed.push_back(seq);
    }
    QCOMPARE(with[0].num_cached_tokens, 0);    // cold
    QVERIFY(with[1].num_cached_tokens > 0);    // warm
    QVERIFY(with[3].num_cached_tokens >= bs);  // partly shared
    QCOMPARE(with[4].num_cached_tokens, 0);    // unrelated
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
    engine.add_request("a", kStory, testutil::greedy(5), {0, "alice", {}});
    testutil::runToCompletion(engine);
    engine.add_request("b", kStory, testutil::greedy(5), {0, "bob", {}});
    engine.add_request("c", kStory, testutil::greedy(5), {0, "", {}});
    auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("b").num_cached_tokens, 0);
    QCOMPARE(done.at("c").num_cached_tokens, 0);
    engine.add_request("a2", kStory, testutil::greedy(5), {0, "alice", {}});
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

  // "Send to all panes": the same prompt to 2 and to 4 requests before one step(). The first
  // computes the prompt; the others share its full blocks in that same step (registered when
  // allocated, written by the same forward before any attention reads them) and compute only
  // the tail after the last full block below their last token. Outputs, logits included, are
  // bitwise those of each request alone; no block leaks.
  void samePromptSameStep_data() {
    QTest::addColumn<int>("copies");
    QTest::newRow("2 requests") << 2;
    QTest::newRow("4 requests") << 4;
  }
  void samePromptSameStep() {
    QFETCH(int, copies);
    LLMEngine engine(config(true));
    const int bs = engine.engine_config().block_size;
    const auto ids = engine.tokenizer().encode(kStory + " She ran to get it and", true);
    const int N = int(ids.size());
    QVERIFY(N > 2 * bs);
    const SamplingParams p = greedyWithLogprobs(24);
    const RequestOutput want = solo(ids, p);
    for (int i = 0; i < copies; ++i) engine.add_request("pane" + std::to_string(i), ids, p);
    const int total = engine.stats().num_total_blocks;
    engine.step();
    QCOMPARE(int(engine.last_scheduled_request_ids().size()), copies);
    const int tail = expectedComputed(ids, {ids}, bs);  // what each extra request computes
    QVERIFY(tail >= 1 && tail <= bs);
    QCOMPARE(engine.stats().num_prompt_tokens, (long long)(N + (copies - 1) * tail));
    // Blocks: the first request's, plus each other's own tail blocks (the prefix is shared).
    const int shared = (N - tail) / bs;
    const int per_request = (N + bs - 1) / bs;
    QCOMPARE(total - engine.stats().num_free_blocks, per_request + (copies - 1) * (per_request - shared));
    const auto blocks = engine.kv_cache_snapshot();
    int shared_seen = 0;
    for (const auto& b : blocks)
      if (b.ref_count == copies) {
        ++shared_seen;
        QVERIFY(b.cached);
        QCOMPARE(int(b.request_ids.size()), copies);
      }
    QCOMPARE(shared_seen, shared);
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(int(done.size()), copies);
    for (const auto& [id, out] : done) {
      compareBitwise(out.outputs[0], want.outputs[0], id);
      QCOMPARE(out.num_cached_tokens, id == "pane0" ? 0 : N - tail);
    }
    QCOMPARE(engine.stats().num_free_blocks, total);
    // Caching off: unchanged, every request computes the whole prompt.
    LLMEngine off(config(false));
    for (int i = 0; i < copies; ++i) off.add_request("pane" + std::to_string(i), ids, p);
    off.step();
    QCOMPARE(off.stats().num_prompt_tokens, (long long)copies * N);
    for (const auto& [id, out] : testutil::runToCompletion(off)) compareBitwise(out.outputs[0], want.outputs[0], id);
    QCOMPARE(off.stats().num_free_blocks, off.stats().num_total_blocks);
  }

  // Different prompts sharing a prefix, all added before one step: each shares the blocks of
  // those admitted before it in the step.
  void sharedPrefixSameStep() {
    LLMEngine engine(config(true));
    const int bs = engine.engine_config().block_size;
    const std::vector<std::string> texts = {
        kStory, kStory + " She wanted to play with it",
        "Once upon a time, there was a little girl named Lily. She loved to eat cake.", kStory + " It was",
        "The cat sat on the mat and looked at the bird."};
    const SamplingParams p = greedyWithLogprobs(20);
    std::vector<std::vector<int>> ids;
    long long expected = 0;
    std::vector<int> expected_cached;
    for (size_t i = 0; i < texts.size(); ++i) {
      ids.push_back(engine.tokenizer().encode(texts[i], true));
      const std::vector<std::vector<int>> earlier(ids.begin(), ids.end() - 1);
      const int computed = expectedComputed(ids.back(), earlier, bs);
      expected += computed;
      expected_cached.push_back(int(ids.back().size()) - computed);
      engine.add_request(std::to_string(i), ids.back(), p);
    }
    QVERIFY(expected_cached[1] >= 2 * bs && expected_cached[2] >= bs && expected_cached[3] >= 2 * bs);
    QCOMPARE(expected_cached[4], 0);
    engine.step();
    QCOMPARE(int(engine.last_scheduled_request_ids().size()), int(texts.size()));
    QCOMPARE(engine.stats().num_prompt_tokens, expected);
    const auto done = testutil::runToCompletion(engine);
    for (size_t i = 0; i < texts.size(); ++i) {
      const auto& out = done.at(std::to_string(i));
      QCOMPARE(out.num_cached_tokens, expected_cached[i]);
      compareBitwise(out.outputs[0], solo(ids[i], p).outputs[0], texts[i]);
    }
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  // The request that computed the shared blocks is aborted while the others still use them:
  // the blocks stay (reference counts), the others' outputs are unchanged, nothing leaks.
  void abortFirstWhileOthersRun_data() {
    QTest::addColumn<int>("abort_after_steps");
    QTest::newRow("right after the shared prefill") << 1;
    QTest::newRow("while decoding") << 5;
  }
  void abortFirstWhileOthersRun() {
    QFETCH(int, abort_after_steps);
    LLMEngine engine(config(true));
    const auto ids = engine.tokenizer().encode(kStory, true);
    const SamplingParams p = greedyWithLogprobs(30);
    const RequestOutput want = solo(ids, p);
    for (int i = 0; i < 3; ++i) engine.add_request("pane" + std::to_string(i), ids, p);
    for (int s = 0; s < abort_after_steps; ++s) engine.step();
    const int used_before = engine.stats().num_total_blocks - engine.stats().num_free_blocks;
    const int pane0_blocks = engine.request_state("pane0")->num_blocks;
    QVERIFY(engine.abort_request("pane0"));
    const int used_after = engine.stats().num_total_blocks - engine.stats().num_free_blocks;
    // Only pane0's own blocks come back; the prefix blocks it computed stay with the others.
    const int bs = engine.engine_config().block_size;
    const int shared = (int(ids.size()) - expectedComputed(ids, {ids}, bs)) / bs;
    QVERIFY(shared >= 2);
    QCOMPARE(used_before - used_after, pane0_blocks - shared);
    for (const auto& b : engine.kv_cache_snapshot())
      if (b.ref_count > 0)
        QVERIFY(std::find(b.request_ids.begin(), b.request_ids.end(), "pane0") == b.request_ids.end());
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("pane0").outputs[0].finish_reason, std::optional(FinishReason::kAbort));
    compareBitwise(done.at("pane1").outputs[0], want.outputs[0], "pane1");
    compareBitwise(done.at("pane2").outputs[0], want.outputs[0], "pane2");
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  // Chunked prefill (a small token budget): only blocks full after the scheduled chunk are
  // registered; a request admitted in the step that finishes the first one's prompt shares
  // every full block of it, those computed in that very step included.
  void chunkedPrefillSharesWithinStep() {
    EngineConfig c = config(true);
    c.block_size = 4;
    LLMEngine probe(c);
    const auto ids = probe.tokenizer().encode(kStory, true);
    const int N = int(ids.size()), bs = 4;
    const int tail = expectedComputed(ids, {ids}, bs);
    // Step 1: request 0 prefills M tokens. Step 2: its last N - M, then requests 1 and 2 fit.
    const int M = (N + 2 * bs + 1) / 2;
    QVERIFY(M < N && 2 * M - N >= 2 * tail);
    c.max_num_batched_tokens = M;
    LLMEngine engine(c);
    const SamplingParams p = greedyWithLogprobs(20);
    for (int i = 0; i < 3; ++i) engine.add_request(std::to_string(i), ids, p);
    engine.step();
    QCOMPARE(engine.stats().num_prompt_tokens, (long long)M);
    QCOMPARE(engine.stats().num_cached_blocks, M / bs);  // full after the chunk only
    engine.step();
    QCOMPARE(int(engine.last_scheduled_request_ids().size()), 3);
    QCOMPARE(engine.stats().num_prompt_tokens, (long long)(N + 2 * tail));
    const auto done = testutil::runToCompletion(engine);
    const RequestOutput want = solo(ids, p, c);
    for (int i = 0; i < 3; ++i) {
      compareBitwise(done.at(std::to_string(i)).outputs[0], want.outputs[0], "request " + std::to_string(i));
      QCOMPARE(done.at(std::to_string(i)).num_cached_tokens, i == 0 ? 0 : N - tail);
    }
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);

    // A per-request chunk cap: later requests share blocks the earlier ones are computing in the
    // same step, each its own chunk further (a chain of owners); outputs stay exact.
    EngineConfig capped = c;
    capped.max_num_batched_tokens = 512;
    capped.long_prefill_token_threshold = 2 * bs;
    LLMEngine chain(capped);
    for (int i = 0; i < 4; ++i) chain.add_request(std::to_string(i), ids, p);
    chain.step();
    QCOMPARE(int(chain.last_scheduled_request_ids().size()), 4);
    const auto chained = testutil::runToCompletion(chain);
    for (int i = 0; i < 4; ++i)
      compareBitwise(chained.at(std::to_string(i)).outputs[0], want.outputs[0], "chained " + std::to_string(i));
    QVERIFY(chain.stats().num_prompt_tokens < 4LL * N);
    QCOMPARE(chain.stats().num_free_blocks, chain.stats().num_total_blocks);
  }

  // n > 1 beside single requests with the same prompt in one step: the n completions fork from
  // the prompt's blocks, the other request shares them; seeded outputs are those run alone.
  void forksAndSharedPrompt() {
    LLMEngine engine(config(true));
    const auto ids = engine.tokenizer().encode(kStory, true);
    SamplingParams multi;
    multi.n = 3;
    multi.temperature = 0.8f;
    multi.seed = 7;
    multi.max_tokens = 20;
    const SamplingParams g = greedyWithLogprobs(20);
    engine.add_request("multi", ids, multi);
    engine.add_request("greedy", ids, g);
    engine.step();
    const int bs = engine.engine_config().block_size;
    QCOMPARE(engine.stats().num_prompt_tokens, (long long)(int(ids.size()) + expectedComputed(ids, {ids}, bs)));
    const auto done = testutil::runToCompletion(engine);
    compareBitwise(done.at("greedy").outputs[0], solo(ids, g).outputs[0], "greedy");
    const auto alone = solo(ids, multi);
    QCOMPARE(done.at("multi").outputs.size(), size_t(3));
    for (size_t i = 0; i < 3; ++i) QCOMPARE(done.at("multi").outputs[i].token_ids, alone.outputs[i].token_ids);
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  // Loading reports progress in bytes up to the file size.
  void loadProgress() {
    EngineConfig c = config(true);
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    c.load_progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
    LLMEngine engine(c);
    QVERIFY(!calls.empty());
    QCOMPARE(calls.back().first, calls.back().second);
    QVERIFY(calls.back().second >= uint64_t(QFileInfo(testpaths::stories260K() + "/stories260K.bin").size()));
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
