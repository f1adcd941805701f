// Gemma 4's chat format around the model: its reasoning channel ("<|channel>thought\n…<channel|>")
// becomes the engine's reasoning convention ("<think>\n…</think>\n\n" then the answer), token by
// token, whatever the prompt left open; with thinking off (the template's empty channel) the reply
// is the answer alone; a stored reply goes back through the model's own template without its
// reasoning; <turn|> and <|tool_response> end a reply. Uses tests/data/gemma4moe/gemma4moe-tiny.gguf:
// Gemma 4's markers as control tokens of a small vocabulary and Gemma 4's chat template (Google's,
// as ik_llama.cpp ships it; tests/data/gemma4moe/README.md).
#include <QTest>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/openai/tool_calls.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/loader/model_loader.h"
#include "engine/text/chat_template.h"
#include "engine/text/reply_detokenizer.h"
#include "test_paths.h"

using namespace pagedchat;

class TestGemma4Format : public QObject {
  Q_OBJECT
  std::unique_ptr<Tokenizer> tok_;
  std::string template_;

  static QString model() { return QStringLiteral(GEMMA4MOE_DIR "/gemma4moe-tiny.gguf"); }

  // The text ReplyDetokenizer gives for `reply` (special tokens parsed) after `prompt`, one id at a
  // time. The test vocabulary is SentencePiece (llama.cpp's Llama SPM): a text fragment after a
  // control token starts with "▁", which shows as a space; Gemma 4's own BPE vocabulary adds none.
  std::string run(const std::string& prompt, const std::string& reply, bool complete = false) {
    ReplyDetokenizer d(*tok_, tok_->encode_with_special_tokens(prompt));
    std::string text;
    for (int id : tok_->encode_with_special_tokens(reply)) text += d.add_token(id);
    return text + d.flush(complete);
  }

  std::string render(const nlohmann::ordered_json& msgs, std::optional<bool> thinking, bool agp = true) {
    const ChatTemplate t = ChatTemplate::from_jinja(template_, "gemma4moe-tiny");
    ChatRenderOptions o;
    o.fallback_to_builtin = false;
    o.enable_thinking = thinking;
    o.add_generation_prompt = agp;
    o.bos_token = "<s>";
    return t.render(msgs, o).text;
  }

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(model());
    const GgufFile f = GgufFile::open(model().toStdString());
    tok_ = load_gguf_tokenizer(f);
    template_ = read_gguf_chat_template(f);
    QVERIFY(ChannelTokens::of(*tok_).has_value());
  }

  // With thinking on the prompt ends at "<|turn>model\n"; the model writes its thought channel,
  // then the answer, then <turn|>.
  void thoughtThenAnswer() {
    nlohmann::ordered_json msgs = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hi"}}});
    const std::string prompt = render(msgs, true);
    QVERIFY2(prompt.ends_with("<|turn>model\n"), prompt.c_str());
    const std::string text = run(prompt, "<|channel>thought\nThe user greets.<channel|>Hello there!<turn|>", true);
    QCOMPARE(QString::fromStdString(text), QStringLiteral("<think>\nThe user greets.</think>\n\n Hello there!"));
    // Korean and an emoji across tokens (byte fallback) come through whole. (No spaces next to
    // them: this vocabulary has no lone "▁", whose bytes would then show as U+2581.)
    QCOMPARE(QString::fromStdString(run(prompt, "<|channel>thought\n인사👋<channel|>Hi<turn|>", true)),
             QStringLiteral("<think>\n인사👋</think>\n\n Hi"));
  }

  // Thinking off: the template closes an empty channel in the prompt; the reply is the answer.
  void thinkingOff() {
    nlohmann::ordered_json msgs = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hi"}}});
    const std::string prompt = render(msgs, false);
    QVERIFY2(prompt.ends_with("<|channel>thought\n<channel|>"), prompt.c_str());
    QCOMPARE(QString::fromStdString(run(prompt, "Hello!<turn|>", true)), QStringLiteral(" Hello!"));
  }

  // A reply cut inside its thought stays open (still thinking) unless it is complete; a prompt
  // that ends inside the channel (after its name line) continues it; a channel of another name is
  // shown as text without its name line.
  void cutsAndOpenPrompts() {
    const std::string p = "<|turn>user\nHi<turn|>\n<|turn>model\n";
    QCOMPARE(QString::fromStdString(run(p, "<|channel>thought\nStill thin")), QStringLiteral("<think>\nStill thin"));
    QCOMPARE(QString::fromStdString(run(p, "<|channel>thought\nDone", true)),
             QStringLiteral("<think>\nDone</think>\n\n"));
    QCOMPARE(QString::fromStdString(run(p + "<|channel>thought\n", "more<channel|>Answer")),
             QStringLiteral("<think>\n more</think>\n\n Answer"));
    QCOMPARE(QString::fromStdString(run(p + "<|channel>tho", "ught\nx<channel|>y")),
             QStringLiteral("<think>\nx</think>\n\n y"));
    QCOMPARE(QString::fromStdString(run(p, "<|channel>notes\nplain<channel|>Answer")), QStringLiteral("plain Answer"));
  }

  // A stored reply ("<think>R</think>\n\nA") goes back as reasoning_content R and content A: the
  // template renders the earlier answer without its reasoning.
  // A call in Gemma 4's syntax keeps its marks ("<|tool_call>", "<|\"|>", "<tool_call|>") in the
  // reply's text, so that the server's gemma4 parser, chosen by this template, reads it.
  void toolCallMarksStayInTheText() {
    const std::string prompt = "<s><|turn>user\nWeather?<turn|>\n<|turn>model\n";
    const std::string text = run(prompt, "<|tool_call>call:get_weather{days:2,metric:true}<tool_call|>", true);
    using namespace pagedchat::openai;
    const ToolCallFormat f = tool_call_format_of(template_, "");
    QCOMPARE(int(f), int(ToolCallFormat::kGemma4));
    const ParsedReply r = parse_tool_calls(f, text, nlohmann::json::array());
    QVERIFY2(r.calls.size() == 1, text.c_str());
    QCOMPARE(r.calls[0].name, std::string("get_weather"));
    QVERIFY(nlohmann::json::parse(r.calls[0].arguments) == nlohmann::json::parse("{\"days\": 2, \"metric\": true}"));
    // A string's marks too. (Text after a mark is spelled with a leading "▁" in this SentencePiece
    // test vocabulary, which Gemma 4's own BPE vocabulary does not do: only the marks are checked.)
    const std::string quoted = run(prompt, "<|tool_call>call:f{city:<|\"|>Seoul<|\"|>}<tool_call|>", true);
    QVERIFY2(quoted.find("<|\"|>") != quoted.rfind("<|\"|>") && quoted.find("<tool_call|>") != std::string::npos,
             quoted.c_str());
  }

  void storedReplyDropsReasoning() {
    nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
    msgs.push_back({{"role", "user"}, {"content", "Hi"}});
    msgs.push_back({{"role", "assistant"}, {"content", "<think>\nThe user greets.</think>\n\nHello!"}});
    msgs.push_back({{"role", "user"}, {"content", "How are you?"}});
    const std::string out = render(msgs, std::nullopt);
    QVERIFY2(out.find("<|turn>model\nHello!<turn|>") != std::string::npos, out.c_str());
    QVERIFY2(out.find("The user greets") == std::string::npos, out.c_str());
    QVERIFY2(out.find("<think>") == std::string::npos, out.c_str());
  }

  // The built-in "gemma4" template (the fallback when a model's own template fails; also what
  // --chat-template gemma4 picks) writes what Google's template writes for conversations without
  // tools: with and without a system message, thinking on, off and unset, replies with stored
  // reasoning. detect_chat_template names the format.
  void builtinMatchesTheModelsTemplate() {
    QCOMPARE(QString::fromStdString(detect_chat_template(template_)), QStringLiteral("gemma4"));
    const ChatTemplate real = ChatTemplate::from_jinja(template_, "gemma4moe-tiny");
    const ChatTemplate builtin = ChatTemplate::builtin("gemma4");
    nlohmann::ordered_json plain = nlohmann::ordered_json::array();
    plain.push_back({{"role", "user"}, {"content", "Hi "}});
    plain.push_back({{"role", "assistant"}, {"content", "<think>\nThe user greets.</think>\n\nHello!"}});
    plain.push_back({{"role", "user"}, {"content", "안녕하세요? 👋"}});
    nlohmann::ordered_json with_system = nlohmann::ordered_json::array();
    with_system.push_back({{"role", "system"}, {"content", " Be brief. "}});
    for (const auto& m : plain) with_system.push_back(m);
    int compared = 0;
    for (const auto& msgs : {plain, with_system})
      for (const std::optional<bool> thinking :
           {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)})
        for (const bool agp : {true, false}) {
          ChatRenderOptions o;
          o.fallback_to_builtin = false;
          o.enable_thinking = thinking;
          o.add_generation_prompt = agp;
          o.bos_token = "<s>";
          const std::string a = real.render(msgs, o).text, b = builtin.render(msgs, o).text;
          QVERIFY2(a == b, qPrintable(QString::fromStdString("model's:\n" + a + "\nbuilt-in:\n" + b)));
          ++compared;
        }
    QCOMPARE(compared, 12);
  }

  // <turn|> ends a reply (and <|tool_response>, where a tool call waits for its result): the
  // family's end-of-generation tokens are the engine's stop ids.
  void turnEndsTheReply() {
    EngineConfig c;
    c.model = model().toStdString();
    const ModelBundle b = load_model(c);
    const std::vector<int>& eos = b.model.config.extra_eos_ids;
    for (const char* piece : {"<turn|>", "<|tool_response>"}) {
      const std::optional<int> id = b.tokenizer->piece_to_id(piece);
      QVERIFY(id.has_value());
      QVERIFY2(*id == b.model.config.eos_id || std::find(eos.begin(), eos.end(), *id) != eos.end(), piece);
    }
  }
};

QTEST_GUILESS_MAIN(TestGemma4Format)
#include "test_gemma4_format.moc"
