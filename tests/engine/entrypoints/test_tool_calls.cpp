// Tool calls in replies (engine/entrypoints/openai/tool_calls.h): each family's format as its
// models write it (Hermes / Qwen JSON in tags, Qwen3.5's XML, Llama 3.1 JSON, Mistral), malformed
// calls kept as text, the streamed split equal to the whole one at every cut, and the format
// read from real chat templates.
#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/openai/tool_calls.h"
#include "test_paths.h"

using namespace pagedchat::openai;
using json = nlohmann::json;

namespace {
const json kTools = json::parse(
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", "
    "\"properties\": {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\"}, \"zip\": {\"type\": "
    "\"string\"}}}}}]");

QString templateText(const QString& name) {
  QFile f(testpaths::modelFile(QStringLiteral("chat-templates/") + name));
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// The streamed split of `text` cut at `cut` (two pieces), joined.
ParsedReply streamed(ToolCallFormat f, const std::string& text, std::size_t cut) {
  ToolCallStream s(f, kTools);
  ParsedReply r;
  r.content += s.feed(std::string_view(text).substr(0, cut), r.calls);
  r.content += s.feed(std::string_view(text).substr(cut), r.calls);
  r.content += s.finish(r.calls);
  return r;
}
}  // namespace

class TestToolCalls : public QObject {
  Q_OBJECT

 private slots:
  void hermesCalls() {
    const std::string text =
        "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n"
        "</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
    const ParsedReply r = parse_tool_calls(ToolCallFormat::kHermes, text, kTools);
    QCOMPARE(r.content, std::string("Let me check."));
    QCOMPARE(r.calls.size(), std::size_t(2));
    QCOMPARE(r.calls[0].name, std::string("get_weather"));
    QVERIFY2(json::parse(r.calls[0].arguments) == json({{"city", "Paris"}, {"days", 3}}), r.calls[0].arguments.c_str());
    QVERIFY2(json::parse(r.calls[1].arguments) == json({{"city", "Oslo"}}), r.calls[1].arguments.c_str());
    QVERIFY(r.calls[0].id.rfind("call_", 0) == 0 && r.calls[0].id.size() == 29);
    QVERIFY(r.calls[0].id != r.calls[1].id);
  }

  void malformedCallsStayText() {
    for (const std::string& text :
         {std::string("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par"),  // cut off
          std::string("<tool_call>{not json}</tool_call> after"),
          std::string("<tool_call>{\"arguments\": {}}</tool_call>"), std::string("<tool_call>[1, 2]</tool_call>")}) {
      const ParsedReply r = parse_tool_calls(ToolCallFormat::kHermes, text, kTools);
      QVERIFY2(r.calls.empty(), text.c_str());
      QCOMPARE(r.content, text);
    }
    // An unclosed tag whose JSON is whole is a call (a reply cut by its stop string).
    const ParsedReply open = parse_tool_calls(ToolCallFormat::kHermes,
                                              "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}", kTools);
    QCOMPARE(open.calls.size(), std::size_t(1));
    // Llama 3 text that is not a call stays text.
    QCOMPARE(parse_tool_calls(ToolCallFormat::kLlama3Json, "{\"a\": 1}", kTools).content, std::string("{\"a\": 1}"));
    QVERIFY(parse_tool_calls(ToolCallFormat::kLlama3Json, "Hello {\"name\": \"x\"}", kTools).calls.empty());
  }

  void qwenXmlCalls() {
    const std::string text =
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n</parameter>\n<parameter=days>\n5\n"
        "</parameter>\n<parameter=zip>\n94107\n</parameter>\n</function>\n</tool_call>";
    const ParsedReply r = parse_tool_calls(ToolCallFormat::kQwenXml, text, kTools);
    QCOMPARE(r.calls.size(), std::size_t(1));
    QCOMPARE(r.content, std::string());
    // Typed by the tool's schema: days an integer, zip a string although it looks like a number.
    QVERIFY2(json::parse(r.calls[0].arguments) == json({{"city", "San Francisco"}, {"days", 5}, {"zip", "94107"}}),
             r.calls[0].arguments.c_str());
    // Qwen3.5's template also reads the JSON form.
    QCOMPARE(
        parse_tool_calls(ToolCallFormat::kQwenXml,
                         "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"X\"}}</tool_call>", kTools)
            .calls.size(),
        std::size_t(1));
  }

  void llama3AndMistralCalls() {
    const ParsedReply l = parse_tool_calls(
        ToolCallFormat::kLlama3Json,
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\"}}; {\"name\": \"get_weather\", "
        "\"parameters\": {\"city\": \"Bern\"}}",
        kTools);
    QCOMPARE(l.calls.size(), std::size_t(2));
    QVERIFY2(json::parse(l.calls[1].arguments) == json({{"city", "Bern"}}), l.calls[1].arguments.c_str());
    const ParsedReply m = parse_tool_calls(
        ToolCallFormat::kMistral, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}]",
        kTools);
    QCOMPARE(m.calls.size(), std::size_t(1));
    QVERIFY2(json::parse(m.calls[0].arguments) == json({{"city", "Lyon"}}), m.calls[0].arguments.c_str());
    // The marker decoded away (a control token), and the v11 form.
    QCOMPARE(parse_tool_calls(ToolCallFormat::kMistral, " [{\"name\": \"f\", \"arguments\": {}}]", kTools).calls.size(),
             std::size_t(1));
    const ParsedReply v11 = parse_tool_calls(ToolCallFormat::kMistral,
                                             "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Nice\"}", kTools);
    QCOMPARE(v11.calls.size(), std::size_t(1));
    QCOMPARE(v11.calls[0].name, std::string("get_weather"));
  }

  // Fed in two pieces cut anywhere, the stream gives the whole split: no tag shown as content.
  void streamedEqualsWhole() {
    const std::vector<std::pair<ToolCallFormat, std::string>> cases{
        {ToolCallFormat::kHermes,
         "Sure.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"<Paris>\"}}\n</tool_call> Done."},
        {ToolCallFormat::kHermes, "No calls here, only a < and <tool and </tool_call>."},
        {ToolCallFormat::kQwenXml,
         "<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n</function>\n</tool_call>"},
        {ToolCallFormat::kLlama3Json, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Kyiv\"}}"},
        {ToolCallFormat::kLlama3Json, "Plain text, streamed as it comes."},
        {ToolCallFormat::kMistral, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {}}]"}};
    for (const auto& [format, text] : cases) {
      const ParsedReply whole = parse_tool_calls(format, text, kTools);
      for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        const ParsedReply s = streamed(format, text, cut);
        QVERIFY2(s.calls.size() == whole.calls.size(),
                 qPrintable(QString::fromStdString(text) + " @" + QString::number(cut)));
        for (std::size_t i = 0; i < s.calls.size(); ++i) {
          QCOMPARE(s.calls[i].name, whole.calls[i].name);
          QCOMPARE(s.calls[i].arguments, whole.calls[i].arguments);
        }
        // Content may keep the whitespace around a call that the whole split trims.
        QCOMPARE(QString::fromStdString(s.content).simplified(), QString::fromStdString(whole.content).simplified());
        QVERIFY2(s.content.find("<tool_call>") == std::string::npos || whole.calls.empty(), s.content.c_str());
      }
    }
    // Plain text streams at once (nothing held back but a possible tag's start).
    ToolCallStream s(ToolCallFormat::kHermes, kTools);
    std::vector<ToolCall> calls;
    QCOMPARE(s.feed("Hello <to", calls), std::string("Hello "));
    QCOMPARE(s.feed("day", calls), std::string("<today"));
  }

  void formatFromRealTemplates() {
    const QString qwen = templateText(QStringLiteral("Qwen-Qwen2.5-7B-Instruct.jinja"));
    const QString llama = templateText(QStringLiteral("meta-llama-Llama-3.1-8B-Instruct.jinja"));
    const QString mistral = templateText(QStringLiteral("mistralai-Mistral-Nemo-Instruct-2407.jinja"));
    REQUIRE_MODEL_FILE(testpaths::modelFile(QStringLiteral("chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja")));
    QVERIFY(!qwen.isEmpty() && !llama.isEmpty() && !mistral.isEmpty());
    QCOMPARE(int(tool_call_format_of(qwen.toStdString(), "chatml")), int(ToolCallFormat::kHermes));
    QCOMPARE(int(tool_call_format_of(llama.toStdString(), "llama3")), int(ToolCallFormat::kLlama3Json));
    QCOMPARE(int(tool_call_format_of(mistral.toStdString(), "mistral")), int(ToolCallFormat::kMistral));
    QCOMPARE(int(tool_call_format_of("{{ messages }}", "none")), int(ToolCallFormat::kNone));
  }
};

QTEST_GUILESS_MAIN(TestToolCalls)
#include "test_tool_calls.moc"
