// The MCP client (engine/entrypoints/mcp/) against real servers from npm, started by the test as a
// user's configuration would: @modelcontextprotocol/server-everything over stdio and over
// Streamable HTTP (tools, errors, an image, a long call stopped midway) and
// @modelcontextprotocol/server-filesystem on a temporary folder; then a faulty server
// (tests/js/misbehaving_mcp.mjs: garbage on stdout, a 50 MB result, 10 MB of tools, pages, a
// crash, a hang, an old protocol) and commands that are no server. Each failure is an McpError
// naming the server and why; the client stays usable where the server does.
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "engine/entrypoints/mcp/mcp_client.h"
#include "js_reference.h"

using namespace pagedchat::mcp;
using json = nlohmann::json;

namespace {
QString everything() { return jsref::js_dir() + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js"; }
QString filesystem() { return jsref::js_dir() + "/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"; }
QString missingServers() {
  if (jsref::node().isEmpty()) return "node is not on PATH";
  if (!QFileInfo::exists(everything()) || !QFileInfo::exists(filesystem()))
    return "tests/js/node_modules/@modelcontextprotocol is missing (run scripts/install-deps.sh)";
  return {};
}

ServerConfig nodeServer(const std::string& name, const QString& script, std::vector<std::string> args) {
  ServerConfig c;
  c.name = name;
  c.command = jsref::node().toStdString();
  c.args = {script.toStdString()};
  c.args.insert(c.args.end(), args.begin(), args.end());
  return c;
}

ServerConfig misbehaving(const std::string& mode) {
  return nodeServer(mode, jsref::js_dir() + "/misbehaving_mcp.mjs", {mode});
}

bool hasTool(const std::vector<Tool>& tools, const std::string& name) {
  for (const Tool& t : tools)
    if (t.name == name) return true;
  return false;
}

// The McpError message of `f`, or "" when it did not throw one.
template <typename F>
QString errorOf(F&& f) {
  try {
    f();
  } catch (const McpError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

// A loopback port free now (the kernel's choice for port 0).
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}
}  // namespace

class TestMcpClient : public QObject {
  Q_OBJECT

  // The same checks over either transport, on server-everything.
  void checkEverything(Client& c) {
    QVERIFY(c.server_info().find("everything") != std::string::npos || !c.server_info().empty());
    QVERIFY(c.protocol_version() >= "2025-03-26");
    const std::vector<Tool> tools = c.list_tools();
    QVERIFY(hasTool(tools, "echo"));
    QVERIFY(hasTool(tools, "get-sum"));
    for (const Tool& t : tools) QVERIFY(t.input_schema.is_object());
    ToolResult r = c.call_tool("echo", {{"message", "안녕하세요 hello"}});
    QVERIFY(!r.is_error);
    QVERIFY2(r.text().find("안녕하세요 hello") != std::string::npos, r.text().c_str());
    r = c.call_tool("get-sum", {{"a", 2}, {"b", 40}});
    QVERIFY2(r.text().find("42") != std::string::npos, r.text().c_str());
    r = c.call_tool("get-tiny-image", json::object());
    bool image = false;
    for (const json& b : r.content) image = image || (b.value("type", "") == "image" && !b.value("data", "").empty());
    QVERIFY(image);
    QVERIFY2(r.text().find("[image: image/png") != std::string::npos, r.text().c_str());
    // Wrong arguments and an unknown tool: the server's error, as a result or an McpError; the
    // session goes on.
    bool refused = false;
    try {
      refused = c.call_tool("get-sum", {{"a", "two"}}).is_error;
    } catch (const McpError&) {
      refused = true;
    }
    QVERIFY(refused);
    refused = false;
    try {
      refused = c.call_tool("no-such-tool", json::object()).is_error;
    } catch (const McpError& e) {
      refused = QString(e.what()).contains("no-such-tool") || QString(e.what()).contains("not found");
    }
    QVERIFY(refused);
    // A long call stopped after half a second: cancelled at once, and the server still answers.
    QElapsedTimer t;
    t.start();
    const QString stopped = errorOf([&] {
      c.call_tool("trigger-long-running-operation", {{"duration", 30}, {"steps", 30}},
                  [&] { return t.elapsed() > 500; });
    });
    QVERIFY2(stopped.contains("stopped"), qPrintable(stopped));
    QVERIFY(t.elapsed() < 10000);
    QVERIFY(c.call_tool("echo", {{"message", "still here"}}).text().find("still here") != std::string::npos);
  }

 private slots:
  void initTestCase() {
    if (!missingServers().isEmpty()) QFAIL(qPrintable(missingServers()));
  }

  void configuration() {
    const auto servers = parse_servers_config(
        "{\"mcpServers\": { "
        "        \"files\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", "
        "\"/tmp\"], "
        "                  \"env\": {\"TOKEN\": \"x\"}}, "
        "        \"web\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\", \"headers\": {\"Authorization\": "
        "\"Bearer y\"}}, "
        "        \"off\": {\"command\": \"x\", \"disabled\": true}}}");
    QCOMPARE(servers.size(), std::size_t(3));  // in name order: files, off, web
    QCOMPARE(servers[0].name, std::string("files"));
    QCOMPARE(servers[0].args.size(), std::size_t(3));
    QCOMPARE(servers[0].env.at("TOKEN"), std::string("x"));
    QVERIFY(servers[0].enabled && !servers[0].http());
    QCOMPARE(servers[1].name, std::string("off"));
    QVERIFY(!servers[1].enabled);
    QCOMPARE(servers[2].name, std::string("web"));
    QVERIFY(servers[2].enabled && servers[2].http());
    QCOMPARE(servers[2].headers.at("Authorization"), std::string("Bearer y"));
    QCOMPARE(parse_servers_config(servers_config_json(servers)).size(), std::size_t(3));
    const std::vector<std::pair<const char*, const char*>> bad{
        {"not json", "parse error at line 1"},
        {"{\"servers\": {\"a\": {}}}", "no \"mcpServers\""},
        {"{\"mcpServers\": {\"a\": {}}}", "needs a \"command\""},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"url\": \"http://h\"}}}", "both"},
        {"{\"mcpServers\": {\"a\": {\"type\": \"sse\", \"url\": \"http://h/sse\"}}}", "Streamable HTTP"},
        {"{\"mcpServers\": {\"a\": {\"url\": \"file:///etc/passwd\"}}}", "http://"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [1]}}}", "args"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"K\": 1}}}}", "env.K"}};
    for (const auto& item : bad) {
      const char* text = item.first;  // (clang 14 lambdas cannot capture structured bindings)
      const QString e = errorOf([&] { parse_servers_config(text); });
      QVERIFY2(e.contains(item.second), qPrintable(QString(text) + " -> " + e));
    }
  }

  void everythingOverStdio() {
    Client c(nodeServer("everything", everything(), {"stdio"}));
    checkEverything(c);
  }

  void everythingOverStreamableHttp() {
    const int port = freePort();
    QProcess server;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("PORT", QString::number(port));
    server.setProcessEnvironment(env);
    server.start(jsref::node(), {everything(), "streamableHttp"});
    QVERIFY(server.waitForStarted());
    QByteArray log;
    QTRY_VERIFY_WITH_TIMEOUT((log += server.readAllStandardError()).contains("listening"), 30000);
    ServerConfig cfg;
    cfg.name = "everything-http";
    cfg.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
    cfg.headers["X-Test"] = "1";
    {
      Client c(cfg);
      checkEverything(c);
    }
    server.terminate();
    server.waitForFinished(5000);
    // The server gone: a clear error naming it.
    const QString e = errorOf([&] { Client again(cfg); });
    QVERIFY2(e.contains("everything-http") && e.contains("HTTP request failed"), qPrintable(e));
  }

  void filesystemServer() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    { std::ofstream(dir.filePath("note.txt").toStdString()) << "첫 줄\nsecond line\n"; }
    Client c(nodeServer("files", filesystem(), {dir.path().toStdString()}));
    const std::vector<Tool> tools = c.list_tools();
    QVERIFY(hasTool(tools, "write_file") && hasTool(tools, "list_directory"));
    const std::string read = hasTool(tools, "read_text_file") ? "read_text_file" : "read_file";
    ToolResult r = c.call_tool(read, {{"path", dir.filePath("note.txt").toStdString()}});
    QVERIFY2(!r.is_error && r.text().find("첫 줄") != std::string::npos, r.text().c_str());
    r = c.call_tool("write_file", {{"path", dir.filePath("out.txt").toStdString()}, {"content", "written by a tool"}});
    QVERIFY2(!r.is_error, r.text().c_str());
    QFile out(dir.filePath("out.txt"));
    QVERIFY(out.open(QIODevice::ReadOnly));
    QCOMPARE(out.readAll(), QByteArray("written by a tool"));
    r = c.call_tool("list_directory", {{"path", dir.path().toStdString()}});
    QVERIFY2(r.text().find("out.txt") != std::string::npos, r.text().c_str());
    // Outside the allowed folder: the server refuses; the client reports it as the tool's error.
    bool refused = false;
    try {
      refused = c.call_tool(read, {{"path", "/etc/passwd"}}).is_error;
    } catch (const McpError&) {
      refused = true;
    }
    QVERIFY(refused);
  }

  void misbehavingServers() {
    {  // garbage lines on stdout are skipped (and counted); the answers still come
      Client c(misbehaving("noise"));
      QCOMPARE(c.list_tools().size(), std::size_t(2));
      QCOMPARE(c.call_tool("small", json::object()).text(), std::string("ok"));
    }
    {  // a 50 MB result: an error naming the limit; the next call works
      Client c(misbehaving("huge"));
      const QString e = errorOf([&] { c.call_tool("big", json::object()); });
      QVERIFY2(e.contains("huge") && e.contains("longer than 16 MiB"), qPrintable(e));
      QCOMPARE(c.call_tool("small", json::object()).text(), std::string("ok"));
    }
    {  // pages followed; a tool without a name skipped, one without a schema taken as any object
      Client c(misbehaving("paged"));
      const std::vector<Tool> tools = c.list_tools();
      QCOMPARE(tools.size(), std::size_t(8));
      QVERIFY(hasTool(tools, "no_schema") && hasTool(tools, "t6"));
      QCOMPARE(c.skipped().size(), std::size_t(2));
    }
    {  // 10 MB of tools: refused with a reason
      Client c(misbehaving("manytools"));
      const QString e = errorOf([&] { c.list_tools(); });
      QVERIFY2(e.contains("manytools") && (e.contains("more than 1000 tools") || e.contains("MiB")), qPrintable(e));
    }
    {  // a crash during a call: its status and stderr in the message
      Client c(misbehaving("crash"));
      const QString e = errorOf([&] { c.call_tool("small", json::object()); });
      QVERIFY2(e.contains("crash") && e.contains("status 3") && e.contains("the tool crashed"), qPrintable(e));
      QVERIFY(!c.alive());
    }
    ClientLimits quick;
    quick.startup_timeout = std::chrono::milliseconds(1500);
    QString e = errorOf([&] { Client c(misbehaving("hang"), quick); });
    QVERIFY2(e.contains("'hang'") && e.contains("timed out"), qPrintable(e));
    e = errorOf([&] { Client c(misbehaving("old")); });
    QVERIFY2(e.contains("2024-11-05"), qPrintable(e));
    ServerConfig none;
    none.name = "missing";
    none.command = "/nonexistent/mcp-server";
    e = errorOf([&] { Client c(none); });
    QVERIFY2(e.contains("'missing'") && e.contains("cannot start"), qPrintable(e));
    ServerConfig exits;
    exits.name = "false";
    exits.command = "sh";
    exits.args = {"-c", "echo 'no such module' >&2; exit 1"};
    e = errorOf([&] { Client c(exits); });
    QVERIFY2(e.contains("status 1") && e.contains("no such module"), qPrintable(e));
  }

  void toolsForTheModel() {
    std::vector<ToolRoute> routes;
    const json tools = openai_tools({{"a", {Tool{"echo", "Echoes", {{"type", "object"}}}, Tool{"get sum", "", {}}}},
                                     {"b", {Tool{"echo", "", {{"type", "object"}}}}}},
                                    routes);
    QCOMPARE(tools.size(), std::size_t(3));
    QCOMPARE(tools[0]["function"]["name"].get<std::string>(), std::string("echo"));
    QCOMPARE(tools[1]["function"]["name"].get<std::string>(), std::string("get_sum"));
    QCOMPARE(routes[2].function, std::string("b__echo"));
    QCOMPARE(routes[2].server, std::string("b"));
    QCOMPARE(routes[2].tool, std::string("echo"));
  }
};

QTEST_GUILESS_MAIN(TestMcpClient)
#include "test_mcp_client.moc"
