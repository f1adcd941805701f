// A qwen35 GGUF that carries a multi-token-prediction block (`nextn_predict_layers` 1, as
// Qwen3.5/3.6 checkpoints converted with their MTP head): the file's last block is the MTP block
// (ik_llama.cpp create_qwen35_tensors: an attention layer, its FFN, nextn.eh_proj / enorm / hnorm
// / shared_head_norm). Written by the test from ../shared/models/arch/qwen35-tiny.gguf with
// block_count 5 and a blk.4 MTP block (random weights). It loads with the block kept aside
// (ModelWeights::mtp, for speculative decoding) and out of the main stack: the layer count and
// the greedy ids and logprobs of every golden prompt are bitwise those of the file without it.
#include <QTest>

#include <QTemporaryDir>
#include <cmath>
#include <random>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/model_loader.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {

// Writes qwen35-tiny plus an MTP block to `dst`; `keep` owns the new tensors' values.
void writeWithMtp(const QString& src, const QString& dst, std::vector<std::vector<float>>& keep) {
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
  std::mt19937 rng(35);
  for (const GgufTensorInfo& t : f.tensors()) {
    const GgufTensorOut o = gguf_tensor_copy(f, t);
    out.push_back(o);
    // The MTP block's attention layer and FFN: the shapes of the last (attention) layer's.
    if (t.name.rfind(last, 0) == 0) {
      GgufTensorOut m = o;
      m.name = mtp + t.name.substr(last.size());
      std::vector<float> v(std::size_t(std::max<uint64_t>(o.rows, 1) * o.cols));
      std::normal_distribution<float> d(0.0f, 0.05f);
      for (float& x : v) x = d(rng);
      keep.push_back(std::move(v));
      m.typed_src = nullptr;
      m.src = keep.back().data();
      m.type = GgmlType::F32;
      out.push_back(m);
    }
  }
  const uint64_t dim = uint64_t(*f.get_int("qwen35.embedding_length"));
  auto add = [&](const std::string& name, uint64_t rows, uint64_t cols) {
    std::vector<float> v(std::size_t(std::max<uint64_t>(rows, 1) * cols), 1.0f);
    keep.push_back(std::move(v));
    GgufTensorOut o;
    o.name = mtp + name;
    o.rows = rows;
    o.cols = cols;
    o.src = keep.back().data();
    out.push_back(o);
  };
  add("nextn.eh_proj.weight", dim, 2 * dim);
  add("nextn.enorm.weight", 0, dim);
  add("nextn.hnorm.weight", 0, dim);
  add("nextn.shared_head_norm.weight", 0, dim);
  write_gguf_file(dst.toStdString(), meta, out);
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

}  // namespace

class TestArchQwen35Mtp : public QObject {
  Q_OBJECT

 private slots:
  void mtpBlockKeptAside() {
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    QTemporaryDir tmp;
    const QString path = tmp.filePath("qwen35-mtp.gguf");
    std::vector<std::vector<float>> keep;
    writeWithMtp(src, path, keep);

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
    QCOMPARE(m.enorm[0], 1.0f);

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
};

QTEST_GUILESS_MAIN(TestArchQwen35Mtp)
#include "test_arch_qwen35_mtp.moc"
