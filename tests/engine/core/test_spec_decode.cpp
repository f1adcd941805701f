// Speculative decoding (engine/spec_decode/): --speculative-config parsing and its errors, the
// n-gram proposer, and exactness: outputs with drafts equal those without, token for token —
// greedy and seeded sampling, every attention-only family of ../shared/models/arch, batched with
// other requests, with chunked prefill, preemption and prefix-cache hits, n > 1, stop strings and
// logprobs — while drafts are really proposed and accepted (the counters say so). The oracle
// method (the target's own continuation) accepts every draft; a part-wrong one exercises the
// rollback after partly accepted drafts; accepted drafts' text is reported as spans. Hybrid
// models' turns and forks with drafts: test_spec_decode_hybrid.
#include <QTest>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine/spec_decode/batch_draft_budget.h"
#include "engine/spec_decode/ngram_proposer.h"
#include "engine/spec_decode/speculative_config.h"
#include "engine_test_utils.h"
#include "spec_decode_test_util.h"

using namespace pagedchat;

using namespace spectest;

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
    // MTP as vLLM spells it, and its per-family names.
    for (const char* name : {"mtp", "qwen3_next_mtp", "deepseek_mtp"}) {
      const SpeculativeConfig mtp = parse_speculative_config(std::string("{\"method\":\"") + name +
                                                             "\",\"num_speculative_tokens\":2}");
      QVERIFY(mtp.method == SpeculativeConfig::Method::kMtp);
      QCOMPARE(mtp.method_name(), std::string("mtp"));
    }
    // One bound alone keeps min <= max.
    const SpeculativeConfig m = parse_speculative_config(
        "{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":1}");
    QCOMPARE(m.prompt_lookup_max, 1);
    QCOMPARE(m.prompt_lookup_min, 1);
    QVERIFY(c.fit_to_batch);  // the default
    QVERIFY(!parse_speculative_config("{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"fit_to_batch\":false}")
                 .fit_to_batch);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"fit_to_batch\":1}", "fit_to_batch"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"fit_batch\":true}", "fit_batch"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":0}", "num_speculative_tokens"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":17}", "num_speculative_tokens"},
        {"{\"method\":\"ngram\"}", "num_speculative_tokens"},
        {"{\"method\":\"ngram\",\"num_speculative_tokens\":\"4\"}", "num_speculative_tokens"},
        {"{\"method\":\"eagle3\",\"num_speculative_tokens\":2}", "eagle3"},
        {"{\"method\":\"mtp\",\"num_speculative_tokens\":2,\"prompt_lookup_max\":3}", "ngram"},
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

  // The step cost fit: exact on linear data, not trusted before the token counts spread.
  void stepCostModel() {
    StepCostModel m;
    QVERIFY(!m.ready());
    for (int i = 0; i < 20; ++i) m.observe(16, 0.01 + 0.002 * 16);
    QVERIFY2(!m.ready(), "one token count says nothing about the slope");
    for (int i = 0; i < 40; ++i) {
      const int t = 1 + (i * 7) % 64;
      m.observe(t, 0.01 + 0.002 * t);
    }
    QVERIFY(m.ready());
    QVERIFY(std::abs(m.slope() - 0.002) < 1e-6);
    QVERIFY(std::abs(m.intercept() - 0.01) < 1e-5);
    StepCostModel flat;  // time independent of tokens: no slope, never "ready" (drafts are free)
    for (int i = 0; i < 40; ++i) flat.observe(1 + i % 9, 0.02);
    QVERIFY(!flat.ready());
  }

  // The batch-aware cut keeps, of all drafts, the set that maximises expected tokens per second
  // (checked by brute force over every choice of per-request prefixes), keeps everything where
  // verifying is free (b = 0), and nothing where the step is purely compute-bound (a = 0).
  void batchDraftBudget() {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<DraftCandidate> c(3);
      for (auto& x : c) x = {u(rng), int(rng() % 5)};
      const int known = 3 + int(rng() % 20), sampling = 3;
      const double a = u(rng) * 0.1, b = u(rng) * 0.01;
      const std::vector<int> keep = batch_draft_budget(c, known, sampling, a, b);
      auto rate = [&](const std::vector<int>& k) {
        double e = sampling, t = known;
        for (std::size_t i = 0; i < c.size(); ++i) {
          double p = 1;
          for (int j = 0; j < k[i]; ++j) e += (p *= c[i].acceptance);
          t += k[i];
        }
        return e / (a + b * t);
      };
      double best = 0;
      for (int x = 0; x <= c[0].num_drafts; ++x)
        for (int y = 0; y <= c[1].num_drafts; ++y)
          for (int z = 0; z <= c[2].num_drafts; ++z) best = std::max(best, rate({x, y, z}));
      for (std::size_t i = 0; i < c.size(); ++i) QVERIFY(keep[i] >= 0 && keep[i] <= c[i].num_drafts);
      QVERIFY2(rate(keep) >= best * (1 - 1e-12), qPrintable(QString("trial %1").arg(trial)));
    }
    const std::vector<DraftCandidate> batch(16, DraftCandidate{0.8, 4});
    for (int k : batch_draft_budget(batch, 16, 16, 0.05, 0.0)) QCOMPARE(k, 4);
    for (int k : batch_draft_budget(batch, 16, 16, 0.0, 0.001)) QCOMPARE(k, 0);
    // In between: a likelier request keeps at least as many drafts as a less likely one.
    std::vector<DraftCandidate> mixed = {{0.95, 6}, {0.6, 6}, {0.3, 6}};
    const std::vector<int> k = batch_draft_budget(mixed, 3, 3, 0.03, 0.002);
    QVERIFY(k[0] >= k[1] && k[1] >= k[2]);
    QVERIFY(k[0] > 0 && k[2] < 6);
  }

  // With the batch-aware cut on (the default), 12 requests of stories260K batched: the outputs
  // are plain decoding's whatever the cut leaves (it only removes drafts), and the step cost fit
  // the latest cut used is reported.
  void fitToBatchKeepsOutputs() {
    EngineConfig cfg = testutil::storiesConfig();
    std::vector<Req> reqs;
    const char* prompts[] = {"Once upon a time, there was a big dog. The dog was big. The dog",
                             "Lily and Tom went to the park. Lily and Tom", "The cat sat on the mat. The cat"};
    for (int i = 0; i < 12; ++i) {
      SamplingParams p = testutil::greedy(40 + 5 * (i % 4));
      if (i % 3 == 1) {
        p.temperature = 0.8f;
        p.seed = 100 + uint64_t(i);
      }
      reqs.push_back({"f" + std::to_string(i), {}, prompts[i % 3], p, i / 4});
    }
    const Result plain = run(cfg, reqs);
    EngineConfig on = withSpec(cfg, kNgram);
    on.speculative_config.fit_to_batch = true;
    const Result spec = run(on, reqs);
    compareOutputs(plain, spec);
    QVERIFY(spec.stats.spec_num_draft_tokens + spec.stats.spec_num_trimmed_tokens > 0);
    QVERIFY(spec.stats.step_cost_per_token_s >= 0 && spec.stats.step_cost_intercept_s >= 0);
    if (spec.stats.spec_num_trimmed_tokens > 0) QVERIFY(spec.stats.step_cost_per_token_s > 0);  // the fit it used
  }

  // Greedy ids with drafts equal those without on every attention-only family.
  void greedyIdentical_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("stories260K") << QString();
    for (const char* m :
         {"llama3-tiny.gguf", "qwen2-tiny.gguf", "qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "gemma3-tiny.gguf",
          "gemma4-tiny.gguf", "gptoss-tiny.gguf", "phi4mini-tiny.gguf", "smollm3-tiny.gguf"})
      QTest::newRow(m) << QString(m);
    // Hybrid: Gated DeltaNet layers, whose state rolls back to the last accepted draft.
    QTest::newRow("qwen35-tiny.gguf") << QString("qwen35-tiny.gguf");
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
    QCOMPARE(exact.stats.spec_num_recomputed_tokens, 0LL);  // nothing rolled back
    // A continuation with every fifth token wrong: drafts accepted in part, so each verify step
    // rolls back after some accepted tokens (recurrent layers: to the state saved before the
    // drafts, recomputing the accepted ones).
    const int vocab_size = vocabOf(cfg);
    for (Req& q : oracle) q.options.oracle_token_ids = withWrongTokens(q.options.oracle_token_ids, 3, 5, vocab_size);
    const Result partial = run(withSpec(cfg, "{\"method\": \"oracle\", \"num_speculative_tokens\": 6}"), oracle);
    compareOutputs(plain, partial);
    QVERIFY(partial.stats.spec_num_accepted_tokens > 0);
    QVERIFY(partial.stats.spec_num_accepted_tokens < partial.stats.spec_num_draft_tokens);
    if (LLMEngine(cfg).model_config().num_recurrent_layers() > 0)
      QVERIFY2(partial.stats.spec_num_recomputed_tokens > 0, "no accepted draft was recomputed after a rollback");
    else
      QCOMPARE(partial.stats.spec_num_recomputed_tokens, 0LL);
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

  // CompletionOutput::draft_spans: in the streamed deltas, exactly the bytes of the output
  // tokens that were accepted drafts. Which tokens those are is found here apart from the
  // engine's spans: from each proposal (the observer) against the output, the first draft that
  // differs ending the accepted run (as does the token that ends the request); each token's bytes
  // from decoding the output's prefixes. Oracle drafts with every fourth token wrong accept some
  // and reject others; a run without drafts reports none.
  void draftSpans() {
    EngineConfig cfg = testutil::storiesConfig();
    SamplingParams p = testutil::greedy(70);
    p.ignore_eos = true;
    p.output_kind = RequestOutputKind::kDelta;
    bool spans_in_order = true;
    auto stream = [&](const EngineConfig& c, const RequestOptions& o, std::map<int, std::vector<int>>* proposals) {
      LLMEngine engine(c);
      if (proposals)
        engine.set_draft_observer([&](const std::string&, int n, const std::vector<int>& d) { (*proposals)[n] = d; });
      engine.add_request("s", "Once upon a time", p, o);
      std::string text;
      std::vector<int> ids, prompt;
      std::vector<bool> tinted;
      while (engine.has_unfinished_requests())
        for (const RequestOutput& out : engine.step()) {
          const CompletionOutput& c0 = out.outputs.at(0);
          std::size_t last = 0;
          for (const auto& [b, e] : c0.draft_spans) {
            spans_in_order = spans_in_order && b >= last && b < e && e <= c0.text.size();
            last = e;
          }
          const std::size_t base = text.size();
          text += c0.text;
          tinted.resize(text.size(), false);
          for (const auto& [b, e] : c0.draft_spans)
            for (std::size_t i = b; i < e; ++i) tinted[base + i] = true;
          ids.insert(ids.end(), c0.token_ids.begin(), c0.token_ids.end());
          prompt = out.prompt_token_ids;
        }
      return std::make_tuple(text, ids, tinted, prompt);
    };
    const auto [plain_text, plain_ids, plain_tinted, prompt] = stream(cfg, {}, nullptr);
    QVERIFY2(spans_in_order, "a span outside its delta or out of order");
    QVERIFY(std::find(plain_tinted.begin(), plain_tinted.end(), true) == plain_tinted.end());

    RequestOptions o;
    o.oracle_token_ids = withWrongTokens(plain_ids, 2, 4, vocabOf(cfg));
    std::map<int, std::vector<int>> proposals;
    const auto [text, ids, tinted, prompt2] = stream(
        withSpec(cfg, "{\"method\": \"oracle\", \"num_speculative_tokens\": 5}"), o, &proposals);
    QVERIFY2(spans_in_order, "a span outside its delta or out of order");
    QCOMPARE(ids, plain_ids);
    QCOMPARE(text, plain_text);
    QVERIFY(!proposals.empty());
    std::vector<bool> accepted(ids.size(), false);
    for (const auto& [n, drafts] : proposals) {
      const std::size_t first = std::size_t(n) - prompt.size();
      for (std::size_t j = 0; j < drafts.size() && first + j + 1 < ids.size() && drafts[j] == ids[first + j]; ++j)
        accepted[first + j] = true;
    }
    LLMEngine engine(cfg);
    std::vector<bool> expected(text.size(), false);
    std::size_t begin = 0;
    int num_accepted = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::size_t end =
          engine.tokenizer().decode(std::vector<int>(ids.begin(), ids.begin() + long(i) + 1)).size();
      for (std::size_t b = begin; b < end && accepted[i]; ++b) expected[b] = true;
      num_accepted += accepted[i];
      begin = end;
    }
    QCOMPARE(begin, text.size());
    QVERIFY2(num_accepted > 5 && num_accepted + 10 < int(ids.size()), qPrintable(QString::number(num_accepted)));
    QCOMPARE(tinted, expected);
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

  // A draft model beside another method (the app's Engine settings): requests that ask for it
  // draft with it, the others with n-gram lookup; one that does not fit the model (another
  // vocabulary, a missing file) leaves the engine running without it and says why.
  void draftModelBesideNgram() {
    using M = SpeculativeConfig::Method;
    EngineConfig cfg = withSpec(testutil::storiesConfig(), kNgram);
    cfg.speculative_config.model = cfg.model;  // the target as its own draft: it agrees
    std::map<std::string, int> drafted;
    std::map<std::string, RequestOutput> done;
    {
      LLMEngine engine(cfg);
      QCOMPARE(engine.speculative_methods(), (std::vector<M>{M::kNgram, M::kDraftModel}));
      engine.set_draft_observer(
          [&](const std::string& id, int, const std::vector<int>& d) { drafted[id] += int(d.size()); });
      SamplingParams p = testutil::greedy(48);
      RequestOptions draft, none;
      draft.speculative_method = M::kDraftModel;
      none.speculative_method = M::kNone;
      engine.add_request("draft", "Once upon a time", p, draft);
      engine.add_request("none", "Once upon a time", p, none);
      done = testutil::runToCompletion(engine);
    }
    QCOMPARE(done.at("draft").outputs.at(0).token_ids, done.at("none").outputs.at(0).token_ids);
    QVERIFY(drafted["draft"] > 0);
    QCOMPARE(done.at("draft").metrics.spec_method, std::string("draft_model"));
    QVERIFY(done.at("draft").metrics.num_spec_accepted_tokens > 0);  // the target agrees with itself
    QCOMPARE(drafted["none"], 0);
    for (const std::string& bad :
         {archtest::archPath("llama3-tiny.gguf").toStdString(), std::string("/nonexistent/draft.gguf")}) {
      cfg.speculative_config.model = bad;
      LLMEngine engine(cfg);
      QCOMPARE(engine.speculative_methods(), (std::vector<M>{M::kNgram}));
      QVERIFY(!engine.warnings().empty());
      QVERIFY2(engine.warnings().back().find("draft model") != std::string::npos, engine.warnings().back().c_str());
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
};

QTEST_GUILESS_MAIN(TestSpecDecode)
#include "test_spec_decode.moc"
