// What the speculative decoding tests share (test_spec_decode, test_spec_decode_hybrid): engine
// configurations with a --speculative-config, requests run to completion, prompts that repeat, and
// the comparison of outputs with and without drafts, token for token.
#pragma once

#include <QTest>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "engine/spec_decode/speculative_config.h"
#include "engine_test_utils.h"

namespace spectest {

using namespace pagedchat;

// The tests that count drafts verify every one proposed (fit_to_batch off): the batch-aware cut
// depends on measured step times. fitToBatchKeepsOutputs runs with it on.
inline EngineConfig withSpec(EngineConfig c, const std::string& json) {
  c.speculative_config = parse_speculative_config(json);
  if (json.find("fit_to_batch") == std::string::npos) c.speculative_config.fit_to_batch = false;
  return c;
}

inline const char* kNgram =
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

inline Result run(const EngineConfig& cfg, const std::vector<Req>& reqs) {
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
inline std::vector<int> repetitivePrompt(int vocab, int len, uint32_t seed) {
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

inline int vocabOf(const EngineConfig& cfg) { return LLMEngine(cfg).model_config().vocab_size; }

// A continuation with the tokens at first, first + stride, ... changed (drafts that go wrong
// there); stride 0 changes nothing.
inline std::vector<int> withWrongTokens(std::vector<int> ids, std::size_t first, std::size_t stride, int vocab) {
  for (std::size_t i = first; stride > 0 && i < ids.size(); i += stride) ids[i] = (ids[i] + 1) % vocab;
  return ids;
}

inline void compareOutputs(const Result& plain, const Result& spec) {
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

}  // namespace spectest
