// Loading Llama 3.x and Qwen3 Hugging Face folders as the hub ships them (sharded BF16
// safetensors with model.safetensors.index.json, config.json, generation_config.json,
// tokenizer.json, tokenizer_config.json, special_tokens_map.json), their generation defaults and
// end-of-generation ids; and what is refused by name: unknown architectures, MoE, unsupported RoPE
// scaling, sliding windows in use, embedding rows that do not fit the tokenizer, GGUF tensor types
// this engine cannot read. Built from ../shared/models/arch in a QTemporaryDir.
#include <QTest>

#include <QTemporaryDir>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/gguf/gguf_writer.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/hf/safetensors.h"
#include "engine/loader/model_loader.h"
#include "engine/loader/random_model.h"
#include "engine/sample/sampling_defaults.h"

using namespace pagedchat;
using namespace archtest;
using json = nlohmann::json;

namespace {

ModelBundle load(const QString& path) {
  EngineConfig c;
  c.model = path.toStdString();
  return load_model(c);
}

void writeText(const QString& path, const std::string& text) {
  std::ofstream f(path.toStdString(), std::ios::binary);
  f << text;
}

json readJson(const QString& path) {
  std::ifstream f(path.toStdString());
  return json::parse(f);
}

// A folder `dir` with links to `src`'s weights and tokenizer files and `config` as config.json.
void linkedFolder(const QString& src, const QString& dir, const json& config) {
  QDir().mkpath(dir);
  for (const char* f : {"model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    QFile::link(src + "/" + f, dir + "/" + f);
  writeText(dir + "/config.json", config.dump(2));
}

}  // namespace

class TestArchLoaders : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  // The folder re-sharded into two BF16 files with an index, plus special_tokens_map.json: the
  // same logits bit for bit as the single file, the golden within 1e-5; generation_config.json's
  // do_sample false -> greedy defaults; every eos id of config.json and generation_config.json stops.
  void hubLayout_data() {
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("golden");
    QTest::addColumn<QList<int>>("eos");
    QTest::newRow("llama3-tiny-hf") << "llama3-tiny-hf"
                                    << "llama3-tiny.gguf" << QList<int>{128001, 128008, 128009};
    QTest::newRow("qwen3-tiny-hf") << "qwen3-tiny-hf"
                                   << "qwen3-tiny" << QList<int>{151645, 151643};
  }
  void hubLayout() {
    QFETCH(QString, folder);
    QFETCH(QString, golden);
    QFETCH(QList<int>, eos);
    const QString src = archDir() + "/" + folder;
    REQUIRE_MODEL_FILE(src);
    REQUIRE_GOLDEN_FILES(golden, g);
    const QString dir = tmp_.filePath("hub-" + folder);
    QDir().mkpath(dir);
    const SafetensorsSet st = SafetensorsSet::open_file((src + "/model.safetensors").toStdString());
    std::vector<StTensorOut> shard[2];
    json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
    uint64_t total = 0;
    int i = 0;
    for (const auto& [name, t] : st.tensors()) {
      QCOMPARE(t.dtype, StDtype::kBF16);
      const int s = i++ % 2;
      shard[s].push_back({name, t.dtype, t.shape, t.data});
      index["weight_map"][name] = "model-0000" + std::to_string(s + 1) + "-of-00002.safetensors";
      total += t.nbytes;
    }
    index["metadata"]["total_size"] = total;
    for (int s = 0; s < 2; ++s)
      write_safetensors((dir + "/model-0000" + QString::number(s + 1) + "-of-00002.safetensors").toStdString(),
                        shard[s]);
    writeText(dir + "/model.safetensors.index.json", index.dump(2));
    for (const char* f : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"})
      QVERIFY(QFile::copy(src + "/" + f, dir + "/" + f));
    const json tc = readJson(src + "/tokenizer_config.json");
    json stm = json::object();
    for (const char* k : {"bos_token", "eos_token", "pad_token"})
      if (tc.contains(k) && tc[k].is_string())
        stm[k] = {
            {"content", tc[k]}, {"lstrip", false}, {"normalized", false}, {"rstrip", false}, {"single_word", false}};
    writeText(dir + "/special_tokens_map.json", stm.dump(2));

    const ModelBundle a = load(dir), b = load(src);
    QCOMPARE(a.format, std::string("huggingface"));
    QVERIFY(a.model.config.max_seq_len_is_soft);
    // generation_config.json: do_sample false and nothing else: greedy by default.
    QVERIFY(a.generation_defaults.do_sample && !*a.generation_defaults.do_sample);
    SamplingParams defaults;
    apply_sampling_defaults(a.generation_defaults, defaults);
    QCOMPARE(defaults.temperature, 0.0f);
    std::vector<int> stops = a.model.config.extra_eos_ids;
    stops.insert(stops.begin(), a.model.config.eos_id);
    for (int id : eos)
      QVERIFY2(std::find(stops.begin(), stops.end(), id) != stops.end(), qPrintable(QString::number(id)));
    for (int id : a.tokenizer->eos_ids()) QVERIFY(std::find(stops.begin(), stops.end(), id) != stops.end());

    auto backend = kernels::make_cpu_backend(2);
    DecoderModel ma(a.model.config, a.model.weights, *backend), mb(b.model.config, b.model.weights, *backend);
    const GoldenPrompt& p = g.prompts[2];
    const auto sa = archtest::teacherForced(ma, p), sb = archtest::teacherForced(mb, p);
    for (std::size_t s = 0; s < sa.size(); ++s)
      QVERIFY(std::memcmp(sa[s].data(), sb[s].data(), sa[s].size() * sizeof(float)) == 0);
    const Comparison r = compare(p, sa, 1e-4);
    QVERIFY2(r.mismatches == 0, r.first_mismatch.c_str());
    QVERIFY(r.max_abs() <= 1e-5);
  }

  // config.json options this engine does not compute are refused by name, naming the file.
  void configRefusals_data() {
    QTest::addColumn<QString>("patch");  // merged into qwen3-tiny-hf's config.json
    QTest::addColumn<QStringList>("words");
    QTest::newRow("gemma2") << R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2"})"
                            << QStringList{"Gemma2ForCausalLM", "not supported"};
    // A Qwen3-MoE config without its experts (a dense Qwen3 folder relabelled).
    QTest::newRow("qwen3 moe") << R"({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe"})"
                               << QStringList{"Qwen3-MoE", "num_experts", "num_experts_per_tok"};
    QTest::newRow("num_experts") << R"({"num_experts": 8, "num_experts_per_tok": 2})"
                                 << QStringList{"num_experts", "mixture-of-experts"};
    QTest::newRow("yarn")
        << R"({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})"
        << QStringList{"rope_scaling", "yarn", "not supported"};
    QTest::newRow("dynamic") << R"({"rope_scaling": {"type": "dynamic", "factor": 2.0}})" << QStringList{"dynamic"};
    QTest::newRow("longrope") << R"({"rope_scaling": {"rope_type": "longrope", "factor": 2.0}})"
                              << QStringList{"longrope"};
    QTest::newRow("sliding window") << R"({"use_sliding_window": true, "sliding_window": 4096, "max_window_layers": 0})"
                                    << QStringList{"sliding", "4096"};
    QTest::newRow("vocab rows") << R"({"vocab_size": 151660})" << QStringList{"model.embed_tokens.weight", "shape"};
    QTest::newRow("untied without lm_head") << R"({"tie_word_embeddings": false})" << QStringList{"lm_head.weight"};
    QTest::newRow("head_dim") << R"({"head_dim": 16})" << QStringList{"q_proj", "shape"};
    QTest::newRow("attention_bias") << R"({"attention_bias": true})" << QStringList{"q_proj.bias", "missing"};
  }
  void configRefusals() {
    QFETCH(QString, patch);
    QFETCH(QStringList, words);
    const QString src = archDir() + "/qwen3-tiny-hf";
    REQUIRE_MODEL_FILE(src);
    json cfg = readJson(src + "/config.json");
    cfg.merge_patch(json::parse(patch.toStdString()));
    const QString dir = tmp_.filePath("bad-" + QString(QTest::currentDataTag()).replace(' ', '_'));
    linkedFolder(src, dir, cfg);
    try {
      (void)load(dir);
      QFAIL("loaded");
    } catch (const std::runtime_error& e) {
      const QString m = e.what();
      QVERIFY2(m.contains(dir), e.what());
      for (const QString& w : words) QVERIFY2(m.contains(w), e.what());
    }
  }

  // Rows fewer than the tokenizer's ids: an error naming both sizes; more rows (Qwen's padding): fine.
  void vocabularyAndRows() {
    const QString src = archDir() + "/qwen3-tiny-hf";
    REQUIRE_MODEL_FILE(src);
    const ModelBundle b = load(src);
    QCOMPARE(b.model.config.vocab_size, 151936);
    QCOMPARE(b.tokenizer->vocab_size(), 151669);         // padded rows are fine
    check_vocab_sizes(*b.tokenizer, 151936, "m", true);  // Hugging Face rule: padding allowed
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, check_vocab_sizes(*b.tokenizer, 151936, "m", false));  // GGUF rule
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, check_vocab_sizes(*b.tokenizer, 400000, "m", true));
    // A folder whose embedding has 151660 rows (config.json agreeing): the tokenizer has ids past them.
    LoadedModel small;
    small.config = b.model.config;
    small.config.vocab_size = 151660;
    small.weights = b.model.weights;
    const QString dir = tmp_.filePath("rows-151660");
    write_hf_folder(small, (src + "/tokenizer.json").toStdString(), dir.toStdString(), "bf16");
    try {
      (void)load(dir);
      QFAIL("loaded");
    } catch (const std::runtime_error& e) {
      const QString m = e.what();
      QVERIFY2(m.contains("151669") && m.contains("151660") && m.contains("no embedding"), e.what());
    }
  }

  // A padding row (ids past the tokenizer's last) is never sampled, even when it would win: the
  // reply goes on with text instead of failing on an id without a piece.
  void paddingRowsNeverSampled() {
    const QString src = archDir() + "/qwen3-tiny-hf";
    REQUIRE_MODEL_FILE(src);
    EngineConfig c;
    c.model = src.toStdString();
    c.max_model_len = 64;
    c.num_threads = 2;
    LLMEngine engine(c);
    SamplingParams sp{.temperature = 0.0f, .max_tokens = 4, .ignore_eos = true};
    sp.logit_bias = {{151800, 100.0f}};  // a padding row, pushed to the top
    engine.add_request("pad", "Hello", sp);
    std::vector<int> ids;
    bool finished = false;
    while (engine.has_unfinished_requests())
      for (const RequestOutput& o : engine.step())
        if (o.finished) {
          finished = true;
          ids = o.outputs[0].token_ids;
          QVERIFY(o.outputs[0].finish_reason != FinishReason::kAbort);
        }
    QVERIFY(finished);
    QCOMPARE(ids.size(), std::size_t(4));
    for (int id : ids) QVERIFY2(id < 151669, qPrintable(QString::number(id)));
  }

  // A GGUF tensor of a type the engine has no kernels for (Q2_K, Q3_K, the IQ types but IQ4, ...) is
  // refused naming the tensor and the type, never computed. The file is a valid 256-wide model
  // whose Q8_0 attn_q tensor is relabelled (its bytes then hold fewer blocks of the new type).
  void unreadableTensorTypes_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<QString>("name");
    QTest::newRow("q3_K") << 11 << "q3_K";
    QTest::newRow("q2_K") << 10 << "q2_K";
    QTest::newRow("iq3_s") << 21 << "iq3_s";
    QTest::newRow("iq2_xxs") << 16 << "iq2_xxs";
  }
  void unreadableTensorTypes() {
    QFETCH(int, type);
    QFETCH(QString, name);
    const QString tok = testpaths::stories260K() + "/tok512.model";
    REQUIRE_MODEL_FILE(tok);
    const LoadedModel m = make_random_model(
        "random:dim=256,hidden_dim=256,n_layers=1,n_heads=4,n_kv_heads=4,vocab_size=512,max_seq_len=64");
    const auto t = load_tokenizer(tok.toStdString());
    const QString path = tmp_.filePath("k-" + name + ".gguf");
    write_gguf(m, *t, path.toStdString(), "q8_0");
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QByteArray bytes = f.readAll();
    // Tensor info: u64 name length, name, u32 n_dims (2), u64 ne[0], u64 ne[1], u32 type.
    const QByteArray tname = "blk.0.attn_q.weight";
    const qsizetype at = bytes.indexOf(tname);
    QVERIFY(at > 0);
    const qsizetype type_at = at + tname.size() + 4 + 16;
    uint32_t old_type;
    std::memcpy(&old_type, bytes.constData() + type_at, 4);
    QCOMPARE(old_type, 8u);  // Q8_0
    const uint32_t new_type = uint32_t(type);
    std::memcpy(bytes.data() + type_at, &new_type, 4);
    f.seek(0);
    f.write(bytes);
    f.close();
    try {
      (void)load_gguf(path.toStdString(), false);
      QFAIL("loaded");
    } catch (const std::runtime_error& e) {
      const QString msg = e.what();
      QVERIFY2(msg.contains(QString::fromLatin1(tname)) && msg.contains(name) && msg.contains("cannot load"), e.what());
    }
  }

 private:
  QTemporaryDir tmp_;
};

QTEST_GUILESS_MAIN(TestArchLoaders)
#include "test_arch_loaders.moc"
