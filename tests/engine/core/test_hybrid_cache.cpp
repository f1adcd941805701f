// A hybrid model's recurrent state in the engine (Qwen3.5's Gated DeltaNet layers, on
// ../shared/models/arch/qwen35-tiny.gguf): the same ids and the same logits bit for bit whether
// a prompt is prefilled whole or in chunks of any size, alone or batched; a prompt that extends an
// earlier one resumes from the state checkpoint at every block boundary and computes only what
// follows; under preemption, with few state slots (checkpoints evicted), with n > 1 (forked
// states) and after reset_prefix_cache. References: the same prompt alone on a fresh engine with
// prefix caching off and the whole prompt in one step (itself checked against ik_llama.cpp's
// golden in test_arch_golden).
#include <QTest>

#include <cstring>

#include "arch_golden.h"
#include "engine/entrypoints/openai/metrics.h"
#include "engine/llm_engine.h"
#include "engine/text/chat_template.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {

const QString kModel = "qwen35-tiny.gguf";

EngineConfig config() {
  EngineConfig c;
  c.model = archtest::archPath(kModel).toStdString();
  c.max_model_len = 160;
  c.num_threads = 2;
  c.kv_cache_dtype = KvCacheDType::kFloat32;
  return c;
}

SamplingParams greedyLogprobs(int max_tokens) {
  SamplingParams p = testutil::greedy(max_tokens);
  p.ignore_eos = true;
  p.logprobs = 5;
  return p;
}

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Ids and every logprob, bit for bit.
bool identical(const CompletionOutput& got, const CompletionOutput& want, QString* why) {
  if (got.token_ids != want.token_ids) {
    *why = "token ids differ";
    return false;
  }
  if (!got.logprobs || !want.logprobs || got.logprobs->size() != want.logprobs->size()) {
    *why = "logprobs missing";
    return false;
  }
  for (std::size_t i = 0; i < got.logprobs->size(); ++i) {
    const auto &g = (*got.logprobs)[i], &w = (*want.logprobs)[i];
    if (g.size() != w.size()) return *why = "logprob sizes differ", false;
    for (auto gi = g.begin(), wi = w.begin(); gi != g.end(); ++gi, ++wi)
      if (gi->first != wi->first || !sameBits(gi->second.logprob, wi->second.logprob)) {
        *why = QString("token %1: logprob of id %2 %3 vs %4")
                   .arg(i)
                   .arg(gi->first)
                   .arg(double(gi->second.logprob), 0, 'g', 9)
                   .arg(double(wi->second.logprob), 0, 'g', 9);
        return false;
      }
  }
  return true;
}

// The prompt alone, whole, caching off.
CompletionOutput reference(const std::vector<int>& ids, int max_tokens) {
  EngineConfig c = config();
  c.enable_prefix_caching = false;
  LLMEngine engine(c);
  engine.add_request("ref", ids, greedyLogprobs(max_tokens));
  return testutil::runToCompletion(engine).at("ref").outputs.at(0);
}

std::vector<int> longPrompt() {
  archtest::Golden g;
  QString why;
  if (!archtest::loadGolden(kModel, g, &why)) return {};
  return g.prompts.at(2).prompt_ids;  // "long": 45 tokens
}

}  // namespace

class TestHybridCache : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(archtest::archPath(kModel)); }

  // Prefill whole, in chunks of every size from 1 to 17 and 45, alone and batched with two other
  // prompts: ids and logprobs bitwise the reference's.
  void chunkedPrefillBitwise() {
    const std::vector<int> ids = longPrompt();
    QCOMPARE(int(ids.size()), 45);
    const CompletionOutput want = reference(ids, 12);
    const std::vector<int> other1(ids.begin() + 3, ids.begin() + 30), other2(ids.rbegin(), ids.rbegin() + 20);
    const CompletionOutput want1 = reference(other1, 12), want2 = reference(other2, 12);
    for (int chunk : {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 45}) {
      for (bool batched : {false, true}) {
        EngineConfig c = config();
        c.long_prefill_token_threshold = chunk;
        c.max_num_batched_tokens = std::max(chunk * 3, 4);
        LLMEngine engine(c);
        engine.add_request("a", ids, greedyLogprobs(12));
        if (batched) {
          engine.add_request("b", other1, greedyLogprobs(12));
          engine.add_request("c", other2, greedyLogprobs(12));
        }
        const auto done = testutil::runToCompletion(engine);
        QString why;
        QVERIFY2(identical(done.at("a").outputs.at(0), want, &why),
                 qPrintable(QString("chunk %1%2: %3").arg(chunk).arg(batched ? " batched" : "").arg(why)));
        if (batched) {
          QVERIFY2(identical(done.at("b").outputs.at(0), want1, &why), qPrintable(why));
          QVERIFY2(identical(done.at("c").outputs.at(0), want2, &why), qPrintable(why));
        }
      }
    }
  }

  // For every prefix length m of the long prompt: a request with the first m tokens registers
  // the checkpoint at its last block boundary; a second request extending it resumes there
  // (num_cached_tokens says so) and gives the reference's ids and logprobs bitwise.
  void resumesFromEveryBoundary_data() {
    QTest::addColumn<int>("block_size");
    for (int bs : {1, 2, 3, 4, 16}) QTest::newRow(qPrintable(QString("block %1").arg(bs))) << bs;
  }
  void resumesFromEveryBoundary() {
    QFETCH(int, block_size);
    const std::vector<int> ids = longPrompt();
    EngineConfig c = config();
    c.block_size = block_size;
    c.max_num_batched_tokens = 7;  // prefills in chunks that straddle the boundaries
    LLMEngine engine(c);
    for (int m = 2; m + 4 <= int(ids.size()); m += (block_size == 1 ? 5 : 3)) {
      const std::vector<int> first(ids.begin(), ids.begin() + m), second(ids.begin(), ids.begin() + m + 4);
      engine.add_request("first" + std::to_string(m), first, greedyLogprobs(1));
      testutil::runToCompletion(engine);
      engine.add_request("second" + std::to_string(m), second, greedyLogprobs(6));
      const RequestOutput out = testutil::runToCompletion(engine).at("second" + std::to_string(m));
      // The deepest checkpoint: the first request's prompt end — its last boundary before the
      // prompt's last token (what a regenerate of it can use too; it computed only its prompt) —
      // unless an earlier request left a deeper one.
      const int boundary = (m - 1) / block_size * block_size;
      QVERIFY2(
          out.metrics.num_cached_tokens >= boundary,
          qPrintable(
              QString("m %1: resumed at %2, expected >= %3").arg(m).arg(out.metrics.num_cached_tokens).arg(boundary)));
      QVERIFY(out.metrics.num_cached_tokens % block_size == 0 && out.metrics.num_cached_tokens < int(second.size()));
      QString why;
      QVERIFY2(identical(out.outputs.at(0), reference(second, 6), &why),
               qPrintable(QString("m %1, resumed at %2: %3").arg(m).arg(out.metrics.num_cached_tokens).arg(why)));
    }
    const EngineStats s = engine.stats();
    QVERIFY(s.num_state_checkpoints > 0);
    QVERIFY(s.prefix_cache_hits > 0);
    QCOMPARE(s.num_state_slots_held, 0);  // nothing runs
    // /metrics reports the slots by use.
    const std::string m = openai::ServerMetrics("q").render(s);
    QVERIFY2(m.find("pagedchat:recurrent_state_slots{model_name=\"q\",use=\"checkpoint\"} " +
                    std::to_string(s.num_state_checkpoints) + "\n") != std::string::npos,
             m.c_str());
    QVERIFY(m.find("use=\"free\"} " + std::to_string(s.num_state_slots - s.num_state_checkpoints) + "\n") !=
            std::string::npos);
    QVERIFY(engine.reset_prefix_cache());
    QCOMPARE(engine.stats().num_state_checkpoints, 0);
  }

  // A chat's second turn (prompt = first prompt + reply + more) computes only the new tokens
  // past the last block boundary of the first turn, and matches the reference. A first prompt
  // ending exactly on a boundary (32) whose reply crosses none: the prompt step checkpointed both
  // 16 (for a regenerate) and 32 (for this).
  void secondTurnComputesOnlyNewTokens_data() {
    QTest::addColumn<int>("len");
    QTest::addColumn<int>("cached");
    QTest::newRow("45 + 9 computed") << 45 << (45 + 9) / 16 * 16;
    QTest::newRow("32 + 9 computed") << 32 << 32;
  }
  void secondTurnComputesOnlyNewTokens() {
    QFETCH(int, len);
    QFETCH(int, cached);
    const std::vector<int> all = longPrompt();
    const std::vector<int> ids(all.begin(), all.begin() + len);
    EngineConfig c = config();
    LLMEngine engine(c);
    engine.add_request("turn1", ids, greedyLogprobs(10));
    const RequestOutput t1 = testutil::runToCompletion(engine).at("turn1");
    std::vector<int> turn2 = ids;
    turn2.insert(turn2.end(), t1.outputs[0].token_ids.begin(), t1.outputs[0].token_ids.end());
    turn2.insert(turn2.end(), ids.begin(), ids.begin() + 7);
    engine.add_request("turn2", turn2, greedyLogprobs(6));
    const RequestOutput t2 = testutil::runToCompletion(engine).at("turn2");
    QCOMPARE(t2.metrics.num_cached_tokens, cached);
    QString why;
    QVERIFY2(identical(t2.outputs.at(0), reference(turn2, 6), &why), qPrintable(why));
  }

  // A chat turn's next prompt repeats only its stable prefix (the conversation without the
  // generation prompt; the reply is re-rendered in place of "<think>\n"): with the hint, the
  // prompt's step checkpoints the last boundary inside it, and the next turn resumes there; with
  // none, the prompt-end checkpoint lies past where the next turn diverges, and it starts over.
  void stablePrefixHint_data() {
    QTest::addColumn<int>("chunk");
    QTest::newRow("whole prompt in one step") << 160;
    QTest::newRow("chunks of 7") << 7;
  }
  void stablePrefixHint() {
    QFETCH(int, chunk);
    const std::vector<int> ids = longPrompt();  // 45 tokens: "stable" = the first 37
    const int stable = 37;
    std::vector<int> next(ids.begin(), ids.begin() + stable);
    next.insert(next.end(), ids.rbegin(), ids.rbegin() + 12);  // diverges at 37 (the re-rendered reply)
    QVERIFY(next[std::size_t(stable)] != ids[std::size_t(stable)]);
    for (const int hint : {stable, 0}) {
      EngineConfig c = config();
      c.block_size = 8;
      c.max_num_batched_tokens = chunk;
      LLMEngine engine(c);
      RequestOptions o;
      o.stable_prefix_tokens = hint;
      engine.add_request("turn1", ids, greedyLogprobs(5), o);
      testutil::runToCompletion(engine);
      engine.add_request("turn2", next, greedyLogprobs(6));
      const RequestOutput t2 = testutil::runToCompletion(engine).at("turn2");
      // With the hint: the boundary 32 inside 37. Without: the prompt's checkpoint is at 40
      // (past 37) and the finish's at 48, so nothing resumes (chunks of 7 also checkpoint 8..32
      // on the way but register only the prompt end's).
      QCOMPARE(t2.metrics.num_cached_tokens, hint ? 32 : 0);
      QString why;
      QVERIFY2(identical(t2.outputs.at(0), reference(next, 6), &why), qPrintable(why));
      // The regenerate of turn 1 resumes from the prompt's last boundary (40): in one step, a
      // second checkpoint beside the stable boundary's; in chunks, kept at the prompt's end even
      // though its last chunk (42..45) crossed no boundary.
      engine.add_request("again", ids, greedyLogprobs(5));
      const RequestOutput again = testutil::runToCompletion(engine).at("again");
      QCOMPARE(again.metrics.num_cached_tokens, 40);
      QVERIFY2(identical(again.outputs.at(0), reference(ids, 5), &why), qPrintable(why));
    }
  }

  // A chat with Qwen3.5's own template (the GGUF's): each turn's prompt ends in the generation
  // prompt "<|im_start|>assistant\n<think>\n", and the next turn renders the reply without its
  // reasoning there. fit_chat's stable prefix is exactly what the next turn repeats (through
  // "<|im_start|>assistant\n"); with it as the hint, every turn resumes from the last block
  // boundary inside it.
  void chatTurnsWithQwen35Template() {
    EngineConfig c = config();
    c.max_model_len = 512;
    c.block_size = 4;
    LLMEngine engine(c);
    const ChatTemplate tmpl = resolve_chat_template("auto", engine.chat_template());
    ChatEncodeOptions enc = chat_encode_options(engine.tokenizer(), engine.model_config().add_bos,
                                                engine.model_config().bos_id);
    enc.find_stable_prefix = true;
    std::vector<ChatMessage> messages = {{"system", "You are terse."}};
    const std::vector<std::string> users = {"What is 2 + 2?", "And times 3?", "Say it in Korean: 열둘.",
                                            "Thanks. One more: 5 - 1?"};
    ChatPrompt previous;
    for (std::size_t turn = 0; turn < users.size(); ++turn) {
      messages.push_back({"user", users[turn]});
      const ChatPrompt prompt = fit_chat(engine.tokenizer(), tmpl, messages, enc, c.max_model_len, 8);
      QVERIFY(prompt.stable_prefix_tokens > 0 && prompt.stable_prefix_tokens < int(prompt.token_ids.size()));
      if (turn > 0) {
        const auto& a = previous.token_ids;
        const int common = int(
            std::mismatch(a.begin(), a.end(), prompt.token_ids.begin(), prompt.token_ids.end()).first - a.begin());
        QCOMPARE(previous.stable_prefix_tokens, common);  // all it repeats, and no more
      }
      RequestOptions o;
      o.stable_prefix_tokens = prompt.stable_prefix_tokens;
      const std::string id = "turn" + std::to_string(turn);
      engine.add_request(id, prompt.token_ids, greedyLogprobs(8), o);
      const RequestOutput out = testutil::runToCompletion(engine).at(id);
      if (turn > 0) QCOMPARE(out.metrics.num_cached_tokens, previous.stable_prefix_tokens / 4 * 4);
      // The reply as the app stores it: the reasoning block, then the answer.
      messages.push_back({"assistant", "<think>\nCounting.\n</think>\n\nThe answer is " + std::to_string(turn) + "."});
      previous = prompt;
    }
  }

  // A KV cache and a state pool too small for the three requests at once: preemptions (each
  // resumes from its own checkpoint or from zero), checkpoints evicted; outputs still the
  // references'.
  void underPressure() {
    const std::vector<int> ids = longPrompt();
    const std::vector<int> b(ids.begin() + 5, ids.end()), cc(ids.begin(), ids.begin() + 33);
    EngineConfig c = config();
    c.block_size = 4;
    c.max_model_len = 64;
    c.num_blocks = 20;
    c.max_num_batched_tokens = 9;
    c.num_state_slots = 6;
    LLMEngine engine(c);
    QCOMPARE(engine.engine_config().max_num_seqs, 3);
    for (int round = 0; round < 2; ++round) {
      engine.add_request("a" + std::to_string(round), ids, greedyLogprobs(16));
      engine.add_request("b" + std::to_string(round), b, greedyLogprobs(16));
      engine.add_request("c" + std::to_string(round), cc, greedyLogprobs(16));
      const auto done = testutil::runToCompletion(engine);
      QString why;
      QVERIFY2(identical(done.at("a" + std::to_string(round)).outputs.at(0), reference(ids, 16), &why),
               qPrintable(why));
      QVERIFY2(identical(done.at("b" + std::to_string(round)).outputs.at(0), reference(b, 16), &why), qPrintable(why));
      QVERIFY2(identical(done.at("c" + std::to_string(round)).outputs.at(0), reference(cc, 16), &why), qPrintable(why));
    }
    QVERIFY(engine.stats().num_preemptions > 0);
    QCOMPARE(engine.stats().num_state_slots_held, 0);
  }

  // The same prompt again (regenerate), for prompt lengths on and off a block boundary: it
  // resumes from the prompt's checkpoint, one block short of the end at most, and matches.
  void regenerateResumes() {
    const std::vector<int> ids = longPrompt();
    EngineConfig c = config();
    c.block_size = 4;
    LLMEngine engine(c);
    for (int len : {44, 45, 42}) {
      const std::vector<int> p(ids.begin(), ids.begin() + len);
      engine.add_request("first", p, greedyLogprobs(3));
      testutil::runToCompletion(engine);
      engine.add_request("again", p, greedyLogprobs(6));
      const RequestOutput out = testutil::runToCompletion(engine).at("again");
      QCOMPARE(out.metrics.num_cached_tokens, (len - 1) / 4 * 4);
      QString why;
      QVERIFY2(identical(out.outputs.at(0), reference(p, 6), &why), qPrintable(why));
    }
  }

  // "Send to all": the same prompt to three requests before one step; the later ones find the
  // first's KV blocks registered but no checkpoint yet, so they compute on their own; all three
  // equal the reference.
  void sameStepSameprompt() {
    const std::vector<int> ids = longPrompt();
    EngineConfig c = config();
    c.max_num_batched_tokens = 160;
    LLMEngine engine(c);
    for (const char* id : {"p1", "p2", "p3"}) engine.add_request(id, ids, greedyLogprobs(8));
    const auto done = testutil::runToCompletion(engine);
    const CompletionOutput want = reference(ids, 8);
    for (const char* id : {"p1", "p2", "p3"}) {
      QString why;
      QVERIFY2(identical(done.at(id).outputs.at(0), want, &why), qPrintable(QString(id) + ": " + why));
    }
  }

  // More completions than slots free at once: an n > 1 request reserves its completions' slots
  // at admission (or waits), so forks never fail; n above the slot count is refused up front.
  void manyForksFewSlots() {
    const std::vector<int> ids = longPrompt();
    EngineConfig c = config();
    c.num_state_slots = 6;
    LLMEngine engine(c);
    QCOMPARE(engine.engine_config().max_num_seqs, 3);
    SamplingParams p = greedyLogprobs(4);
    p.n = 4;
    for (int i = 0; i < 4; ++i)
      engine.add_request("fork" + std::to_string(i), std::vector<int>(ids.begin() + i, ids.end()), p);
    const auto done = testutil::runToCompletion(engine);
    for (int i = 0; i < 4; ++i) {
      const RequestOutput& out = done.at("fork" + std::to_string(i));
      QCOMPARE(int(out.outputs.size()), 4);
      const CompletionOutput want = reference(std::vector<int>(ids.begin() + i, ids.end()), 4);
      for (const CompletionOutput& o : out.outputs) {
        QString why;
        QVERIFY2(identical(o, want, &why), qPrintable(why));
      }
    }
    QCOMPARE(engine.stats().num_state_slots_held, 0);
    p.n = 7;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.add_request("too_many", ids, p));
  }

  // n = 3 greedy completions fork the prompt's state: each equals the reference.
  void forkedStates() {
    const std::vector<int> ids = longPrompt();
    LLMEngine engine(config());
    SamplingParams p = greedyLogprobs(8);
    p.n = 3;
    engine.add_request("n3", ids, p);
    const RequestOutput out = testutil::runToCompletion(engine).at("n3");
    QCOMPARE(int(out.outputs.size()), 3);
    const CompletionOutput want = reference(ids, 8);
    for (const CompletionOutput& o : out.outputs) {
      QString why;
      QVERIFY2(identical(o, want, &why), qPrintable(why));
    }
  }
};

QTEST_GUILESS_MAIN(TestHybridCache)
#include "test_hybrid_cache.moc"
