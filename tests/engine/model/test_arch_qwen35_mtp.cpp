// A qwen35 GGUF that carries a multi-token-prediction block (`nextn_predict_layers` 1, as
// Qwen3.5/3.6 checkpoints converted with their MTP head): the file's last block is the MTP block
// (ik_llama.cpp create_qwen35_tensors: an attention layer, its FFN, nextn.eh_proj / enorm / hnorm
// / shared_head_norm). Written by the test from ../shared/models/arch/qwen35-tiny.gguf with
// block_count 5 and a blk.4 MTP block (random weights from a fixed std::mt19937 stream).
// - It loads with the block kept aside (ModelWeights::mtp) and out of the main stack: the greedy
//   ids and logprobs of every golden prompt are bitwise those of the file without it.
// - Speculative decoding's "mtp" method drafts with it (engine/spec_decode/mtp_proposer.h): the
//   drafts equal ik_llama.cpp's (tests/data/qwen35mtp/golden.json, made by ik_mtp.cpp there from
//   the file this test writes when QWEN35_MTP_OUT=path is set), outputs equal those without
//   drafts, requests choose the proposer, a model without MTP layers is refused by name.
#include <QTest>

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/model_loader.h"
#include "engine/spec_decode/speculative_config.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {

// Writes qwen35-tiny (`src`) plus an MTP block (with or without its feed-forward) to `dst`.
void writeWithMtp(const QString& src, const QString& dst, bool ffn = true) {
  std::vector<std::vector<float>> keep;  // the new tensors' values, until written
  GgufFile f = GgufFile::open(src.toStdString());
  const int64_t layers = *f.get_int("qwen35.block_count");
  GgufMetaWriter meta;
  for (const auto& [k, v] : f.metadata()) {
    if (k == "general.alignment") continue;
    if (k == "qwen35.block_count")
      meta.kv_u32(k, uint32_t(layers + 1));
    else
      meta.kv_value(k, v);
  }
  meta.kv_u32("qwen35.nextn_predict_layers", 1);
  std::vector<GgufTensorOut> out;
  const std::string last = "blk." + std::to_string(layers - 1) + ".", mtp = "blk." + std::to_string(layers) + ".";
  // Matrices N(0, 0.05), norm weights U(0.9, 1.1) (the multiplier itself), from one fixed stream.
  std::mt19937 rng(35);
  auto values = [&](uint64_t rows, uint64_t cols, bool norm) {
    std::vector<float> v(std::size_t(std::max<uint64_t>(rows, 1) * cols));
    std::normal_distribution<float> d(0.0f, 0.05f);
    std::uniform_real_distribution<float> u(0.9f, 1.1f);
    for (float& x : v) x = norm ? u(rng) : d(rng);
    keep.push_back(std::move(v));
    return keep.back().data();
  };
  for (const GgufTensorInfo& t : f.tensors()) {
    const GgufTensorOut o = gguf_tensor_copy(f, t);
    out.push_back(o);
    // The MTP block's attention layer and FFN: the shapes of the last (attention) layer's.
    if (t.name.rfind(last, 0) == 0) {
      if (!ffn && t.name.find(".ffn_") != std::string::npos) continue;  // a block without a feed-forward
      GgufTensorOut m = o;
      m.name = mtp + t.name.substr(last.size());
      m.typed_src = nullptr;
      m.src = values(o.rows, o.cols, o.rows <= 1);
      m.type = GgmlType::F32;
      out.push_back(m);
    }
  }
  const uint64_t dim = uint64_t(*f.get_int("qwen35.embedding_length"));
  auto add = [&](const std::string& name, uint64_t rows, uint64_t cols) {
    GgufTensorOut o;
    o.name = mtp + name;
    o.rows = rows;
    o.cols = cols;
    o.src = values(rows, cols, rows == 0);
    out.push_back(o);
  };
  add("nextn.eh_proj.weight", dim, 2 * dim);
  add("nextn.enorm.weight", 0, dim);
  add("nextn.hnorm.weight", 0, dim);
  add("nextn.shared_head_norm.weight", 0, dim);
  write_gguf_file(dst.toStdString(), meta, out);
}

// qwen35-tiny with an MTP block, written into `tmp`.
QString mtpFile(const QTemporaryDir& tmp, const QString& src, bool ffn = true) {
  const QString path = tmp.filePath("qwen35-mtp.gguf");
  writeWithMtp(src, path, ffn);
  return path;
}

std::map<std::string, CompletionOutput> run(const std::string& model, const std::vector<std::vector<int>>& prompts) {
  EngineConfig c;
  c.model = model;
  c.max_model_len = 160;
  c.num_threads = 2;
  c.kv_cache_dtype = KvCacheDType::kFloat32;
  LLMEngine engine(c);
  SamplingParams p = testutil::greedy(12);
  p.ignore_eos = true;
  p.logprobs = 5;
  for (std::size_t i = 0; i < prompts.size(); ++i) engine.add_request(std::to_string(i), prompts[i], p);
  std::map<std::string, CompletionOutput> done;
  for (const auto& [id, r] : testutil::runToCompletion(engine)) done.emplace(id, r.outputs.at(0));
  return done;
}

EngineConfig mtpConfig(const std::string& model, int k) {
  EngineConfig c;
  c.model = model;
  c.max_model_len = 256;
  c.num_threads = 2;
  c.kv_cache_dtype = KvCacheDType::kFloat32;
  c.max_num_batched_tokens = 16;  // prompts in chunks
  if (k > 0) {
    c.speculative_config = parse_speculative_config(
        "{\"method\": \"mtp\", \"num_speculative_tokens\": " + std::to_string(k) + ", \"fit_to_batch\": false}");
  }
  return c;
}

// Two turns over `prompts` in one engine: all first turns batched (one joining late), then each
// prompt + its reply + two more tokens as a second turn (prefix-cache hits).
struct Turns {
  std::map<std::string, RequestOutput> done;
  EngineStats stats;
  int cached = 0;  // prompt tokens the second turns found in the prefix cache
};

Turns runTurns(const EngineConfig& c, const std::vector<std::vector<int>>& prompts) {
  LLMEngine engine(c);
  SamplingParams p = testutil::greedy(20);
  p.ignore_eos = true;
  p.logprobs = 3;
  Turns t;
  t.done = testutil::runToCompletion(engine, [&](int step) {
    for (std::size_t i = 0; i < prompts.size(); ++i)
      if (int(i) * 2 == step) engine.add_request("a" + std::to_string(i), prompts[i], p);
  });
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int> next = prompts[i];
    const std::vector<int>& reply = t.done.at("a" + std::to_string(i)).outputs.at(0).token_ids;
    next.insert(next.end(), reply.begin(), reply.end());
    next.insert(next.end(), {13, 1234});
    engine.add_request("b" + std::to_string(i), next, p);
  }
  for (auto& [id, out] : testutil::runToCompletion(engine)) {
    t.cached += out.metrics.num_cached_tokens;
    t.done.emplace(id, out);
  }
  t.stats = engine.stats();
  return t;
}

}  // namespace

class TestArchQwen35Mtp : public QObject {
  Q_OBJECT

 private slots:
  void mtpBlockKeptAside() {
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    QTemporaryDir tmp;
    const char* keep_path = std::getenv("QWEN35_MTP_OUT");
    const QString path = keep_path ? QString(keep_path) : tmp.filePath("qwen35-mtp.gguf");
    writeWithMtp(src, path);

    EngineConfig ec;
    ec.model = path.toStdString();
    const ModelBundle withMtp = load_model(ec);
    ec.model = src.toStdString();
    const ModelBundle plain = load_model(ec);
    QCOMPARE(withMtp.model.config.nextn_predict_layers, 1);
    QCOMPARE(withMtp.model.config.n_layers, plain.model.config.n_layers);
    QCOMPARE(withMtp.model.weights.layers.size(), plain.model.weights.layers.size());
    QCOMPARE(int(withMtp.model.weights.mtp.size()), 1);
    const MtpWeights& m = withMtp.model.weights.mtp[0];
    QVERIFY(m.enorm && m.hnorm && m.shared_head_norm && m.layer.k_proj.data && m.layer.attn_norm);
    QVERIFY(m.enorm[0] >= 0.9f && m.enorm[0] <= 1.1f);

    archtest::Golden g;
    QString why;
    QVERIFY2(archtest::loadGolden("qwen35-tiny.gguf", g, &why), qPrintable(why));
    std::vector<std::vector<int>> prompts;
    for (const auto& p : g.prompts) prompts.push_back(p.prompt_ids);
    const auto a = run(path.toStdString(), prompts), b = run(src.toStdString(), prompts);
    QCOMPARE(a.size(), prompts.size());
    for (const auto& [id, out] : b) {
      const CompletionOutput& o = a.at(id);
      QCOMPARE(o.token_ids, out.token_ids);
      QVERIFY(o.logprobs && out.logprobs && o.logprobs->size() == out.logprobs->size());
      for (std::size_t i = 0; i < out.logprobs->size(); ++i)
        for (const auto& [tok, lp] : (*out.logprobs)[i]) QCOMPARE((*o.logprobs)[i].at(tok).logprob, lp.logprob);
    }
  }

  // The drafts against ik_llama.cpp's MTP (tests/data/qwen35mtp: per prompt and step, the K = 4
  // drafts its MTP block makes before the target decodes x_N, from the same file). The engine
  // drafts the three prompts batched, with prompts in chunks, and proposes at the steps its own
  // verification and draft budget lead to: each proposal at N is compared with ik's at N, draft by
  // draft, until a draft differs, which only a near-tie of ik's logits may explain.
  void mtpDraftsMatchReference() {
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    QTemporaryDir tmp;
    const QString path = mtpFile(tmp, src);
    QFile jf(QStringLiteral(QWEN35MTP_GOLDEN));
    QVERIFY2(jf.open(QIODevice::ReadOnly), qPrintable(jf.fileName()));
    const nlohmann::json golden = nlohmann::json::parse(jf.readAll().toStdString());
    QFile mf(path);
    QVERIFY(mf.open(QIODevice::ReadOnly));
    QCOMPARE(QCryptographicHash::hash(mf.readAll(), QCryptographicHash::Sha256).toHex().toStdString(),
             golden.at("model_sha256").get<std::string>());  // the file ik read

    LLMEngine engine(mtpConfig(path.toStdString(), 4));
    std::map<std::string, std::vector<std::pair<int, std::vector<int>>>> proposals;
    engine.set_draft_observer([&](const std::string& id, int n, const std::vector<int>& d) {
      proposals[id].push_back({n, d});
    });
    SamplingParams p = testutil::greedy(golden.at("n_gen").get<int>());
    p.ignore_eos = true;
    for (const auto& q : golden.at("prompts"))
      engine.add_request(q.at("name").get<std::string>(), q.at("prompt_ids").get<std::vector<int>>(), p);
    const auto done = testutil::runToCompletion(engine);
    int compared = 0, equal = 0;
    for (const auto& q : golden.at("prompts")) {
      const std::string name = q.at("name").get<std::string>();
      const int n0 = int(q.at("prompt_ids").size());
      const nlohmann::json& steps = q.at("steps");
      // The target's tokens are ik's up to a near-tie of its logits (test_arch_golden checks them
      // on qwen35-tiny, the same main stack): drafts are compared where the contexts are the same.
      const std::vector<int>& ours = done.at(name).outputs.at(0).token_ids;
      int agree = 0;
      while (agree < int(ours.size()) && agree < int(steps.size()) &&
             ours[std::size_t(agree)] == steps.at(std::size_t(agree)).at("token").get<int>())
        ++agree;
      QVERIFY2(!proposals[name].empty(), name.c_str());
      for (const auto& [n, drafts] : proposals[name]) {
        const int i = n - 1 - n0;  // the step whose token x_N = the request's last token
        QVERIFY(i >= 0 && i < int(steps.size()));
        if (i >= agree) continue;
        const nlohmann::json& st = steps.at(std::size_t(i));
        for (std::size_t j = 0; j < drafts.size() && j < st.at("drafts").size(); ++j) {
          ++compared;
          if (drafts[j] == st.at("drafts").at(j).get<int>()) {
            ++equal;
            continue;
          }
          // Not ik's draft: only where ik's top logits are within float noise of each other.
          const nlohmann::json& top = st.at("top10").at(j);
          const double best = top.at(0).at(1).get<double>();
          bool near = false;
          for (const auto& e : top) near |= e.at(0).get<int>() == drafts[j] && best - e.at(1).get<double>() < 2e-3;
          QVERIFY2(near, qPrintable(QStringLiteral("%1, N %2, draft %3: %4, ik %5")
                                        .arg(QString::fromStdString(name))
                                        .arg(n)
                                        .arg(j + 1)
                                        .arg(drafts[j])
                                        .arg(st.at("drafts").at(j).get<int>())));
          break;  // later drafts follow another token
        }
      }
    }
    qInfo("%d of %d drafts compared are ik's (the others at near-ties)", equal, compared);
    QVERIFY(equal >= 9 && equal >= compared - 2);
  }

  // The MTP proposer changes nothing in greedy output, batched, with prompts in chunks, on
  // second turns that hit the prefix cache (their cached rows have no target hidden state), with
  // a block that has its FFN and one without (Qwen3.5's small checkpoints); and it drafts.
  void mtpGreedyIdentical_data() {
    QTest::addColumn<bool>("ffn");
    QTest::newRow("block with FFN") << true;
    QTest::newRow("block without FFN") << false;
  }
  void mtpGreedyIdentical() {
    QFETCH(bool, ffn);
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    QTemporaryDir tmp;
    const QString path = mtpFile(tmp, src, ffn);
    archtest::Golden g;
    QString why;
    QVERIFY2(archtest::loadGolden("qwen35-tiny.gguf", g, &why), qPrintable(why));
    std::vector<std::vector<int>> prompts;
    for (const auto& q : g.prompts) prompts.push_back(q.prompt_ids);
    const Turns plain = runTurns(mtpConfig(path.toStdString(), 0), prompts);
    const Turns spec = runTurns(mtpConfig(path.toStdString(), 3), prompts);
    QCOMPARE(spec.done.size(), 2 * prompts.size());
    for (const auto& [id, out] : plain.done) {
      const CompletionOutput &a = out.outputs.at(0), &b = spec.done.at(id).outputs.at(0);
      QCOMPARE(b.token_ids, a.token_ids);
      for (std::size_t i = 0; i < a.logprobs->size(); ++i)
        for (const auto& [tok, lp] : (*a.logprobs)[i]) QCOMPARE((*b.logprobs)[i].at(tok).logprob, lp.logprob);
    }
    QVERIFY(spec.cached > 0);
    QVERIFY(spec.stats.spec_num_draft_tokens > 0);
    QCOMPARE(plain.stats.spec_num_draft_tokens, 0LL);
  }

  // The app's choice per pane: an n-gram engine that also loads the MTP block offers both, MTP
  // the default; a request asking for n-gram drafts with it, one asking for a proposer the engine
  // lacks gets the default, one asking for none drafts nothing; outputs are those without drafts.
  // A model without MTP layers offers n-gram only, without a warning.
  void mtpChosenPerRequest() {
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    QTemporaryDir tmp;
    const QString path = mtpFile(tmp, src);
    using M = SpeculativeConfig::Method;
    EngineConfig c = mtpConfig(path.toStdString(), 0);
    c.speculative_config = parse_speculative_config("{\"method\": \"ngram\", \"num_speculative_tokens\": 3}");
    c.speculative_config.fit_to_batch = false;
    c.speculative_config.mtp_if_available = true;
    archtest::Golden g;
    QString why;
    QVERIFY2(archtest::loadGolden("qwen35-tiny.gguf", g, &why), qPrintable(why));
    const std::vector<int>& prompt = g.prompts.at(0).prompt_ids;
    SamplingParams p = testutil::greedy(16);
    p.ignore_eos = true;
    std::map<std::string, RequestOutput> out;
    std::map<std::string, int> drafted;
    {
      LLMEngine engine(c);
      QCOMPARE(engine.speculative_methods(), (std::vector<M>{M::kMtp, M::kNgram}));
      engine.set_draft_observer(
          [&](const std::string& id, int, const std::vector<int>& d) { drafted[id] += int(d.size()); });
      const std::vector<std::pair<std::string, std::optional<M>>> asks = {{"mtp", M::kMtp},
                                                                          {"ngram", M::kNgram},
                                                                          {"draft_model", M::kDraftModel},
                                                                          {"none", M::kNone},
                                                                          {"default", std::nullopt}};
      for (const auto& [id, m] : asks) {
        RequestOptions o;
        o.speculative_method = m;
        engine.add_request(id, prompt, p, o);
      }
      out = testutil::runToCompletion(engine);
    }
    QCOMPARE(out.size(), std::size_t(5));
    for (const auto& [id, o] : out) QCOMPARE(o.outputs.at(0).token_ids, out.at("none").outputs.at(0).token_ids);
    for (const char* id : {"mtp", "draft_model", "default"}) {
      QVERIFY2(drafted[id] > 0, id);  // the random MTP head always proposes
      QCOMPARE(out.at(id).metrics.spec_method, std::string("mtp"));
    }
    QCOMPARE(out.at("ngram").metrics.spec_method, std::string("ngram"));
    QCOMPARE(drafted["none"], 0);
    QCOMPARE(out.at("none").metrics.spec_method, std::string());

    c.model = src.toStdString();
    LLMEngine plain(c);
    QCOMPARE(plain.speculative_methods(), (std::vector<M>{M::kNgram}));
    QVERIFY(plain.warnings().empty());
  }

  // A model without MTP layers asked for MTP: an error naming the option and the file.
  void mtpRefusedWithoutLayers() {
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    try {
      LLMEngine engine(mtpConfig(src.toStdString(), 2));
      QFAIL("a model without MTP layers loaded with method mtp");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("--speculative-config") != std::string::npos && what.find("mtp") != std::string::npos &&
                   what.find("qwen35-tiny.gguf") != std::string::npos,
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestArchQwen35Mtp)
#include "test_arch_qwen35_mtp.moc"
