// Bad input: missing or truncated checkpoints, absurd headers, missing or mismatched tokenizers,
// prompts longer than the context, bad sampling params -> an exception naming the file or the
// limit; never a crash.
#include <QTest>

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include "engine/llm.h"
#include "engine/loader/llama2c/llama2c_loader.h"
#include "engine_test_utils.h"

using namespace pagedchat;

namespace {
QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
void writeFile(const QString& path, const QByteArray& data) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(data);
}
/// Runs `fn`, expects an exception whose message contains every `needle`.
template <typename Fn>
QString expectError(Fn fn, const QStringList& needles) {
  try {
    fn();
  } catch (const std::exception& e) {
    const QString msg = QString::fromUtf8(e.what());
    for (const auto& n : needles)
      if (!msg.contains(n)) return "message '" + msg + "' lacks '" + n + "'";
    return {};
  }
  return "no exception";
}
#define EXPECT_ERROR(expr, ...)                                                \
  do {                                                                         \
    const QString err_ = expectError([&] { expr; }, QStringList{__VA_ARGS__}); \
    QVERIFY2(err_.isEmpty(), qPrintable(err_));                                \
  } while (0)
}  // namespace

class TestBadInput : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QByteArray checkpoint_;
  QString tokenizer_;

  /// A folder with a (possibly broken) checkpoint and the real tokenizer.
  QString modelDir(const QString& name, const QByteArray& bytes) {
    const QString dir = tmp_.filePath(name);
    QDir().mkpath(dir);
    writeFile(dir + "/model.bin", bytes);
    QFile::copy(tokenizer_, dir + "/tok512.model");
    return dir;
  }
  EngineConfig config(const QString& model) {
    EngineConfig c;
    c.model = model.toStdString();
    c.num_threads = 1;
    return c;
  }

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin");
    checkpoint_ = readAll(testpaths::stories260K() + "/stories260K.bin");
    tokenizer_ = testpaths::stories260K() + "/tok512.model";
    QVERIFY(checkpoint_.size() > 1000);
  }

  void missingFile() {
    EXPECT_ERROR(LLM(config("/no/such/model.bin")), "/no/such/model.bin");
    EXPECT_ERROR(load_llama2c("/no/such/model.bin"), "/no/such/model.bin");
  }

  void truncated_data() {
    QTest::addColumn<int>("length");
    for (int n : {0, 1, 27, 28, 100, 4096, 300000, -1}) QTest::newRow(qPrintable(QString::number(n))) << n;
  }
  void truncated() {
    QFETCH(int, length);
    const int n = length < 0 ? int(checkpoint_.size()) - 4 : length;
    const QString path = modelDir(QString("trunc%1").arg(n), checkpoint_.left(n)) + "/model.bin";
    EXPECT_ERROR(load_llama2c(path.toStdString()), path);
    EXPECT_ERROR(LLM(config(path)), path, "truncated");
    // The folder holding it says which file it rejected and why.
    EXPECT_ERROR(LLM(config(QFileInfo(path).path())), "model.bin is truncated");
  }

  void truncatedWithoutTokenizer() {
    // A broken checkpoint alone in its folder: its own problem is what the user needs to hear,
    // not the missing tokenizer.
    const QString dir = tmp_.filePath("trunc_notok");
    QDir().mkpath(dir);
    writeFile(dir + "/model.bin", checkpoint_.left(1000));
    EXPECT_ERROR(LLM(config(dir + "/model.bin")), dir + "/model.bin", "truncated");
  }

  void absurdHeader_data() {
    QTest::addColumn<int>("field");
    QTest::addColumn<int>("value");
    QTest::addColumn<QString>("needle");
    QTest::newRow("dim<0") << 0 << -5 << "dim";
    QTest::newRow("dim huge") << 0 << 1000000000 << "dim";
    QTest::newRow("hidden 0") << 1 << 0 << "hidden_dim";
    QTest::newRow("layers huge") << 2 << 2000000000 << "n_layers";
    QTest::newRow("heads 0") << 3 << 0 << "n_heads";
    QTest::newRow("heads not dividing dim") << 3 << 7 << "n_heads";
    QTest::newRow("kv heads > heads") << 4 << 16 << "n_kv_heads";
    QTest::newRow("kv heads not dividing") << 4 << 3 << "n_kv_heads";
    QTest::newRow("vocab 0") << 5 << 0 << "vocab_size";
    QTest::newRow("vocab huge") << 5 << 2000000000 << "vocab_size";
    QTest::newRow("seq_len negative") << 6 << -1 << "seq_len";
    QTest::newRow("seq_len huge needs more data") << 6 << 1000000 << "truncated";
    QTest::newRow("hidden large needs more data") << 1 << 100000 << "truncated";
  }
  void absurdHeader() {
    QFETCH(int, field);
    QFETCH(int, value);
    QFETCH(QString, needle);
    QByteArray bytes = checkpoint_;
    std::memcpy(bytes.data() + 4 * field, &value, 4);
    const QString path = modelDir(QString("hdr%1_%2").arg(field).arg(value), bytes) + "/model.bin";
    EXPECT_ERROR(load_llama2c(path.toStdString()), path, needle);
  }

  void missingTokenizer() {
    const QString dir = tmp_.filePath("notok");
    QDir().mkpath(dir);
    writeFile(dir + "/model.bin", checkpoint_);
    EXPECT_ERROR(LLM(config(dir)), dir, "--tokenizer");
    EXPECT_ERROR(LLM(config(dir + "/model.bin")), "--tokenizer");
    EngineConfig c = config(dir + "/model.bin");
    c.tokenizer = (dir + "/missing.model").toStdString();
    EXPECT_ERROR(LLM{c}, "missing.model");
  }

  void mismatchedTokenizer() {
    const QString llama2 = testpaths::modelFile("llama2-tokenizer/tokenizer.model");
    REQUIRE_MODEL_FILE(llama2);
    EngineConfig c = config(testpaths::stories260K());
    c.tokenizer = llama2.toStdString();
    EXPECT_ERROR(LLM{c}, "32000", "512");
  }

  void textFileNamedGguf() {
    // Not a model at all, but named .gguf: said to be a broken GGUF file (no "GGUF" magic), not a
    // broken llama2.c checkpoint.
    const QString path = tmp_.filePath("notes.gguf");
    writeFile(path, "these are my notes, not weights\n");
    EXPECT_ERROR(LLM(config(path)), path, "not a valid GGUF file", "GGUF");
  }

  void folderWithoutCheckpoint() {
    const QString dir = tmp_.filePath("empty");
    QDir().mkpath(dir);
    EXPECT_ERROR(LLM(config(dir)), dir, ".bin");
  }

  void promptLongerThanContext() {
    EngineConfig c = config(testpaths::stories260K());
    c.max_model_len = 16;
    LLMEngine engine(c);
    std::string prompt;
    for (int i = 0; i < 10; ++i) prompt += "Once upon a time ";
    EXPECT_ERROR(engine.add_request("long", prompt, testutil::greedy(5)), "max_model_len", "16");
    QVERIFY(!engine.has_unfinished_requests());
    // The model's own limit: 512 positions.
    LLMEngine full(config(testpaths::stories260K()));
    std::string huge;
    for (int i = 0; i < 200; ++i) huge += "Once upon a time ";
    EXPECT_ERROR(full.add_request("huge", huge, testutil::greedy(5)), "512");
    EngineConfig over = config(testpaths::stories260K());
    over.max_model_len = 4096;
    EXPECT_ERROR(LLM{over}, "4096", "512");
  }

  void badRequests() {
    LLMEngine engine(config(testpaths::stories260K()));
    SamplingParams p = testutil::greedy(5);
    p.temperature = -1;
    EXPECT_ERROR(engine.add_request("a", "hi", p), "temperature");
    p = testutil::greedy(0);
    EXPECT_ERROR(engine.add_request("a", "hi", p), "max_tokens");
    p = testutil::greedy(5);
    p.top_p = 0;
    EXPECT_ERROR(engine.add_request("a", "hi", p), "top_p");
    EXPECT_ERROR(engine.add_request("a", std::vector<int>{1, 5000}, testutil::greedy(5)), "5000");
    EXPECT_ERROR(engine.add_request("a", std::vector<int>{}, testutil::greedy(5)), "no tokens");
    engine.add_request("a", "hi", testutil::greedy(5));
    EXPECT_ERROR(engine.add_request("a", "hi", testutil::greedy(5)), "already");
    QCOMPARE(engine.num_unfinished_requests(), 1);
  }

  void cacheTooSmall() {
    EngineConfig c = config(testpaths::stories260K());
    c.num_blocks = 3;  // 48 tokens < 512 positions
    EXPECT_ERROR(LLM{c}, "KV cache", "max_model_len");
  }

  void badDtype() {
    EngineConfig c = config(testpaths::stories260K());
    // A name is read at the edges (CLI, settings) by parse_weight_dtype; the engine refuses a
    // value outside the enum.
    EXPECT_ERROR(pagedchat::parse_weight_dtype("int8"), "dtype", "bfloat16", "int8");
    c.dtype = static_cast<pagedchat::WeightDType>(42);
    EXPECT_ERROR(LLM{c}, "invalid engine config", "dtype", "42");
    for (const char* ok : {"auto", "float32", "bfloat16", "float16"}) {
      c.dtype = pagedchat::parse_weight_dtype(ok);
      QCOMPARE(std::string(pagedchat::weight_dtype_name(c.dtype)), std::string(ok));
      LLM llm(c);
      QCOMPARE(llm.generate({"Once"}, testutil::greedy(3))[0].outputs[0].token_ids.size(), size_t(3));
    }
  }
};

QTEST_GUILESS_MAIN(TestBadInput)
#include "test_bad_input.moc"
