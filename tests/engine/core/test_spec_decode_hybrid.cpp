// Speculative decoding on hybrid models (Gated DeltaNet layers, qwen35-tiny): the recurrent state
// rolls back to the last accepted draft, chats keep resuming from their turns' checkpoints (also
// when a block boundary falls among a step's drafts), forks and aborts free their slots, and a
// batch short of state slots runs without drafts — outputs equal plain decoding's throughout.
#include <QTest>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine_test_utils.h"
#include "spec_decode_test_util.h"

using namespace spectest;

class TestSpecDecodeHybrid : public QObject {
  Q_OBJECT

 private slots:
  // Hybrid models: each turn's end leaves a state checkpoint at its last block boundary, and the
  // next turn resumes there, with drafts as without: boundaries that fall among a step's drafts
  // are checkpointed in a slot of their own and kept once verification accepts them. Block size 4
  // puts a boundary among most steps' drafts; an oracle with some tokens wrong rejects some.
  void hybridTurnsResume_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("stride");
    const QString oracle = "{\"method\": \"oracle\", \"num_speculative_tokens\": 5}";
    QTest::newRow("every 7th wrong") << oracle << 7;
    QTest::newRow("every 3rd wrong") << oracle << 3;
    QTest::newRow("none wrong") << oracle << 0;
  }
  void hybridTurnsResume() {
    QFETCH(QString, spec);
    QFETCH(int, stride);
    const QString path = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(path);
    EngineConfig cfg = testutil::storiesConfig();
    cfg.model = path.toStdString();
    cfg.max_model_len = 400;
    cfg.block_size = 4;
    const int vocab = vocabOf(cfg);
    SamplingParams p = testutil::greedy(37);
    p.ignore_eos = true;
    std::vector<int> prompt = repetitivePrompt(vocab, 61, 11);
    // Plain: three turns, each re-sending the last and its answer.
    std::vector<std::vector<int>> answers;
    std::vector<int> cached;
    {
      LLMEngine engine(cfg);
      std::vector<int> ids = prompt;
      for (int turn = 0; turn < 3; ++turn) {
        engine.add_request("t", ids, p);
        const RequestOutput o = testutil::runToCompletion(engine).at("t");
        answers.push_back(o.outputs[0].token_ids);
        cached.push_back(o.metrics.num_cached_tokens);
        ids.insert(ids.end(), answers.back().begin(), answers.back().end());
        ids.insert(ids.end(), prompt.begin(), prompt.begin() + 9);
      }
    }
    LLMEngine engine(withSpec(cfg, spec.toStdString()));
    std::vector<int> ids = prompt;
    for (int turn = 0; turn < 3; ++turn) {
      RequestOptions o;
      o.oracle_token_ids = withWrongTokens(answers[std::size_t(turn)], 2, std::size_t(stride), vocab);
      engine.add_request("t", ids, p, o);
      const RequestOutput out = testutil::runToCompletion(engine).at("t");
      QCOMPARE(out.outputs[0].token_ids, answers[std::size_t(turn)]);
      // At least where plain decoding resumes (a turn that ends on an accepted draft has
      // computed its last token too, and may resume one boundary further).
      QVERIFY2(out.metrics.num_cached_tokens >= cached[std::size_t(turn)],
               qPrintable(QString("turn %1 resumed at %2, without drafts at %3")
                              .arg(turn)
                              .arg(out.metrics.num_cached_tokens)
                              .arg(cached[std::size_t(turn)])));
      if (turn > 0)
        QVERIFY(cached[std::size_t(turn)] > int(prompt.size()));  // the plain run resumed past turn 0's prompt
      ids.insert(ids.end(), answers[std::size_t(turn)].begin(), answers[std::size_t(turn)].end());
      ids.insert(ids.end(), prompt.begin(), prompt.begin() + 9);
    }
    const EngineStats st = engine.stats();
    QVERIFY(st.spec_num_accepted_tokens > 0);
    if (stride > 0) {
      QVERIFY(st.spec_num_accepted_tokens < st.spec_num_draft_tokens);
      QVERIFY(st.spec_num_recomputed_tokens > 0);
    } else {
      QCOMPARE(st.spec_num_accepted_tokens, st.spec_num_draft_tokens);
    }
  }

  // Hybrid models: n = 3 completions (each its own state and rollback slot, forked from the
  // prompt's), one request aborted mid-flight with its drafts in the cache; the others equal
  // their plain runs, and once all are done no state slot is held (nothing leaked by rollbacks,
  // speculative checkpoints or the abort).
  void hybridForksAndAbort() {
    const QString path = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(path);
    EngineConfig cfg = testutil::storiesConfig();
    cfg.model = path.toStdString();
    cfg.max_model_len = 256;
    cfg.block_size = 4;
    const int vocab = vocabOf(cfg);
    SamplingParams greedy3 = testutil::greedy(30);
    greedy3.ignore_eos = true;
    greedy3.n = 3;
    SamplingParams seeded = testutil::greedy(30);
    seeded.ignore_eos = true;
    seeded.temperature = 0.9f;
    seeded.seed = 9;
    std::vector<Req> reqs = {{"n3", repetitivePrompt(vocab, 23, 4), {}, greedy3},
                             {"seeded", repetitivePrompt(vocab, 30, 5), {}, seeded, 1}};
    const Result plain = run(cfg, reqs);
    for (Req& q : reqs) {
      q.options.oracle_token_ids = withWrongTokens(plain.done.at(q.id).outputs[0].token_ids, 3, 4, vocab);
    }
    LLMEngine engine(withSpec(cfg, "{\"method\": \"oracle\", \"num_speculative_tokens\": 3}"));
    Req doomed{"doomed", repetitivePrompt(vocab, 40, 6), {}, seeded};
    doomed.options.oracle_token_ids = repetitivePrompt(vocab, 30, 7);
    const auto done = testutil::runToCompletion(engine, [&](int step) {
      for (const Req& q : reqs)
        if (q.add_at_step == step) engine.add_request(q.id, q.ids, q.params, q.options);
      if (step == 0) engine.add_request(doomed.id, doomed.ids, doomed.params, doomed.options);
      if (step == 9) QVERIFY(engine.abort_request("doomed"));
    });
    for (const Req& q : reqs) {
      const RequestOutput& got = done.at(q.id);
      QCOMPARE(got.outputs.size(), plain.done.at(q.id).outputs.size());
      for (std::size_t i = 0; i < got.outputs.size(); ++i)
        QCOMPARE(got.outputs[i].token_ids, plain.done.at(q.id).outputs[i].token_ids);
    }
    const EngineStats st = engine.stats();
    QVERIFY(st.spec_num_recomputed_tokens > 0);
    QCOMPARE(st.num_state_slots_held, 0);
    QCOMPARE(st.num_running + st.num_waiting, 0);
  }

  // Hybrid models under pressure: four requests joining mid-flight, chunked prefill, a KV cache
  // that forces preemption and so few state slots that some steps find none for the state drafts
  // roll back to (they run without drafts). Each output equals its plain run.
  void hybridBatchedUnderPressure() {
    const QString path = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(path);
    EngineConfig cfg = testutil::storiesConfig();
    cfg.model = path.toStdString();
    cfg.max_model_len = 256;
    cfg.block_size = 8;
    cfg.num_blocks = 40;
    cfg.max_num_seqs = 4;
    cfg.num_state_slots = 9;
    cfg.max_num_batched_tokens = 24;
    cfg.long_prefill_token_threshold = 7;
    const int vocab = vocabOf(cfg);
    std::vector<Req> reqs;
    for (int i = 0; i < 4; ++i) {
      SamplingParams p = testutil::greedy(50 + 7 * i);
      p.ignore_eos = true;
      if (i == 2) {
        p.temperature = 0.8f;
        p.seed = 31;
      }
      reqs.push_back({"h" + std::to_string(i), repetitivePrompt(vocab, 40 + 11 * i, 20 + uint32_t(i)), {}, p, 2 * i});
    }
    const Result plain = run(cfg, reqs);
    std::vector<Req> oracle = reqs;
    for (Req& q : oracle) {
      q.options.oracle_token_ids = withWrongTokens(plain.done.at(q.id).outputs[0].token_ids, 4, 6, vocab);
    }
    const Result spec = run(withSpec(cfg, "{\"method\": \"oracle\", \"num_speculative_tokens\": 4}"), oracle);
    compareOutputs(plain, spec);
    QVERIFY2(spec.stats.num_preemptions > 0, "the small cache should have forced preemption");
    QVERIFY(spec.stats.spec_num_recomputed_tokens > 0);
    const Result ngram = run(withSpec(cfg, kNgram), reqs);
    compareOutputs(plain, ngram);
  }
};

QTEST_GUILESS_MAIN(TestSpecDecodeHybrid)
#include "test_spec_decode_hybrid.moc"
