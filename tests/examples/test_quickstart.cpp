// examples/quickstart (vLLM's quick start as a program), run as a user would on Hugging Face
// folders as the hub ships them: BF16 safetensors, the model's generation_config.json
// ("do_sample": false: greedy; no max_new_tokens: vLLM's 16 tokens). The text must be the
// reference's greedy continuation (../shared/models/arch goldens: llama.cpp for Llama 3, a
// float64 forward after transformers for Qwen3), piece for piece.
#include <QTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include "test_paths.h"

namespace {
struct Run {
  int exitCode = -1;
  QByteArray out, err;
};
Run quickstart(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(QUICKSTART), args);
  Run r;
  if (!p.waitForFinished(300000)) return r;
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

// The golden's prompt named `name` and the bytes of its first `n` generated pieces.
bool goldenText(const QString& goldenPath, const QString& name, int n, QString* prompt, QByteArray* text) {
  QFile f(goldenPath);
  if (!f.open(QIODevice::ReadOnly)) return false;
  const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
  for (const QJsonValue& v : root.value("prompts").toArray()) {
    const QJsonObject p = v.toObject();
    if (p.value("name").toString() != name) continue;
    *prompt = p.value("prompt").toString();
    const QJsonArray pieces = p.value("generated_pieces_hex").toArray();
    if (pieces.size() < n) return false;
    text->clear();
    for (int i = 0; i < n; ++i) text->append(QByteArray::fromHex(pieces[i].toString().toLatin1()));
    return true;
  }
  return false;
}
}  // namespace

class TestQuickstart : public QObject {
  Q_OBJECT
 private slots:
  void greedyAsTheReference_data() {
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("golden");
    QTest::addColumn<QString>("prompt");
    QTest::newRow("llama3.1 once_upon") << "arch/llama3-tiny-hf"
                                        << "arch/llama3-tiny.gguf.golden.json"
                                        << "once_upon";
    QTest::newRow("llama3.1 korean") << "arch/llama3-tiny-hf"
                                     << "arch/llama3-tiny.gguf.golden.json"
                                     << "korean";
    QTest::newRow("qwen3 python") << "arch/qwen3-tiny-hf"
                                  << "arch/qwen3-tiny.golden.json"
                                  << "python";
  }
  void greedyAsTheReference() {
    QFETCH(QString, folder);
    QFETCH(QString, golden);
    QFETCH(QString, prompt);
    const QString dir = testpaths::modelFile(folder);
    REQUIRE_MODEL_FILE(dir + "/config.json");
    REQUIRE_MODEL_FILE(testpaths::modelFile(golden));
    QString promptText;
    QByteArray expected;
    QVERIFY(goldenText(testpaths::modelFile(golden), prompt, 16, &promptText, &expected));
    const Run r = quickstart({dir, promptText});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(r.out, "Prompt: " + promptText.toUtf8() + "\nGenerated text: " + expected + "\n");
  }

  void missingModelIsReported() {
    const Run r = quickstart({testpaths::modelFile("arch/no-such-model")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.startsWith("quickstart: ") && r.err.contains("no-such-model"), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestQuickstart)
#include "test_quickstart.moc"
