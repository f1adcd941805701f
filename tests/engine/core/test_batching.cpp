// Continuous batching: batch invariance, requests joining mid-flight, chunked prefill, preemption
// under a tiny KV cache, aborts in every state, and block accounting.
#include <QTest>

#include <set>

#include "engine/llm.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {
const std::vector<std::string> kPrompts = {
    "",  // BOS only
    "Once upon a time",
    "Lily and Tom went to the park",
    "The cat sat",
    "One day, a little boy named Tim",
    "She was very happy because",
    "The sun was shining and the birds were singing. Lily wanted to",
    "Ben had a red ball",
    "Mom said",
    "There was a big tree in the garden. Under the tree",
    "The dog",
    "Sue and her friend played with blocks. They built a tall tower and",
    "\"Look!\" said Max.",
    "Once upon a time, in a small house, there lived a kind old man who",
    "A bird",
};

std::string id(size_t i) { return "r" + std::to_string(i); }

/// Each prompt alone on a fresh engine: the reference outputs.
std::vector<std::vector<int>> soloOutputs(const EngineConfig& cfg, const std::vector<SamplingParams>& params) {
  LLMEngine engine(cfg);
  std::vector<std::vector<int>> out;
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    engine.add_request(id(i), kPrompts[i], params[i]);
    auto done = testutil::runToCompletion(engine);
    out.push_back(done.at(id(i)).outputs[0].token_ids);
  }
  return out;
}

std::vector<SamplingParams> mixedParams() {
  std::vector<SamplingParams> ps;
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    SamplingParams p = testutil::greedy(30 + int(i % 4) * 10);
    if (i % 3 == 2) {  // some seeded random sampling too: seeds make them reproducible in any batch
      p.temperature = 0.9f;
      p.top_k = 40;
      p.top_p = 0.95f;
      p.seed = 1234 + i;
    }
    ps.push_back(p);
  }
  return ps;
}
}  // namespace

class TestBatching : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin"); }

  // Test 3: every prompt gives the output it gives alone, with requests joining while others decode.
  void batchInvariance() {
    const EngineConfig cfg = testutil::storiesConfig();
    const auto params = mixedParams();
    const auto solo = soloOutputs(cfg, params);

    LLMEngine engine(cfg);
    size_t next = 0;
    int max_batch = 0;
    std::map<std::string, RequestOutput> done;
    for (int step = 0; step < 10000; ++step) {
      // 5 requests at once, then one more every third step, while the first ones decode.
      if (step == 0)
        for (; next < 5; ++next) engine.add_request(id(next), kPrompts[next], params[next]);
      else if (step % 3 == 0 && next < kPrompts.size()) {
        engine.add_request(id(next), kPrompts[next], params[next]);
        ++next;
      }
      if (!engine.has_unfinished_requests() && next == kPrompts.size()) break;
      for (auto& o : engine.step())
        if (o.finished) done[o.request_id] = o;
      max_batch = std::max(max_batch, int(engine.last_scheduled_request_ids().size()));
    }
    QCOMPARE(done.size(), kPrompts.size());
    QVERIFY2(max_batch >= 5, "requests were not batched together");
    for (size_t i = 0; i < kPrompts.size(); ++i)
      QVERIFY2(done[id(i)].outputs[0].token_ids == solo[i],
               qPrintable(QString("prompt %1 differs when batched").arg(i)));
  }

  // A prompt three times the token budget is prefilled in chunks and gives the same output.
  void chunkedPrefill() {
    std::string prompt;
    for (int i = 0; i < 6; ++i) prompt += "Once upon a time, there was a little girl named Lily. ";
    EngineConfig big = testutil::storiesConfig();
    LLM ref(big);
    const auto expected = ref.generate({prompt}, testutil::greedy(40))[0];
    const int n_prompt = int(expected.prompt_token_ids.size());
    QVERIFY(n_prompt > 60);

    EngineConfig small = testutil::storiesConfig();
    small.max_num_batched_tokens = n_prompt / 3;
    LLMEngine engine(small);
    engine.add_request("long", prompt, testutil::greedy(40));
    engine.add_request("short", "The dog", testutil::greedy(40));
    std::map<std::string, RequestOutput> done;
    while (engine.has_unfinished_requests()) {
      for (auto& o : engine.step()) {
        if (o.finished) done[o.request_id] = o;
      }
    }
    QVERIFY(engine.stats().num_steps > 40);
    QCOMPARE(done["long"].outputs[0].token_ids, expected.outputs[0].token_ids);
    QCOMPARE(done["long"].outputs[0].text, expected.outputs[0].text);
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  // Test 4: with a KV cache of a few blocks, 8 concurrent greedy requests finish with their solo
  // outputs, and preemption really happened.
  void preemption() {
    EngineConfig cfg = testutil::storiesConfig();
    cfg.max_model_len = 96;  // 6 blocks of 16 per sequence at most
    cfg.num_blocks = 8;
    std::vector<SamplingParams> params(kPrompts.size(), testutil::greedy(60));
    std::vector<std::vector<int>> solo;
    {
      LLMEngine engine(cfg);
      for (size_t i = 0; i < 8; ++i) {
        engine.add_request(id(i), kPrompts[i], params[i]);
        solo.push_back(testutil::runToCompletion(engine).at(id(i)).outputs[0].token_ids);
      }
      QCOMPARE(engine.stats().num_preemptions, 0LL);
    }
    LLMEngine engine(cfg);
    for (size_t i = 0; i < 8; ++i) engine.add_request(id(i), kPrompts[i], params[i]);
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.size(), size_t(8));
    QVERIFY2(engine.stats().num_preemptions > 0, "the tiny cache should have forced preemption");
    for (size_t i = 0; i < 8; ++i) QCOMPARE(done.at(id(i)).outputs[0].token_ids, solo[i]);
    // Test 5: every block is free again.
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  // Test 5: aborts in every state (waiting, mid-prefill, decoding, preempted) return every block.
  void abortReturnsBlocks() {
    EngineConfig cfg = testutil::storiesConfig();
    cfg.max_model_len = 96;
    cfg.num_blocks = 8;
    cfg.max_num_batched_tokens = 8;  // prefills take several steps
    cfg.max_num_seqs = 5;            // some requests keep waiting
    LLMEngine engine(cfg);
    const size_t n = 10;
    for (size_t i = 0; i < n; ++i) engine.add_request(id(i), kPrompts[(i + 6) % kPrompts.size()], testutil::greedy(60));
    std::set<std::string> seen;  // states in which an abort happened
    for (int step = 0; step < 5000 && engine.has_unfinished_requests(); ++step) {
      engine.step();
      for (size_t i = 0; i < n; ++i) {
        const auto st = engine.request_state(id(i));
        if (!st) continue;
        std::string state;
        if (st->status == RequestStatus::kWaiting && st->num_preemptions == 0)
          state = "waiting";
        else if (st->status == RequestStatus::kPreempted)
          state = "preempted";
        else if (st->status == RequestStatus::kRunning && st->num_computed_tokens < st->num_prompt_tokens)
          state = "prefill";
        else if (st->status == RequestStatus::kRunning && st->num_output_tokens > 3)
          state = "decode";
        if (state.empty() || seen.count(state) || (state == "waiting" && step < 2)) continue;
        const int blocks_before = engine.stats().num_free_blocks;
        QVERIFY(engine.abort_request(id(i)));
        QCOMPARE(engine.stats().num_free_blocks, blocks_before + st->num_blocks);
        QVERIFY(!engine.request_state(id(i)));
        QVERIFY(!engine.abort_request(id(i)));  // already gone
        seen.insert(state);
      }
    }
    QCOMPARE(seen, (std::set<std::string>{"waiting", "prefill", "decode", "preempted"}));
    QVERIFY(!engine.has_unfinished_requests());
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  void abortIsReportedOnce() {
    LLMEngine engine(testutil::storiesConfig());
    SamplingParams p = testutil::greedy(50);
    p.output_kind = RequestOutputKind::kDelta;
    engine.add_request("a", "Once upon a time", p);
    engine.step();
    engine.step();
    QVERIFY(engine.abort_request("a"));
    const auto outs = engine.step();
    QCOMPARE(outs.size(), size_t(1));
    QCOMPARE(outs[0].outputs[0].finish_reason, std::optional(FinishReason::kAbort));
    QVERIFY(outs[0].finished);
    QVERIFY(!engine.has_unfinished_requests());
    QVERIFY(engine.step().empty());
  }

  // Deltas concatenate to the cumulative text; kFinalOnly reports once.
  void outputKinds() {
    LLMEngine engine(testutil::storiesConfig());
    SamplingParams d = testutil::greedy(80), c = d, f = d;
    d.output_kind = RequestOutputKind::kDelta;
    c.output_kind = RequestOutputKind::kCumulative;
    f.output_kind = RequestOutputKind::kFinalOnly;
    engine.add_request("d", "Lily and Tom", d);
    engine.add_request("c", "Lily and Tom", c);
    engine.add_request("f", "Lily and Tom", f);
    std::string text_d;
    std::vector<int> ids_d;
    RequestOutput last_c;
    int reports_f = 0;
    while (engine.has_unfinished_requests())
      for (auto& o : engine.step()) {
        if (o.request_id == "d") {
          text_d += o.outputs[0].text;
          ids_d.insert(ids_d.end(), o.outputs[0].token_ids.begin(), o.outputs[0].token_ids.end());
        } else if (o.request_id == "c") {
          last_c = o;
        } else {
          ++reports_f;
          QVERIFY(o.finished);
        }
      }
    QCOMPARE(reports_f, 1);
    QCOMPARE(text_d, last_c.outputs[0].text);
    QCOMPARE(ids_d, last_c.outputs[0].token_ids);
    QCOMPARE(int(ids_d.size()), 80);
  }

  void seededSamplingIsReproducible() {
    LLM llm(testutil::storiesConfig());
    SamplingParams p;
    p.temperature = 1.0f;
    p.max_tokens = 40;
    p.seed = 7;
    const auto a = llm.generate({"The cat sat"}, p)[0].outputs[0].token_ids;
    const auto b = llm.generate({"The cat sat"}, p)[0].outputs[0].token_ids;
    QCOMPARE(a, b);
    p.seed = 8;
    const auto c = llm.generate({"The cat sat"}, p)[0].outputs[0].token_ids;
    QVERIFY(a != c);
  }

  // Prompt + max_tokens beyond max_model_len is refused up front (no silent truncation).
  void maxModelLenIsCheckedAtAdd() {
    EngineConfig cfg = testutil::storiesConfig();
    cfg.max_model_len = 32;
    LLMEngine engine(cfg);
    const int prompt_len = int(engine.tokenizer().encode("Once upon a time", true).size());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.add_request("a", "Once upon a time", testutil::greedy(500)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             engine.add_request("a", "Once upon a time", testutil::greedy(32 - prompt_len + 1)));
    engine.add_request("b", "Once upon a time", testutil::greedy(32 - prompt_len));
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("b").prompt_token_ids.size() + done.at("b").outputs[0].token_ids.size(), size_t(32));
  }
};

QTEST_GUILESS_MAIN(TestBatching)
#include "test_batching.moc"
