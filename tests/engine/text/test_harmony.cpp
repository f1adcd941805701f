// gpt-oss's Harmony format end to end around the model: the reply's messages (ReplyDetokenizer)
// become the engine's reasoning convention ("<think>analysis</think>\n\nfinal"), token by token,
// whatever the prompt left open; a stored reply goes back through the model's own Harmony
// template as `thinking` and `content`; the API's reasoning_effort reaches the template. Uses the
// o200k_harmony vocabulary and template of ../shared/models/arch/gptoss-tiny.gguf (the template is
// ik_llama.cpp's openai-gpt-oss-120b.jinja; the markers and channels are the format's).
#include <QTest>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/openai/protocol.h"
#include "engine/entrypoints/openai/tool_calls.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/text/chat_template.h"
#include "engine/text/reply_detokenizer.h"
#include "test_paths.h"

using namespace pagedchat;

class TestHarmony : public QObject {
  Q_OBJECT
  std::unique_ptr<Tokenizer> tok_;
  std::string template_;

  QString model() const { return testpaths::modelFile("arch/gptoss-tiny.gguf"); }

  // The text ReplyDetokenizer gives for `reply` (special tokens parsed) after `prompt`, fed one
  // id at a time; also checks the deltas add up to the whole.
  std::string run(const std::string& prompt, const std::string& reply, bool complete = false) {
    const std::vector<int> p = tok_->encode_with_special_tokens(prompt);
    ReplyDetokenizer d(*tok_, p);
    std::string text;
    for (int id : tok_->encode_with_special_tokens(reply)) text += d.add_token(id);
    text += d.flush(complete);
    return text;
  }

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(model());
    const GgufFile f = GgufFile::open(model().toStdString());
    tok_ = load_gguf_tokenizer(f);
    template_ = read_gguf_chat_template(f);
    QVERIFY(HarmonyTokens::of(*tok_).has_value());
  }

  void analysisThenFinal() {
    const std::string text = run("<|start|>user<|message|>Hi<|end|><|start|>assistant",
                                 "<|channel|>analysis<|message|>The user greets. Answer in Korean.<|end|>"
                                 "<|start|>assistant<|channel|>final<|message|>안녕하세요, 반가워요!<|return|>");
    QCOMPARE(QString::fromStdString(text),
             QStringLiteral("<think>\nThe user greets. Answer in Korean.</think>\n\n안녕하세요, 반가워요!"));
  }

  // A reply cut off inside its reasoning stays open (the app shows it as still thinking); one the
  // model ended there (EOS, a stop token) is closed. A header cut before <|message|> shows nothing;
  // text after a message's end without a <|start|> is shown, not lost.
  void cutsAndStrays() {
    QCOMPARE(run("<|start|>assistant", "<|channel|>analysis<|message|>Let me"), std::string("<think>\nLet me"));
    QCOMPARE(run("<|start|>assistant", "<|channel|>analysis<|message|>Let me", true),
             std::string("<think>\nLet me</think>\n\n"));
    QCOMPARE(run("<|start|>assistant", "<|channel|>analysis<|message|>A<|end|><|start|>assistant<|channel|>fin"),
             std::string("<think>\nA</think>\n\n"));
    QCOMPARE(run("<|start|>assistant", "<|channel|>final<|message|>Hi<|end|> stray<|start|>assistant"),
             std::string("Hi stray"));
  }

  // A tool call on the commentary channel ("to=functions.NAME" after the channel or in the role
  // part): written in the <tool_call> form, which the server's parser, chosen by the model's own
  // template, returns as OpenAI's tool_calls; commentary to no function stays text.
  void commentaryToolCall() {
    const std::string text = run(
        "<|start|>assistant",
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
        "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Seoul\"}<|call|>");
    QCOMPARE(text, std::string("<think>\nNeed weather.</think>\n\n<tool_call>\n{\"name\": \"get_weather\", "
                               "\"arguments\": {\"city\":\"Seoul\"}}\n</tool_call>\n"));
    using namespace pagedchat::openai;
    const ToolCallFormat f = tool_call_format_of(template_, "");
    QCOMPARE(int(f), int(ToolCallFormat::kHarmony));
    const ParsedReply r = parse_tool_calls(f, text, nlohmann::json::array());
    QCOMPARE(r.calls.size(), std::size_t(1));
    QCOMPARE(r.calls[0].name, std::string("get_weather"));
    QCOMPARE(r.calls[0].arguments, std::string("{\"city\":\"Seoul\"}"));
    QCOMPARE(r.content, std::string("<think>\nNeed weather.</think>"));  // the server splits reasoning first
    const std::string inRole = run("<|start|>user<|message|>Hi<|end|>",
                                   "<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>"
                                   "{\"q\": 1}<|call|>");
    QCOMPARE(parse_tool_calls(f, inRole, nlohmann::json::array()).calls.at(0).name, std::string("lookup"));
    QCOMPARE(run("<|start|>assistant", "<|channel|>commentary<|message|>Working on it.<|end|>"),
             std::string("Working on it."));
  }

  // The prompt already opened the final message (a continued reply): the tokens are its content;
  // a prompt that opened the analysis message starts inside <think>.
  void promptOpensTheMessage() {
    QCOMPARE(run("<|start|>assistant<|channel|>final<|message|>", "Hello there<|return|>"), std::string("Hello there"));
    QCOMPARE(run("<|start|>assistant<|channel|>analysis<|message|>",
                 "Hmm.<|end|><|start|>assistant<|channel|>final"
                 "<|message|>Yes."),
             std::string("<think>\nHmm.</think>\n\nYes."));
  }

  // A prompt without any marker (a plain completion) gets plain text, special tokens dropped as
  // elsewhere; a vocabulary without Harmony's markers never parses them.
  void plainCompletions() {
    QCOMPARE(run("Once upon a time", " there was<|end|> a cat"), std::string(" there was a cat"));
    const QString qwen = testpaths::modelFile("arch/qwen3-tiny.gguf");
    REQUIRE_MODEL_FILE(qwen);
    const auto q = load_gguf_tokenizer(GgufFile::open(qwen.toStdString()));
    QVERIFY(!HarmonyTokens::of(*q).has_value());
    ReplyDetokenizer d(*q, q->encode("<|start|>assistant"));
    QVERIFY(!d.harmony());
  }

  // A stored reply ("<think>R</think>\n\nA") goes back as thinking R and content A: the template
  // renders the earlier answer on the final channel without the reasoning (it drops past
  // analysis), and never raises for <|channel|> tags in content.
  void storedReplyRendersAsHarmony() {
    const ChatTemplate t = ChatTemplate::from_jinja(template_, "gptoss-tiny");
    nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
    msgs.push_back({{"role", "user"}, {"content", "Hi"}});
    msgs.push_back({{"role", "assistant"}, {"content", "<think>\nThe user greets.</think>\n\nHello!"}});
    msgs.push_back({{"role", "user"}, {"content", "How are you?"}});
    ChatRenderOptions o;
    o.fallback_to_builtin = false;
    const std::string out = t.render(msgs, o).text;
    QVERIFY2(out.find("<|start|>assistant<|channel|>final<|message|>Hello!<|end|>") != std::string::npos, out.c_str());
    QVERIFY2(out.find("The user greets") == std::string::npos, out.c_str());
    QVERIFY2(out.find("<think>") == std::string::npos, out.c_str());
    QVERIFY(out.ends_with("<|start|>assistant"));
    // The last assistant turn, continued: its reasoning is rendered on the analysis channel.
    msgs.erase(2);
    o.add_generation_prompt = false;
    const std::string last = t.render(msgs, o).text;
    QVERIFY2(last.find("<|channel|>analysis<|message|>The user greets.<|end|>") != std::string::npos, last.c_str());
    // Several reasoning blocks in one stored reply: all go to thinking, none stays in content.
    msgs[1]["content"] = "<think>\nFirst.</think>\n\nCalling.<think>\nSecond.</think>\n\nDone.";
    const std::string two = t.render(msgs, o).text;
    QVERIFY2(two.find("<think>") == std::string::npos, two.c_str());
    QVERIFY2(two.find("final<|message|>Calling.\n\nDone.") != std::string::npos ||
                 two.find("final<|message|>Calling.Done.") != std::string::npos,
             two.c_str());
    QVERIFY2(two.find("First.") != std::string::npos && two.find("Second.") != std::string::npos, two.c_str());
  }

  // reasoning_effort (OpenAI's field) sets the template's "Reasoning:" line; a bad value is a 400
  // naming it.
  void reasoningEffort() {
    const ChatTemplate t = ChatTemplate::from_jinja(template_, "gptoss-tiny");
    const nlohmann::json body = {
        {"model", "m"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"reasoning_effort", "high"}};
    const openai::ChatCompletionRequest r = openai::parse_chat_completion_request(body);
    ChatRenderOptions o;
    o.extra_variables_json = r.chat_template_kwargs_json;
    const std::string out = t.render(r.messages, o).text;
    QVERIFY2(out.find("Reasoning: high") != std::string::npos, out.c_str());
    ChatRenderOptions plain;
    QVERIFY(t.render(r.messages, plain).text.find("Reasoning: medium") != std::string::npos);
    nlohmann::json bad = body;
    bad["reasoning_effort"] = "extreme";
    try {
      openai::parse_chat_completion_request(bad);
      QFAIL("accepted");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("reasoning_effort") != std::string::npos, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestHarmony)
#include "test_harmony.moc"
