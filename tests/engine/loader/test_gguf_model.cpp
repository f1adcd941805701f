// GGUF models end to end: llama.cpp's stories260K.gguf (F32) reproduces llama2.c's golden outputs
// token for token and its logits within 1e-4; the F16 and Q8_0 files are measured against them;
// write_gguf round trips (F32 exact, F16/Q8_0 byte-identical to llama.cpp's own quantizer).
#include <QTest>

#include <unistd.h>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtEndian>
#include <cmath>
#include <cstdio>

#include "engine/llm.h"
#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_writer.h"
#include "engine/loader/llama2c/llama2c_loader.h"
#include "engine/loader/model_loader.h"
#include "engine/model/decoder_model.h"
#include "engine_test_utils.h"
#include "kernels/ops.h"

using namespace pagedchat;

namespace {
std::vector<int> toIds(const QJsonArray& a) {
  std::vector<int> v;
  for (const auto& x : a) v.push_back(x.toInt());
  return v;
}
QJsonObject readJson(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}
QString gguf(const char* name) { return testpaths::stories260K() + "/" + name; }
QString golden(const QString& name) { return testpaths::stories260K() + "/golden/" + name + ".json"; }

/// Runs the golden case `name` greedily through LLM on `model`; returns how many generated ids
/// match before the first difference (and whether the text matches) — the caller decides what it
/// requires.
struct GreedyResult {
  int matched = 0, total = 0;
  bool prompt_ok = false, text_ok = false;
};
GreedyResult runGreedy(const QString& model, const QString& name) {
  const QJsonObject g = readJson(golden(name));
  const std::string prompt = g["prompt"].toString().toStdString();
  const std::vector<int> expected_prompt = toIds(g["prompt_ids_with_bos"].toArray());
  const std::vector<int> expected = toIds(g["generated_ids"].toArray());
  const int steps = g["steps"].toInt();
  EngineConfig c;
  c.model = model.toStdString();
  c.num_threads = 2;
  c.max_model_len = 512;                                 // the metadata says 128; the goldens run to 200 (+1) positions
  c.kv_cache_dtype = pagedchat::KvCacheDType::kFloat32;  // run.c's goldens are float32 throughout
  LLM llm(c);
  GreedyResult r;
  r.prompt_ok = llm.engine().tokenizer().encode(prompt, true) == expected_prompt;
  const auto outs = llm.generate({prompt}, testutil::greedy(steps - int(expected_prompt.size()) + 1));
  const auto& out = outs.at(0).outputs.at(0);
  r.total = int(expected.size());
  while (r.matched < r.total && r.matched < int(out.token_ids.size()) &&
         out.token_ids[r.matched] == expected[r.matched])
    ++r.matched;
  r.text_ok = QString::fromStdString(prompt + out.text) == g["full_text"].toString() &&
              out.token_ids.size() == expected.size();
  return r;
}

/// Max |logit - golden| over the 128 rows of once_upon.logits.f32, fed in uneven chunks.
double maxLogitError(const LoadedModel& model) {
  const QString dir = testpaths::stories260K();
  const QJsonObject g = readJson(dir + "/golden/once_upon.json");
  std::vector<int> seq = toIds(g["prompt_ids_with_bos"].toArray());
  for (int id : toIds(g["generated_ids"].toArray())) seq.push_back(id);
  QFile f(dir + "/golden/once_upon.logits.f32");
  if (!f.open(QIODevice::ReadOnly)) return INFINITY;
  const QByteArray raw = f.readAll();
  const float* ref = reinterpret_cast<const float*>(raw.constData());
  const int vocab = model.config.vocab_size, rows = 128, bs = 16;
  ModelConfig mc = model.config;
  mc.max_seq_len = std::max(mc.max_seq_len, rows);
  auto backend = kernels::make_cpu_backend(2);
  DecoderModel llama(mc, model.weights, *backend);
  KVCache cache(mc, rows / bs, bs);
  double max_err = 0.0;
  int pos = 0;
  for (int chunk : {1, 4, 17, 33, 2, 71}) {
    ForwardBatch b;
    b.max_blocks_per_seq = rows / bs;
    for (int i = 0; i < rows / bs; ++i) b.block_tables.push_back(i);
    b.query_start_loc = {0, chunk};
    b.seq_lens = {pos + chunk};
    for (int i = 0; i < chunk; ++i) {
      b.input_ids.push_back(seq[pos + i]);
      b.positions.push_back(pos + i);
      b.slot_mapping.push_back(pos + i);
      b.logits_indices.push_back(i);
    }
    std::vector<float> logits;
    llama.forward(b, cache, logits);
    for (std::size_t i = 0; i < std::size_t(chunk) * vocab; ++i)
      max_err = std::max(max_err, double(std::fabs(logits[i] - ref[std::size_t(pos) * vocab + i])));
    pos += chunk;
  }
  return max_err;
}

/// Captures what the process writes to stderr while alive.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()), saved_(::dup(2)) {
    std::fflush(stderr);
    ::dup2(::fileno(file_), 2);
  }
  QString finish() {
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    std::rewind(file_);
    QByteArray out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) out.append(buf, int(n));
    std::fclose(file_);
    return QString::fromUtf8(out);
  }

 private:
  std::FILE* file_;
  int saved_;
};
}  // namespace

class TestGgufModel : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void f32Golden_data() {
    QTest::addColumn<QString>("name");
    for (const char* n : {"bos_only", "once_upon", "lily_tom"}) QTest::newRow(n) << n;
  }
  // llama.cpp's own F32 conversion: every golden id, the exact text.
  void f32Golden() {
    QFETCH(QString, name);
    REQUIRE_MODEL_FILE(gguf("stories260K.gguf"));
    const GreedyResult r = runGreedy(gguf("stories260K.gguf"), name);
    QVERIFY(r.prompt_ok);
    QVERIFY2(r.matched == r.total, qPrintable(QString("%1 / %2 golden ids").arg(r.matched).arg(r.total)));
    QVERIFY(r.text_ok);
  }

  void f32Logits() {
    REQUIRE_MODEL_FILE(gguf("stories260K.gguf"));
    const GgufModel g = load_gguf(gguf("stories260K.gguf").toStdString(), false);
    QCOMPARE(g.model.config.rope_style, RopeStyle::kInterleaved);
    QVERIFY(!g.model.config.shared_classifier);  // the converter wrote output.weight
    const double err = maxLogitError(g.model);
    qInfo("stories260K.gguf: max |logit - golden| = %.3g", err);
    QVERIFY2(err < 1e-4, qPrintable(QString::number(err)));
  }

  // The metadata's 128 positions are a default, not a limit: 512 works, with a warning.
  void softContextLength() {
    const QString path = gguf("stories260K.gguf");
    REQUIRE_MODEL_FILE(path);
    EngineConfig c;
    c.model = path.toStdString();
    c.num_threads = 1;
    {
      LLM llm(c);
      QCOMPARE(llm.engine().engine_config().max_model_len, 128);
    }
    c.max_model_len = 512;
    StderrCapture cap;
    LLM llm(c);
    const QString err = cap.finish();
    QCOMPARE(llm.engine().engine_config().max_model_len, 512);
    QVERIFY2(err.contains("warning") && err.contains("512") && err.contains("128"), qPrintable(err));
  }

  void quantizedFiles_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<QList<int>>("llamacpp");  // golden ids llama.cpp keeps (shared/models/README.md)
    // Measured max |logit - golden| over the 128 x 512 teacher-forced logits: F16 0.0113, Q8_0 0.290
    // (logits span about +-15). Tolerances leave ~2x margin.
    QTest::newRow("f16") << "stories260K-f16.gguf" << 0.025 << QList<int>{200, 124, 149};
    QTest::newRow("q8_0") << "stories260K-q8_0.gguf" << 0.6 << QList<int>{71, 67, 149};
  }
  // Quantization noise may flip near-ties: report how many golden ids survive (prefix before the
  // first difference; F16 keeps all, Q8_0 185/124/141 here with int8 activations vs llama.cpp's
  // 71/67/149), bound the logits.
  void quantizedFiles() {
    QFETCH(QString, file);
    QFETCH(double, tolerance);
    QFETCH(QList<int>, llamacpp);
    REQUIRE_MODEL_FILE(gguf(qPrintable(file)));
    const GgufModel g = load_gguf(gguf(qPrintable(file)).toStdString(), false);
    const double err = maxLogitError(g.model);
    QString report;
    int matched = 0, reference = 0, i = 0;
    for (const char* n : {"bos_only", "once_upon", "lily_tom"}) {
      const GreedyResult r = runGreedy(gguf(qPrintable(file)), n);
      QVERIFY(r.prompt_ok);
      report += QString(" %1 %2/%3").arg(n).arg(r.matched).arg(r.total);
      matched += r.matched;
      reference += std::min(llamacpp[i++], r.total);
    }
    // At least as close to run.c's golden as llama.cpp b4747 on the same file, over the three
    // prompts (a near-tie may flip either way in one of them: measured Q8_0 185/124/141 here).
    QVERIFY2(matched >= reference, qPrintable(report + QString(" vs llama.cpp %1").arg(reference)));
    qInfo("%s: max |logit - golden| = %.3g; golden ids matched:%s; resident %zu bytes", qPrintable(file), err,
          qPrintable(report), g.model.resident_bytes());
    QVERIFY2(err < tolerance, qPrintable(QString("max abs logit error %1").arg(err)));
  }

  void residentMemory() {
    for (const char* name : {"stories260K.gguf", "stories260K-f16.gguf", "stories260K-q8_0.gguf"}) {
      REQUIRE_MODEL_FILE(gguf(name));
      const GgufModel g = load_gguf(gguf(name).toStdString(), false);
      std::size_t mapped = 0, owned = 0;
      for (const auto& f : g.model.files) mapped += f->size();
      for (const auto& b : g.model.buffers) owned += b.size() * sizeof(float);
      qInfo("%s: resident %zu bytes (mapped %zu, float32 copies %zu)", name, g.model.resident_bytes(), mapped, owned);
      // Matrices stay in the file's type and norms are F32: everything in place, nothing copied.
      QCOMPARE(owned, std::size_t(0));
      QCOMPARE(mapped, std::size_t(QFileInfo(gguf(name)).size()));
      // Packed, the matrices take about the file's bytes (not 4 per weight): at most 1.1x the file.
      auto backend = kernels::make_cpu_backend(1);
      const DecoderModel model(g.model.config, g.model.weights, *backend);
      qInfo("%s: packed %zu bytes (%s)", name, model.packed_bytes(), model.packed_types().c_str());
      QVERIFY2(double(model.packed_bytes()) <= 1.1 * double(mapped), qPrintable(QString::number(model.packed_bytes())));
    }
  }

  void modelLoaderBundle() {
    REQUIRE_MODEL_FILE(gguf("stories260K.gguf"));
    EngineConfig c;
    c.model = gguf("stories260K.gguf").toStdString();
    const ModelBundle b = load_model(c);
    QCOMPARE(b.format, std::string("gguf"));
    QVERIFY(b.tokenizer);
    QCOMPARE(b.tokenizer->vocab_size(), 512);
    QCOMPARE(b.model.config.max_seq_len, 128);
    QVERIFY(b.model.config.max_seq_len_is_soft);
    QVERIFY(b.chat_template.empty());
    // An explicit tokenizer replaces the embedded vocabulary.
    c.tokenizer = (testpaths::stories260K() + "/tok512.model").toStdString();
    QCOMPARE(load_model(c).tokenizer->path(), c.tokenizer);
  }

  // llama2.c checkpoint -> write_gguf: F32 is exact; F16 and Q8_0 equal llama.cpp's files byte for byte.
  void writeRoundTrip_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("reference");
    QTest::newRow("f32") << "f32"
                         << "stories260K.gguf";
    QTest::newRow("f16") << "f16"
                         << "stories260K-f16.gguf";
    QTest::newRow("q8_0") << "q8_0"
                          << "stories260K-q8_0.gguf";
  }
  void writeRoundTrip() {
    QFETCH(QString, type);
    QFETCH(QString, reference);
    REQUIRE_MODEL_FILE(gguf(qPrintable(reference)));
    const LoadedModel src = load_llama2c((testpaths::stories260K() + "/stories260K.bin").toStdString());
    const auto tok_ptr = load_tokenizer((testpaths::stories260K() + "/tok512.model").toStdString());
    const Tokenizer& tok = *tok_ptr;
    const QString out = tmp_.filePath("written-" + type + ".gguf");
    write_gguf(src, tok, out.toStdString(), type.toStdString(), "{{ messages }}");

    // Same tensors, same types, same bytes as llama.cpp's conversion (which writes output.weight
    // where ours ties the classifier).
    const GgufFile mine = GgufFile::open(out.toStdString());
    const GgufFile ref = GgufFile::open(gguf(qPrintable(reference)).toStdString());
    int identical = 0;
    for (const auto& t : mine.tensors()) {
      const GgufTensorInfo* r = ref.find_tensor(t.name);
      QVERIFY2(r, qPrintable(QString::fromStdString(t.name)));
      QCOMPARE(int(t.type), int(r->type));
      QCOMPARE(t.ne, r->ne);
      identical += std::memcmp(mine.tensor_data(t), ref.tensor_data(*r), t.n_bytes) == 0;
    }
    qInfo("write_gguf %s: %d of %zu tensors byte-identical to llama.cpp's %s", qPrintable(type), identical,
          mine.tensors().size(), qPrintable(reference));
    QCOMPARE(identical, int(mine.tensors().size()));

    const GgufModel back = load_gguf(out.toStdString());
    QCOMPARE(back.chat_template, std::string("{{ messages }}"));
    QVERIFY(back.model.config.shared_classifier);
    if (type == "f32") {
      const std::size_t n = std::size_t(src.config.hidden_size) * src.config.intermediate_size;
      QVERIFY(std::memcmp(back.model.weights.layers[4].down_proj.data, src.weights.layers[4].down_proj.data,
                          n * sizeof(float)) == 0);
      for (const char* name : {"bos_only", "once_upon", "lily_tom"}) {
        const GreedyResult r = runGreedy(out, name);
        QVERIFY2(r.matched == r.total && r.text_ok, name);
      }
      QVERIFY(maxLogitError(back.model) < 1e-4);
    }
  }

  // GGUF -> GGUF: the vocabulary is read again from the source file; the untied classifier is kept.
  void writeFromGguf() {
    const QString path = gguf("stories260K.gguf");
    REQUIRE_MODEL_FILE(path);
    const GgufModel src = load_gguf(path.toStdString());
    const QString out = tmp_.filePath("from-gguf.gguf");
    write_gguf(src.model, *src.tokenizer, out.toStdString(), "f32");
    const GgufModel back = load_gguf(out.toStdString());
    QVERIFY(!back.model.config.shared_classifier);
    QCOMPARE(back.tokenizer->encode("Once upon a time", true), src.tokenizer->encode("Once upon a time", true));
    QVERIFY(maxLogitError(back.model) < 1e-4);
  }

  // Hugging Face (rotate-half) weights: written with Q/K rows permuted to GGUF's interleaved pairs.
  void writeNeoxPermutesQK() {
    const QString bin = testpaths::stories260K() + "/stories260K.bin";
    REQUIRE_MODEL_FILE(bin);
    const LoadedModel src = load_llama2c(bin.toStdString());
    LoadedModel neox;
    neox.config = src.config;
    neox.config.rope_style = RopeStyle::kNeox;
    neox.weights = src.weights;
    const int hd = src.config.head_dim, dim = src.config.hidden_size;
    auto unpermute = [&](const WeightTensor& wt, int rows) {
      const float* w = wt.f32();  // interleaved -> rotate-half (HF) row order
      float* out = neox.allocate(std::size_t(rows) * dim);
      for (int r = 0; r < rows; ++r) {
        const int h = r / hd, j = r % hd, dst = h * hd + (j % 2 == 0 ? j / 2 : j / 2 + hd / 2);
        std::memcpy(out + std::size_t(dst) * dim, w + std::size_t(r) * dim, sizeof(float) * dim);
      }
      return out;
    };
    for (std::size_t l = 0; l < src.weights.layers.size(); ++l) {
      neox.weights.layers[l].q_proj = unpermute(src.weights.layers[l].q_proj, src.config.n_heads * hd);
      neox.weights.layers[l].k_proj = unpermute(src.weights.layers[l].k_proj, src.config.n_kv_heads * hd);
    }
    const auto tok_ptr = load_tokenizer((testpaths::stories260K() + "/tok512.model").toStdString());
    const Tokenizer& tok = *tok_ptr;
    const QString out = tmp_.filePath("neox.gguf");
    write_gguf(neox, tok, out.toStdString(), "f32");
    const GgufModel back = load_gguf(out.toStdString(), false);
    for (std::size_t l = 0; l < src.weights.layers.size(); ++l) {
      QVERIFY(std::memcmp(back.model.weights.layers[l].q_proj.data, src.weights.layers[l].q_proj.data,
                          sizeof(float) * dim * dim) == 0);
      QVERIFY(std::memcmp(back.model.weights.layers[l].k_proj.data, src.weights.layers[l].k_proj.data,
                          sizeof(float) * dim * src.config.n_kv_heads * hd) == 0);
    }
  }

  void writeRejects() {
    const QString bin = testpaths::stories260K() + "/stories260K.bin";
    REQUIRE_MODEL_FILE(bin);
    const LoadedModel src = load_llama2c(bin.toStdString());
    const auto tok_ptr = load_tokenizer((testpaths::stories260K() + "/tok512.model").toStdString());
    const Tokenizer& tok = *tok_ptr;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             write_gguf(src, tok, tmp_.filePath("x.gguf").toStdString(), "q4_0"));
    const auto llama2_ptr = load_tokenizer(testpaths::modelFile("llama2-tokenizer/tokenizer.model").toStdString());
    const Tokenizer& llama2 = *llama2_ptr;
    try {
      write_gguf(src, llama2, tmp_.filePath("y.gguf").toStdString(), "f32");
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("32000"), e.what());
    }
    QVERIFY(!QFile::exists(tmp_.filePath("y.gguf")));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, write_gguf(src, tok, "/no/such/dir/z.gguf", "f32"));
  }

  // A BOS or EOS id beyond the model's vocabulary (the embedding's rows) is refused by name, with
  // or without the tokenizer: it would index past the logits.
  void specialIdOutsideVocabulary() {
    const QString bin = testpaths::stories260K() + "/stories260K.bin";
    REQUIRE_MODEL_FILE(bin);
    const LoadedModel src = load_llama2c(bin.toStdString());
    const auto tok = load_tokenizer((testpaths::stories260K() + "/tok512.model").toStdString());
    const QString good = tmp_.filePath("ids.gguf");
    write_gguf(src, *tok, good.toStdString(), "f32");
    QFile in(good);
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray bytes = in.readAll();
    for (const QByteArray& key :
         {QByteArray("tokenizer.ggml.eos_token_id"), QByteArray("tokenizer.ggml.bos_token_id")}) {
      // GGUF: the key, then its type (u32 4 = UINT32) and the value (little-endian).
      const qsizetype at = bytes.indexOf(key);
      QVERIFY(at > 0);
      QCOMPARE(qFromLittleEndian<quint32>(bytes.constData() + at + key.size()), quint32(4));
      QByteArray patched = bytes;
      qToLittleEndian<quint32>(512, patched.data() + at + key.size() + 4);  // the vocabulary is 0..511
      const QString bad = tmp_.filePath("bad-ids.gguf");
      QFile out(bad);
      QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
      out.write(patched);
      out.close();
      for (const bool withTokenizer : {false, true}) {
        try {
          (void)load_gguf(bad.toStdString(), withTokenizer);
          QFAIL(qPrintable("accepted " + key));
        } catch (const std::runtime_error& e) {
          QVERIFY2(QString(e.what()).contains(QString::fromUtf8(key)) && QString(e.what()).contains("outside"),
                   e.what());
        }
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestGgufModel)
#include "test_gguf_model.moc"
