// pagedchat-cli chat, run as a user would: user lines on stdin, streamed replies on stdout, the
// conversation re-sent each turn (the second turn's prompt found in the prefix cache), /reset and
// /exit, old turns dropped to fit a small context, errors on stderr; Ctrl+C stops a reply and the
// chat goes on, at the prompt it exits; --timings and --version.
#include <QFile>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>

#include <cstring>
#include <limits>

#include "test_paths.h"

namespace {
struct Run {
  int exitCode = -1;
  QByteArray out, err;
};
Run cli(const QStringList& args, const QByteArray& input = {}) {
  QProcess p;
  p.start(QStringLiteral(PAGEDCHAT_CLI), args);
  Run r;
  if (!p.waitForStarted(30000)) return r;
  p.write(input);
  p.closeWriteChannel();
  if (!p.waitForFinished(120000)) return r;
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}
QStringList chatArgs(int maxTokens = 30) {
  return {"chat", "--model",      testpaths::stories260K(),   "--temperature", "0", "--threads",
          "1",    "--max-tokens", QString::number(maxTokens), "--verbose"};
}
// What `generate` prints for `prompt` (greedy, 30 tokens), without the final newline.
QByteArray generated(const QString& prompt) {
  const Run r = cli({"generate", "--model", testpaths::stories260K(), "--temperature", "0", "--threads", "1",
                     "--max-tokens", "30", "--prompt", prompt});
  return r.exitCode == 0 && r.out.endsWith('\n') ? r.out.chopped(1) : QByteArray("<generate failed>");
}
// The (cached, prompt) pairs of the "[cached N/M prompt tokens]" lines.
QList<QPair<int, int>> cachedCounts(const QByteArray& err) {
  QList<QPair<int, int>> out;
  static const QRegularExpression re(QStringLiteral(R"(\[cached (\d+)/(\d+) prompt tokens\])"));
  for (auto it = re.globalMatch(QString::fromUtf8(err)); it.hasNext();) {
    const auto m = it.next();
    out.append({m.captured(1).toInt(), m.captured(2).toInt()});
  }
  return out;
}
}  // namespace

class TestCliChat : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin"); }

  void twoTurnsReuseThePrefix() {
    const QString u1 = "Once upon a time", u2 = " One day";
    const Run r = cli(chatArgs(), (u1 + "\n" + u2 + "\n").toUtf8());
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("[chat template: none]"), r.err.constData());  // a llama2.c checkpoint has none
    QVERIFY2(r.err.contains("warning: the model has no chat template"), r.err.constData());  // said, as serve does
    // stories260K's template is plain continuation: each reply is what `generate` gives for the
    // conversation so far as one prompt.
    const QByteArray r1 = generated(u1);
    const QByteArray r2 = generated(u1 + QString::fromUtf8(r1) + u2);
    QVERIFY(!r1.isEmpty() && !r2.isEmpty());
    QCOMPARE(r.out, r1 + "\n" + r2 + "\n");
    const auto counts = cachedCounts(r.err);
    QCOMPARE(counts.size(), 2);
    QCOMPARE(counts[0].first, 0);
    QVERIFY2(counts[1].first > 0, r.err.constData());  // the first turn's blocks, prompt and reply
    QVERIFY(counts[1].first < counts[1].second);
    QVERIFY(counts[1].second > counts[0].second);
  }

  void resetAndExit() {
    const Run r = cli(chatArgs(), "Once upon a time\n\n/reset\nOnce upon a time\n/exit\nnever read\n");
    QCOMPARE(r.exitCode, 0);
    const QByteArray r1 = generated("Once upon a time");
    QCOMPARE(r.out, r1 + "\n" + r1 + "\n");  // after /reset the same first turn; blank lines are skipped
    QVERIFY(r.err.contains("[conversation reset]"));
    QCOMPARE(cachedCounts(r.err).size(), 2);
  }

  // A mistyped command is said to be one and not sent; "//" sends a message beginning with "/".
  void unknownCommands() {
    const Run r = cli(chatArgs(), "/imgae picture.png\n/Reset\n//Once upon a time\n");
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("unknown command /imgae") && r.err.contains("unknown command /Reset"), r.err.constData());
    QCOMPARE(cachedCounts(r.err).size(), 1);  // one message went to the model
    QCOMPARE(r.out, generated("/Once upon a time") + "\n");
  }

  // A step that throws (stories260K with NaN token embeddings: every logit NaN) skips the message
  // and the chat goes on; the next message is tried on a clean engine.
  void failedStepSkipsTheMessage() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(testpaths::writeNanStories260K(dir.path()));
    const Run r = cli({"chat", "--model", dir.path()}, "Once upon a time\nOne day\n");
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.err.count("engine step failed"), 2);
    QCOMPARE(r.err.count("message skipped"), 2);
  }

  void dropsOldestTurnsToFit() {
    QStringList args = chatArgs(16);
    args << "--max-model-len"
         << "64"
         << "--system"
         << "Tim and Sue.";
    const Run r = cli(args, "Once upon a time\n They played\n The dog ran\n It was fun\n The end\n");
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("oldest messages to fit max_model_len 64"), r.err.constData());
    const auto counts = cachedCounts(r.err);
    QCOMPARE(counts.size(), 5);
    for (const auto& c : counts) QVERIFY(c.second <= 64 - 16);
  }

  // --reasoning sets the template's switch: Gemma 4's template (thinking off by default) gets
  // its "<|think|>" system turn with "on" (a longer prompt), the same as --enable-thinking true;
  // a choice the template has no switch for is said, not silently dropped; a bad one is refused.
  void reasoningChoice() {
    auto promptTokens = [](const QStringList& extra) {
      QStringList args = chatArgs(4);
      args << "--chat-template"
           << "gemma4" << extra;
      const Run r = cli(args, "Hi\n");
      const auto counts = cachedCounts(r.err);
      return std::make_pair(counts.size() == 1 && r.exitCode == 0 ? counts[0].second : -1, r.err);
    };
    const int byDefault = promptTokens({}).first, off = promptTokens({"--reasoning", "off"}).first;
    const int on = promptTokens({"--reasoning", "on"}).first;
    QVERIFY(byDefault > 0);
    QCOMPARE(off, byDefault);
    QVERIFY2(on > off, qPrintable(QStringLiteral("%1 vs %2").arg(on).arg(off)));
    QCOMPARE(promptTokens({"--enable-thinking", "true"}).first, on);
    QCOMPARE(promptTokens({"--enable-thinking", "false"}).first, off);
    const auto [high, err] = promptTokens({"--reasoning", "high"});
    QCOMPARE(high, byDefault);
    QVERIFY2(err.contains("no reasoning effort"), err.constData());
    Run r = cli(chatArgs() << "--reasoning"
                           << "max",
                "Hi\n");
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("--reasoning"), r.err.constData());
    r = cli(chatArgs() << "--reasoning"
                       << "on"
                       << "--enable-thinking"
                       << "true",
            "Hi\n");
    QVERIFY(r.exitCode != 0);
  }

  // A reply of special tokens only (gptoss-tiny's random weights never open a Harmony channel)
  // is said on stderr, not left as an empty line; a reply with text says nothing of the kind.
  void onlySpecialTokensAreSaid() {
    const QString gptoss = testpaths::modelFile("arch/gptoss-tiny.gguf");
    REQUIRE_MODEL_FILE(gptoss);
    Run r = cli({"chat", "--model", gptoss, "--temperature", "0", "--threads", "1", "--max-tokens", "8"}, "Hi\n");
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.trimmed().isEmpty(), r.out.constData());
    QVERIFY2(r.err.contains("[8 tokens generated and no text"), r.err.constData());
    r = cli(chatArgs(8), "Hi\n");
    QCOMPARE(r.exitCode, 0);
    QVERIFY(!r.out.trimmed().isEmpty());
    QVERIFY2(!r.err.contains("no text"), r.err.constData());
  }
  void ctrlCStopsTheReplyThenExits();
  void versionAndTimings();
  void engineOptionsEverywhere();

  void errorsGoToStderr() {
    Run r = cli({"chat", "--model", testpaths::stories260K(), "--chat-template", "llama2"});
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains("llama-2") && r.err.contains("chatml"), r.err.constData());  // the known names
    r = cli({"chat", "--model", "/no/such/model"}, "hi\n");
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.err.contains("/no/such/model"));
    // A message longer than the context is skipped with a message; the chat goes on.
    QStringList args = chatArgs();
    args << "--max-model-len"
         << "16";
    r = cli(args, "Once upon a time there was a very long sentence that does not fit at all\nHi\n");
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("message skipped"), r.err.constData());
    QCOMPARE(cachedCounts(r.err).size(), 1);
  }
};

// Ctrl+C as ollama and llama-cli take it. A random-weight model at the stories110M shape with
// llama2's tokenizer decodes slowly enough (~tens of tokens/s on 2 threads, never EOS) that the
// signal, sent once the reply's first text is out, lands inside it.
void TestCliChat::ctrlCStopsTheReplyThenExits() {
  const QString tokenizer = testpaths::modelFile("llama2-tokenizer/tokenizer.model");
  REQUIRE_MODEL_FILE(tokenizer);
  QProcess p;
  p.start(QStringLiteral(PAGEDCHAT_CLI), {"chat", "--model", "random:stories110M", "--tokenizer", tokenizer,
                                          "--threads", "2", "--max-tokens", "400", "--timings"});
  QVERIFY(p.waitForStarted(30000));
  p.write("Once upon a time\n");
  // (Collected, not only read: QTRY evaluates the condition once more after it held, and a read
  // that consumed the text made that second look fail when no more had come in the meantime.)
  QByteArray out;
  QTRY_VERIFY_WITH_TIMEOUT((p.waitForReadyRead(100), out += p.readAllStandardOutput(), !out.isEmpty()), 120000);
  ::kill(pid_t(p.processId()), SIGINT);
  QByteArray err;
  QTRY_VERIFY_WITH_TIMEOUT((p.waitForReadyRead(100), err += p.readAllStandardError(), err.contains("[stopped")), 30000);
  QCOMPARE(p.state(), QProcess::Running);  // the session goes on
  // The timing line of the stopped reply: far fewer than 400 tokens.
  static const QRegularExpression timing(QStringLiteral(R"(\[prompt: (\d+) tokens .* decode: (\d+) tokens in)"));
  QTRY_VERIFY_WITH_TIMEOUT((p.waitForReadyRead(100), err += p.readAllStandardError(), timing.match(err).hasMatch()),
                           30000);
  QVERIFY2(timing.match(err).captured(2).toInt() < 400, err.constData());
  // Ctrl+C at the prompt ends the program (130 = 128 + SIGINT).
  ::kill(pid_t(p.processId()), SIGINT);
  QVERIFY(p.waitForFinished(30000));
  QCOMPARE(p.exitStatus(), QProcess::NormalExit);
  QCOMPARE(p.exitCode(), 130);
}

void TestCliChat::versionAndTimings() {
  Run r = cli({"--version"});
  QCOMPARE(r.exitCode, 0);
  QVERIFY2(r.out.startsWith("pagedchat-cli ") && r.out.trimmed().split(' ').size() == 2, r.out.constData());
  // generate --timings: one line per request on stderr, stdout unchanged.
  r = cli({"generate", "--model", testpaths::stories260K(), "--temperature", "0", "--threads", "1", "--max-tokens",
           "20", "--ignore-eos", "--prompt", "Once upon a time", "--timings"});
  QCOMPARE(r.exitCode, 0);
  QVERIFY(!r.out.trimmed().isEmpty() && !r.out.contains("[prompt"));
  static const QRegularExpression line(
      QStringLiteral(
          R"(^\[prompt: (\d+) tokens \((\d+) cached\) in [0-9.]+ s, ([0-9.]+|-) tok/s \| decode: 20 tokens in [0-9.]+ s, ([0-9.]+) tok/s\]$)"),
      QRegularExpression::MultilineOption);
  const QRegularExpressionMatch m = line.match(QString::fromUtf8(r.err));
  QVERIFY2(m.hasMatch(), r.err.constData());
  QVERIFY(m.captured(1).toInt() > 1);
  QVERIFY(m.captured(4).toDouble() > 0.0);
  // With drafts, the line says whose and how many were accepted (a prompt the reply repeats).
  r = cli({"generate", "--model", testpaths::stories260K(), "--temperature", "0", "--threads", "1", "--max-tokens",
           "40", "--ignore-eos", "--prompt", "The cat sat on the mat. The cat sat on the mat. The cat sat on the",
           "--speculative-config", R"({"method": "ngram", "num_speculative_tokens": 4, "fit_to_batch": false})",
           "--timings"});
  QCOMPARE(r.exitCode, 0);
  static const QRegularExpression drafts(
      QStringLiteral(R"(\| ngram drafts: (\d+) of (\d+) accepted, ([0-9.]+) tokens per verifying step\]$)"),
      QRegularExpression::MultilineOption);
  const QRegularExpressionMatch d = drafts.match(QString::fromUtf8(r.err));
  QVERIFY2(d.hasMatch(), r.err.constData());
  QVERIFY(d.captured(1).toInt() > 0 && d.captured(1).toInt() <= d.captured(2).toInt());
  QVERIFY(d.captured(3).toDouble() > 1.0);
  // chat --tint-drafts: the accepted drafts' text between ANSI green and reset; without the
  // escapes, the same reply as without the flag.
  const QStringList chat = {"chat",
                            "--model",
                            testpaths::stories260K(),
                            "--chat-template",
                            "llama-2",
                            "--temperature",
                            "0",
                            "--threads",
                            "1",
                            "--max-tokens",
                            "40",
                            "--speculative-config",
                            R"({"method": "ngram", "num_speculative_tokens": 4, "fit_to_batch": false})"};
  const QByteArray said = "The cat sat on the mat. The cat sat on the mat. The cat sat on the\n";
  const Run plain = cli(chat, said);
  const Run tinted = cli(QStringList(chat) << "--tint-drafts", said);
  QCOMPARE(plain.exitCode, 0);
  QCOMPARE(tinted.exitCode, 0);
  QVERIFY2(!plain.out.contains("\x1b["), plain.out.constData());
  QVERIFY2(tinted.out.contains("\x1b[32m"), tinted.out.constData());
  QCOMPARE(tinted.out.count("\x1b[32m"), tinted.out.count("\x1b[0m"));
  QCOMPARE(QByteArray(tinted.out).replace("\x1b[32m", "").replace("\x1b[0m", ""), plain.out);
}

// Every command that runs the engine takes the same engine options, explained the same way.
void TestCliChat::engineOptionsEverywhere() {
  const QStringList options = {"--max-model-len",
                               "--kv-cache-bytes",
                               "--block-size",
                               "--max-num-seqs",
                               "--num-state-slots",
                               "--max-num-batched-tokens",
                               "--long-prefill-token-threshold",
                               "--threads",
                               "--dtype",
                               "--kv-cache-dtype",
                               "--device"};
  QMap<QString, QString> explained;  // option -> its help line, as the first command says it
  for (const QStringList& command : {QStringList{"generate"}, QStringList{"chat"}, QStringList{"serve"},
                                     QStringList{"bench", "throughput"}, QStringList{"bench", "latency"}}) {
    const Run r = cli(command + QStringList{"--help"});
    QCOMPARE(r.exitCode, 0);
    const QString help = QString::fromUtf8(r.out);
    for (const QString& option : options) {
      const qsizetype at = help.indexOf(QRegularExpression("\\s" + QRegularExpression::escape(option) + "\\b"));
      QVERIFY2(at >= 0, qPrintable(command.join(' ') + " lacks " + option));
      const QString line = help.mid(at, help.indexOf('\n', at) - at).simplified();
      if (!explained.contains(option)) explained[option] = line;
      QVERIFY2(line == explained[option], qPrintable(command.join(' ') + ": " + line + " vs " + explained[option]));
    }
  }
  QVERIFY(cli({"chat", "--help"}).out.contains("--no-prefix-caching"));
  QVERIFY(cli({"serve", "--help"}).out.contains("--no-prefix-caching"));
}

QTEST_GUILESS_MAIN(TestCliChat)
#include "test_cli_chat.moc"
