// The reasoning switches of real chat templates (engine/text/reasoning_controls.h): which
// variables a template reads (Qwen3's enable_thinking, gpt-oss's reasoning_effort), whether the
// model reasons at all, and what a user's choice does to the rendered prompt. Templates: Qwen3's
// tokenizer_config.json, gpt-oss-tiny's GGUF (ik_llama.cpp's gpt-oss template), and the published
// templates of ../shared/models/chat-templates; rendered by our Jinja interpreter, whose output
// test_jinja_reference checks against @huggingface/jinja.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/text/chat_template.h"
#include "engine/text/reasoning_controls.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {

std::string readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll().toStdString();
}

std::string qwen3Template() {
  const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(readText(
                                                    testpaths::modelFile("tokenizers/qwen3/tokenizer_config.json"))))
                            .object();
  return o.value("chat_template").toString().toStdString();
}

// The prompt `t` writes for one user message with `choice` applied (the options as a request's).
std::string render(const ChatTemplate& t, std::string_view choice, bool* applied = nullptr) {
  ChatEncodeOptions enc;
  const bool a = apply_reasoning_choice(enc, t.reasoning_controls(), choice);
  if (applied) *applied = a;
  ChatRenderOptions o;
  o.fallback_to_builtin = false;
  o.enable_thinking = enc.enable_thinking;
  o.extra_variables_json = enc.extra_variables_json;
  o.bos_token = "";
  o.eos_token = "";
  return t.render(std::vector<ChatMessage>{{"user", "2+2?"}}, o).text;
}

}  // namespace

class TestReasoningControls : public QObject {
  Q_OBJECT

 private slots:
  // Qwen3: a thinking switch; "off" writes the empty think block after the generation prompt
  // (Qwen's documented way to skip reasoning), "on" is its default; an effort does nothing.
  void qwen3Thinking() {
    REQUIRE_MODEL_FILE(testpaths::modelFile("tokenizers/qwen3/tokenizer_config.json"));
    const std::string source = qwen3Template();
    QVERIFY(!source.empty());
    const ChatTemplate t = ChatTemplate::from_jinja(source, "Qwen3");
    const ReasoningControls c = t.reasoning_controls();
    QVERIFY(c.thinking && !c.effort && c.reasons);
    QCOMPARE(reasoning_choices(c), (std::vector<std::string_view>{"on", "off"}));
    bool applied = false;
    const std::string off = render(t, "off", &applied);
    QVERIFY(applied);
    QVERIFY2(off.ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"), off.c_str());
    const std::string on = render(t, "on", &applied), byDefault = render(t, "");
    QVERIFY(applied);
    QCOMPARE(on, byDefault);
    QVERIFY2(on.ends_with("<|im_start|>assistant\n"), on.c_str());
    QCOMPARE(render(t, "high", &applied), byDefault);
    QVERIFY(!applied);
  }

  // gpt-oss (Harmony): an effort, no thinking switch; the choice becomes the system message's
  // "Reasoning:" line, and a caller's own reasoning_effort (the API's field) is not overridden.
  void gptOssEffort() {
    const QString model = testpaths::modelFile("arch/gptoss-tiny.gguf");
    REQUIRE_MODEL_FILE(model);
    const ChatTemplate t = ChatTemplate::from_jinja(read_gguf_chat_template(GgufFile::open(model.toStdString())),
                                                    "gptoss-tiny");
    const ReasoningControls c = t.reasoning_controls();
    QVERIFY(!c.thinking && c.effort && c.reasons);
    QCOMPARE(reasoning_choices(c), (std::vector<std::string_view>{"low", "medium", "high"}));
    for (const char* effort : {"low", "medium", "high"}) {
      const std::string out = render(t, effort);
      QVERIFY2(out.find(std::string("Reasoning: ") + effort) != std::string::npos, out.c_str());
    }
    QVERIFY(render(t, "").find("Reasoning: medium") != std::string::npos);  // the template's default
    bool applied = true;
    QCOMPARE(render(t, "off", &applied), render(t, ""));
    QVERIFY(!applied);
    ChatEncodeOptions enc;
    enc.extra_variables_json = R"({"reasoning_effort":"low","other":1})";
    QVERIFY(apply_reasoning_choice(enc, c, "high"));
    QCOMPARE(QString::fromStdString(enc.extra_variables_json),
             QStringLiteral(R"({"other":1,"reasoning_effort":"low"})"));
    enc.extra_variables_json = "[1]";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, apply_reasoning_choice(enc, c, "high"));
  }

  // Published templates without a switch: DeepSeek-R1's distill reasons (it opens <think>), the
  // others do not; built-ins are known by name (ChatML reads enable_thinking for Qwen3, but a
  // ChatML model is not taken to reason).
  void otherTemplates_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("thinking");
    QTest::addColumn<bool>("effort");
    QTest::addColumn<bool>("reasons");
    QTest::newRow("deepseek-r1-distill") << "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja" << false << false << true;
    QTest::newRow("qwen2.5") << "Qwen-Qwen2.5-7B-Instruct.jinja" << false << false << false;
    QTest::newRow("llama-3.1") << "meta-llama-Llama-3.1-8B-Instruct.jinja" << false << false << false;
    QTest::newRow("mistral-nemo") << "mistralai-Mistral-Nemo-Instruct-2407.jinja" << false << false << false;
    QTest::newRow("builtin chatml") << "chatml" << true << false << false;
    QTest::newRow("builtin gemma4") << "gemma4" << true << false << true;
    QTest::newRow("builtin deepseek-r1") << "deepseek-r1" << false << false << true;
    QTest::newRow("builtin llama3") << "llama3" << false << false << false;
  }
  void otherTemplates() {
    QFETCH(QString, file);
    QFETCH(bool, thinking);
    QFETCH(bool, effort);
    QFETCH(bool, reasons);
    ChatTemplate t = ChatTemplate::builtin("none");
    if (file.endsWith(".jinja")) {
      const QString path = testpaths::modelFile("chat-templates/" + file);
      REQUIRE_MODEL_FILE(path);
      t = ChatTemplate::from_jinja(readText(path), file.toStdString());
    } else {
      t = ChatTemplate::builtin(file.toStdString());
    }
    const ReasoningControls c = t.reasoning_controls();
    QCOMPARE(c.thinking, thinking);
    QCOMPARE(c.effort, effort);
    QCOMPARE(c.reasons, reasons);
    if (!thinking && !effort)
      for (const char* choice : {"on", "off", "low", "high"}) {
        ChatEncodeOptions enc;
        QVERIFY(!apply_reasoning_choice(enc, c, choice));
        QVERIFY(!enc.enable_thinking && enc.extra_variables_json.empty());
      }
  }

  // Gemma 4's built-in: thinking is off unless asked for ("<|think|>" in the system turn).
  void gemma4Thinking() {
    const ChatTemplate t = ChatTemplate::builtin("gemma4");
    const std::string on = render(t, "on"), off = render(t, "off");
    QVERIFY2(on.find("<|think|>") != std::string::npos, on.c_str());
    QVERIFY2(off.find("<|think|>") == std::string::npos, off.c_str());
    QCOMPARE(render(t, ""), off);
  }

  void choices() {
    for (const char* c : {"", "on", "off", "low", "medium", "high"}) QVERIFY(is_reasoning_choice(c));
    for (const char* c : {"ON", "true", "max", " low"}) QVERIFY(!is_reasoning_choice(c));
  }
};

QTEST_GUILESS_MAIN(TestReasoningControls)
#include "test_reasoning_controls.moc"
