// `convert` for Llama 3.x, Qwen2 and Qwen3 (engine/loader/gguf/gguf_writer.h): a Hugging Face
// folder written to GGUF must equal the reference GGUF files of ../shared/models/arch — every
// tokenizer.* key (tokens, token types, merges, pre, special ids, chat template) and every
// architecture key as llama.cpp b4747's convert_hf_to_gguf.py wrote them, every tensor's values —
// and, loaded again, meet the golden at README.md's tolerance. (llama.cpp itself reading the
// converted llama/qwen2 files was checked by hand: see README.md "Use your own model".)
// The Qwen2 folder is made here from qwen2-tiny.gguf with ../tokenizers/qwen3 (its vocabulary).
#include <QTest>

#include <QTemporaryDir>
#include <cstring>
#include <nlohmann/json.hpp>

#include "arch_golden.h"
#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_writer.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/model_loader.h"

using namespace pagedchat;
using namespace archtest;

namespace {

bool sameValue(const GgufValue& a, const GgufValue& b) {
  if (a.type != b.type || a.elem_type != b.elem_type || a.uints != b.uints || a.ints != b.ints ||
      a.floats != b.floats || a.strings != b.strings || a.arrays.size() != b.arrays.size())
    return false;
  for (std::size_t i = 0; i < a.arrays.size(); ++i)
    if (!sameValue(a.arrays[i], b.arrays[i])) return false;
  return true;
}

std::vector<float> values(const GgufFile& f, const GgufTensorInfo& t) {
  std::vector<float> v(t.n_elements);
  dequantize(t.type, f.tensor_data(t), v.data(), t.n_elements);
  return v;
}

ModelBundle load(const QString& path) {
  EngineConfig c;
  c.model = path.toStdString();
  return load_model(c);
}

}  // namespace

class TestArchConvert : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    const QString qwen2 = archDir() + "/qwen2-tiny.gguf", tok = testpaths::modelFile("tokenizers/qwen3/tokenizer.json");
    if (!QFileInfo::exists(qwen2) || !QFileInfo::exists(tok)) return;  // the test functions report it
    // qwen2-tiny as a Hugging Face folder: Qwen2ForCausalLM, F32, the Qwen tokenizer.json (151669
    // tokens for 151936 rows, as Qwen ships it).
    const GgufModel g = load_gguf(qwen2.toStdString(), false);
    write_hf_folder(g.model, tok.toStdString(), tmp_.filePath("qwen2-tiny-hf").toStdString(), "f32");
  }

  void hfToGguf_data() {
    QTest::addColumn<QString>("source");     // a folder under arch/, or under the temporary dir
    QTest::addColumn<QString>("reference");  // the GGUF file llama.cpp's converter made (or its later naming)
    QTest::addColumn<QString>("golden");
    QTest::addColumn<QString>("type");
    QTest::addColumn<double>("tol");
    QTest::addColumn<double>("gap");
    QTest::newRow("llama3 f32") << archDir() + "/llama3-tiny-hf"
                                << "llama3-tiny.gguf"
                                << "llama3-tiny.gguf"
                                << "f32" << 1e-5 << 1e-4;
    QTest::newRow("llama3 f16") << archDir() + "/llama3-tiny-hf"
                                << "llama3-tiny.gguf"
                                << "llama3-tiny.gguf"
                                << "f16" << 1e-5 << 1e-4;
    QTest::newRow("qwen3 f32") << archDir() + "/qwen3-tiny-hf"
                               << "qwen3-tiny.gguf"
                               << "qwen3-tiny"
                               << "f32" << 1e-5 << 1e-4;
    QTest::newRow("qwen2 f32") << tmp_.filePath("qwen2-tiny-hf") << "qwen2-tiny.gguf"
                               << "qwen2-tiny.gguf"
                               << "f32" << 1e-2 << 1e-2;
  }
  void hfToGguf() {
    QFETCH(QString, source);
    QFETCH(QString, reference);
    QFETCH(QString, golden);
    QFETCH(QString, type);
    QFETCH(double, tol);
    QFETCH(double, gap);
    REQUIRE_MODEL_FILE(archDir() + "/" + reference);
    REQUIRE_MODEL_FILE(source);
    REQUIRE_GOLDEN_FILES(golden, g);
    const ModelBundle src = load(source);
    QCOMPARE(src.format, std::string("huggingface"));
    const QString out = tmp_.filePath(QFileInfo(source).fileName() + "-" + type + ".gguf");
    write_gguf(src.model, *src.tokenizer, out.toStdString(), type.toStdString(), src.chat_template);

    // Metadata: what the reference has, the converted file has, equal (file type and name aside).
    const GgufFile ref = GgufFile::open((archDir() + "/" + reference).toStdString()),
                   got = GgufFile::open(out.toStdString());
    int keys = 0;
    for (const auto& [key, value] : ref.metadata()) {
      if (key == "general.name" || key == "general.file_type") continue;
      const GgufValue* mine = got.find(key);
      QVERIFY2(mine, qPrintable(QString::fromStdString("missing key " + key)));
      QVERIFY2(sameValue(*mine, value), qPrintable(QString::fromStdString("key " + key + " differs")));
      ++keys;
    }
    for (const auto& [key, value] : got.metadata())
      QVERIFY2(ref.find(key) || key == "general.name", qPrintable(QString::fromStdString("extra key " + key)));
    // Tensors: the same names and shapes, the same values (rope_freqs to float32 rounding: the
    // converter computed them in float32).
    QCOMPARE(got.tensors().size(), ref.tensors().size());
    for (const GgufTensorInfo& rt : ref.tensors()) {
      const GgufTensorInfo* gt = got.find_tensor(rt.name);
      QVERIFY2(gt, rt.name.c_str());
      QCOMPARE(gt->ne, rt.ne);
      const std::vector<float> a = values(ref, rt), b = values(got, *gt);
      if (rt.name == "rope_freqs.weight") {
        for (std::size_t i = 0; i < a.size(); ++i) QVERIFY(std::fabs(a[i] / b[i] - 1) < 3e-7);
      } else if (type == "f16" && rt.type == GgmlType::F32 && rt.ne.size() > 1) {
        // bf16-exact matrices stored as f16: exact but where f16 is subnormal (spacing 6e-8)
        for (std::size_t i = 0; i < a.size(); ++i) QVERIFY2(std::fabs(a[i] - b[i]) <= 3e-8, rt.name.c_str());
      } else {
        QVERIFY2(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0, rt.name.c_str());
      }
    }

    // Loaded again by the engine: the golden, teacher-forced, at the README's tolerance.
    const ModelBundle back = load(out);
    QCOMPARE(back.model.config.architecture, src.model.config.architecture);
    auto backend = kernels::make_cpu_backend(2);
    DecoderModel m(back.model.config, back.model.weights, *backend);
    double worst = 0;
    for (const GoldenPrompt& p : g.prompts) {
      QCOMPARE(back.tokenizer->encode(p.prompt, back.model.config.add_bos), p.prompt_ids);
      const Comparison r = compare(p, archtest::teacherForced(m, p), gap);
      worst = std::max(worst, r.max_abs());
      QVERIFY2(r.mismatches == 0, r.first_mismatch.c_str());
    }
    qInfo("%s -> %s: %d metadata keys and %zu tensors as the reference; golden max |dlogit| %.3g", qPrintable(source),
          qPrintable(type), keys, ref.tensors().size(), worst);
    QVERIFY(worst <= tol);
  }

  // GGUF -> GGUF keeps a gpt2 vocabulary and rope_freqs as they are.
  void ggufToGguf() {
    const QString src = archDir() + "/llama3-tiny.gguf";
    REQUIRE_MODEL_FILE(src);
    const ModelBundle b = load(src);
    const QString out = tmp_.filePath("llama3-again.gguf");
    write_gguf(b.model, *b.tokenizer, out.toStdString(), "f16", b.chat_template);
    const GgufFile ref = GgufFile::open(src.toStdString()), got = GgufFile::open(out.toStdString());
    for (const auto& [key, value] : ref.metadata())
      if (key.rfind("tokenizer.", 0) == 0) QVERIFY2(got.find(key) && sameValue(*got.find(key), value), key.c_str());
    const GgufTensorInfo* rf = got.find_tensor("rope_freqs.weight");
    QVERIFY(rf);
    QCOMPARE(values(got, *rf), values(ref, *ref.find_tensor("rope_freqs.weight")));
    // A stop asked for (the CLI's Ctrl+C) before it is complete: no file, no ".tmp" left.
    std::stop_source stop;
    stop.request_stop();
    const QString stopped = tmp_.filePath("stopped.gguf");
    try {
      write_gguf(b.model, *b.tokenizer, stopped.toStdString(), "q8_0", b.chat_template, stop.get_token());
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("stopped"), e.what());
    }
    QVERIFY(!QFile::exists(stopped));
    QVERIFY(!QFile::exists(stopped + ".tmp"));
  }

  // What llama.cpp's graphs cannot run is refused by name, and nothing is left behind.
  void refusals() {
    const QString src = archDir() + "/qwen3-tiny-hf";
    REQUIRE_MODEL_FILE(src);
    const ModelBundle b = load(src);
    const std::string out = tmp_.filePath("refused.gguf").toStdString();
    auto expect = [&](LoadedModel m, const QStringList& words) {
      try {
        write_gguf(m, *b.tokenizer, out, "f32");
        QFAIL("no exception");
      } catch (const std::runtime_error& e) {
        for (const QString& w : words) QVERIFY2(QString(e.what()).contains(w), e.what());
      }
      QVERIFY(!QFile::exists(QString::fromStdString(out)));
    };
    auto with = [&](auto change) {
      LoadedModel m;
      m.config = b.model.config;
      m.weights = b.model.weights;
      change(m.config);
      return m;
    };
    expect(with([](ModelConfig& c) { c.architecture = "gemma2"; }), {"gemma2", "qwen3"});
    expect(with([](ModelConfig& c) {
             c.rope_scaling = {RopeScalingType::kLlama3, 8, 1, 4, 8192};
           }),
           {"Llama 3 RoPE scaling", "qwen3"});
    expect(with([](ModelConfig& c) { c.architecture = "qwen2"; }), {"q/k norms"});
    expect(with([](ModelConfig& c) { c.rope_style = RopeStyle::kInterleaved; }), {"interleaved"});
    expect(with([](ModelConfig& c) { c.vocab_size = 151000; }), {"151668", "151000", "tokenizer.json"});
  }

  // llama.cpp's pre-tokenizer names from tokenizer.json's pre_tokenizer.
  void preTokenizerNames() {
    // Hugging Face's Split expressions (tokenizer.json of Llama 3 and Qwen).
    const std::string llama3_re =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    auto pre = [](const std::string& re) {
      const nlohmann::json j = {
          {"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", re}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
      return j.dump();
    };
    QCOMPARE(hf_bpe_pre_name(pre(llama3_re), true), std::string("llama-bpe"));
    QCOMPARE(hf_bpe_pre_name(pre(llama3_re), false), std::string("smaug-bpe"));
    std::string qwen = llama3_re;
    qwen.replace(qwen.find("{1,3}"), 5, "");
    QCOMPARE(hf_bpe_pre_name(pre(qwen), false), std::string("qwen2"));
    QCOMPARE(
        hf_bpe_pre_name(
            nlohmann::json({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}).dump(), false),
        std::string("gpt-2"));
    QCOMPARE(hf_bpe_pre_name(nlohmann::json({{"type", "Metaspace"}, {"replacement", "_"}}).dump(), false),
             std::string());
    std::string other = llama3_re;
    other.replace(other.find("{1,3}"), 5, "{1,2}");
    QCOMPARE(hf_bpe_pre_name(pre(other), true), std::string());
  }

 private:
  QTemporaryDir tmp_;
};

QTEST_GUILESS_MAIN(TestArchConvert)
#include "test_arch_convert.moc"
