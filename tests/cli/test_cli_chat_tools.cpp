// pagedchat-cli chat with MCP tools (--mcp-config, --allow-tools, --tool-choice), run as a script
// would: the npm reference servers (@modelcontextprotocol/server-everything and server-filesystem)
// started from an mcpServers file, a tiny Qwen3 (random weights) whose call is forced by
// --tool-choice (constrained decoding), the call run and its result sent back before the model
// answers; a call not pre-approved is denied when stdin is no terminal to ask on; bad files and
// servers are clear errors or warnings.
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "test_paths.h"

namespace {
struct Run {
  int exitCode = -1;
  QByteArray out, err;
};
Run cli(const QStringList& args, const QByteArray& input) {
  QProcess p;
  p.start(QStringLiteral(PAGEDCHAT_CLI), args);
  Run r;
  if (!p.waitForStarted(30000)) return r;
  p.write(input);
  p.closeWriteChannel();
  if (!p.waitForFinished(180000)) return r;
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}
QString node() { return QStandardPaths::findExecutable("node"); }
QString npmServer(const QString& name) {
  return QStringLiteral(PAGEDCHAT_JS_DIR) + "/node_modules/@modelcontextprotocol/" + name + "/dist/index.js";
}
QString model() { return testpaths::modelFile("arch/qwen3-tiny.gguf"); }
// An mcpServers file in `dir` with `servers` (the object's inner text).
QString config(const QTemporaryDir& dir, const QByteArray& servers) {
  const QString path = dir.filePath("mcp.json");
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write("{\"mcpServers\": {" + servers + "}}");
  return path;
}
QByteArray everything() {
  return "\"everything\": {\"command\": \"" + node().toUtf8() + "\", \"args\": [\"" +
         npmServer("server-everything").toUtf8() + "\", \"stdio\"]}";
}
QStringList chatArgs(const QString& cfg) {
  return {"chat", "--model",      model(), "--mcp-config", cfg, "--temperature",
          "0",    "--max-tokens", "40",    "--threads",    "1"};
}
}  // namespace

class TestCliChatTools : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(model());
    if (node().isEmpty() || !QFileInfo::exists(npmServer("server-everything")))
      QFAIL("node or tests/js/node_modules/@modelcontextprotocol is missing (run scripts/install-deps.sh)");
  }

  // --tool-choice NAME forces the first reply into a call of that tool; --allow-tools runs it
  // without asking; its result goes back and the model answers (a second reply).
  void forcedCallRunsAndTheModelAnswers() {
    QTemporaryDir dir;
    const QString cfg = config(dir, everything());
    const Run r = cli(chatArgs(cfg) << "--tool-choice"
                                    << "get-tiny-image"
                                    << "--allow-tools"
                                    << "echo,get-tiny-image"
                                    << "--verbose",
                      "Show me a small picture\n");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("[MCP server 'everything': "), r.err.constData());
    QVERIFY2(r.err.contains("[tool get-tiny-image: ") && r.err.contains("[image: image/png"), r.err.constData());
    // Two replies (the call, then the answer after its result); the second's prompt repeats the
    // first's, so it comes from the prefix cache.
    QCOMPARE(r.err.count("[cached "), 2);
    const int second = r.err.lastIndexOf("[cached ");
    QVERIFY2(r.err.mid(second + 8, 2) != "0/", r.err.constData());
  }

  // Without --allow-tools and with stdin no terminal, nobody can be asked: the call is denied, the
  // model is told so, the chat goes on.
  void deniedWhenNobodyCanBeAsked() {
    QTemporaryDir dir;
    const QString cfg = config(dir, everything());
    const Run r = cli(chatArgs(cfg) << "--tool-choice"
                                    << "get-tiny-image",
                      "Show me a picture\nThanks\n");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("[tool get-tiny-image denied: stdin is no terminal"), r.err.constData());
    // A forced call cut short by --max-tokens is not run (never with other arguments than written):
    // its arguments are no JSON object.
    const Run cut = cli({"chat", "--model", model(), "--mcp-config", cfg, "--temperature", "0", "--max-tokens", "2",
                         "--threads", "1", "--tool-choice", "echo", "--allow-tools", "echo"},
                        "Say hi\n");
    QVERIFY2(cut.exitCode == 0, cut.err.constData());
    QVERIFY2(cut.err.contains("[tool echo not run: its arguments are not a JSON object"), cut.err.constData());
    QVERIFY2(!cut.err.contains("[tool echo:"), cut.err.constData());
  }

  // server-filesystem on a temporary folder: its tool that takes no arguments, forced.
  void filesystemServer() {
    QTemporaryDir dir, allowed;
    const QString cfg = config(dir, "\"files\": {\"command\": \"" + node().toUtf8() + "\", \"args\": [\"" +
                                        npmServer("server-filesystem").toUtf8() + "\", \"" + allowed.path().toUtf8() +
                                        "\"]}");
    const Run r = cli(chatArgs(cfg) << "--tool-choice"
                                    << "list_allowed_directories"
                                    << "--allow-tools"
                                    << "*",
                      "Where may you read?\n");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("[tool list_allowed_directories: "), r.err.constData());
    QVERIFY2(r.err.contains(QFileInfo(allowed.path()).fileName().toUtf8()), r.err.constData());
  }

  void badConfigurations() {
    QTemporaryDir dir;
    // A server that cannot start: a warning, the chat without its tools.
    Run r = cli(chatArgs(config(dir, "\"gone\": {\"command\": \"/nonexistent/server\"}")), "Hello\n");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("MCP server 'gone': cannot start") && r.err.contains("its tools are left out"),
             r.err.constData());
    QVERIFY(!r.out.trimmed().isEmpty());  // it answered
    // A file that is no mcpServers document, a --tool-choice naming no tool: errors, exit 1.
    r = cli(chatArgs(config(dir, "\"bad\": {\"url\": \"ftp://x\"}")), "Hello\n");
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("MCP server 'bad'") && r.err.contains("http://"), r.err.constData());
    r = cli(chatArgs(config(dir, everything())) << "--tool-choice"
                                                << "no_such_tool",
            "Hello\n");
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("no_such_tool"), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestCliChatTools)
#include "test_cli_chat_tools.moc"
