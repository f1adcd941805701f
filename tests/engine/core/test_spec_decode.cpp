// Speculative decoding (engine/spec_decode/): --speculative-config parsing and its errors, the
// n-gram proposer, and exactness: outputs with drafts equal those without, token for token —
// greedy and seeded sampling, every attention-only family of ../shared/models/arch, batched with
// other requests, with chunked prefill, preemption and prefix-cache hits, n > 1, stop strings and
// logprobs — while drafts are really proposed and accepted (the counters say so). The oracle
// method (the target's own continuation) accepts every draft. Hybrid models are refused.
#include <QTest>

#include <random>
#include <set>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine/spec_decode/ngram_proposer.h"
#include "engine/spec_decode/speculative_config.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {

EngineConfig withSpec(EngineConfig c, const std::string& json) {
  c.speculative_config = parse_speculative_config(json);
  return c;
}

const char* kNgram =
    "{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4, \"prompt_lookup_min\": 1}";

struct Req {
  std::string id;
  std::vector<int> ids;  // token prompt (used when text is empty)
  std::string text;      // text prompt
  SamplingParams params;
  int add_at_step = 0;  // joins the batch before this step
  RequestOptions options{};
};

struct Result {
  std::map<std::string, RequestOutput> done;
  EngineStats stats;
};

Result run(const EngineConfig& cfg, const std::vector<Req>& reqs) {
  LLMEngine engine(cfg);
  Result r;
  r.done = testutil::runToCompletion(engine, [&](int step) {
    for (const Req& q : reqs)
      if (q.add_at_step == step) {
        if (q.text.empty() && !q.ids.empty())
          engine.add_request(q.id, q.ids, q.params, q.options);
        else
          engine.add_request(q.id, q.text, q.params, q.options);
      }
  });
  r.stats = engine.stats();
  return r;
}

// A prompt of random ids whose middle repeats (something for prompt lookup to find).
std::vector<int> repetitivePrompt(int vocab, int len, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(3, vocab - 1);
  std::vector<int> seg(12);
  for (int& t : seg) t = pick(rng);
  std::vector<int> out;
  while (int(out.size()) < len) {
    out.push_back(pick(rng));
    out.insert(out.end(), seg.begin(), seg.end());
  }
  out.resize(std::size_t(len));
  return out;
}

void compareOutputs(const Result& plain, const Result& spec) {
  QCOMPARE(spec.done.size(), plain.done.size());
  for (const auto& [id, out] : plain.done) {
    QVERIFY2(spec.done.count(id), id.c_str());
    const CompletionOutput& a = out.outputs.at(0);
    QCOMPARE(spec.done.at(id).outputs.size(), out.outputs.size());
    for (std::size_t i = 0; i < out.outputs.size(); ++i) {
      const CompletionOutput& x = out.outputs[i];
      const CompletionOutput& y = spec.done.at(id).outputs[i];
      if (x.token_ids != y.token_ids) {
        std::size_t k = 0;
        while (k < x.token_ids.size() && k < y.token_ids.size() && x.token_ids[k] == y.token_ids[k]) ++k;
        QFAIL(qPrintable(QString("%1#%2: outputs differ at token %3 of %4/%5")
                             .arg(QString::fromStdString(id))
                             .arg(i)
                             .arg(k)
                             .arg(x.token_ids.size())
                             .arg(y.token_ids.size())));
      }
      QCOMPARE(y.text, x.text);
      QVERIFY(y.finish_reason == x.finish_reason);
    }
    (void)a;
  }
}

}  // namespace

class TestSpecDecode : public QObject {
  Q_OBJECT

 private slots:
  void configParsing() {
    const SpeculativeConfig off = parse_speculative_config("");
    QVERIFY(!off.enabled());
    QVERIFY(!parse_speculative_config("{}").enabled());
    const SpeculativeConfig c = parse_speculative_config(kNgram);
    QVERIFY(c.method == SpeculativeConfig::Method::kNgram);
    QCOMPARE(c.num_speculative_tokens, 4);
    QCOMPARE(c.prompt_lookup_max, 4);
    QCOMPARE(c.prompt_lookup_min, 1);
    // One bound alone keeps min <= max.
    const SpeculativeConfig m = parse_speculative_config(
        "{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":1}");
    QCOMPARE(m.prompt_lookup_max, 1);
    QCOMPARE(m.prompt_lookup_min, 1);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":0}", "num_speculative_tokens"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":17}", "num_speculative_tokens"},
        {"{\"method\":\"ngram\"}", "num_speculative_tokens"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":\"4\"}", "num_speculative_tokens"},
        {"{\"method\":\"mtp\",\"num_speculative_tokens\":2}", "mtp"},
        {"{\"method\":\"draft_model\",\"num_speculative_tokens\":2}", "model"},
        {"{\"method\":\"draft_model\",\"num_speculative_tokens\":2,\"model\":3}", "model"},
        {"{\"method\":\"magic\",\"num_speculative_tokens\":2}", "magic"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":2,\"model\":\"x\"}", "model"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":2,\"prompt_lookup_min\":0}", "prompt_lookup_min"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":2,\"prompt_lookup_min\":5,\"prompt_lookup_max\":3}",
         "prompt_lookup_max"},
        {"{\"num_speculative_tokens\":2}", "method"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":null}", "required"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"prompt_lookup_max\":-3}", "prompt_lookup_max"},
        {"{\"method\":\"draft_model\",\"model\":\"x\",\"num_speculative_tokens\":4,\"prompt_lookup_max\":3}", "ngram"},
        {"[1,2]", "JSON object"},
        {"{\"method\":", "JSON"},
    };
    for (const auto& [json, names] : bad) {
      try {
        parse_speculative_config(json);
        QFAIL(qPrintable("accepted: " + QString::fromStdString(json)));
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        QVERIFY2(what.find("--speculative-config") != std::string::npos, e.what());
        QVERIFY2(what.find(names) != std::string::npos, e.what());
      }
    }
    // The engine's config check runs it too.
    EngineConfig cfg = testutil::storiesConfig();
    cfg.speculative_config.method = SpeculativeConfig::Method::kNgram;
    cfg.speculative_config.num_speculative_tokens = 99;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, LLMEngine{cfg});
  }

  void ngramProposals() {
    std::vector<int> out;
    // The latest occurrence of the longest suffix with k tokens after it.
    const std::vector<int> ctx = {1, 2, 3, 9, 9, 1, 2, 3, 7, 8, 5, 1, 2, 3};
    QCOMPARE(propose_ngram(ctx, 2, 1, 3, out), 2);
    QCOMPARE(out, (std::vector<int>{7, 8}));
    // Four wanted: the latest match has 6 after it ({7, 8, 5, 1}).
    QCOMPARE(propose_ngram(ctx, 4, 1, 3, out), 4);
    QCOMPARE(out, (std::vector<int>{7, 8, 5, 1}));
    // A longer n wins over a later shorter match: suffix {5, 4} matched at 0, not {4} at 3.
    const std::vector<int> ctx2 = {5, 4, 6, 4, 0, 5, 4};
    QCOMPARE(propose_ngram(ctx2, 1, 1, 2, out), 1);
    QCOMPARE(out, (std::vector<int>{6}));
    // Only short continuations: the longest one, latest first.
    const std::vector<int> ctx3 = {1, 2, 1, 2};
    QCOMPARE(propose_ngram(ctx3, 5, 2, 2, out), 2);
    QCOMPARE(out, (std::vector<int>{1, 2}));
    // Nothing matches / too short / k 0.
    QCOMPARE(propose_ngram(std::vector<int>{1, 2, 3, 4}, 3, 1, 3, out), 0);
    QVERIFY(out.empty());
    QCOMPARE(propose_ngram(std::vector<int>{1}, 3, 1, 3, out), 0);
    QCOMPARE(propose_ngram(ctx, 0, 1, 3, out), 0);
    // min_n above the matches: nothing.
    QCOMPARE(propose_ngram(ctx2, 3, 3, 3, out), 0);
  }

  // Greedy ids with drafts equal those without on every attention-only family.
  void greedyIdentical_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("stories260K") << QString();
    for (const char* m :
         {"llama3-tiny.gguf", "qwen2-tiny.gguf", "qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "gemma3-tiny.gguf",
          "gemma4-tiny.gguf", "gptoss-tiny.gguf", "phi4mini-tiny.gguf", "smollm3-tiny.gguf"})
      QTest::newRow(m) << QString(m);
    // Our own tiny files with outside goldens (tests/data): EXAONE 4 and Gemma 4's MoE.
    QTest::newRow("exaone4-tiny.gguf") << QString(EXAONE4_DIR "/exaone4-tiny.gguf");
    QTest::newRow("gemma4moe-tiny.gguf") << QString(GEMMA4MOE_DIR "/gemma4moe-tiny.gguf");
  }
  void greedyIdentical() {
    QFETCH(QString, model);
    EngineConfig cfg = testutil::storiesConfig();
    std::vector<Req> reqs;
    if (model.isEmpty()) {
      reqs.push_back({"a",
                      {},
                      "Once upon a time, there was a little girl named Lily. She liked to play with her ball.",
                      testutil::greedy(120)});
      reqs.push_back({"b", {}, "The cat sat on the mat. The cat sat on the mat. The cat", testutil::greedy(80)});
    } else {
      const QString path = archtest::archPath(model);
      REQUIRE_MODEL_FILE(path);
      cfg.model = path.toStdString();
      cfg.max_model_len = 512;
      const int vocab = LLMEngine(cfg).model_config().vocab_size;
      for (int i = 0; i < 2; ++i) {
        SamplingParams p = testutil::greedy(64);
        p.ignore_eos = true;
        // Past gpt-oss's 128-token window, to run the sliding groups with drafts too.
        reqs.push_back({"r" + std::to_string(i), repetitivePrompt(vocab, 150 + 9 * i, 7 + uint32_t(i)), {}, p});
      }
    }
    const Result plain = run(cfg, reqs);
    // N-gram drafts: random weights rarely repeat their prompt, so most drafts are rejected there
    // (the rollback path); stories260K repeats and accepts.
    const Result spec = run(withSpec(cfg, kNgram), reqs);
    compareOutputs(plain, spec);
    QVERIFY2(spec.stats.spec_num_draft_tokens > 0, "no draft was proposed");
    QVERIFY(spec.stats.spec_num_accepted_tokens <= spec.stats.spec_num_draft_tokens);
    if (model.isEmpty()) QVERIFY2(spec.stats.spec_num_accepted_tokens > 0, "no draft was accepted");
    long long per_pos = 0;
    for (long long n : spec.stats.spec_accepted_per_pos) per_pos += n;
    QCOMPARE(per_pos, spec.stats.spec_num_accepted_tokens);
    // Oracle drafts (the plain run's own continuation): every draft accepted, so every verify row
    // is used, and the output is still the plain one bit for bit (the verify chunk's logits are
    // the decode step's).
    std::vector<Req> oracle = reqs;
    for (Req& q : oracle) q.options.oracle_token_ids = plain.done.at(q.id).outputs[0].token_ids;
    const Result exact = run(withSpec(cfg, "{\"method\": \"oracle\", \"num_speculative_tokens\": 5}"), oracle);
    compareOutputs(plain, exact);
    QVERIFY(exact.stats.spec_num_draft_tokens > 0);
    QCOMPARE(exact.stats.spec_num_accepted_tokens, exact.stats.spec_num_draft_tokens);
    QVERIFY2(
        exact.stats.num_steps * 3 < plain.stats.num_steps,
        qPrintable(QString("%1 steps with drafts, %2 without").arg(exact.stats.num_steps).arg(plain.stats.num_steps)));
  }

  // Requests joining mid-flight, chunked prefill (8-token budget, 5-token chunks) and a cache so
  // small that requests are preempted: each output equals its plain run, drafts or not.
  void batchedChunkedPreempted() {
    EngineConfig cfg = testutil::storiesConfig();
    cfg.max_model_len = 128;
    cfg.num_blocks = 12;
    cfg.max_num_batched_tokens = 12;
    cfg.long_prefill_token_threshold = 5;
    std::vector<Req> reqs;
    const char* prompts[] = {"Once upon a time, there was a big dog. The dog was big. The dog",
                             "Lily and Tom went to the park. Lily and Tom", "The sun was shining and the birds",
                             "One day, a little boy named Tim went to the park. Tim"};
    for (int i = 0; i < 4; ++i) {
      SamplingParams p = testutil::greedy(60 + 10 * i);
      if (i == 2) {
        p.temperature = 0.8f;
        p.top_p = 0.9f;
        p.seed = 77;
      }
      reqs.push_back({"q" + std::to_string(i), {}, prompts[i], p, i * 3});
    }
    const Result plain = run(cfg, reqs);
    const Result spec = run(withSpec(cfg, kNgram), reqs);
    compareOutputs(plain, spec);
    QVERIFY2(spec.stats.num_preemptions > 0, "the tiny cache should have forced preemption");
    QVERIFY(spec.stats.spec_num_accepted_tokens > 0);
  }

  // The same prompt again takes prefix-cache hits (blocks filled by verified tokens included).
  void prefixCacheHits() {
    const EngineConfig cfg = withSpec(testutil::storiesConfig(), kNgram);
    const std::string prompt = "Once upon a time, there was a little girl named Lily. Lily liked to play. Lily";
    const Result plain = run(testutil::storiesConfig(), {{"x", {}, prompt, testutil::greedy(100)}});
    LLMEngine engine(cfg);
    std::vector<int> first_ids;
    for (int turn = 0; turn < 2; ++turn) {
      // Turn 2 re-sends turn 1's prompt and answer: all of it is cached but the last partial block.
      const std::string id = "t" + std::to_string(turn);
      engine.add_request(id, prompt, testutil::greedy(100));
      auto done = testutil::runToCompletion(engine);
      QCOMPARE(done.at(id).outputs[0].token_ids, plain.done.at("x").outputs[0].token_ids);
      if (turn == 1) QVERIFY(done.at(id).metrics.num_cached_tokens > 0);
    }
    QVERIFY(engine.stats().prefix_cache_hits > 0);
    QVERIFY(engine.stats().spec_num_accepted_tokens > 0);
  }

  // Seeded sampling keeps its tokens: one draw of the request's RNG per token, from the target's
  // logits, whether the token came through a draft or not; n > 1 completions too.
  void seededSamplingIdentical() {
    EngineConfig cfg = testutil::storiesConfig();
    std::vector<Req> reqs;
    for (int s = 0; s < 12; ++s) {
      SamplingParams p = testutil::greedy(60);
      p.temperature = s % 2 ? 0.7f : 1.0f;
      p.top_k = s % 3 ? 0 : 20;
      p.min_p = s % 4 == 1 ? 0.05f : 0.0f;
      p.seed = 1000 + uint64_t(s);
      if (s == 5) p.n = 3;
      reqs.push_back({"s" + std::to_string(s), {}, "Tom had a red ball. Tom liked the red ball. Tom", p});
    }
    const Result plain = run(cfg, reqs);
    const Result spec = run(withSpec(cfg, kNgram), reqs);
    compareOutputs(plain, spec);
    QVERIFY(spec.stats.spec_num_accepted_tokens > 0);
    QVERIFY2(spec.stats.spec_num_accepted_tokens < spec.stats.spec_num_draft_tokens,
             "sampling at temperature 1 should reject some drafts");
  }

  // Stop strings, stop tokens, min_tokens and max_tokens cut inside a run of accepted drafts as
  // they cut without them; logprobs are the target's.
  void stopsAndLogprobs() {
    EngineConfig cfg = testutil::storiesConfig();
    std::vector<Req> reqs;
    SamplingParams stop = testutil::greedy(200);
    stop.stop = {"be careful"};
    reqs.push_back({"stop", {}, "Lily went to the park. Tom went to the park. Sue went to the", stop});
    SamplingParams maxed = testutil::greedy(7);
    reqs.push_back({"max", {}, "The cat sat on the mat. The cat sat on the mat. The cat", maxed});
    SamplingParams lp = testutil::greedy(40);
    lp.logprobs = 3;
    reqs.push_back({"lp", {}, "The cat sat on the mat. The cat sat on the mat. The cat", lp});
    SamplingParams mint = testutil::greedy(50);
    mint.min_tokens = 30;
    reqs.push_back({"min", {}, "The end. The end. The end.", mint});
    const Result plain = run(cfg, reqs);
    const Result spec = run(withSpec(cfg, kNgram), reqs);
    compareOutputs(plain, spec);
    QCOMPARE(int(spec.done.at("max").outputs[0].token_ids.size()), 7);
    QVERIFY(spec.done.at("stop").outputs[0].finish_reason == FinishReason::kStop);
    const auto& a = *plain.done.at("lp").outputs[0].logprobs;
    const auto& b = *spec.done.at("lp").outputs[0].logprobs;
    QCOMPARE(b.size(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(b[i].size(), a[i].size());
      for (const auto& [tok, l] : a[i]) {
        QVERIFY(b[i].count(tok));
        QVERIFY2(std::abs(b[i].at(tok).logprob - l.logprob) < 1e-4f, qPrintable(QString::number(i)));
      }
    }
    QVERIFY(spec.stats.spec_num_accepted_tokens > 0);
  }

  // The oracle proposes the plain run's continuation: every draft is accepted, and the run takes
  // about output / (1 + k) steps.
  void oracleAcceptsAll() {
    EngineConfig cfg = testutil::storiesConfig();
    SamplingParams p = testutil::greedy(64);
    p.temperature = 0.9f;
    p.seed = 5;
    p.ignore_eos = true;
    const Result plain = run(cfg, {{"o", {}, "Once upon a time", p}});
    Req q{"o", {}, "Once upon a time", p};
    q.options.oracle_token_ids = plain.done.at("o").outputs[0].token_ids;
    const Result spec = run(withSpec(cfg, "{\"method\": \"oracle\", \"num_speculative_tokens\": 4}"), {q});
    compareOutputs(plain, spec);
    QVERIFY(spec.stats.spec_num_draft_tokens > 0);
    QCOMPARE(spec.stats.spec_num_accepted_tokens, spec.stats.spec_num_draft_tokens);
    QVERIFY2(spec.stats.num_steps <= 1 + 64 / 5 + 2, qPrintable(QString::number(spec.stats.num_steps)));
    QCOMPARE(spec.done.at("o").metrics.num_spec_accepted_tokens, int(spec.stats.spec_num_accepted_tokens));
  }

  // A draft model: the target itself (every greedy draft accepted) and a random model of the
  // same vocabulary (most rejected); outputs equal plain decoding's either way, greedy and seeded,
  // batched with chunked prefill and preemption (the draft's own KV cache then runs short too).
  void draftModel_data() {
    QTest::addColumn<QString>("draft");
    QTest::addColumn<bool>("same");
    QTest::newRow("itself") << testpaths::stories260K() << true;
    QTest::newRow("random, same vocabulary") << QString("random:stories260K,seed=7") << false;
  }
  void draftModel() {
    QFETCH(QString, draft);
    QFETCH(bool, same);
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    EngineConfig cfg = testutil::storiesConfig();
    cfg.max_model_len = 128;
    cfg.num_blocks = 14;
    cfg.max_num_batched_tokens = 16;
    cfg.long_prefill_token_threshold = 7;
    std::vector<Req> reqs;
    const char* prompts[] = {"Once upon a time, there was a big dog.", "Lily and Tom went to the park.",
                             "The sun was shining", "One day, a little boy named Tim"};
    for (int i = 0; i < 4; ++i) {
      SamplingParams p = testutil::greedy(50 + 10 * i);
      if (i % 2 == 1) {
        p.temperature = 0.9f;
        p.seed = 40 + uint64_t(i);
      }
      reqs.push_back({"d" + std::to_string(i), {}, prompts[i], p, i * 2});
    }
    const Result plain = run(cfg, reqs);
    const std::string json = "{\"method\": \"draft_model\", \"num_speculative_tokens\": 3, \"model\": \"" +
                             draft.toStdString() + "\"}";
    const Result spec = run(withSpec(cfg, json), reqs);
    compareOutputs(plain, spec);
    QVERIFY(spec.stats.spec_num_draft_tokens > 0);
    QVERIFY(plain.stats.num_preemptions > 0 || spec.stats.num_preemptions > 0);
    const double rate = double(spec.stats.spec_num_accepted_tokens) / double(spec.stats.spec_num_draft_tokens);
    if (same)
      QVERIFY2(rate > 0.6, qPrintable(QString::number(rate)));  // greedy all; sampled ones at the target's odds
    else
      QVERIFY2(rate < 0.5, qPrintable(QString::number(rate)));
  }

  // Sampling with a draft that differs from the target: over many seeds the outputs are plain
  // decoding's, token for token, so their distribution is the target's.
  void draftModelDistribution() {
    EngineConfig cfg = testutil::storiesConfig();
    std::vector<Req> reqs;
    for (int s = 0; s < 64; ++s) {
      SamplingParams p = testutil::greedy(12);
      p.temperature = 1.0f;
      p.seed = 9000 + uint64_t(s);
      reqs.push_back({"x" + std::to_string(s), {}, "Once upon a time", p});
    }
    const Result plain = run(cfg, reqs);
    const Result spec = run(withSpec(cfg,
                                     "{\"method\": \"draft_model\", \"num_speculative_tokens\": 4, \"model\": "
                                     "\"random:stories260K,seed=3\"}"),
                            reqs);
    compareOutputs(plain, spec);
    QVERIFY(spec.stats.spec_num_draft_tokens > 0);
    // Not one output repeated 64 times: the seeds do sample.
    std::set<std::vector<int>> distinct;
    for (const auto& [id, out] : spec.done) distinct.insert(out.outputs[0].token_ids);
    QVERIFY(distinct.size() > 32);
  }

  void draftModelRefused() {
    const QString other = archtest::archPath("llama3-tiny.gguf");
    REQUIRE_MODEL_FILE(other);
    const QString hybrid = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(hybrid);
    const std::vector<std::pair<QString, std::string>> cases = {
        {other, "vocabulary"}, {hybrid, "recurrent"}, {"/nonexistent/draft.gguf", "draft model"}};
    for (const auto& [path, why] : cases) {
      const std::string json = "{\"method\": \"draft_model\", \"num_speculative_tokens\": 3, \"model\": \"" +
                               path.toStdString() + "\"}";
      try {
        LLMEngine engine(withSpec(testutil::storiesConfig(), json));
        QFAIL(qPrintable("accepted the draft " + path));
      } catch (const std::exception& e) {  // invalid_argument, or runtime_error for a file that cannot be read
        QVERIFY2(std::string(e.what()).find("--speculative-config") != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).find(why) != std::string::npos, e.what());
      }
    }
  }

  // The same model as a GGUF file and a Hugging Face folder: their vocabularies list different
  // counts (the GGUF's padding entries) but are the same; as a draft it agrees with the target.
  void draftModelOtherFormat() {
    const QString gguf = archtest::archPath("qwen3-tiny.gguf");
    const QString hf = archtest::archPath("qwen3-tiny-hf");
    REQUIRE_MODEL_FILE(gguf);
    REQUIRE_MODEL_FILE(hf);
    EngineConfig cfg = testutil::storiesConfig();
    cfg.model = gguf.toStdString();
    cfg.max_model_len = 256;
    SamplingParams p = testutil::greedy(40);
    p.ignore_eos = true;
    const std::vector<Req> reqs = {{"q", {}, "a b c d e f", p}};
    const Result plain = run(cfg, reqs);
    const Result spec = run(withSpec(cfg, "{\"method\": \"draft_model\", \"num_speculative_tokens\": 4, \"model\": \"" +
                                              hf.toStdString() + "\"}"),
                            reqs);
    compareOutputs(plain, spec);
    QVERIFY(spec.stats.spec_num_draft_tokens > 0);
    QVERIFY(spec.stats.spec_num_accepted_tokens * 10 >= spec.stats.spec_num_draft_tokens * 9);
  }

  void hybridRefused() {
    const QString path = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(path);
    EngineConfig cfg = withSpec(testutil::storiesConfig(), kNgram);
    cfg.model = path.toStdString();
    try {
      LLMEngine engine(cfg);
      QFAIL("a hybrid model was accepted with speculative decoding");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("--speculative-config") != std::string::npos, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestSpecDecode)
#include "test_spec_decode.moc"
