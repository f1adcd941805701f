// Hugging Face folders end to end: stories260K written by write_hf_folder (F32, BF16), converted
// to F16 and split into shards here, loaded back through LLM -> the llama2.c golden outputs.
#include <QTest>

#include <QTemporaryDir>
#include <algorithm>
#include <random>

#include "engine/llm.h"
#include "engine/loader/hf/hf_loader.h"
#include "engine/loader/hf/safetensors.h"
#include "engine/loader/model_loader.h"
#include "engine_test_utils.h"
#include "kernels/quant/dtype.h"
#include "test_hf_utils.h"

using namespace pagedchat;
using namespace hftest;

namespace {
EngineConfig folderConfig(const QString& dir) {
  EngineConfig c;
  c.model = dir.toStdString();
  c.num_threads = 2;
  c.kv_cache_dtype = pagedchat::KvCacheDType::kFloat32;  // run.c's goldens are float32 throughout
  return c;
}

struct GreedyResult {
  std::vector<int> expected, got;
  std::string expected_text, got_text;
  std::optional<FinishReason> finish;
};

GreedyResult runGolden(const QString& model, const QString& goldenName) {
  const QJsonObject g = readJson(testpaths::stories260K() + "/golden/" + goldenName + ".json");
  const std::string prompt = g["prompt"].toString().toStdString();
  const int prompt_len = int(g["prompt_ids_with_bos"].toArray().size());
  LLM llm(folderConfig(model));
  const auto outs = llm.generate({prompt}, testutil::greedy(g["steps"].toInt() - prompt_len + 1));
  GreedyResult r;
  r.expected = toIds(g["generated_ids"].toArray());
  r.got = outs.at(0).outputs.at(0).token_ids;
  r.expected_text = g["full_text"].toString().toStdString();
  r.got_text = prompt + outs[0].outputs[0].text;
  r.finish = outs[0].outputs[0].finish_reason;
  return r;
}

int matchingPrefix(const std::vector<int>& a, const std::vector<int>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return int(i);
}

/// Rewrites folder `dir`'s model.safetensors with every tensor converted to F16.
void convertToF16(const QString& dir) {
  const SafetensorsSet st = SafetensorsSet::open_file((dir + "/model.safetensors").toStdString());
  std::vector<std::vector<uint16_t>> halves;  // binary16 bits (clang 14 has no _Float16 on x86)
  std::vector<StTensorOut> out;
  for (const auto& [name, t] : st.tensors()) {
    std::vector<float> f(t.num_elements);
    to_float32(t, f.data());
    halves.emplace_back(f.size());
    std::transform(f.begin(), f.end(), halves.back().begin(), pagedchat::kernels::fp32_to_fp16);
    out.push_back({name, StDtype::kF16, t.shape, halves.back().data()});
  }
  write_safetensors((dir + "/model.safetensors.tmp").toStdString(), out);
  QFile::remove(dir + "/model.safetensors");
  QFile::rename(dir + "/model.safetensors.tmp", dir + "/model.safetensors");
}
}  // namespace

class TestHf : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString f32_, bf16_, f16_, sharded_;
  std::vector<float> golden_;

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(storiesBin());
    REQUIRE_MODEL_FILE(testpaths::stories260K() + "/golden/once_upon.logits.f32");
    QVERIFY(tmp_.isValid());
    f32_ = tmp_.filePath("f32");
    bf16_ = tmp_.filePath("bf16");
    f16_ = tmp_.filePath("f16");
    sharded_ = tmp_.filePath("sharded");
    writeStories(f32_, "f32");
    writeStories(bf16_, "bf16");
    copyFolder(f32_, f16_);
    convertToF16(f16_);

    // Two shards and an index, as transformers' save_pretrained(max_shard_size=...) writes them.
    copyFolder(f32_, sharded_);
    QFile::remove(sharded_ + "/model.safetensors");
    const SafetensorsSet st = SafetensorsSet::open_file((f32_ + "/model.safetensors").toStdString());
    std::vector<StTensorOut> shard[2];
    nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
    int i = 0;
    for (const auto& [name, t] : st.tensors()) {
      const int s = i++ < int(st.tensors().size()) / 2 ? 0 : 1;
      shard[s].push_back({name, t.dtype, t.shape, t.data});
      index["weight_map"][name] = "model-0000" + std::to_string(s + 1) + "-of-00002.safetensors";
    }
    for (int s = 0; s < 2; ++s)
      write_safetensors((sharded_ + "/model-0000" + QString::number(s + 1) + "-of-00002.safetensors").toStdString(),
                        shard[s]);
    QVERIFY(writeAll(sharded_ + "/model.safetensors.index.json", QByteArray::fromStdString(index.dump(2))));

    const QByteArray raw = readAll(testpaths::stories260K() + "/golden/once_upon.logits.f32");
    golden_.resize(raw.size() / sizeof(float));
    std::memcpy(golden_.data(), raw.constData(), raw.size());
  }

  void folderContents() {
    for (const char* f :
         {"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json", "generation_config.json"})
      QVERIFY2(QFileInfo::exists(f32_ + "/" + f), f);
    const QJsonObject cfg = readJson(f32_ + "/config.json");
    QCOMPARE(cfg["architectures"].toArray().at(0).toString(), QString("LlamaForCausalLM"));
    QCOMPARE(cfg["hidden_size"].toInt(), 64);
    QCOMPARE(cfg["num_key_value_heads"].toInt(), 4);
    QCOMPARE(cfg["tie_word_embeddings"].toBool(), true);
    QCOMPARE(cfg["rms_norm_eps"].toDouble(), 1e-5);
    const QJsonObject tc = readJson(f32_ + "/tokenizer_config.json");
    QCOMPARE(tc["bos_token"].toString(), QString("<s>"));
    QCOMPARE(tc["eos_token"].toString(), QString("</s>"));
    QCOMPARE(tc["unk_token"].toString(), QString("<unk>"));
    // Tied: no lm_head in the file; F32 weights are used from the mapping.
    const SafetensorsSet st = SafetensorsSet::open_folder(f32_.toStdString());
    QVERIFY(!st.find("lm_head.weight"));
    QCOMPARE(int(st.tensors().size()), 1 + 5 * 9 + 1);
    const ModelBundle b = load_model(folderConfig(f32_));
    QCOMPARE(b.format, std::string("huggingface"));
    QCOMPARE(b.model.config.rope_style, RopeStyle::kNeox);
    QVERIFY(b.model.config.max_seq_len_is_soft);
    QCOMPARE(b.model.config.max_seq_len, 512);
    QVERIFY(b.model.buffers.empty());
    QCOMPARE(int(b.model.files.size()), 1);
    QVERIFY(b.model.weights.lm_head == b.model.weights.token_embedding);
  }

  void goldenF32_data() {
    QTest::addColumn<QString>("golden");
    QTest::addColumn<bool>("sharded");
    for (const char* name : {"bos_only", "once_upon", "lily_tom"}) {
      QTest::newRow(name) << name << false;
      QTest::newRow(qPrintable(QString(name) + " sharded")) << name << true;
    }
  }
  void goldenF32() {
    QFETCH(QString, golden);
    QFETCH(bool, sharded);
    const GreedyResult r = runGolden(sharded ? sharded_ : f32_, golden);
    QCOMPARE(r.got.size(), r.expected.size());
    for (size_t i = 0; i < r.expected.size(); ++i)
      QVERIFY2(r.got[i] == r.expected[i],
               qPrintable(QString("token %1: got %2, expected %3").arg(i).arg(r.got[i]).arg(r.expected[i])));
    QCOMPARE(QString::fromStdString(r.got_text), QString::fromStdString(r.expected_text));
    QCOMPARE(r.finish, std::optional(FinishReason::kLength));
  }

  void logitsF32() {
    const std::vector<int> seq = onceUponSequence();
    const ModelBundle b = load_model(folderConfig(f32_));
    const std::vector<float> got = computeLogits(b.model, seq, 128);
    QCOMPARE(got.size(), golden_.size());
    const double err = maxAbsDiff(got.data(), golden_.data(), got.size());
    qInfo("F32 folder: max |logit - golden| = %.3g", err);
    QVERIFY2(err < 1e-4, qPrintable(QString("max abs logit error %1").arg(err)));

    // The sharded copy computes exactly the same thing.
    const ModelBundle s = load_model(folderConfig(sharded_));
    QCOMPARE(int(s.model.files.size()), 2);
    const std::vector<float> sg = computeLogits(s.model, seq, 128);
    QVERIFY(std::memcmp(sg.data(), got.data(), got.size() * sizeof(float)) == 0);
  }

  // BF16 (8 mantissa bits) and F16 (11): report how many golden ids survive and bound the logits.
  void reducedPrecision_data() {
    QTest::addColumn<QString>("which");
    QTest::addColumn<double>("tolerance");
    // Measured on stories260K (see the qInfo lines): BF16 0.132, F16 0.0166 max abs logit error
    // over the 128x512 golden logits; the bounds leave ~2x headroom.
    QTest::newRow("bf16") << "bf16" << 0.25;
    QTest::newRow("f16") << "f16" << 0.03;
  }
  void reducedPrecision() {
    QFETCH(QString, which);
    QFETCH(double, tolerance);
    const QString dir = which == "bf16" ? bf16_ : f16_;
    const ModelBundle b = load_model(folderConfig(dir));
    // Matrices stay 16-bit, in place in the mapped file (the model packs them as they are).
    QVERIFY(!b.model.files.empty());
    QCOMPARE(b.model.weights.layers[0].q_proj.dtype, which == "bf16" ? kernels::DType::kBF16 : kernels::DType::kF16);
    const std::vector<float> got = computeLogits(b.model, onceUponSequence(), 128);
    const double err = maxAbsDiff(got.data(), golden_.data(), got.size());
    qInfo("%s folder: max |logit - golden| = %.3g (bound %.3g)", qPrintable(which), err, tolerance);
    QVERIFY2(err < tolerance, qPrintable(QString("max abs logit error %1").arg(err)));
    for (const char* name : {"bos_only", "once_upon", "lily_tom"}) {
      const GreedyResult r = runGolden(dir, name);
      int same = 0;
      for (size_t i = 0; i < std::min(r.got.size(), r.expected.size()); ++i) same += r.got[i] == r.expected[i];
      qInfo("%s %s: %d / %zu golden ids match position for position; first divergence at %d", qPrintable(which), name,
            same, r.expected.size(), matchingPrefix(r.got, r.expected));
      QVERIFY(matchingPrefix(r.got, r.expected) >= 1);
    }
  }

  // An untied classifier written as lm_head.weight (tie_word_embeddings false) is used; with
  // tie_word_embeddings true a present lm_head is ignored, as transformers ties it.
  void untiedClassifier() {
    LoadedModel m = load_llama2c(storiesBin().toStdString());
    const size_t n = size_t(m.config.vocab_size) * m.config.hidden_size;
    float* cls = m.allocate(n);
    std::copy_n(m.weights.token_embedding.f32(), n, cls);
    m.weights.lm_head = cls;
    m.config.shared_classifier = false;
    const QString dir = tmp_.filePath("untied");
    write_hf_folder(m, storiesTokenizer().toStdString(), dir.toStdString(), "f32");
    QCOMPARE(readJson(dir + "/config.json")["tie_word_embeddings"].toBool(), false);
    ModelBundle b = load_model(folderConfig(dir));
    QVERIFY(!b.model.config.shared_classifier);
    QVERIFY(b.model.weights.lm_head != b.model.weights.token_embedding);
    const std::vector<float> got = computeLogits(b.model, onceUponSequence(), 128);
    QVERIFY(maxAbsDiff(got.data(), golden_.data(), got.size()) < 1e-4);

    // Zero lm_head + tie_word_embeddings true -> the embedding is used, golden still holds.
    std::fill_n(cls, n, 0.0f);
    const QString tied_dir = tmp_.filePath("untied-zero");
    write_hf_folder(m, storiesTokenizer().toStdString(), tied_dir.toStdString(), "f32");
    nlohmann::json cfg = nlohmann::json::parse(readAll(tied_dir + "/config.json").toStdString());
    cfg["tie_word_embeddings"] = true;
    QVERIFY(writeAll(tied_dir + "/config.json", QByteArray::fromStdString(cfg.dump())));
    b = load_model(folderConfig(tied_dir));
    QVERIFY(b.model.config.shared_classifier);
    const std::vector<float> tied = computeLogits(b.model, onceUponSequence(), 128);
    QVERIFY(maxAbsDiff(tied.data(), golden_.data(), tied.size()) < 1e-4);
  }

  // head_dim * heads != hidden_size (as Mistral-Nemo): random weights, must load and generate.
  void explicitHeadDim() {
    const QString dir = tmp_.filePath("headdim");
    QDir().mkpath(dir);
    const uint64_t dim = 32, heads = 4, kv = 2, hd = 16, hidden = 48, vocab = 512, layers = 2;
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 0.05f);
    std::vector<std::vector<float>> store;
    std::vector<StTensorOut> ts;
    auto add = [&](const std::string& name, std::vector<uint64_t> shape, bool ones) {
      uint64_t n = 1;
      for (auto d : shape) n *= d;
      store.emplace_back(n);
      for (auto& x : store.back()) x = ones ? 1.0f : dist(rng);
      ts.push_back({name, StDtype::kF32, shape, store.back().data()});
    };
    store.reserve(64);
    add("model.embed_tokens.weight", {vocab, dim}, false);
    for (uint64_t l = 0; l < layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      add(p + "input_layernorm.weight", {dim}, true);
      add(p + "self_attn.q_proj.weight", {heads * hd, dim}, false);
      add(p + "self_attn.k_proj.weight", {kv * hd, dim}, false);
      add(p + "self_attn.v_proj.weight", {kv * hd, dim}, false);
      add(p + "self_attn.o_proj.weight", {dim, heads * hd}, false);
      add(p + "post_attention_layernorm.weight", {dim}, true);
      add(p + "mlp.gate_proj.weight", {hidden, dim}, false);
      add(p + "mlp.up_proj.weight", {hidden, dim}, false);
      add(p + "mlp.down_proj.weight", {dim, hidden}, false);
    }
    add("model.norm.weight", {dim}, true);
    add("lm_head.weight", {vocab, dim}, false);
    write_safetensors((dir + "/model.safetensors").toStdString(), ts);
    const nlohmann::json cfg = {{"architectures", {"MistralForCausalLM"}},
                                {"hidden_size", dim},
                                {"intermediate_size", hidden},
                                {"num_hidden_layers", layers},
                                {"num_attention_heads", heads},
                                {"num_key_value_heads", kv},
                                {"head_dim", hd},
                                {"rms_norm_eps", 1e-6},
                                {"rope_theta", 1e6},
                                {"max_position_embeddings", 64},
                                {"sliding_window", nullptr},
                                {"vocab_size", vocab},
                                {"tie_word_embeddings", false},
                                {"bos_token_id", 1},
                                {"eos_token_id", 2}};
    QVERIFY(writeAll(dir + "/config.json", QByteArray::fromStdString(cfg.dump())));
    QVERIFY(QFile::copy(storiesTokenizer(), dir + "/tokenizer.model"));
    LLM llm(folderConfig(dir));
    SamplingParams p = testutil::greedy(12);
    p.ignore_eos = true;
    const auto outs = llm.generate({"Once upon a time"}, p);
    QCOMPARE(outs.at(0).outputs.at(0).token_ids.size(), size_t(12));
    const ModelBundle b = load_model(folderConfig(dir));
    QCOMPARE(b.model.config.head_dim, 16);
    for (float x : computeLogits(b.model, {1, 100, 200, 300, 400}, 5)) QVERIFY(std::isfinite(x));
  }

  // tokenizer_config.json / generation_config.json reach the bundle and the engine.
  void sideFiles() {
    const QString dir = tmp_.filePath("side");
    copyFolder(f32_, dir);
    QVERIFY(writeAll(dir + "/tokenizer_config.json",
                     R"({"add_bos_token": true, "bos_token": {"content": "<s>", "lstrip": false},
                         "eos_token": "</s>", "chat_template": [{"name": "tool_use", "template": "T"},
                         {"name": "default", "template": "{{ messages[0]['content'] }}"}]})"));
    QVERIFY(writeAll(dir + "/generation_config.json",
                     R"({"do_sample": true, "temperature": 0.6, "top_p": 0.9, "top_k": 40,
                         "repetition_penalty": 1.1, "max_new_tokens": 77, "eos_token_id": [2, 7, 9]})"));
    const ModelBundle b = load_model(folderConfig(dir));
    QCOMPARE(b.chat_template, std::string("{{ messages[0]['content'] }}"));
    QCOMPARE(*b.generation_defaults.temperature, 0.6f);
    QCOMPARE(*b.generation_defaults.top_p, 0.9f);
    QCOMPARE(*b.generation_defaults.top_k, 40);
    QCOMPARE(*b.generation_defaults.repetition_penalty, 1.1f);
    QCOMPARE(*b.generation_defaults.max_new_tokens, 77);
    QCOMPARE(b.model.config.eos_id, 2);
    QCOMPARE(b.model.config.extra_eos_ids, (std::vector<int>{7, 9}));
    LLMEngine engine(folderConfig(dir));
    QCOMPARE(engine.chat_template(), std::string("{{ messages[0]['content'] }}"));

    // chat_template.jinja is used when tokenizer_config.json has none.
    QVERIFY(writeAll(dir + "/tokenizer_config.json", R"({"add_bos_token": true})"));
    QVERIFY(writeAll(dir + "/chat_template.jinja", "JINJA"));
    QCOMPARE(load_model(folderConfig(dir)).chat_template, std::string("JINJA"));
  }

  void tokenizerFiles() {
    const QString dir = tmp_.filePath("tokjson");
    copyFolder(f32_, dir);
    QFile::remove(dir + "/tokenizer.model");
    // A tokenizer.json is the folder's tokenizer (loaded, so a broken one is reported) ...
    QVERIFY(writeAll(dir + "/tokenizer.json", "{}"));
    HF_EXPECT_ERROR(LLM(folderConfig(dir)), dir, "tokenizer.json", "model");
    // ... and a real one that does not fit the model's 512 rows is refused by the size check.
    const QString llama3 = testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    if (QFileInfo::exists(llama3)) {
      QFile::remove(dir + "/tokenizer.json");
      QVERIFY(QFile::copy(llama3, dir + "/tokenizer.json"));
      // Its tokenizer_config.json (LlamaTokenizer's) names "<s>", which that vocabulary lacks.
      HF_EXPECT_ERROR(LLM(folderConfig(dir)), "tokenizer_config.json", "bos_token", "<s>");
      QFile::remove(dir + "/tokenizer_config.json");
      HF_EXPECT_ERROR(LLM(folderConfig(dir)), "128256", "512");
    }
    QFile::remove(dir + "/tokenizer.json");
    HF_EXPECT_ERROR(LLM(folderConfig(dir)), dir, "tokenizer.json", "tokenizer.model");
    EngineConfig c = folderConfig(dir);
    c.tokenizer = storiesTokenizer().toStdString();  // an explicit tokenizer is used instead
    LLM llm(c);
    QCOMPARE(llm.engine().tokenizer().vocab_size(), 512);
    const QString llama2 = testpaths::modelFile("llama2-tokenizer/tokenizer.model");
    if (QFileInfo::exists(llama2)) {
      c.tokenizer = llama2.toStdString();
      HF_EXPECT_ERROR(LLM{c}, "32000", "512");
    }
  }

  // The folder may be named through a file in it; weights without config.json are named as such.
  void paths() {
    QCOMPARE(QString::fromStdString(hf_folder_of((f32_ + "/model.safetensors").toStdString())), f32_);
    QCOMPARE(QString::fromStdString(hf_folder_of((f32_ + "/config.json").toStdString())), f32_);
    QCOMPARE(hf_folder_of((f32_ + "/tokenizer.model").toStdString()), std::string());
    QCOMPARE(hf_folder_of(testpaths::stories260K().toStdString()), std::string());
    QCOMPARE(load_model(folderConfig(f32_ + "/config.json")).path, f32_.toStdString());
    const QString dir = tmp_.filePath("noconfig");
    copyFolder(f32_, dir);
    QFile::remove(dir + "/config.json");
    HF_EXPECT_ERROR(LLM(folderConfig(dir)), dir, "config.json");
  }

  void writerArguments() {
    const LoadedModel m = load_llama2c(storiesBin().toStdString());
    HF_EXPECT_ERROR(write_hf_folder(m, storiesTokenizer().toStdString(), tmp_.filePath("x").toStdString(), "f16"),
                    "f16");
    HF_EXPECT_ERROR(write_hf_folder(m, "/no/such.model", tmp_.filePath("y").toStdString(), "f32"), "/no/such.model");
    QVERIFY(!QDir(tmp_.filePath("y")).exists());  // nothing left behind by a failed write
  }

  // The output is a new or empty folder: a folder with files in it is refused before anything is
  // written (a stale model.safetensors.index.json would win over the new weights; converting a
  // folder onto itself truncated the weights it was reading), and the files appear under their
  // name only once all are written.
  void writerOutputFolder() {
    const QString tok = storiesTokenizer();
    // Onto itself: the folder is refused and still loads as before.
    const QString self = tmp_.filePath("self");
    copyFolder(f32_, self);
    const qint64 size = QFileInfo(self + "/model.safetensors").size();
    {
      ModelBundle b = load_model(folderConfig(self));
      HF_EXPECT_ERROR(write_hf_folder(b.model, tok.toStdString(), self.toStdString(), "f32"), self,
                      "folder with files in it");
      HF_EXPECT_ERROR(write_hf_folder(b.model, tok.toStdString(), (self + "/").toStdString(), "f32"),
                      "folder with files in it");
      // Through a symlink to it, or a path that comes back to it: the same folder.
      QVERIFY(QFile::link(self, tmp_.filePath("self-link")));
      HF_EXPECT_ERROR(write_hf_folder(b.model, tok.toStdString(), tmp_.filePath("self-link").toStdString(), "f32"),
                      "folder with files in it");
      HF_EXPECT_ERROR(write_hf_folder(b.model, tok.toStdString(), (self + "/../self").toStdString(), "f32"),
                      "folder with files in it");
    }
    QCOMPARE(QFileInfo(self + "/model.safetensors").size(), size);
    const std::vector<float> again = computeLogits(load_model(folderConfig(self)).model, onceUponSequence(), 128);
    QVERIFY(maxAbsDiff(again.data(), golden_.data(), again.size()) < 1e-4);

    // A folder holding someone else's index: refused, left as it was.
    const LoadedModel m = load_llama2c(storiesBin().toStdString());
    const QString stale = tmp_.filePath("stale");
    QVERIFY(QDir().mkpath(stale));
    QVERIFY(writeAll(stale + "/model.safetensors.index.json",
                     R"({"weight_map":{"x":"model-00001-of-00002.safetensors"}})"));
    HF_EXPECT_ERROR(write_hf_folder(m, tok.toStdString(), stale.toStdString(), "f32"), stale,
                    "folder with files in it");
    QCOMPARE(QDir(stale).entryList(QDir::Files | QDir::NoDotAndDotDot).size(), 1);
    // A file where the folder should be: refused too.
    HF_EXPECT_ERROR(
        write_hf_folder(m, tok.toStdString(), (stale + "/model.safetensors.index.json").toStdString(), "f32"),
        "it is a file");
    HF_EXPECT_ERROR(write_hf_folder(m, tok.toStdString(), "", "f32"), "no output folder");

    // An empty folder (named with a trailing slash) is filled, keeping its mode; no staging folder
    // is left beside it.
    const QString empty = tmp_.filePath("empty");
    QVERIFY(QDir().mkpath(empty));
    const auto mode = QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                      QFileDevice::ReadGroup | QFileDevice::ExeGroup;
    QVERIFY(QFile::setPermissions(empty, mode));
    write_hf_folder(m, tok.toStdString(), (empty + "/").toStdString(), "f32");
    const auto others = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup |
                        QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther;
    QCOMPARE(QFileInfo(empty).permissions() & others, mode & others);  // not a new folder (umask: o+rx)
    // A symlink to an empty folder is written through: the files land in its target.
    const QString target = tmp_.filePath("link-target");
    QVERIFY(QDir().mkpath(target));
    QVERIFY(QFile::link(target, tmp_.filePath("link-out")));
    write_hf_folder(m, tok.toStdString(), tmp_.filePath("link-out").toStdString(), "f32");
    QVERIFY(QFileInfo(target + "/model.safetensors").isFile());
    QVERIFY(QFileInfo(tmp_.filePath("link-out")).isSymLink());
    const std::vector<float> got = computeLogits(load_model(folderConfig(empty)).model, onceUponSequence(), 128);
    QVERIFY(maxAbsDiff(got.data(), golden_.data(), got.size()) < 1e-4);
    QVERIFY(QDir(tmp_.path()).entryList({"*.partial-*"}, QDir::AllEntries).isEmpty());
    // A stop asked for (the CLI's Ctrl+C): refused by the writer, no folder and no staging left.
    std::stop_source stop;
    stop.request_stop();
    const QString stopped = tmp_.filePath("stopped");
    HF_EXPECT_ERROR(write_hf_folder(m, tok.toStdString(), stopped.toStdString(), "f32", stop.get_token()), "stopped");
    QVERIFY(!QFileInfo::exists(stopped));
    QVERIFY(QDir(tmp_.path()).entryList({"*.partial-*"}, QDir::AllEntries).isEmpty());
    // A read-only tokenizer (a package's, a hub cache's) is copied owner-writable, as the files
    // written beside it are.
    const QString readOnlyTok = tmp_.filePath("ro-tokenizer.model");
    QVERIFY(QFile::copy(tok, readOnlyTok));
    QVERIFY(QFile::setPermissions(readOnlyTok, QFileDevice::ReadOwner | QFileDevice::ReadGroup));
    const QString fromReadOnly = tmp_.filePath("from-ro");
    write_hf_folder(m, readOnlyTok.toStdString(), fromReadOnly.toStdString(), "f32");
    QVERIFY(QFileInfo(fromReadOnly + "/tokenizer.model").permissions() & QFileDevice::WriteOwner);
    // A new folder under folders that do not exist yet.
    const QString deep = tmp_.filePath("a/b/c");
    write_hf_folder(m, tok.toStdString(), deep.toStdString(), "f32");
    QVERIFY(QFileInfo(deep + "/model.safetensors").isFile());
  }
};

QTEST_GUILESS_MAIN(TestHf)
#include "test_hf.moc"
