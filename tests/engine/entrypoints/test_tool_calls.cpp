// Tool calls in replies (engine/entrypoints/openai/tool_calls.h): each family's format as its
// models write it (Hermes / Qwen JSON in tags, Qwen3.5's XML, Llama 3.1 JSON, Mistral), malformed
// calls kept as text, the streamed split equal to the whole one at every cut, and the format
// read from real chat templates; a reply's reasoning apart from its answer, and the calls that
// tool_choice "required" / a named function force, whole and streamed at every cut.
#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/openai/chat_reply.h"
#include "engine/entrypoints/openai/protocol.h"
#include "engine/entrypoints/openai/tool_calls.h"
#include "engine/text/chat_template.h"
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

// A whole reply streamed through ChatReplyStream cut at `cut`, joined as a client joins deltas.
ChatReply streamedReply(const ChatReplyOptions& o, const std::string& text, std::size_t cut) {
  ChatReplyStream s(o);
  ChatReply r;
  std::string reasoning;
  std::vector<ToolCall> calls;
  auto take = [&](ChatReplyDelta d) {
    reasoning += d.reasoning;
    r.content += d.content;
    for (ToolCallDelta& c : d.tool_calls) {
      if (c.index >= int(calls.size())) calls.resize(std::size_t(c.index) + 1);
      if (!c.id.empty()) calls[std::size_t(c.index)].id = c.id;
      calls[std::size_t(c.index)].name += c.name;
      calls[std::size_t(c.index)].arguments += c.arguments;
    }
  };
  take(s.feed(std::string_view(text).substr(0, cut)));
  take(s.feed(std::string_view(text).substr(cut)));
  take(s.finish());
  if (!reasoning.empty()) r.reasoning = reasoning;
  r.calls = std::move(calls);
  return r;
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

  void reasoningApartFromTheAnswer() {
    ReasoningSplit r = split_reasoning("<think>\nI should greet.\n</think>\n\nHello!");
    QVERIFY(r.has_reasoning);
    QCOMPARE(r.reasoning, std::string("I should greet."));
    QCOMPARE(r.content, std::string("Hello!"));
    r = split_reasoning("  <think>cut short");  // an unclosed block stays reasoning
    QCOMPARE(r.reasoning, std::string("cut short"));
    QCOMPARE(r.content, std::string());
    r = split_reasoning("I think <think> is a tag. </think>");  // only a leading block counts
    QVERIFY(!r.has_reasoning);
    QCOMPARE(r.content, std::string("I think <think> is a tag. </think>"));
    r = split_reasoning("Plan.\n</think>\n\nAnswer", /*opened=*/true);  // DeepSeek-R1's prompt opened it
    QCOMPARE(r.reasoning, std::string("Plan."));
    QCOMPARE(r.content, std::string("Answer"));
    r = split_reasoning("<thinking> is not the tag");
    QVERIFY(!r.has_reasoning);
    QCOMPARE(r.content, std::string("<thinking> is not the tag"));
  }

  void chatReplyStreamedEqualsWhole() {
    ChatReplyOptions reasoningAndTools;
    reasoningAndTools.reasoning = true;
    reasoningAndTools.tool_format = ToolCallFormat::kHermes;
    reasoningAndTools.tools = kTools;
    ChatReplyOptions required;
    required.forced = "required";
    ChatReplyOptions named;
    named.forced = "function";
    named.forced_name = "get_weather";
    ChatReplyOptions single = required;
    single.parallel_tool_calls = false;
    const std::vector<std::pair<ChatReplyOptions, std::string>> cases{
        {reasoningAndTools,
         "<think>\nCall it.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
         "\"Oslo\"}}\n</tool_call>"},
        {reasoningAndTools, "<think>Only thinking</think>\n\nThe answer, no call."},
        {reasoningAndTools, "No reasoning and <tool_call>broken"},
        {required,
         "[{\"name\": \"get_weather\", \"parameters\": {\"city\": \"a]}\\\"\"}}, {\"name\": \"get_time\", "
         "\"parameters\": {}}]"},
        {required, "[{\"name\": \"get_weather\", \"param"},  // cut by max_tokens: text
        {single, "[{\"name\": \"a\", \"parameters\": {}}, {\"name\": \"b\", \"parameters\": {}}]"},
        {named, "{\"city\": \"Rome\", \"days\": 2}"}};
    for (const auto& [o, text] : cases) {
      ChatReply whole = parse_chat_reply(o, text);
      if (!o.parallel_tool_calls && whole.calls.size() > 1) whole.calls.resize(1);
      for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        const ChatReply s = streamedReply(o, text, cut);
        const QString what = QString::fromStdString(text) + " @" + QString::number(cut);
        QVERIFY2(s.calls.size() == whole.calls.size(), qPrintable(what));
        for (std::size_t i = 0; i < s.calls.size(); ++i) {
          QCOMPARE(s.calls[i].name, whole.calls[i].name);
          QVERIFY2(json::parse(s.calls[i].arguments) == json::parse(whole.calls[i].arguments), qPrintable(what));
          QVERIFY(s.calls[i].id.rfind("call_", 0) == 0);
        }
        QCOMPARE(QString::fromStdString(s.content).simplified(), QString::fromStdString(whole.content).simplified());
        QCOMPARE(QString::fromStdString(s.reasoning.value_or("")).trimmed(),
                 QString::fromStdString(whole.reasoning.value_or("")));
      }
    }
    const ChatReply r = parse_chat_reply(cases[0].first, cases[0].second);
    QCOMPARE(r.reasoning.value_or(""), std::string("Call it."));
    QCOMPARE(r.calls.size(), std::size_t(1));
    QCOMPARE(r.content, std::string());
    const ChatReply req = parse_chat_reply(required, cases[3].second);
    QCOMPARE(req.calls.size(), std::size_t(2));
    QCOMPARE(req.calls[1].name, std::string("get_time"));
    QCOMPARE(json::parse(req.calls[0].arguments)["city"].get<std::string>(), std::string("a]}\""));
    QCOMPARE(parse_chat_reply(required, cases[4].second).content, cases[4].second);
    // Cut short: a required array keeps its whole items (as streamed); a named call keeps its cut
    // arguments.
    const std::string cut = "[{\"name\": \"a\", \"parameters\": {}}, {\"name\": \"b\", \"para";
    QCOMPARE(parse_chat_reply(required, cut).calls.size(), std::size_t(1));
    QCOMPARE(streamedReply(required, cut, 10).calls.size(), std::size_t(1));
    const ChatReply namedCut = parse_chat_reply(named, "{\"city\": \"Ro");
    QCOMPARE(namedCut.calls.size(), std::size_t(1));  // as streamed, and as vLLM returns it
    QCOMPARE(namedCut.calls[0].arguments, std::string("{\"city\": \"Ro"));
  }

  // A call in the JSON tag form streams as OpenAI's do: its id and name as soon as the name is
  // read, then the arguments in pieces; another key order comes whole.
  // Gemma 4's own call syntax (its template's format_argument): bare keys, strings between <|"|>
  // marks, nested objects and lists; a malformed call stays text.
  void gemma4Calls() {
    const std::string text =
        "Let me look.<|tool_call>call:get_weather{city:<|\"|>Paris, \"FR\"<|\"|>,days:3,opts:{metric:true,"
        "tags:[<|\"|>a<|\"|>,<|\"|>b}<|\"|>],none:null,t:-1.5e2}}<tool_call|>";
    const ParsedReply r = parse_tool_calls(ToolCallFormat::kGemma4, text, kTools);
    QCOMPARE(r.calls.size(), std::size_t(1));
    QCOMPARE(r.content, std::string("Let me look."));
    QCOMPARE(r.calls[0].name, std::string("get_weather"));
    const json args = json::parse(r.calls[0].arguments);
    QVERIFY2(args == json::parse("{\"city\": \"Paris, \\\"FR\\\"\", \"days\": 3, \"opts\": {\"metric\": true, "
                                 "\"tags\": [\"a\", \"b}\"], \"none\": null, \"t\": -150.0}}"),
             r.calls[0].arguments.c_str());
    for (const std::string bad : {"<|tool_call>call:f{a:<|\"|>open}<tool_call|>", "<|tool_call>f{a:1}<tool_call|>",
                                  "<|tool_call>call:f{a:1<tool_call|>"}) {
      const ParsedReply b = parse_tool_calls(ToolCallFormat::kGemma4, bad, kTools);
      QVERIFY2(b.calls.empty() && b.content == bad, bad.c_str());
    }
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
      const ParsedReply s = streamed(ToolCallFormat::kGemma4, text, cut);
      QCOMPARE(s.calls.size(), std::size_t(1));
      QCOMPARE(s.calls[0].arguments, r.calls[0].arguments);
      QCOMPARE(s.content, std::string("Let me look."));
    }
  }

  // DeepSeek-R1's calls (as its template writes them) and Phi-4-mini's functools[...] list.
  void deepSeekAndPhi4MiniCalls() {
    const std::string r1 =
        "I will look it up.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        "{\"city\": "
        "\"Lima\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n"
        "```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    const ParsedReply d = parse_tool_calls(ToolCallFormat::kDeepSeek, r1, kTools);
    QCOMPARE(d.calls.size(), std::size_t(2));
    QCOMPARE(d.content, std::string("I will look it up."));
    QCOMPARE(d.calls[0].name, std::string("get_weather"));
    QCOMPARE(d.calls[0].arguments, std::string("{\"city\":\"Lima\"}"));
    QCOMPARE(d.calls[1].name, std::string("get_time"));
    const std::string broken =
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{oops\n```";
    QCOMPARE(parse_tool_calls(ToolCallFormat::kDeepSeek, broken, kTools).content, broken);
    const std::string phi = "functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pune\"}}]";
    const ParsedReply p = parse_tool_calls(ToolCallFormat::kPhi4Mini, phi, kTools);
    QCOMPARE(p.calls.size(), std::size_t(1));
    QCOMPARE(p.calls[0].arguments, std::string("{\"city\":\"Pune\"}"));
    QCOMPARE(parse_tool_calls(ToolCallFormat::kPhi4Mini, "fun facts: none", kTools).content,
             std::string("fun facts: none"));
    for (const auto& [format, text] : std::vector<std::pair<ToolCallFormat, std::string>>{
             {ToolCallFormat::kDeepSeek, r1}, {ToolCallFormat::kPhi4Mini, phi}}) {
      const ParsedReply whole = parse_tool_calls(format, text, kTools);
      for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        const ParsedReply s = streamed(format, text, cut);
        QCOMPARE(s.calls.size(), whole.calls.size());
        QCOMPARE(QString::fromStdString(s.content).simplified(), QString::fromStdString(whole.content).simplified());
      }
    }
    ToolCallStream plain(ToolCallFormat::kPhi4Mini, kTools);
    std::vector<ToolCall> none;
    QCOMPARE(plain.feed("fu", none), std::string());  // may be "functools"
    QCOMPARE(plain.feed("n times", none), std::string("fun times"));
  }

  void argumentsStreamInPieces() {
    const std::string text =
        "Checking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": "
        "3}}\n</tool_call>";
    ToolCallStream s(ToolCallFormat::kHermes, kTools);
    std::vector<ToolCallDelta> deltas;
    std::string content;
    std::size_t named_at = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      content += s.feed(text.substr(i, 1), deltas);
      if (!named_at && !deltas.empty()) named_at = i;
    }
    content += s.finish(deltas);
    QCOMPARE(content, std::string("Checking."));
    QVERIFY(deltas.size() > 3);
    QCOMPARE(deltas[0].name, std::string("get_weather"));
    QVERIFY(deltas[0].id.rfind("call_", 0) == 0);
    QVERIFY(named_at < text.find("Paris"));  // announced before its arguments came
    std::string args;
    for (std::size_t i = 0; i < deltas.size(); ++i) {
      QCOMPARE(deltas[i].index, 0);
      if (i > 0) QVERIFY(deltas[i].id.empty() && deltas[i].name.empty());
      args += deltas[i].arguments;
    }
    QVERIFY(json::parse(args) == json::parse("{\"city\": \"Paris\", \"days\": 3}"));
    ToolCallStream other(ToolCallFormat::kHermes, kTools);
    std::vector<ToolCallDelta> whole;
    other.feed("<tool_call>{\"arguments\": {}, \"name\": \"get_weather\"}</tool_call>", whole);
    QCOMPARE(whole.size(), std::size_t(1));
    QCOMPARE(whole[0].arguments, std::string("{}"));
  }

  void toolChoiceSchemas() {
    const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(
        "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"z\": {\"type\": \"string\"}, \"a\": {\"type\": \"integer\"}}}}}, {\"type\": "
        "\"function\", \"function\": {\"name\": \"g\"}}]");
    const auto named = tool_choice_schema(tools, "function", "f", true);
    QCOMPARE(named["properties"].begin().key(), std::string("z"));  // the client's order kept
    QCOMPARE(tool_choice_schema(tools, "function", "g", true)["type"].get<std::string>(), std::string("object"));
    const auto req = tool_choice_schema(tools, "required", "", false);
    QCOMPARE(req["type"].get<std::string>(), std::string("array"));
    QCOMPARE(req["maxItems"].get<int>(), 1);
    QCOMPARE(req["items"]["anyOf"].size(), std::size_t(2));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, tool_choice_schema(tools, "function", "h", true));
  }

  // An earlier call's arguments (a JSON text in OpenAI's messages) reach the template as the
  // object templates write with tojson; text that is no object stays as it came.
  void earlierCallsArgumentsAsObjects() {
    const json body = json::parse(
        "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": "
        "\"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"c1\", \"type\": \"function\", "
        "\"function\": {\"name\": \"f\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\"}\"}}, {\"id\": \"c2\", "
        "\"type\": \"function\", \"function\": {\"name\": \"g\", \"arguments\": \"not json\"}}]}, {\"role\": "
        "\"tool\", \"tool_call_id\": \"c1\", \"content\": \"Sunny\"}]}");
    const ChatCompletionRequest r = parse_chat_completion_request(body);
    const auto& calls = r.messages[1]["tool_calls"];
    QVERIFY(calls[0]["function"]["arguments"].is_object());
    QCOMPARE(calls[0]["function"]["arguments"]["city"].get<std::string>(), std::string("Oslo"));
    QVERIFY(calls[1]["function"]["arguments"].is_string());
  }

  // Earlier calls go back through real templates: Qwen2.5's writes the arguments with tojson (an
  // object, not a quoted JSON text), DeepSeek-R1's concatenates them as text (given the text).
  void earlierCallsThroughRealTemplates() {
    REQUIRE_MODEL_FILE(testpaths::modelFile(QStringLiteral("chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja")));
    nlohmann::ordered_json msgs = nlohmann::ordered_json::parse(
        "[{\"role\": \"user\", \"content\": \"Weather?\"}, {\"role\": \"assistant\", \"content\": null, "
        "\"tool_calls\": [{\"id\": \"c1\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
        "\"arguments\": {\"city\": \"Oslo\"}}}]}, {\"role\": \"tool\", \"tool_call_id\": \"c1\", \"content\": "
        "\"Sunny\"}]");
    pagedchat::ChatRenderOptions o;
    o.fallback_to_builtin = false;
    o.add_generation_prompt = true;
    const auto qwen = pagedchat::ChatTemplate::from_jinja(
        templateText(QStringLiteral("Qwen-Qwen2.5-7B-Instruct.jinja")).toStdString(), "qwen2.5");
    const std::string q = qwen.render(msgs, o).text;
    QVERIFY2(q.find("\"arguments\": {\"city\": \"Oslo\"}") != std::string::npos, q.c_str());
    QVERIFY2(q.find("Sunny") != std::string::npos, q.c_str());
    const auto r1 = pagedchat::ChatTemplate::from_jinja(
        templateText(QStringLiteral("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja")).toStdString(), "r1");
    std::string warning;
    const std::string d = r1.render(msgs, o, &warning).text;
    QVERIFY2(d.find("get_weather\n```json\n{\"city\":\"Oslo\"}\n```") != std::string::npos, d.c_str());
    QVERIFY2(warning.empty(), warning.c_str());
    // The arguments as OpenAI's messages (and the app's history) carry them, a JSON text: the
    // template still gets the object (the same prompt), one that joins them into text the text.
    nlohmann::ordered_json asText = msgs;
    asText[1]["tool_calls"][0]["function"]["arguments"] = "{\"city\": \"Oslo\"}";
    QCOMPARE(qwen.render(asText, o).text, q);
    const std::string d2 = r1.render(asText, o).text;  // the text as it came
    QVERIFY2(d2.find("get_weather\n```json\n{\"city\": \"Oslo\"}\n```") != std::string::npos, d2.c_str());
    // A text that is no object stays as it is.
    asText[1]["tool_calls"][0]["function"]["arguments"] = "not json";
    const std::string odd = qwen.render(asText, o).text;
    QVERIFY2(odd.find("\"arguments\": \"not json\"") != std::string::npos, odd.c_str());
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
    const QString r1 = templateText(QStringLiteral("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"));
    QCOMPARE(int(tool_call_format_of(r1.toStdString(), "deepseek-r1")), int(ToolCallFormat::kDeepSeek));
  }
};

QTEST_GUILESS_MAIN(TestToolCalls)
#include "test_tool_calls.moc"
