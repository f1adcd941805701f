// Request API features from vLLM: stop strings (also across tokens, streamed), stop token ids,
// min_tokens, n > 1 with shared prompt blocks (copy-on-write, with every KV cache dtype), logprobs,
// priorities, the long prefill cap, seeds in batches, metrics; kv_cache_dtype's memory and errors.
#include <QTest>

#include <QFile>
#include <cmath>

#include "engine/llm.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {
const std::string kPrompt = "Once upon a time";

/// Runs one request with kDelta and returns (concatenated deltas, final output).
std::pair<std::string, RequestOutput> streamOne(LLMEngine& engine, const std::string& prompt, SamplingParams p) {
  p.output_kind = RequestOutputKind::kDelta;
  engine.add_request("s", prompt, p);
  std::string joined;
  RequestOutput last;
  while (engine.has_unfinished_requests())
    for (auto& o : engine.step()) {
      joined += o.outputs[0].text;
      last = o;
    }
  return {joined, last};
}
}  // namespace

class TestEngineFeatures : public QObject {
  Q_OBJECT
  std::string reference_;  // greedy continuation of kPrompt
  std::vector<int> reference_ids_;

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin");
    LLM llm(testutil::storiesConfig());
    const auto out = llm.generate({kPrompt}, testutil::greedy(80))[0];
    reference_ = out.outputs[0].text;
    reference_ids_ = out.outputs[0].token_ids;
    QVERIFY(reference_.find("little girl named Lily") != std::string::npos);
  }

  // Stop strings that span several tokens, or start mid-token, cut the text there; streamed
  // deltas concatenate to the same text and never show a part of the stop string.
  void stopStrings_data() {
    QTest::addColumn<QString>("stop");
    QTest::addColumn<bool>("include");
    QTest::newRow("across tokens") << "girl named" << false;
    QTest::newRow("mid-token") << "ily. Sh" << false;
    QTest::newRow("included") << "named Lily" << true;
    QTest::newRow("single char") << "." << false;
  }
  void stopStrings() {
    QFETCH(QString, stop);
    QFETCH(bool, include);
    const std::string s = stop.toStdString();
    const size_t at = reference_.find(s);
    QVERIFY(at != std::string::npos);
    const std::string expected = reference_.substr(0, include ? at + s.size() : at);
    SamplingParams p = testutil::greedy(80);
    p.stop = {"never appears here", s};
    p.include_stop_str_in_output = include;
    LLM llm(testutil::storiesConfig());
    const auto out = llm.generate({kPrompt}, p)[0].outputs[0];
    QCOMPARE(out.text, expected);
    QCOMPARE(out.finish_reason, std::optional(FinishReason::kStop));
    QCOMPARE(std::get<std::string>(out.stop_reason), s);

    LLMEngine engine(testutil::storiesConfig());
    const auto [joined, last] = streamOne(engine, kPrompt, p);
    QCOMPARE(joined, expected);
    QCOMPARE(last.outputs[0].finish_reason, std::optional(FinishReason::kStop));
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  void stopTokenIdsAndMinTokens() {
    const int stop_id = reference_ids_[3];  // appears early in the greedy output
    SamplingParams p = testutil::greedy(60);
    p.stop_token_ids = {stop_id};
    LLM llm(testutil::storiesConfig());
    auto out = llm.generate({kPrompt}, p)[0].outputs[0];
    QCOMPARE(out.finish_reason, std::optional(FinishReason::kStop));
    QCOMPARE(std::get<int>(out.stop_reason), stop_id);
    QCOMPARE(out.token_ids.size(), size_t(4));
    QCOMPARE(out.token_ids.back(), stop_id);

    p.min_tokens = 12;  // the stop id is masked for the first 12 tokens, stops after that
    out = llm.generate({kPrompt}, p)[0].outputs[0];
    QVERIFY(out.token_ids.size() >= 12);
    for (size_t i = 0; i < 12; ++i) QVERIFY(out.token_ids[i] != stop_id);
    if (out.finish_reason == FinishReason::kStop) QCOMPARE(out.token_ids.back(), stop_id);

    SamplingParams q = testutil::greedy(60);
    q.stop = {","};  // the very first token is ","
    q.min_tokens = 5;
    out = llm.generate({kPrompt}, q)[0].outputs[0];
    QVERIFY(out.token_ids.size() >= 5);
  }

  // A request whose restrictions leave no token ends "abort" alone, its text so far kept; the
  // requests batched with it run on and give what they give alone (before, the sampler's throw
  // failed the whole step: every running request ended in an error). Two ways to ask the
  // impossible: only a stop id allowed while min_tokens masks it; a grammar that cannot take the
  // one allowed id. And n = 3 of such a request: all three end, nothing leaks.
  void unsatisfiableRequestEndsAlone() {
    const int stop_id = reference_ids_[3];
    SamplingParams only_stop = testutil::greedy(20);
    only_stop.allowed_token_ids = {stop_id};
    only_stop.stop_token_ids = {stop_id};
    only_stop.min_tokens = 3;
    SamplingParams grammar = testutil::greedy(20);
    grammar.allowed_token_ids = {reference_ids_[0]};  // "," cannot begin "yes" or "no"
    grammar.structured_outputs = StructuredOutputsParams{};
    grammar.structured_outputs->choice = std::vector<std::string>{"yes", "no"};
    SamplingParams three = only_stop;
    three.n = 3;
    three.temperature = 1.0f;
    three.seed = 5;
    LLMEngine engine(testutil::storiesConfig());
    engine.add_request("ok", kPrompt, testutil::greedy(80));
    engine.add_request("only-stop", kPrompt, only_stop);
    engine.add_request("grammar", kPrompt, grammar);
    engine.add_request("three", kPrompt, three);
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("ok").outputs.at(0).token_ids, reference_ids_);
    QVERIFY(done.at("ok").outputs.at(0).error.empty());
    for (const char* id : {"only-stop", "grammar", "three"}) {
      for (const CompletionOutput& o : done.at(id).outputs) {
        QCOMPARE(o.finish_reason, std::optional(FinishReason::kAbort));
        QVERIFY2(o.token_ids.empty(), id);
        QVERIFY2(o.error.find("no token satisfies") != std::string::npos, o.error.c_str());
      }
    }
    QCOMPARE(done.at("three").outputs.size(), size_t(3));
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
    // After min_tokens the same restriction is satisfiable: the stop id ends it at once.
    SamplingParams later = only_stop;
    later.min_tokens = 0;
    LLM llm(testutil::storiesConfig());
    const auto out = llm.generate({kPrompt}, later)[0].outputs[0];
    QCOMPARE(out.finish_reason, std::optional(FinishReason::kStop));
    QCOMPARE(out.token_ids, std::vector<int>{stop_id});
  }

  // n = 3: the completions share the prompt blocks (fewer blocks in use than three separate
  // requests) and completion i equals a solo request seeded seed + i (the copy-on-write kept each
  // one's cache intact), for every KV cache element type.
  void parallelSamplingSharesBlocks_data() {
    QTest::addColumn<QString>("kvDtype");
    for (const char* d : {"float32", "bfloat16", "float16"}) QTest::newRow(d) << d;
  }
  void parallelSamplingSharesBlocks() {
    QFETCH(QString, kvDtype);
    EngineConfig config = testutil::storiesConfig();
    config.kv_cache_dtype = pagedchat::parse_kv_cache_dtype(kvDtype.toStdString());
    SamplingParams p;
    p.temperature = 0.9f;
    p.max_tokens = 30;
    p.seed = 100;
    p.n = 3;
    p.ignore_eos = true;
    const std::string prompt = "Lily and Tom went to the park. They saw a big";  // one full block and a partial one
    LLMEngine engine(config);
    const int prompt_len = int(engine.tokenizer().encode(prompt, true).size());
    QVERIFY(prompt_len > 16 && prompt_len % 16 != 0);
    engine.add_request("n3", prompt, p);
    int checked = 0;
    std::map<std::string, RequestOutput> done;
    while (engine.has_unfinished_requests()) {
      for (auto& o : engine.step())
        if (o.finished) done[o.request_id] = o;
      const auto st = engine.stats();
      const auto state = engine.request_state("n3");
      if (state && state->num_output_tokens == 2 && !checked) {
        // 1 shared full block + 3 private copies of the partial block (copy-on-write).
        QCOMPARE(st.num_total_blocks - st.num_free_blocks, 4);
        ++checked;
      }
    }
    QCOMPARE(checked, 1);
    const auto& out = done.at("n3");
    QCOMPARE(out.outputs.size(), size_t(3));
    LLM solo(config);
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(out.outputs[i].index, i);
      SamplingParams s = p;
      s.n = 1;
      s.seed = 100 + i;
      QCOMPARE(out.outputs[i].token_ids, solo.generate({prompt}, s)[0].outputs[0].token_ids);
    }
    QVERIFY(out.outputs[0].token_ids != out.outputs[1].token_ids);
    QCOMPARE(engine.stats().num_free_blocks, engine.stats().num_total_blocks);
  }

  // kv_cache_dtype: a 16-bit cache takes half the bytes per block, so the same kv_cache_bytes holds
  // twice the blocks, and the automatic size (8 full-length sequences) half the bytes; "auto" is
  // bfloat16. A bad value is refused naming the allowed ones.
  void kvCacheDtypeMemory() {
    EngineConfig c = testutil::storiesConfig();
    // stories260K: 5 layers x 2 x 16 tokens x 4 KV heads x 8 dims = 5120 elements per block.
    c.kv_cache_bytes = 200 * 5120 * 4;  // 200 float32 blocks
    std::map<std::string, int> blocks;
    for (const char* d : {"float32", "bfloat16", "float16", "auto"}) {
      c.kv_cache_dtype = pagedchat::parse_kv_cache_dtype(d);
      LLMEngine engine(c);
      blocks[d] = engine.stats().num_total_blocks;
      QVERIFY(engine.engine_config().kv_cache_bytes <= c.kv_cache_bytes);
    }
    QCOMPARE(blocks["float32"], 200);
    QCOMPARE(blocks["bfloat16"], 2 * blocks["float32"]);
    QCOMPARE(blocks["float16"], blocks["bfloat16"]);
    QCOMPARE(blocks["auto"], blocks["bfloat16"]);
    EngineConfig a = testutil::storiesConfig(), b = a;
    a.kv_cache_dtype = pagedchat::KvCacheDType::kFloat32;
    LLMEngine ea(a), eb(b);
    QCOMPARE(eb.engine_config().kv_cache_dtype, pagedchat::KvCacheDType::kBFloat16);
    QCOMPARE(ea.stats().num_total_blocks, eb.stats().num_total_blocks);  // 8 sequences each
    QCOMPARE(eb.engine_config().kv_cache_bytes * 2, ea.engine_config().kv_cache_bytes);
    for (const char* bad : {"fp8", "half", "", "Float32", "Q8_0", "q4_0"}) {
      try {
        pagedchat::parse_kv_cache_dtype(bad);
        QFAIL(qPrintable(QString("kv_cache_dtype \"%1\" was accepted").arg(bad)));
      } catch (const std::invalid_argument& err) {
        QCOMPARE(QString(err.what()), QString("kv_cache_dtype must be \"auto\", \"float32\", \"bfloat16\", "
                                              "\"float16\" or \"q8_0\", got \"%1\"")
                                          .arg(bad));
      }
    }
    {
      EngineConfig e = testutil::storiesConfig();
      e.kv_cache_dtype = static_cast<pagedchat::KvCacheDType>(99);
      try {
        LLMEngine engine(e);
        QFAIL("a kv_cache_dtype outside the enum was accepted");
      } catch (const std::invalid_argument& err) {
        QCOMPARE(QString(err.what()), QString("invalid engine config: kv_cache_dtype has no such value (99)"));
      }
    }
    // q8_0: 34 bytes per 32 values (ggml's block_q8_0), for head sizes of whole 32-blocks; the
    // same bytes hold 128/34 times the float32 blocks. stories260K's head size 8 is refused by name.
    EngineConfig q = testutil::storiesConfig();
    q.kv_cache_dtype = pagedchat::KvCacheDType::kQ8_0;
    try {
      LLMEngine engine(q);
      QFAIL("q8_0 was accepted for head_dim 8");
    } catch (const std::invalid_argument& err) {
      QVERIFY2(QString(err.what()).contains(QLatin1String("head_dim 8")), err.what());
    }
    q.model = "random:dim=128,hidden_dim=256,n_layers=2,n_heads=4,n_kv_heads=2,vocab_size=512,max_seq_len=256";
    const std::size_t f32_block = std::size_t(2) * 2 * 16 * 64 * 4, q8_block = std::size_t(2) * 2 * 16 * 2 * 34;
    q.kv_cache_bytes = 100 * f32_block;
    LLMEngine q8(q);
    QCOMPARE(q8.engine_config().kv_cache_dtype, pagedchat::KvCacheDType::kQ8_0);
    QCOMPARE(std::size_t(q8.stats().num_total_blocks), 100 * f32_block / q8_block);
    q8.add_request("q", std::vector<int>{5, 6, 7, 8, 9, 10, 11}, testutil::greedy(40));
    int generated = 0;
    while (q8.has_unfinished_requests())
      for (const auto& o : q8.step())
        if (o.finished) generated = int(o.outputs[0].token_ids.size());
    QCOMPARE(generated, 40);
    QCOMPARE(q8.stats().num_free_blocks, q8.stats().num_total_blocks);
  }

  // Logprobs are the log-softmax of the raw logits (compared with llama2.c's golden logits).
  void logprobsFromRawLogits() {
    const QString dir = testpaths::stories260K() + "/golden";
    QFile f(dir + "/once_upon.logits.f32");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray raw = f.readAll();
    const float* golden = reinterpret_cast<const float*>(raw.constData());
    SamplingParams p = testutil::greedy(20);
    p.logprobs = 5;
    EngineConfig config = testutil::storiesConfig();
    config.kv_cache_dtype =
        pagedchat::KvCacheDType::kFloat32;  // the golden logits are float32 K/V's, compared within 1e-4
    LLM llm(config);
    const auto out = llm.generate({kPrompt}, p)[0];
    const auto& c = out.outputs[0];
    QVERIFY(c.logprobs.has_value());
    QCOMPARE(c.logprobs->size(), c.token_ids.size());
    const int vocab = 512, p0 = int(out.prompt_token_ids.size()) - 1;
    double cum = 0;
    for (size_t i = 0; i < c.token_ids.size(); ++i) {
      const float* row = golden + size_t(p0 + i) * vocab;
      double mx = row[0], sum = 0;
      for (int v = 0; v < vocab; ++v) mx = std::max<double>(mx, row[v]);
      for (int v = 0; v < vocab; ++v) sum += std::exp(row[v] - mx);
      const auto& entry = (*c.logprobs)[i];
      QVERIFY(entry.size() >= 5 && entry.size() <= 6);
      for (const auto& [id, lp] : entry)
        QVERIFY2(std::fabs(lp.logprob - (row[id] - mx - std::log(sum))) < 1e-4, "logprob differs from log-softmax");
      QCOMPARE(entry.at(c.token_ids[i]).rank, 1);  // greedy picks rank 1
      cum += entry.at(c.token_ids[i]).logprob;
    }
    QVERIFY(std::fabs(*c.cumulative_logprob - cum) < 1e-3);
  }

  void priorityOrder() {
    EngineConfig cfg = testutil::storiesConfig();
    cfg.scheduling_policy = SchedulingPolicy::kPriority;
    cfg.max_num_seqs = 1;
    LLMEngine engine(cfg);
    engine.add_request("low", kPrompt, testutil::greedy(5), {5, {}, {}});
    engine.add_request("high", kPrompt, testutil::greedy(5), {0, {}, {}});
    engine.add_request("mid", kPrompt, testutil::greedy(5), {2, {}, {}});
    std::vector<std::string> order;
    while (engine.has_unfinished_requests())
      for (auto& o : engine.step())
        if (o.finished) order.push_back(o.request_id);
    QCOMPARE(order, (std::vector<std::string>{"high", "mid", "low"}));
    EngineConfig fcfs = testutil::storiesConfig();
    fcfs.max_num_seqs = 1;
    LLMEngine e2(fcfs);
    e2.add_request("low", kPrompt, testutil::greedy(5), {5, {}, {}});
    e2.add_request("high", kPrompt, testutil::greedy(5), {0, {}, {}});
    order.clear();
    while (e2.has_unfinished_requests())
      for (auto& o : e2.step())
        if (o.finished) order.push_back(o.request_id);
    QCOMPARE(order, (std::vector<std::string>{"low", "high"}));
  }

  // With long_prefill_token_threshold, a short request runs in the same steps as a long prefill.
  void longPrefillDoesNotStallOthers() {
    std::string longPrompt;
    for (int i = 0; i < 8; ++i) longPrompt += "Once upon a time, there was a little girl named Lily. ";
    EngineConfig cfg = testutil::storiesConfig();
    cfg.max_num_batched_tokens = 64;
    cfg.long_prefill_token_threshold = 16;
    LLMEngine engine(cfg);
    engine.add_request("long", longPrompt, testutil::greedy(5));
    engine.add_request("short", "The dog", testutil::greedy(5));
    engine.step();
    const auto ids = engine.last_scheduled_request_ids();
    QCOMPARE(ids, (std::vector<std::string>{"long", "short"}));
    QCOMPARE(engine.request_state("long")->num_computed_tokens, 16);
    const auto done = testutil::runToCompletion(engine);
    LLM ref(testutil::storiesConfig());
    QCOMPARE(done.at("long").outputs[0].token_ids,
             ref.generate({longPrompt}, testutil::greedy(5))[0].outputs[0].token_ids);
  }

  // set_on_scheduled: called once per step that scheduled requests, before their forward, with
  // stats() already counting them running (what /metrics shows during a long prefill step).
  void onScheduledSeesTheStepsRequests() {
    LLMEngine engine(testutil::storiesConfig());
    std::vector<EngineStats> seen;
    engine.set_on_scheduled([&] { seen.push_back(engine.stats()); });
    engine.step();  // nothing to schedule: not called
    QVERIFY(seen.empty());
    engine.add_request("a", kPrompt, testutil::greedy(3));
    engine.add_request("b", "The dog", testutil::greedy(3));
    engine.step();
    QCOMPARE(seen.size(), std::size_t(1));
    QCOMPARE(seen[0].num_running, 2);
    QCOMPARE(seen[0].num_waiting, 0);
    QVERIFY(seen[0].num_prompt_tokens > 0);                       // this step's prompt tokens counted
    QCOMPARE(seen[0].num_steps, 0);                               // before the step completes
    QVERIFY(seen[0].num_free_blocks < seen[0].num_total_blocks);  // their blocks allocated
    testutil::runToCompletion(engine);
    QCOMPARE(seen.size(), std::size_t(3));  // prefill + 2 decode steps (3 tokens each)
  }

  void seededAloneAndBatched() {
    SamplingParams p;
    p.temperature = 1.0f;
    p.top_p = 0.9f;
    p.max_tokens = 40;
    p.seed = 31337;
    LLM llm(testutil::storiesConfig());
    const auto alone = llm.generate({"The cat sat"}, p)[0].outputs[0].token_ids;
    SamplingParams other = p;
    other.seed.reset();
    LLMEngine engine(testutil::storiesConfig());
    engine.add_request("x1", "Once upon a time", other);
    engine.add_request("seeded", "The cat sat", p);
    engine.add_request("x2", "Lily and Tom", other);
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("seeded").outputs[0].token_ids, alone);
  }

  void metrics() {
    LLMEngine engine(testutil::storiesConfig());
    engine.add_request("m", kPrompt, testutil::greedy(20));
    const auto done = testutil::runToCompletion(engine);
    const RequestMetrics& m = done.at("m").metrics;
    QVERIFY(m.arrival_time > 0);
    QVERIFY(m.first_scheduled_time >= m.arrival_time);
    QVERIFY(m.first_token_time >= m.first_scheduled_time);
    QVERIFY(m.last_token_time >= m.first_token_time);
    QVERIFY(m.finished_time >= m.last_token_time);
    QVERIFY(m.time_to_first_token > 0);
    QVERIFY(m.mean_inter_token_latency > 0);
    QCOMPARE(m.num_generation_tokens, 20);
    QCOMPARE(m.num_preemptions, 0);
    const auto st = engine.stats();
    QCOMPARE(st.num_generation_tokens, 20LL);
    QCOMPARE(st.num_prompt_tokens, 5LL);
  }
};

QTEST_GUILESS_MAIN(TestEngineFeatures)
#include "test_engine_features.moc"
