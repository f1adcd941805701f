// pagedchat-cli convert: stories260K written as GGUF (f32, f16, q8_0, q4_k_m) and as a Hugging Face folder
// (f32, bf16); each output, loaded back by generate, reproduces the golden tokens (exactly for
// f32; the number of matching tokens is reported for the others). Llama 3 / Qwen3 folders of
// ../shared/models/arch to GGUF and Qwen3's GGUF (with the Qwen tokenizer.json) back to a folder:
// greedy generation from the result gives the arch golden's ids; EXAONE 4 (tests/data/exaone4) both
// ways. A signal during the write stops it and leaves nothing behind.
#include <QTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <signal.h>

#include "test_paths.h"

namespace {
int runCli(const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr) {
  QProcess p;
  p.start(QStringLiteral(PAGEDCHAT_CLI), args);
  if (!p.waitForFinished(300000)) return -1;
  if (out) *out = p.readAllStandardOutput();
  if (err) *err = p.readAllStandardError();
  return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}
QJsonObject golden(const QString& name) {
  QFile f(testpaths::stories260K() + "/golden/" + name + ".json");
  return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}
}  // namespace

class TestCliConvert : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin"); }

  void roundTrip_data() {
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("type");
    QTest::addColumn<bool>("exact");
    QTest::newRow("gguf f32") << "gguf"
                              << "f32" << true;
    QTest::newRow("gguf f16") << "gguf"
                              << "f16" << false;
    QTest::newRow("gguf q8_0") << "gguf"
                               << "q8_0" << false;
    // stories260K's rows (64, 172 values) are too short for K-quants: llama.cpp's fallbacks.
    QTest::newRow("gguf Q4_K_M") << "gguf"
                                 << "Q4_K_M" << false;
    QTest::newRow("hf f32") << "hf"
                            << "f32" << true;
    QTest::newRow("hf bf16") << "hf"
                             << "bf16" << false;
  }
  void roundTrip() {
    QFETCH(QString, to);
    QFETCH(QString, type);
    QFETCH(bool, exact);
    const QString out = tmp_.filePath(to + "-" + type + (to == "gguf" ? ".gguf" : ""));
    QByteArray err;
    QCOMPARE(runCli({"convert", "--model", testpaths::stories260K(), "--to", to, "--type", type, "--out", out}, nullptr,
                    &err),
             0);
    QVERIFY2(err.contains("wrote"), err.constData());
    const QJsonObject g = golden("once_upon");
    const QJsonArray expected = g["generated_ids"].toArray();
    QByteArray json;
    QCOMPARE(
        runCli({"generate", "--model", out, "--prompt", g["prompt"].toString(), "--temperature", "0", "--max-tokens",
                QString::number(expected.size()), "--json", "--threads", "1", "--kv-cache-dtype", "float32"},
               &json, &err),
        0);
    const QJsonArray ids =
        QJsonDocument::fromJson(json).array()[0].toObject()["outputs"].toArray()[0].toObject()["token_ids"].toArray();
    int match = 0;
    while (match < ids.size() && match < expected.size() && ids[match] == expected[match]) ++match;
    qInfo("%s %s: %d of %d golden tokens match before the first difference", qPrintable(to), qPrintable(type), match,
          int(expected.size()));
    if (exact)
      QCOMPARE(ids, expected);
    else
      QVERIFY(match >= 20);  // quantization noise may flip near-ties later on
  }

  void archRoundTrip_data() {
    QTest::addColumn<QStringList>("convert");  // after --out
    QTest::addColumn<QString>("out");
    QTest::addColumn<QString>("golden");
    const QString a = testpaths::modelFile("arch/");
    QTest::newRow("llama3 hf -> gguf q8_0")
        << QStringList{"--model", a + "llama3-tiny-hf", "--to", "gguf", "--type", "q8_0"} << "llama3.gguf"
        << a + "llama3-tiny.gguf.golden.json";
    QTest::newRow("qwen3 hf -> gguf f16")
        << QStringList{"--model", a + "qwen3-tiny-hf", "--to", "gguf", "--type", "f16"} << "qwen3.gguf"
        << a + "qwen3-tiny.golden.json";
    QTest::newRow("qwen3 gguf -> hf bf16")
        << QStringList{"--model",     a + "qwen3-tiny.gguf",
                       "--tokenizer", testpaths::modelFile("tokenizers/qwen3/tokenizer.json"),
                       "--to",        "hf",
                       "--type",      "bf16"}
        << "qwen3-hf" << a + "qwen3-tiny.golden.json";
    // EXAONE 4 (tests/data/exaone4; a float64 golden, bfloat16-exact weights): both ways.
    const QString e = EXAONE4_DIR;
    QTest::newRow("exaone4 gguf -> hf bf16") << QStringList{"--model",     e + "/exaone4-tiny.gguf",
                                                            "--tokenizer", e + "/exaone4-tiny-hf/tokenizer.json",
                                                            "--to",        "hf",
                                                            "--type",      "bf16"}
                                             << "exaone4-hf" << e + "/exaone4-tiny.golden.json";
    QTest::newRow("exaone4 hf -> gguf f16")
        << QStringList{"--model", e + "/exaone4-tiny-hf", "--to", "gguf", "--type", "f16"} << "exaone4.gguf"
        << e + "/exaone4-tiny.golden.json";
  }
  void archRoundTrip() {
    QFETCH(QStringList, convert);
    QFETCH(QString, out);
    QFETCH(QString, golden);
    REQUIRE_MODEL_FILE(golden);
    REQUIRE_MODEL_FILE(convert[1]);
    QFile gf(golden);
    QVERIFY(gf.open(QIODevice::ReadOnly));
    const QJsonObject g = QJsonDocument::fromJson(gf.readAll()).object()["prompts"].toArray()[2].toObject();  // python
    const QJsonArray expected = g["generated_ids"].toArray();
    QByteArray err, json;
    const QString path = tmp_.filePath(out);
    QCOMPARE(runCli(QStringList{"convert"} + convert + QStringList{"--out", path}, nullptr, &err), 0);
    QCOMPARE(runCli({"generate", "--model", path, "--prompt", g["prompt"].toString(), "--temperature", "0",
                     "--max-tokens", "8", "--json", "--threads", "1", "--kv-cache-dtype", "float32"},
                    &json, &err),
             0);
    const QJsonObject o = QJsonDocument::fromJson(json).array()[0].toObject();
    QCOMPARE(o["prompt_token_ids"].toArray(), g["prompt_ids"].toArray());
    const QJsonArray ids = o["outputs"].toArray()[0].toObject()["token_ids"].toArray();
    QCOMPARE(ids.size(), 8);
    for (int i = 0; i < 8; ++i) QCOMPARE(ids[i].toInt(), expected[i].toInt());
  }

  void badArguments() {
    QByteArray err;
    QVERIFY(runCli({"convert", "--model", testpaths::stories260K(), "--to", "gguf", "--type", "bf16", "--out",
                    tmp_.filePath("x.gguf")},
                   nullptr, &err) != 0);
    QVERIFY(err.contains("f32"));
    QVERIFY(runCli({"convert", "--model", "/no/such", "--to", "hf", "--out", tmp_.filePath("y")}, nullptr, &err) != 0);
    QVERIFY(err.contains("/no/such"));
  }

  // A signal while the weights are written (once the staging output exists) stops the write:
  // exit 128 + the signal, "was not written" said, and neither the output nor its staging file
  // or folder is left. A random model large enough that the write takes seconds.
  void signalStopsAndCleansUp_data() {
    QTest::addColumn<QString>("to");
    QTest::addColumn<int>("sig");
    QTest::newRow("gguf SIGINT") << "gguf" << int(SIGINT);
    QTest::newRow("hf SIGTERM") << "hf" << int(SIGTERM);
  }
  void signalStopsAndCleansUp() {
    QFETCH(QString, to);
    QFETCH(int, sig);
    const QString tok = testpaths::stories260K() + "/tok512.model";
    const QDir dir(tmp_.filePath("signal-" + to));
    QVERIFY(QDir().mkpath(dir.path()));
    const QString out = dir.filePath(to == "gguf" ? "big.gguf" : "big");
    QProcess p;
    p.start(QStringLiteral(PAGEDCHAT_CLI),
            {"convert", "--model", "random:dim=1024,hidden_dim=2048,n_layers=16,n_heads=8,n_kv_heads=8,vocab_size=512",
             "--tokenizer", tok, "--to", to, "--type", to == "gguf" ? "q8_0" : "f32", "--out", out});
    QVERIFY(p.waitForStarted(30000));
    // The staging output appears once the weights are being written.
    QTRY_VERIFY_WITH_TIMEOUT(
        !dir.entryList({"big*"}, QDir::AllEntries | QDir::Hidden).isEmpty() || p.state() == QProcess::NotRunning,
        120000);
    QVERIFY2(p.state() == QProcess::Running, p.readAllStandardError().constData());
    ::kill(pid_t(p.processId()), sig);
    QVERIFY(p.waitForFinished(120000));
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 128 + sig);
    QVERIFY2(err.contains("was not written"), err.constData());
    QVERIFY2(dir.entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).isEmpty(),
             qPrintable(dir.entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).join(", ")));
  }

  // Qwen3.5's Gated DeltaNet layers have no writer yet: said so, nothing written.
  void hybridModelRefused() {
    const QString q35 = testpaths::modelFile("arch/qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(q35);
    QByteArray err;
    QVERIFY(runCli({"convert", "--model", q35, "--to", "gguf", "--out", tmp_.filePath("q35.gguf")}, nullptr, &err) !=
            0);
    QVERIFY2(err.contains("qwen35") && err.contains("not supported yet"), err.constData());
    QVERIFY(!QFile::exists(tmp_.filePath("q35.gguf")));
  }
};

QTEST_GUILESS_MAIN(TestCliConvert)
#include "test_cli_convert.moc"
