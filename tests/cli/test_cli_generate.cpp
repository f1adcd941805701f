// pagedchat-cli generate, run as a user would: plain and --json output, streaming, sequential
// prefix-cache reuse, stop strings, errors on stderr with a non-zero exit.
#include <QTest>

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
QStringList base() { return {"generate", "--model", testpaths::stories260K(), "--temperature", "0", "--threads", "1"}; }
}  // namespace

class TestCliGenerate : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin"); }

  void plainAndJsonAgree() {
    const Run plain = cli(base() << "--prompt"
                                 << "Once upon a time"
                                 << "--max-tokens"
                                 << "30");
    QCOMPARE(plain.exitCode, 0);
    QVERIFY(plain.out.startsWith(", there was a little girl"));
    const Run json = cli(base() << "--prompt"
                                << "Once upon a time"
                                << "--prompt"
                                << "The dog"
                                << "--max-tokens"
                                << "30"
                                << "--json"
                                << "--logprobs"
                                << "2");
    QCOMPARE(json.exitCode, 0);
    const QJsonArray arr = QJsonDocument::fromJson(json.out).array();
    QCOMPARE(arr.size(), 3);  // two outputs, then the engine stats
    const QJsonObject first = arr[0].toObject();
    const QJsonObject c = first["outputs"].toArray()[0].toObject();
    QCOMPARE(c["text"].toString().toUtf8() + "\n", plain.out);
    QCOMPARE(c["token_ids"].toArray().size(), 30);
    QCOMPARE(c["finish_reason"].toString(), QString("length"));
    QVERIFY(c["stop_reason"].isNull());
    QCOMPARE(c["logprobs"].toArray().size(), 30);
    QCOMPARE(first["prompt_token_ids"].toArray()[0].toInt(), 1);
    QVERIFY(first["metrics"].toObject()["time_to_first_token"].toDouble() > 0);
    QVERIFY(arr[2].toObject().contains("engine_stats"));
    QCOMPARE(arr[2].toObject()["engine_stats"].toObject()["num_generation_tokens"].toInt(), 60);
  }

  void streamEqualsFinal() {
    const Run stream = cli(base() << "--prompt"
                                  << "Once upon a time"
                                  << "--max-tokens"
                                  << "30"
                                  << "--stream");
    const Run plain = cli(base() << "--prompt"
                                 << "Once upon a time"
                                 << "--max-tokens"
                                 << "30");
    QCOMPARE(stream.exitCode, 0);
    QCOMPARE(stream.out, plain.out);
  }

  void stopStringAndSequentialReuse() {
    const Run r = cli(base() << "--prompt"
                             << "Once upon a time, there was a little girl named Lily."
                             << "--prompt"
                             << "Once upon a time, there was a little girl named Lily. She"
                             << "--sequential"
                             << "--max-tokens"
                             << "40"
                             << "--stop"
                             << "park"
                             << "--json");
    QCOMPARE(r.exitCode, 0);
    const QJsonArray arr = QJsonDocument::fromJson(r.out).array();
    QCOMPARE(arr[0].toObject()["num_cached_tokens"].toInt(), 0);
    QVERIFY(arr[1].toObject()["num_cached_tokens"].toInt() >= 16);
    const QJsonObject c = arr[0].toObject()["outputs"].toArray()[0].toObject();
    if (c["finish_reason"].toString() == "stop") {
      QCOMPARE(c["stop_reason"].toString(), QString("park"));
      QVERIFY(!c["text"].toString().contains("park"));
    }
  }

  void errorsGoToStderr() {
    Run r = cli({"generate", "--model", "/no/such/model", "--prompt", "x"});
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY(r.err.contains("/no/such/model"));
    r = cli(base() << "--prompt"
                   << "x"
                   << "--max-tokens"
                   << "100000");
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.err.contains("max_model_len"));
    r = cli(base() << "--prompt"
                   << "x"
                   << "--top-p"
                   << "0");
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.err.contains("top_p"));
    r = cli(base() << "--prompt"
                   << "x"
                   << "--kv-cache-dtype"
                   << "int8");
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains("kv-cache-dtype") && r.err.contains("float16"), r.err.constData());
    // The oracle method replays a recorded continuation: benches only, a usage error elsewhere.
    r = cli(base() << "--prompt"
                   << "x"
                   << "--speculative-config"
                   << "{\"method\": \"oracle\", \"num_speculative_tokens\": 4}");
    QCOMPARE(r.exitCode, 105);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains("--speculative-config") && r.err.contains("oracle") && r.err.contains("bench"),
             r.err.constData());
  }

  // Without --max-tokens, a prompt that fits the context is not refused for the default 256: it
  // generates up to the end of the context (finish reason length). An explicit --max-tokens
  // that does not fit is still refused.
  void defaultMaxTokensFitsTheContext() {
    QString prompt;
    for (int i = 0; i < 40; ++i) prompt += QStringLiteral("Once upon a time ");
    const Run r = cli(base() << "--prompt" << prompt << "--max-model-len"
                             << "300"
                             << "--ignore-eos"
                             << "--json");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject first = QJsonDocument::fromJson(r.out).array()[0].toObject();
    const int promptLen = int(first["prompt_token_ids"].toArray().size());
    QVERIFY2(promptLen > 300 - 256 && promptLen < 300, qPrintable(QString::number(promptLen)));
    const QJsonObject c = first["outputs"].toArray()[0].toObject();
    QCOMPARE(c["finish_reason"].toString(), QString("length"));
    QCOMPARE(int(c["token_ids"].toArray().size()), 300 - promptLen);
    const Run explicitMax = cli(base() << "--prompt" << prompt << "--max-model-len"
                                       << "300"
                                       << "--max-tokens"
                                       << "256");
    QVERIFY(explicitMax.exitCode != 0);
    QVERIFY2(explicitMax.err.contains("max_model_len"), explicitMax.err.constData());
  }

  // In a batch, a prompt the engine refuses (longer than the context) is reported by its index
  // and skipped; the others still run, and the command's status is 1.
  void oneRefusedPromptDoesNotStopTheBatch() {
    QString longPrompt;
    for (int i = 0; i < 40; ++i) longPrompt += QStringLiteral("Once upon a time ");
    const QStringList args = base() << "--prompt"
                                    << "Once upon a time"
                                    << "--prompt" << longPrompt << "--max-model-len"
                                    << "64"
                                    << "--max-tokens"
                                    << "8";
    const Run r = cli(args);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("prompt 1:") && r.err.contains("max_model_len"), r.err.constData());
    QVERIFY2(r.out.contains("=== [0] Once upon a time\n") && r.out.contains("(not run:"), r.out.constData());
    const QByteArray first = r.out.split('\n').value(1);
    QVERIFY2(!first.isEmpty() && !first.startsWith("==="), r.out.constData());  // prompt 0's continuation
    const Run j = cli(QStringList(args) << "--json");
    QCOMPARE(j.exitCode, 1);
    const QJsonArray arr = QJsonDocument::fromJson(j.out).array();
    QCOMPARE(arr.size(), 3);  // two prompts and the engine stats
    QVERIFY(arr[0].toObject().contains("outputs"));
    QVERIFY(arr[1].toObject()["error"].toString().contains("max_model_len"));
  }

  // Every --kv-cache-dtype runs; float32 (run.c's K/V) and the default bfloat16 cache start the
  // same story on stories260K.
  void kvCacheDtypes() {
    for (const char* d : {"float32", "bfloat16", "float16", "auto"}) {
      const Run r = cli(base() << "--prompt"
                               << "Once upon a time"
                               << "--max-tokens"
                               << "20"
                               << "--kv-cache-dtype" << d);
      QVERIFY2(r.exitCode == 0, r.err.constData());
      QVERIFY2(r.out.startsWith(", there was a little girl"), r.out.constData());
    }
  }
};

QTEST_GUILESS_MAIN(TestCliGenerate)
#include "test_cli_generate.moc"
