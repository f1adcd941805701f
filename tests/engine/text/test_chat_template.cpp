// Chat templates: every built-in renders a 3-turn conversation to the string its canonical source
// produces, the real Jinja templates of those models are recognized (family) and rendered as
// they are, encode_chat puts special tokens in as ids only where the template wrote them (one
// BOS at the start, "<s>" typed in a message is text), fit_chat drops the oldest turns, a
// template that fails falls back to its family's built-in, and unknown names / bad role orders
// are refused. (tests/engine/text/test_jinja_reference compares the renderings byte for byte with
// @huggingface/jinja.)
#include <QTest>

#include <algorithm>
#include <memory>

#include <nlohmann/json.hpp>

#include "engine/text/chat_template.h"
#include "engine/text/tokenizer.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {

// The conversation llama.cpp's and mistral.rs's template tests use (their expected strings were
// produced with transformers' apply_chat_template).
std::vector<ChatMessage> conversation(bool with_system = true) {
  std::vector<ChatMessage> m = {{"system", "You are a helpful assistant"},
                                {"user", "Hello"},
                                {"assistant", "Hi there"},
                                {"user", "Who are you"},
                                {"assistant", "   I am an assistant   "},
                                {"user", "Another question"}};
  if (!with_system) m.erase(m.begin());
  return m;
}

// --- Canonical Jinja templates, as the models' tokenizer_config.json "chat_template" holds them. ---
// meta-llama/Llama-2-7b-chat-hf
const std::string kLlama2Jinja =
    R"({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})";
// TinyLlama/TinyLlama-1.1B-Chat-v1.0 (the zephyr format)
const std::string kTinyLlamaJinja =
    "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + "
    "eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token "
    "}}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token "
    "}}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor "
    "%}";
// mistralai/Mistral-7B-Instruct-v0.2 (current, Mistral's "v1" template with a system prompt)
const std::string kMistralJinja =
    "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- "
    "set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif "
    "%}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}\n        {{- raise_exception('After the optional system message, conversation roles "
    "must alternate user/assistant/user/assistant/...') }}\n    {%- endif %}\n    {%- if message['role'] == 'user' "
    "%}\n        {%- if loop.first and system_message is defined %}\n            {{- ' [INST] ' + system_message + "
    "'\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n            {{- ' [INST] ' + "
    "message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif message['role'] == 'assistant' %}\n    "
    "    {{- ' ' + message['content'] + eos_token}}\n    {%- else %}\n        {{- raise_exception('Only user and "
    "assistant roles are supported, with the exception of an initial optional system message!') }}\n    {%- endif "
    "%}\n{%- endfor %}\n";
// mistralai/Mistral-7B-Instruct-v0.1 (the first release's template, no system message)
const std::string kMistralV01Jinja =
    R"({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})";
// ChatML (teknium/OpenHermes-2.5-Mistral-7B)
const std::string kChatmlJinja =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + "
    "'\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
// Vicuna: lmsys/vicuna-7b-v1.5 ships no template; this is the FastChat vicuna_v1.1 format written
// as Jinja (chujiezheng/chat_templates vicuna.jinja), the one people set for it.
const std::string kVicunaJinja =
    "{% if messages[0]['role'] == 'system' %}\n    {% set loop_messages = messages[1:] %}\n    {% set "
    "system_message = messages[0]['content'].strip() + '\\n\\n' %}\n{% else %}\n    {% set loop_messages = messages "
    "%}\n    {% set system_message = '' %}\n{% endif %}\n{% for message in loop_messages %}\n    {% if "
    "(message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{ raise_exception('Conversation roles must "
    "alternate user/assistant/user/assistant/...') }}\n    {% endif %}\n    {% if loop.index0 == 0 %}\n        {{ "
    "bos_token + system_message }}\n    {% endif %}\n    {% if message['role'] == 'user' %}\n        {{ 'USER: ' + "
    "message['content'].strip() + '\\n' }}\n    {% elif message['role'] == 'assistant' %}\n        {{ 'ASSISTANT: "
    "' + message['content'].strip() + eos_token + '\\n' }}\n    {% endif %}\n{% endfor %}\n{% if "
    "add_generation_prompt %}\n    {{ 'ASSISTANT:' }}\n{% endif %}";
// microsoft/Phi-3-mini-4k-instruct: not a registered format ("<|user|>" but with "<|end|>").
const std::string kPhi3Jinja =
    "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + "
    "'<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif "
    "message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor "
    "%}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}";

int count(const std::vector<int>& ids, int id) { return static_cast<int>(std::count(ids.begin(), ids.end(), id)); }
int count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}
std::string strip_ascii(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}
std::vector<int> concat(std::initializer_list<std::vector<int>> parts) {
  std::vector<int> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
QString q(const std::string& s) { return QString::fromStdString(s); }

// Renders with BOS/EOS texts "<s>"/"</s>" (a Llama 2 tokenizer's).
ChatRenderOptions llama_options(bool add_generation_prompt = true, bool continue_final = false) {
  ChatRenderOptions o;
  o.add_generation_prompt = add_generation_prompt;
  o.continue_final_message = continue_final;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  return o;
}
std::string render(const std::string& name, const std::vector<ChatMessage>& m, bool gen = true, bool cont = false) {
  return ChatTemplate::builtin(name).render(m, llama_options(gen, cont)).text;
}
std::unique_ptr<Tokenizer> llama2_tokenizer() {
  return load_tokenizer(testpaths::modelFile("llama2-tokenizer/tokenizer.model").toStdString());
}
ChatEncodeOptions with_bos(int bos = 1) {
  ChatEncodeOptions o;
  o.bos_id = bos;
  return o;
}

}  // namespace

class TestChatTemplate : public QObject {
  Q_OBJECT

 private slots:
  void rendersCanonicalFormats_data();
  void rendersCanonicalFormats();
  void generationPromptAndDefaults();
  void detectsRealTemplates();
  void resolveOverrides();
  void encodesSpecialTokensAsIds();
  void encodesLikeTheReferences();
  void fitDropsOldestTurns();
  void rejectsBadInput();
  void continuesFinalMessage();
  void modelTemplatesRenderAsWritten();
  void failingTemplateFallsBack();
  void qwen3ThinkHandling();
  void stopConditions();
};

void TestChatTemplate::rendersCanonicalFormats_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<QString>("expected");
  // transformers' output for Llama-2-13b-chat-hf (as in mistral.rs's template tests), BOS per turn.
  QTest::newRow("llama-2")
      << "llama-2"
      << "<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there "
         "</s><s>[INST] Who are you [/INST] I am an assistant </s><s>[INST] Another question [/INST]";
  // llama.cpp's expected output for Mistral-7B-Instruct-v0.2 ("v1") without the one space after
  // each special token, which is sentencepiece's "▁" prefix (encodesLikeTheReferences).
  QTest::newRow("mistral") << "mistral"
                           << "<s>[INST] You are a helpful assistant\n\nHello [/INST] Hi there</s>[INST] Who are you "
                              "[/INST]    I am an assistant   </s>[INST] Another question [/INST]";
  // OpenHermes-2.5 ChatML (the tokenizer's BOS is added as an id, not written).
  QTest::newRow("chatml")
      << "chatml"
      << "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|"
         "im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_"
         "end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother "
         "question<|im_end|>\n<|im_start|>assistant\n";
  // TinyLlama-1.1B-Chat / zephyr-7b-beta model cards' format.
  QTest::newRow("zephyr") << "zephyr"
                          << "<|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n<|assistant|>\nHi "
                             "there</s>\n<|user|>\nWho are you</s>\n<|assistant|>\n   I am an assistant   "
                             "</s>\n<|user|>\nAnother question</s>\n<|assistant|>\n";
  // FastChat vicuna_v1.1 get_prompt(): system + " ", "USER: u ", "ASSISTANT: a</s>", "ASSISTANT:".
  QTest::newRow("vicuna") << "vicuna"
                          << "<s>You are a helpful assistant USER: Hello ASSISTANT: Hi there</s>USER: Who are you "
                             "ASSISTANT: I am an assistant</s>USER: Another question ASSISTANT:";
  // Meta's Llama 3 Instruct model card (contents stripped).
  QTest::newRow("llama3")
      << "llama3"
      << "<s><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|"
         "start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|"
         "end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are "
         "you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><"
         "|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>"
         "assistant<|end_header_id|>\n\n";
  // DeepSeek-R1-Distill's template (earlier replies without their <think> part), bos "<s>" here.
  QTest::newRow("deepseek-r1")
      << "deepseek-r1"
      << "<s>You are a helpful assistant<｜User｜>Hello<｜Assistant｜>Hi there<｜end▁of▁sentence"
         "｜><｜User｜>Who are you<｜Assistant｜>   I am an assistant   <｜end▁of▁sentence｜><｜"
         "User｜>Another question<｜Assistant｜><think>\n";
  // Phi-3 / Phi-3.5 mini's template.
  QTest::newRow("phi3") << "phi3"
                        << "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi "
                           "there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   "
                           "<|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n";
  // Gemma 2/3's template (contents stripped, "model" for the assistant); the system message goes
  // before the first user message as Gemma 3's template puts it.
  QTest::newRow("gemma") << "gemma"
                         << "<s><start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>"
                            "model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_"
                            "turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_"
                            "turn>\n<start_of_turn>model\n";
  QTest::newRow("none") << "none"
                        << "You are a helpful assistantHelloHi thereWho are you   I am an assistant   Another question";
}

void TestChatTemplate::rendersCanonicalFormats() {
  QFETCH(QString, name);
  QFETCH(QString, expected);
  const ChatTemplate t = ChatTemplate::builtin(name.toStdString());
  QCOMPARE(q(t.name()), name);
  QCOMPARE(q(t.family()), name);
  QVERIFY(t.is_builtin());
  const TemplatedText r = t.render(conversation(), llama_options());
  QCOMPARE(q(r.text), expected);
  // Every message's content is data; the template's markers are not.
  for (const ChatMessage& m : conversation()) {
    const std::string c = strip_ascii(m.content);
    const size_t at = r.text.find(c);
    QVERIFY2(at != std::string::npos, qPrintable(name + ": " + q(c)));
    QVERIFY2(!r.is_template_text(at, at + 1) && !r.is_template_text(at + c.size() - 1, at + c.size()),
             qPrintable(name + ": " + q(c)));
  }
  for (const std::string& marker : t.end_of_turn_markers()) {
    const size_t at = r.text.find(marker);
    if (at != std::string::npos) QVERIFY2(r.is_template_text(at, at + marker.size()), marker.c_str());
  }
}

void TestChatTemplate::generationPromptAndDefaults() {
  const std::vector<ChatMessage> one = {{"user", "Hi"}};
  QCOMPARE(q(render("chatml", one, false)), QString("<|im_start|>user\nHi<|im_end|>\n"));
  QCOMPARE(q(render("zephyr", one, false)), QString("<|user|>\nHi</s>\n"));
  QCOMPARE(q(render("vicuna", one, false)),
           QString("<s>A chat between a curious user and an artificial intelligence assistant. The assistant gives "
                   "helpful, detailed, and polite answers to the user's questions. USER: Hi "));
  QVERIFY(q(render("vicuna", one, true)).endsWith("questions. USER: Hi ASSISTANT:"));
  QCOMPARE(q(render("phi3", one, false)), QString("<|user|>\nHi<|end|>\n</s>"));  // eos closes it (Phi-3's template)
  // llama-2 / mistral / none end where the reply starts either way.
  for (const char* n : {"llama-2", "mistral", "none"}) QCOMPARE(q(render(n, one, true)), q(render(n, one, false)));
  QCOMPARE(q(render("llama-2", one, true)), QString("<s>[INST] Hi [/INST]"));
  QCOMPARE(q(render("mistral", conversation(false), true)),
           QString("<s>[INST] Hello [/INST] Hi there</s>[INST] Who are you [/INST]    I am an assistant   </s>"
                   "[INST] Another question [/INST]"));
  QCOMPARE(q(render("llama-2", conversation(false), true)),
           QString("<s>[INST] Hello [/INST] Hi there </s><s>[INST] Who are you [/INST] I am an assistant </s><s>[INST] "
                   "Another question [/INST]"));
  QCOMPARE(q(render("none", {{"user", "Once upon a time"}, {"assistant", ", there"}, {"user", " was"}}, true)),
           QString("Once upon a time, there was"));
  QVERIFY(ChatTemplate::builtin("none").end_of_turn_markers().empty());
  const auto& chatml_stop = ChatTemplate::builtin("chatml").end_of_turn_markers();
  QVERIFY(std::find(chatml_stop.begin(), chatml_stop.end(), "<|im_end|>") != chatml_stop.end());
  // Every registered name renders.
  QCOMPARE(int(chat_template_names().size()), 11);
  for (const std::string& n : chat_template_names()) QVERIFY2(!render(n, conversation()).empty(), n.c_str());
}

void TestChatTemplate::detectsRealTemplates() {
  std::string reason = "stale";
  QCOMPARE(q(detect_chat_template(kLlama2Jinja, &reason)), QString("llama-2"));
  QVERIFY(reason.empty());
  QCOMPARE(q(detect_chat_template(kTinyLlamaJinja)), QString("zephyr"));
  QCOMPARE(q(detect_chat_template(kMistralJinja)), QString("mistral"));
  QCOMPARE(q(detect_chat_template(kMistralV01Jinja)), QString("mistral"));
  QCOMPARE(q(detect_chat_template(kChatmlJinja)), QString("chatml"));
  QCOMPARE(q(detect_chat_template(kVicunaJinja)), QString("vicuna"));
  QCOMPARE(q(detect_chat_template(kPhi3Jinja)), QString("phi3"));
  QCOMPARE(q(detect_chat_template("", &reason)), QString("none"));  // llama2.c checkpoints
  QVERIFY(reason.empty());
  QCOMPARE(q(detect_chat_template("  chatml\n")), QString("chatml"));  // a bare name (GGUF files may carry one)
  // The real templates in ../shared/models.
  const std::vector<std::pair<QString, QString>> files = {
      {"chat-templates/meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3"},
      {"chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja", "chatml"},
      {"chat-templates/microsoft-Phi-3.5-mini-instruct.jinja", "phi3"},
      {"chat-templates/mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral"},
      {"chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek-r1"},
  };
  for (const auto& [rel, family] : files) {
    const QString path = testpaths::modelFile(rel);
    REQUIRE_MODEL_FILE(path);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(q(detect_chat_template(f.readAll().toStdString())), family);
  }
  // Unknown templates fall back to plain continuation, with a reason for the warning.
  QCOMPARE(q(detect_chat_template("{% for m in messages %}### {{ m.role }}: {{ m.content }}{% endfor %}", &reason)),
           QString("none"));
  QVERIFY2(q(reason).contains("--chat-template"), reason.c_str());
}

void TestChatTemplate::resolveOverrides() {
  std::string warning = "stale";
  const ChatTemplate model = resolve_chat_template("auto", kLlama2Jinja, "'m.gguf'", &warning);
  QVERIFY(warning.empty());
  QCOMPARE(q(model.name()), QString("jinja"));  // the model's own template is rendered
  QCOMPARE(q(model.family()), QString("llama-2"));
  QVERIFY(!model.is_builtin());
  QCOMPARE(q(resolve_chat_template("", kChatmlJinja).family()), QString("chatml"));
  QCOMPARE(q(resolve_chat_template("zephyr", kLlama2Jinja).name()), QString("zephyr"));  // the override wins
  QCOMPARE(q(resolve_chat_template("none", "").name()), QString("none"));
  QCOMPARE(q(resolve_chat_template("auto", "").name()), QString("none"));  // no template: plain continuation
  QCOMPARE(q(resolve_chat_template("auto", " chatml ").name()), QString("chatml"));
  try {
    resolve_chat_template("llama2", kLlama2Jinja);
    QFAIL("expected ChatTemplateError");
  } catch (const ChatTemplateError& e) {
    for (const std::string& n : chat_template_names()) QVERIFY2(q(e.what()).contains(q(n)), e.what());
  }
  // A .jinja file as the override.
  QTemporaryDir dir;
  const QString file = dir.filePath("mine.jinja");
  {
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}");
  }
  const ChatTemplate mine = resolve_chat_template(file.toStdString(), kLlama2Jinja);
  QCOMPARE(q(mine.render(std::vector<ChatMessage>{{"user", "a"}}, {}).text), QString("<user>a"));
  QVERIFY_THROWS_EXCEPTION(ChatTemplateError, resolve_chat_template(dir.filePath("missing.jinja").toStdString(), ""));
  // A model template that does not parse: its family's built-in, with a warning naming the model.
  const ChatTemplate broken = resolve_chat_template("auto", "{% for m in messages %}<|im_start|>{{ m.content }",
                                                    "'x.gguf'", &warning);
  QCOMPARE(q(broken.name()), QString("chatml"));
  QVERIFY2(q(warning).contains("x.gguf") && q(warning).contains("chatml"), warning.c_str());
}

void TestChatTemplate::encodesSpecialTokensAsIds() {
  REQUIRE_MODEL_FILE(testpaths::modelFile("llama2-tokenizer/tokenizer.model"));
  const auto tok = llama2_tokenizer();
  const int bos = tok->bos_id(), eos = tok->eos_id();
  QCOMPARE(bos, 1);
  QCOMPARE(eos, 2);
  for (const std::string& name : chat_template_names()) {
    const ChatTemplate t = ChatTemplate::builtin(name);
    const std::string text = render(name, conversation());
    const std::vector<int> ids = encode_chat(*tok, t, conversation(), true, with_bos(bos));
    QVERIFY2(ids.size() > 2, name.c_str());
    QVERIFY2(ids[0] == bos && ids[1] != bos, name.c_str());  // one BOS at the start, not doubled
    const int written_bos = count(text, "<s>");
    QVERIFY2(count(ids, bos) == std::max(1, written_bos), name.c_str());  // llama-2: one per turn
    QVERIFY2(count(ids, eos) == count(text, "</s>"), name.c_str());       // every </s> is the EOS id
    const std::string decoded = tok->decode(ids);                         // special ids decode to nothing
    QVERIFY2(!q(decoded).contains("<s>") && !q(decoded).contains("</s>"), decoded.c_str());
    // Without the BOS rule the prompt has only the BOS ids the template writes.
    QCOMPARE(count(encode_chat(*tok, t, conversation(), true, ChatEncodeOptions{}), bos), written_bos);
  }
  // EOS ids sit where the format has </s>: zephyr ends every message with one.
  const std::vector<int> z = encode_chat(*tok, ChatTemplate::builtin("zephyr"), {{"user", "Hi"}}, true, with_bos(bos));
  QCOMPARE(z, concat({{bos}, tok->encode("<|user|>\nHi"), {eos}, tok->encode("\n<|assistant|>\n")}));
  // "<s>" typed in a message is text, never a special token.
  const std::vector<int> lit = encode_chat(*tok, ChatTemplate::builtin("chatml"), {{"user", "a <s> b </s> c"}}, true,
                                           with_bos(bos));
  QCOMPARE(count(lit, bos), 1);
  QCOMPARE(count(lit, eos), 0);
  QVERIFY(q(tok->decode(lit)).contains("a <s> b </s> c"));
}

void TestChatTemplate::encodesLikeTheReferences() {
  REQUIRE_MODEL_FILE(testpaths::modelFile("llama2-tokenizer/tokenizer.model"));
  const auto tok = llama2_tokenizer();
  const int bos = tok->bos_id(), eos = tok->eos_id();
  // Meta's llama/generation.py chat_completion: per exchange
  //   encode(f"{B_INST} {prompt.strip()} {E_INST} {answer.strip()} ", bos=True, eos=True),
  // then encode(f"{B_INST} {last.strip()} {E_INST}", bos=True); the system goes into the first prompt.
  const auto m = conversation();
  const std::string first = "<<SYS>>\n" + m[0].content + "\n<</SYS>>\n\n" + m[1].content;
  const std::vector<int> meta = concat({{bos},
                                        tok->encode("[INST] " + first + " [/INST] Hi there "),
                                        {eos},
                                        {bos},
                                        tok->encode("[INST] Who are you [/INST] I am an assistant "),
                                        {eos},
                                        {bos},
                                        tok->encode("[INST] Another question [/INST]")});
  QCOMPARE(encode_chat(*tok, ChatTemplate::builtin("llama-2"), m, true, with_bos(bos)), meta);
  // mistral-common's v1 tokenizer: <s>▁[INST]▁... — the space after a special token is the "▁" prefix.
  const std::vector<int> mistral = encode_chat(*tok, ChatTemplate::builtin("mistral"),
                                               {{"user", "Hello"}, {"assistant", "Hi"}, {"user", "Bye"}}, true,
                                               with_bos(bos));
  QCOMPARE(mistral, concat({{bos}, tok->encode("[INST] Hello [/INST] Hi"), {eos}, tok->encode("[INST] Bye [/INST]")}));
  QCOMPARE(q(tok->id_to_piece(mistral[1])), q(tok->id_to_piece(tok->encode("[INST]").front())));
  // "none" is exactly what a plain prompt gets (LLMEngine::add_request encodes with BOS).
  const QString stories = testpaths::stories260K() + "/tok512.model";
  REQUIRE_MODEL_FILE(stories);
  const auto small = load_tokenizer(stories.toStdString());
  const std::vector<ChatMessage> story = {
      {"user", "Once upon a time"}, {"assistant", ", there was a girl."}, {"user", " She liked"}};
  QCOMPARE(encode_chat(*small, ChatTemplate::builtin("none"), story, true, with_bos(small->bos_id())),
           small->encode("Once upon a time, there was a girl. She liked", true));
}

void TestChatTemplate::fitDropsOldestTurns() {
  REQUIRE_MODEL_FILE(testpaths::modelFile("llama2-tokenizer/tokenizer.model"));
  const auto tokp = llama2_tokenizer();
  const Tokenizer& tok = *tokp;
  const ChatTemplate llama2 = ChatTemplate::builtin("llama-2");
  std::vector<ChatMessage> m = {{"system", "Be brief."}};
  for (int i = 0; i < 8; ++i) {
    m.push_back({"user", "Question number " + std::to_string(i) + " about the weather today?"});
    m.push_back({"assistant", "Answer number " + std::to_string(i) + ": it is sunny and warm."});
  }
  m.push_back({"user", "Last question?"});
  const int full = static_cast<int>(encode_chat(tok, llama2, m, true, with_bos()).size());

  // Room for everything: nothing dropped, max_tokens clamped to what is left.
  ChatPrompt all = fit_chat(tok, llama2, m, with_bos(), 4096, 100000);
  QCOMPARE(all.num_dropped_messages, 0);
  QCOMPARE(static_cast<int>(all.token_ids.size()), full);
  QCOMPARE(all.max_tokens, 4096 - full);
  QVERIFY(all.warning.empty());

  // A context of about half: whole turns go, the system message stays, the result still renders.
  const int max_len = full / 2 + 40;
  const ChatPrompt half = fit_chat(tok, llama2, m, with_bos(), max_len, 32);
  QVERIFY(half.num_dropped_messages > 0);
  QCOMPARE(half.num_dropped_messages % 2, 0);
  QVERIFY(static_cast<int>(half.token_ids.size()) <= max_len - chat_reply_reserve(32, max_len));
  std::vector<ChatMessage> kept = {m[0]};
  kept.insert(kept.end(), m.begin() + 1 + half.num_dropped_messages, m.end());
  QCOMPARE(half.token_ids, encode_chat(tok, llama2, kept, true, with_bos()));
  QVERIFY(q(tok.decode(half.token_ids)).startsWith("[INST] <<SYS>>\nBe brief."));
  // ... and no more turns than needed went: with one turn fewer dropped it would not fit.
  std::vector<ChatMessage> one_more = {m[0]};
  one_more.insert(one_more.end(), m.begin() + 1 + half.num_dropped_messages - 2, m.end());
  QVERIFY(static_cast<int>(encode_chat(tok, llama2, one_more, true, with_bos()).size()) >
          max_len - chat_reply_reserve(32, max_len));
  QCOMPARE(half.max_tokens, 32);

  // A long history (a pane used for days) costs a few renders, not one per dropped turn.
  std::vector<ChatMessage> story;
  for (int i = 0; i < 600; ++i) story.push_back({i % 2 ? "assistant" : "user", " and then the dog ran home."});
  story.push_back({"user", " The end."});
  const ChatPrompt tail = fit_chat(tok, ChatTemplate::builtin("none"), story, with_bos(), 512, 128);
  QVERIFY(tail.num_dropped_messages > 500 && tail.num_dropped_messages % 2 == 0);
  QVERIFY(tail.token_ids.size() <= 512 - 128);
  QCOMPARE(tail.max_tokens, 128);

  // Only the newest turn left and longer than the reserve allows: sent while one token fits.
  const std::vector<ChatMessage> big = {{"user", std::string(200, 'x') + " end"}};
  const int n = static_cast<int>(encode_chat(tok, llama2, big, true, with_bos()).size());
  const ChatPrompt tight = fit_chat(tok, llama2, big, with_bos(), n + 3, 256);
  QCOMPARE(tight.max_tokens, 3);
  try {
    fit_chat(tok, llama2, big, with_bos(), n, 16);
    QFAIL("expected ChatTooLongError");
  } catch (const ChatTooLongError& e) {
    QCOMPARE(e.num_tokens, n);
    QCOMPARE(e.max_model_len, n);
    QVERIFY(!e.whole_conversation);
  }

  // Truncate the middle: the system message and the first turn stay, the turns after it go.
  ChatEncodeOptions middle = with_bos();
  middle.context_overflow = ContextOverflow::kTruncateMiddle;
  const ChatPrompt mid = fit_chat(tok, llama2, m, middle, max_len, 32);
  QCOMPARE(mid.first_dropped_message, 3);  // system, user 0, assistant 0 kept
  QVERIFY(mid.num_dropped_messages > 0 && mid.num_dropped_messages % 2 == 0);
  std::vector<ChatMessage> kept_mid(m.begin(), m.begin() + 3);
  kept_mid.insert(kept_mid.end(), m.begin() + 3 + mid.num_dropped_messages, m.end());
  QCOMPARE(mid.token_ids, encode_chat(tok, llama2, kept_mid, true, with_bos()));
  QVERIFY(static_cast<int>(mid.token_ids.size()) <= max_len - chat_reply_reserve(32, max_len));
  QVERIFY(q(tok.decode(mid.token_ids)).contains("Question number 0"));
  QVERIFY(!q(tok.decode(mid.token_ids)).contains("Question number 1 "));
  QCOMPARE(half.first_dropped_message, 1);  // the rolling window drops right after the system message

  // Stop at the limit: nothing dropped, the whole conversation's size said.
  ChatEncodeOptions stop = with_bos();
  stop.context_overflow = ContextOverflow::kStopAtLimit;
  QCOMPARE(fit_chat(tok, llama2, m, stop, 4096, 100000).num_dropped_messages, 0);  // it fits: sent
  try {
    fit_chat(tok, llama2, m, stop, max_len, 32);
    QFAIL("expected ChatTooLongError");
  } catch (const ChatTooLongError& e) {
    QVERIFY(e.whole_conversation);
    QCOMPARE(e.num_tokens, full);
    QCOMPARE(e.max_model_len, max_len);
  }
}

void TestChatTemplate::rejectsBadInput() {
  QVERIFY_THROWS_EXCEPTION(ChatTemplateError, ChatTemplate::builtin("llama2"));
  const std::vector<std::vector<ChatMessage>> bad_orders = {
      {{"user", "a"}, {"user", "b"}},                     // two user messages in a row
      {{"assistant", "a"}, {"user", "b"}},                // starts with the assistant
      {{"system", "s"}, {"system", "t"}, {"user", "b"}},  // a second system message
      {{"user", "a"}, {"system", "s"}},                   // system later on
      {{"system", "s"}},                                  // nothing to answer
  };
  for (const char* n : {"llama-2", "mistral", "vicuna", "gemma"})
    for (const auto& m : bad_orders) {
      try {
        render(n, m);
        QFAIL(n);
      } catch (const ChatTemplateError& e) {
        QVERIFY2(q(e.what()).contains(n), e.what());
      }
    }
  // Formats that render each message on its own take any order; every format refuses unknown roles
  // and an empty conversation.
  QCOMPARE(q(render("chatml", {{"user", "a"}, {"user", "b"}}, false)),
           QString("<|im_start|>user\na<|im_end|>\n<|im_start|>user\nb<|im_end|>\n"));
  QVERIFY(!render("zephyr", {{"assistant", "a"}, {"system", "s"}}).empty());
  for (const std::string& n : chat_template_names()) {
    QVERIFY_THROWS_EXCEPTION(ChatTemplateError, render(n, {{"tool", "x"}}));
    QVERIFY_THROWS_EXCEPTION(ChatTemplateError, render(n, {}));
  }
  // Malformed JSON messages are refused by name, for built-ins and model templates alike.
  const ChatTemplate model = ChatTemplate::from_jinja(kChatmlJinja, "test");
  for (const char* bad : {R"({"role": "user"})", R"([{"content": "x"}])", R"([{"role": 3, "content": "x"}])", "[]"})
    QVERIFY_THROWS_EXCEPTION(ChatTemplateError, model.render(nlohmann::ordered_json::parse(bad), {}));
  QVERIFY_THROWS_EXCEPTION(ChatTemplateError,
                           ChatTemplate::builtin("chatml").render(
                               nlohmann::ordered_json::parse(R"([{"role": "user", "content": null}])"), {}));
  // A template that does not parse names the place.
  try {
    ChatTemplate::from_jinja("{% for m in messages %}{{ m.content }", "the chat template of 'x.gguf'");
    QFAIL("expected ChatTemplateError");
  } catch (const ChatTemplateError& e) {
    QVERIFY2(q(e.what()).contains("x.gguf"), e.what());
  }
}

// continue_final_message: the prompt ends inside the last assistant reply (no EOS, no end-of-turn
// marker) so that the model continues it; the ids are the complete conversation's ids up to the
// reply's text; fit_chat passes it through.
void TestChatTemplate::continuesFinalMessage() {
  const std::vector<ChatMessage> m = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello the"}};
  QCOMPARE(q(render("chatml", m, true, true)),
           QString("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                   "<|im_start|>assistant\nHello the"));
  QCOMPARE(q(render("llama-2", m, true, true)),
           QString("<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello the"));
  QCOMPARE(q(render("mistral", m, false, true)), QString("<s>[INST] Be brief.\n\nHi [/INST] Hello the"));
  QCOMPARE(q(render("zephyr", m, true, true)),
           QString("<|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\nHello the"));
  QCOMPARE(q(render("vicuna", m, true, true)), QString("<s>Be brief. USER: Hi ASSISTANT: Hello the"));
  QCOMPARE(q(render("llama3", m, true, true)),
           QString("<s><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_"
                   "header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello the"));
  QCOMPARE(q(render("none", m, true, true)), QString("Be brief.HiHello the"));
  // Each is the closed rendering with its end of turn cut off, the reply itself data.
  for (const std::string& name : chat_template_names()) {
    const TemplatedText open = ChatTemplate::builtin(name).render(m, llama_options(false, true));
    QVERIFY2(q(render(name, m, false)).startsWith(q(open.text)), name.c_str());
    QVERIFY2(!open.is_template_text(open.text.size() - 9, open.text.size()), name.c_str());
  }
  QVERIFY_THROWS_EXCEPTION(ChatTemplateError, render("chatml", {{"user", "Hi"}}, true, true));

  REQUIRE_MODEL_FILE(testpaths::modelFile("llama2-tokenizer/tokenizer.model"));
  const auto tok = llama2_tokenizer();
  ChatEncodeOptions cont = with_bos();
  cont.continue_final_message = true;
  const ChatTemplate zephyr = ChatTemplate::builtin("zephyr");
  const std::vector<int> open = encode_chat(*tok, zephyr, m, true, cont);
  const std::vector<int> closed = encode_chat(*tok, zephyr, m, false, with_bos());
  QVERIFY(open.back() != 2);
  QVERIFY(std::equal(open.begin(), open.end(), closed.begin()));
  QCOMPARE(fit_chat(*tok, zephyr, m, cont, 4096, 64).token_ids, open);
}

// A model's own template is rendered as it is written (not mapped to a built-in): the Llama 2
// template writes the same string as the llama-2 built-in, Phi-3's its own format.
void TestChatTemplate::modelTemplatesRenderAsWritten() {
  const ChatTemplate llama2 = ChatTemplate::from_jinja(kLlama2Jinja, "Llama-2-7b-chat-hf");
  QCOMPARE(q(llama2.render(conversation(), llama_options()).text), q(render("llama-2", conversation())));
  const ChatTemplate phi3 = ChatTemplate::from_jinja(kPhi3Jinja, "Phi-3-mini");
  QCOMPARE(q(phi3.render(conversation(), llama_options(false)).text),
           QString("<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi "
                   "there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   "
                   "<|end|>\n<|user|>\nAnother question<|end|>\n</s>"));
  // raise_exception in the model's template: the strict render reports its message; the default
  // falls back to the family's built-in, which refuses the same order with its own message.
  ChatRenderOptions strict = llama_options();
  strict.fallback_to_builtin = false;
  try {
    llama2.render(std::vector<ChatMessage>{{"user", "a"}, {"user", "b"}}, strict);
    QFAIL("expected ChatTemplateError");
  } catch (const ChatTemplateError& e) {
    QVERIFY2(q(e.what()).contains("Conversation roles must alternate"), e.what());
  }
  QVERIFY_THROWS_EXCEPTION(ChatTemplateError,
                           llama2.render(std::vector<ChatMessage>{{"user", "a"}, {"user", "b"}}, llama_options()));
}

// A model template that fails while running (here: an output budget a runaway loop exceeds, and
// a raise_exception) is rendered with its family's built-in, with a warning.
void TestChatTemplate::failingTemplateFallsBack() {
  const ChatTemplate looping = ChatTemplate::from_jinja(
      "{% for i in range(100000) %}{% for j in range(100000) %}<|im_start|>{% endfor %}{% endfor %}", "'loop.gguf'");
  QCOMPARE(q(looping.family()), QString("chatml"));
  std::string warning;
  const TemplatedText r = looping.render(std::vector<ChatMessage>{{"user", "Hi"}}, llama_options(), &warning);
  QCOMPARE(q(r.text), QString("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
  QVERIFY2(q(warning).contains("loop.gguf") && q(warning).contains("chatml"), warning.c_str());
  const ChatTemplate raising = ChatTemplate::from_jinja(
      "{{ raise_exception('System role not supported') }}<start_of_turn>", "'gemma-2.gguf'");
  const TemplatedText g = raising.render(conversation(false), llama_options(), &warning);
  QVERIFY(q(g.text).startsWith("<s><start_of_turn>user\nHello<end_of_turn>\n"));
  QVERIFY2(q(warning).contains("System role not supported"), warning.c_str());
}

// The built-in chatml handles Qwen3's reasoning as Qwen3's template does: earlier replies lose
// their <think> part, enable_thinking = false closes an empty one.
void TestChatTemplate::qwen3ThinkHandling() {
  const std::vector<ChatMessage> m = {
      {"user", "2+2?"}, {"assistant", "<think>\nadd them\n</think>\n\n4"}, {"user", "3+3?"}};
  ChatRenderOptions o;
  QCOMPARE(
      q(ChatTemplate::builtin("chatml").render(m, o).text),
      QString("<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\n3+3?<|im_end|>\n"
              "<|im_start|>assistant\n"));
  o.enable_thinking = false;
  QVERIFY(
      q(ChatTemplate::builtin("chatml").render(m, o).text).endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  // DeepSeek-R1 drops the reasoning of earlier replies too.
  QVERIFY(!q(ChatTemplate::builtin("deepseek-r1").render(m, o).text).contains("add them"));
}

// End-of-turn markers that are control tokens stop by id (decode drops them), the rest by text.
void TestChatTemplate::stopConditions() {
  REQUIRE_MODEL_FILE(testpaths::modelFile("llama2-tokenizer/tokenizer.model"));
  const auto tok = llama2_tokenizer();
  const ChatStopConditions chatml = chat_stop_conditions(ChatTemplate::builtin("chatml"), *tok);
  QVERIFY(chatml.stop_token_ids.empty());  // "<|im_end|>" is text to a Llama 2 tokenizer
  QCOMPARE(int(chatml.stop.size()), 2);
  const QString qwen = testpaths::modelFile("tokenizers/qwen3/tokenizer.json");
  REQUIRE_MODEL_FILE(qwen);
  const auto qt = load_tokenizer(qwen.toStdString());
  const ChatStopConditions q3 = chat_stop_conditions(ChatTemplate::builtin("chatml"), *qt);
  QCOMPARE(q3.stop_token_ids, (std::vector<int>{151645, 151644}));  // <|im_end|>, <|im_start|>
  QVERIFY(q3.stop.empty());
}

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
