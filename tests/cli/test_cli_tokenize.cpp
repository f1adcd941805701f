// pagedchat-cli tokenize and bench tokenize, run as a user would, on vocabulary-only GGUF files,
// tokenizer.json, Hugging Face folders, model GGUFs and sentencepiece .model files. Expected ids
// come from outside: llama.cpp's test vectors, the goldens of shared/models/arch (llama.cpp's own
// tokenization of their prompts) and llama2.c's.
#include <QTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include "test_paths.h"
#include "tokenizer_test_utils.h"

namespace {
struct Run {
  int exitCode = -1;
  QByteArray out, err;
};
Run cli(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(PAGEDCHAT_CLI), args);
  Run r;
  if (!p.waitForFinished(120000)) return r;
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}
QJsonArray ids(const std::vector<int>& v) {
  QJsonArray a;
  for (int id : v) a.append(id);
  return a;
}
QJsonObject json(const QStringList& args, int* exit_code = nullptr) {
  const Run r = cli(QStringList{"tokenize"} << args << "--json");
  if (exit_code) *exit_code = r.exitCode;
  return QJsonDocument::fromJson(r.out).object();
}
}  // namespace

class TestCliTokenize : public QObject {
  Q_OBJECT
 private slots:
  // Every text of llama.cpp's gpt-2 vectors through the CLI (--file: the bytes as they are).
  void vocabOnlyGguf() {
    const QString gguf = testpaths::modelFile("vocab/ggml-vocab-gpt-2.gguf");
    REQUIRE_MODEL_FILE(gguf);
    QTemporaryDir tmp;
    int n = 0;
    for (const auto& v : toktest::read_vectors(gguf)) {
      const QString file = tmp.filePath(QString("t%1.txt").arg(n++));
      QFile f(file);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(v.text.data(), qsizetype(v.text.size()));
      f.close();
      int rc = -1;
      const QJsonObject o = json({"--model", gguf, "--file", file}, &rc);
      QCOMPARE(rc, 0);
      QCOMPARE(o["ids"].toArray(), ids(v.ids));
      QCOMPARE(o["pieces"].toArray().size(), qsizetype(v.ids.size()));
    }
    QCOMPARE(n, 46);
  }

  // The exact --json shape, and the plain "id<TAB>piece" lines.
  void jsonShapeAndPlainLines() {
    const QString tj = testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    REQUIRE_MODEL_FILE(tj);
    const Run r = cli({"tokenize", "--model", tj, "--text", "Hello world", "--json"});
    QCOMPARE(r.exitCode, 0);
    // llama.cpp's vectors: "Hello world" -> 9906 1917; pieces in GPT-2's byte map (' ' is "Ġ").
    QCOMPARE(r.out, QByteArray("{\"ids\":[9906,1917],\"pieces\":[\"Hello\",\"Ġworld\"]}\n"));
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o.keys(), (QStringList{"ids", "pieces"}));
    const Run plain = cli({"tokenize", "--model", tj, "--text", "Hello world"});
    QCOMPARE(plain.exitCode, 0);
    QCOMPARE(plain.out, QByteArray("9906\tHello\n1917\tĠworld\n"));
  }

  // --add-bos, on a model GGUF (weights not loaded) and a HF folder: the goldens' prompt ids.
  void addBosAndGoldens() {
    const QString llama3 = testpaths::modelFile("arch/llama3-tiny.gguf");
    const QString qwen = testpaths::modelFile("arch/qwen3-tiny-hf");
    REQUIRE_MODEL_FILE(llama3);
    REQUIRE_MODEL_FILE(qwen);
    QCOMPARE(json({"--model", llama3, "--text", "Once upon a time", "--add-bos"})["ids"].toArray(),
             ids({128000, 12805, 5304, 264, 892}));
    QCOMPARE(json({"--model", llama3, "--text", "Once upon a time"})["ids"].toArray(), ids({12805, 5304, 264, 892}));
    QCOMPARE(json({"--model", llama3, "--text", "def main():\n    print(", "--add-bos"})["ids"].toArray(),
             ids({128000, 755, 1925, 4019, 262, 1194, 7}));
    QCOMPARE(json({"--model", qwen, "--text", "안녕하세요, 오늘은"})["ids"].toArray(),
             ids({126246, 144370, 91145, 11, 133857, 33704}));
    const QString tok512 = testpaths::stories260K() + "/tok512.model";
    REQUIRE_MODEL_FILE(tok512);
    QCOMPARE(json({"--model", tok512, "--text", "Once upon a time", "--add-bos"})["ids"].toArray(),
             ids({1, 403, 407, 261, 378}));  // llama2.c's golden/once_upon.json
  }

  // Special tokens written in the text are text unless --parse-special.
  void parseSpecial() {
    const QString tj = testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    REQUIRE_MODEL_FILE(tj);
    const QJsonArray special = json({"--model", tj, "--text", "<|eot_id|>", "--parse-special"})["ids"].toArray();
    QCOMPARE(special, ids({128009}));
    const QJsonArray plain = json({"--model", tj, "--text", "<|eot_id|>"})["ids"].toArray();
    QVERIFY(plain.size() > 1);
    for (const auto& v : plain) QVERIFY(v.toInt() < 128000);
  }

  void errors() {
    Run r = cli({"tokenize", "--model", "/nonexistent/tokenizer.json", "--text", "x"});
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.err.contains("/nonexistent/tokenizer.json"));
    QVERIFY(r.out.isEmpty());
    const QString tj = testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    r = cli({"tokenize", "--model", tj});
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.err.contains("--text"));
    QTemporaryDir tmp;
    const QString bad = tmp.filePath("tokenizer.json");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"model": {"type": "WordPiece", "vocab": {}}})");
    f.close();
    r = cli({"tokenize", "--model", bad, "--text", "x"});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(bad.toUtf8()) && r.err.contains("model.type") && r.err.contains("WordPiece"),
             r.err.constData());
  }

  void benchTokenize() {
    const QString gguf = testpaths::modelFile("vocab/ggml-vocab-gpt-2.gguf");
    REQUIRE_MODEL_FILE(gguf);
    const Run r = cli({"bench", "tokenize", "--model", gguf, "--size-mb", "0.2", "--runs", "2", "--json"});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QVERIFY(o["bytes"].toInt() > 199000 && o["bytes"].toInt() <= 200000);
    QVERIFY(o["tokens"].toInt() > 10000);
    QVERIFY(o["encode_mb_per_s"].toDouble() > 0);
    QVERIFY(o["encode_tokens_per_s"].toDouble() > 0);
  }
};

QTEST_GUILESS_MAIN(TestCliTokenize)
#include "test_cli_tokenize.moc"
