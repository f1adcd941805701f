// Chat templates: every format renders a 3-turn conversation to the string its canonical source
// produces, the real Jinja templates of those models are recognized, encode_chat puts BOS/EOS in
// as ids (one BOS at the start, never "<s>" as text), fit_chat drops the oldest turns, and
// unknown names / bad role orders are refused.
#include <QtTest>

#include <algorithm>

#include "engine/text/chat_template.h"
#include "engine/text/tokenizer.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {

// The conversation llama.cpp's and mistral.rs's template tests use (their expected strings were
// produced with transformers' apply_chat_template).
std::vector<ChatMessage> conversation(bool with_system = true) {
  std::vector<ChatMessage> m = {{"system", "You are a helpful assistant"}, {"user", "Hello"},
                                {"assistant", "Hi there"},                   {"user", "Who are you"},
                                {"assistant", "   I am an assistant   "},    {"user", "Another question"}};
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
std::vector<int> concat(std::initializer_list<std::vector<int>> parts) {
  std::vector<int> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
QString q(const std::string& s) { return QString::fromStdString(s); }

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
};

void TestChatTemplate::rendersCanonicalFormats_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<QString>("expected");
  // transformers' output for Llama-2-13b-chat-hf (as in mistral.rs's template tests), BOS per turn.
  QTest::newRow("llama-2") << "llama-2"
                           << "<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there "
                              "</s><s>[INST] Who are you [/INST] I am an assistant </s><s>[INST] Another question [/INST]";
  // llama.cpp's expected output for Mistral-7B-Instruct-v0.2 ("v1"), with its bos_token "<s>".
  QTest::newRow("mistral") << "mistral"
                           << "<s> [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you "
                              "[/INST]    I am an assistant   </s> [INST] Another question [/INST]";
  // OpenHermes-2.5 ChatML, after the tokenizer's BOS.
  QTest::newRow("chatml") << "chatml"
                          << "<s><|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|"
                             "im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_"
                             "end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother "
                             "question<|im_end|>\n<|im_start|>assistant\n";
  // TinyLlama-1.1B-Chat / zephyr-7b-beta model cards' format, after the tokenizer's BOS.
  QTest::newRow("zephyr") << "zephyr"
                          << "<s><|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n<|assistant|>\nHi "
                             "there</s>\n<|user|>\nWho are you</s>\n<|assistant|>\n   I am an assistant   "
                             "</s>\n<|user|>\nAnother question</s>\n<|assistant|>\n";
  // FastChat vicuna_v1.1 get_prompt(): system + " ", "USER: u ", "ASSISTANT: a</s>", "ASSISTANT:".
  QTest::newRow("vicuna") << "vicuna"
                          << "<s>You are a helpful assistant USER: Hello ASSISTANT: Hi there</s>USER: Who are you "
                             "ASSISTANT: I am an assistant</s>USER: Another question ASSISTANT:";
  QTest::newRow("none") << "none"
                        << "<s>You are a helpful assistantHelloHi thereWho are you   I am an assistant   Another question";
}

void TestChatTemplate::rendersCanonicalFormats() {
  QFETCH(QString, name);
  QFETCH(QString, expected);
  const RenderedPrompt r = render_chat(name.toStdString(), conversation(), true);
  QCOMPARE(q(r.text), expected);
  QCOMPARE(q(r.template_name), name);
  QVERIFY(r.pieces.front().kind == PromptPiece::Kind::kBos);
}

void TestChatTemplate::generationPromptAndDefaults() {
  const std::vector<ChatMessage> one = {{"user", "Hi"}};
  QCOMPARE(q(render_chat("chatml", one, false).text), QString("<s><|im_start|>user\nHi<|im_end|>\n"));
  QCOMPARE(q(render_chat("zephyr", one, false).text), QString("<s><|user|>\nHi</s>\n"));
  QCOMPARE(q(render_chat("vicuna", one, false).text),
           QString("<s>A chat between a curious user and an artificial intelligence assistant. The assistant gives "
                   "helpful, detailed, and polite answers to the user's questions. USER: Hi "));
  QVERIFY(q(render_chat("vicuna", one, true).text).endsWith("questions. USER: Hi ASSISTANT:"));
  // llama-2 / mistral / none end where the reply starts either way.
  for (const char* n : {"llama-2", "mistral", "none"})
    QCOMPARE(q(render_chat(n, one, true).text), q(render_chat(n, one, false).text));
  QCOMPARE(q(render_chat("llama-2", one, true).text), QString("<s>[INST] Hi [/INST]"));
  QCOMPARE(q(render_chat("mistral", conversation(false), true).text),
           QString("<s> [INST] Hello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> "
                   "[INST] Another question [/INST]"));
  QCOMPARE(q(render_chat("llama-2", conversation(false), true).text),
           QString("<s>[INST] Hello [/INST] Hi there </s><s>[INST] Who are you [/INST] I am an assistant </s><s>[INST] "
                   "Another question [/INST]"));
  QCOMPARE(q(render_chat("none", {{"user", "Once upon a time"}, {"assistant", ", there"}, {"user", " was"}}, true).text),
           QString("<s>Once upon a time, there was"));
  QVERIFY(chat_template_stop_strings("none").empty());
  const auto& chatml_stop = chat_template_stop_strings("chatml");
  QVERIFY(std::find(chatml_stop.begin(), chatml_stop.end(), "<|im_end|>") != chatml_stop.end());
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
  QCOMPARE(q(detect_chat_template("", &reason)), QString("none"));  // llama2.c checkpoints
  QVERIFY(reason.empty());
  QCOMPARE(q(detect_chat_template("  chatml\n")), QString("chatml"));  // a bare name (GGUF files may carry one)
  // Unknown templates fall back to plain continuation, with a reason for the warning.
  QCOMPARE(q(detect_chat_template(kPhi3Jinja, &reason)), QString("none"));
  QVERIFY2(q(reason).contains("--chat-template"), reason.c_str());
  QCOMPARE(q(detect_chat_template("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}", &reason)),
           QString("none"));
  QVERIFY(!reason.empty());
}

void TestChatTemplate::resolveOverrides() {
  QCOMPARE(q(resolve_chat_template("auto", kLlama2Jinja)), QString("llama-2"));
  QCOMPARE(q(resolve_chat_template("", kChatmlJinja)), QString("chatml"));
  QCOMPARE(q(resolve_chat_template("zephyr", kLlama2Jinja)), QString("zephyr"));  // the override wins
  QCOMPARE(q(resolve_chat_template("none", "")), QString("none"));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, resolve_chat_template("llama2", kLlama2Jinja));
}

void TestChatTemplate::encodesSpecialTokensAsIds() {
  const QString path = testpaths::modelFile("llama2-tokenizer/tokenizer.model");
  REQUIRE_MODEL_FILE(path);
  const auto tok_ptr = load_tokenizer(path.toStdString());
    const Tokenizer& tok = *tok_ptr;
  const int bos = tok.bos_id(), eos = tok.eos_id();
  QCOMPARE(bos, 1);
  QCOMPARE(eos, 2);
  for (const std::string& name : chat_template_names()) {
    const RenderedPrompt r = render_chat(name, conversation(), true);
    const std::vector<int> ids = encode_chat(tok, name, conversation(), true, bos, eos);
    QVERIFY2(ids.size() > 2, name.c_str());
    QVERIFY2(ids[0] == bos && ids[1] != bos, name.c_str());  // one BOS at the start, not doubled
    QVERIFY2(count(ids, bos) == count(r.text, "<s>"), name.c_str());   // llama-2: one per turn
    QVERIFY2(count(ids, eos) == count(r.text, "</s>"), name.c_str());  // every </s> is the EOS id
    const std::string text = tok.decode(ids);  // special ids decode to nothing
    QVERIFY2(!q(text).contains("<s>") && !q(text).contains("</s>"), text.c_str());
    for (int id : ids)
      if (id != bos && id != eos) QVERIFY2(tok.id_to_piece(id) != "<s>" && tok.id_to_piece(id) != "</s>", name.c_str());
    // Without a BOS id the prompt has none.
    QCOMPARE(count(encode_chat(tok, name, conversation(), true, -1, eos), bos), 0);
  }
  // EOS ids sit where the format has </s>: zephyr ends every message with one.
  const std::vector<int> z = encode_chat(tok, "zephyr", {{"user", "Hi"}}, true, bos, eos);
  QCOMPARE(z, concat({{bos}, tok.encode("<|user|>\nHi", false), {eos}, tok.encode("\n<|assistant|>\n", false)}));
  // "<s>" typed in a message is text, never a special token.
  const std::vector<int> lit = encode_chat(tok, "chatml", {{"user", "a <s> b </s> c"}}, true, bos, eos);
  QCOMPARE(count(lit, bos), 1);
  QCOMPARE(count(lit, eos), 0);
  QVERIFY(q(tok.decode(lit)).contains("a <s> b </s> c"));
}

void TestChatTemplate::encodesLikeTheReferences() {
  const QString path = testpaths::modelFile("llama2-tokenizer/tokenizer.model");
  REQUIRE_MODEL_FILE(path);
  const auto tok_ptr = load_tokenizer(path.toStdString());
    const Tokenizer& tok = *tok_ptr;
  const int bos = tok.bos_id(), eos = tok.eos_id();
  // Meta's llama/generation.py chat_completion: per exchange
  //   encode(f"{B_INST} {prompt.strip()} {E_INST} {answer.strip()} ", bos=True, eos=True),
  // then encode(f"{B_INST} {last.strip()} {E_INST}", bos=True); the system goes into the first prompt.
  const auto m = conversation();
  const std::string first = "<<SYS>>\n" + m[0].content + "\n<</SYS>>\n\n" + m[1].content;
  const std::vector<int> meta =
      concat({{bos}, tok.encode("[INST] " + first + " [/INST] Hi there ", false), {eos},
              {bos}, tok.encode("[INST] Who are you [/INST] I am an assistant ", false), {eos},
              {bos}, tok.encode("[INST] Another question [/INST]", false)});
  QCOMPARE(encode_chat(tok, "llama-2", m, true, bos, eos), meta);
  // mistral-common's v1 tokenizer: <s>▁[INST]▁... — the space after a special token is the "▁" prefix.
  const std::vector<int> mistral = encode_chat(tok, "mistral", {{"user", "Hello"}, {"assistant", "Hi"}, {"user", "Bye"}},
                                               true, bos, eos);
  QCOMPARE(mistral, concat({{bos}, tok.encode("[INST] Hello [/INST] Hi", false), {eos},
                            tok.encode("[INST] Bye [/INST]", false)}));
  QCOMPARE(q(tok.id_to_piece(mistral[1])), q(tok.id_to_piece(tok.encode("[INST]", false).front())));
  // "none" is exactly what a plain prompt gets (LLMEngine::add_request encodes with BOS).
  const QString stories = testpaths::stories260K() + "/tok512.model";
  REQUIRE_MODEL_FILE(stories);
  const auto small_ptr = load_tokenizer(stories.toStdString());
    const Tokenizer& small = *small_ptr;
  const std::vector<ChatMessage> story = {{"user", "Once upon a time"}, {"assistant", ", there was a girl."},
                                          {"user", " She liked"}};
  QCOMPARE(encode_chat(small, "none", story, true, small.bos_id(), small.eos_id()),
           small.encode("Once upon a time, there was a girl. She liked", true));
}

void TestChatTemplate::fitDropsOldestTurns() {
  const QString path = testpaths::modelFile("llama2-tokenizer/tokenizer.model");
  REQUIRE_MODEL_FILE(path);
  const auto tok_ptr = load_tokenizer(path.toStdString());
    const Tokenizer& tok = *tok_ptr;
  std::vector<ChatMessage> m = {{"system", "Be brief."}};
  for (int i = 0; i < 8; ++i) {
    m.push_back({"user", "Question number " + std::to_string(i) + " about the weather today?"});
    m.push_back({"assistant", "Answer number " + std::to_string(i) + ": it is sunny and warm."});
  }
  m.push_back({"user", "Last question?"});
  const int full = static_cast<int>(encode_chat(tok, "llama-2", m, true, 1, 2).size());

  // Room for everything: nothing dropped, max_tokens clamped to what is left.
  ChatPrompt all = fit_chat(tok, "llama-2", m, 1, 2, 4096, 100000);
  QCOMPARE(all.num_dropped_messages, 0);
  QCOMPARE(static_cast<int>(all.token_ids.size()), full);
  QCOMPARE(all.max_tokens, 4096 - full);

  // A context of about half: whole turns go, the system message stays, the result still renders.
  const int max_len = full / 2 + 40;
  const ChatPrompt half = fit_chat(tok, "llama-2", m, 1, 2, max_len, 32);
  QVERIFY(half.num_dropped_messages > 0);
  QCOMPARE(half.num_dropped_messages % 2, 0);
  QVERIFY(static_cast<int>(half.token_ids.size()) <= max_len - chat_reply_reserve(32, max_len));
  std::vector<ChatMessage> kept = {m[0]};
  kept.insert(kept.end(), m.begin() + 1 + half.num_dropped_messages, m.end());
  QCOMPARE(half.token_ids, encode_chat(tok, "llama-2", kept, true, 1, 2));
  QVERIFY(q(tok.decode(half.token_ids)).startsWith("[INST] <<SYS>>\nBe brief."));
  // ... and no more turns than needed went: with one turn fewer dropped it would not fit.
  std::vector<ChatMessage> one_more = {m[0]};
  one_more.insert(one_more.end(), m.begin() + 1 + half.num_dropped_messages - 2, m.end());
  QVERIFY(static_cast<int>(encode_chat(tok, "llama-2", one_more, true, 1, 2).size()) >
          max_len - chat_reply_reserve(32, max_len));
  QCOMPARE(half.max_tokens, 32);

  // A long history (a pane used for days) costs a few encodes, not one per dropped turn.
  std::vector<ChatMessage> story;
  for (int i = 0; i < 600; ++i) story.push_back({i % 2 ? "assistant" : "user", " and then the dog ran home."});
  story.push_back({"user", " The end."});
  const ChatPrompt tail = fit_chat(tok, "none", story, 1, 2, 512, 128);
  QVERIFY(tail.num_dropped_messages > 500 && tail.num_dropped_messages % 2 == 0);
  QVERIFY(tail.token_ids.size() <= 512 - 128);
  QCOMPARE(tail.max_tokens, 128);

  // Only the newest turn left and longer than the reserve allows: sent while one token fits.
  const std::vector<ChatMessage> big = {{"user", std::string(200, 'x') + " end"}};
  const int n = static_cast<int>(encode_chat(tok, "llama-2", big, true, 1, 2).size());
  const ChatPrompt tight = fit_chat(tok, "llama-2", big, 1, 2, n + 3, 256);
  QCOMPARE(tight.max_tokens, 3);
  try {
    fit_chat(tok, "llama-2", big, 1, 2, n, 16);
    QFAIL("expected ChatTooLongError");
  } catch (const ChatTooLongError& e) {
    QCOMPARE(e.num_tokens, n);
    QCOMPARE(e.max_model_len, n);
  }
}

void TestChatTemplate::rejectsBadInput() {
  try {
    render_chat("llama2", conversation(), true);
    QFAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    const QString what = e.what();
    for (const char* n : {"llama-2", "mistral", "chatml", "zephyr", "vicuna", "none"}) QVERIFY2(what.contains(n), e.what());
  }
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, chat_template_stop_strings("bogus"));
  const std::vector<std::vector<ChatMessage>> bad_orders = {
      {{"user", "a"}, {"user", "b"}},                      // two user messages in a row
      {{"assistant", "a"}, {"user", "b"}},                 // starts with the assistant
      {{"system", "s"}, {"system", "t"}, {"user", "b"}},   // a second system message
      {{"user", "a"}, {"system", "s"}},                    // system later on
      {{"system", "s"}},                                   // nothing to answer
  };
  for (const char* n : {"llama-2", "mistral", "vicuna"})
    for (const auto& m : bad_orders) {
      try {
        render_chat(n, m, true);
        QFAIL(n);
      } catch (const std::invalid_argument& e) {
        QVERIFY2(q(e.what()).contains(n), e.what());
      }
    }
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, render_chat("llama-2", {{"user", "a"}, {"user", "b"}}, true));
  // Formats that render each message on its own take any order; every format refuses unknown roles
  // and an empty conversation.
  QCOMPARE(q(render_chat("chatml", {{"user", "a"}, {"user", "b"}}, false).text),
           QString("<s><|im_start|>user\na<|im_end|>\n<|im_start|>user\nb<|im_end|>\n"));
  QVERIFY(!render_chat("zephyr", {{"assistant", "a"}, {"system", "s"}}, true).text.empty());
  for (const std::string& n : chat_template_names()) {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, render_chat(n, {{"tool", "x"}}, true));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, render_chat(n, {}, true));
  }
}

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"

// continue_final_message: the prompt ends inside the last assistant reply (no EOS, no end-of-turn
// marker) so that the model continues it; the ids are the complete conversation's ids up to the
// reply's text; fit_chat passes it through.
void TestChatTemplate::continuesFinalMessage() {
  const std::vector<ChatMessage> m = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello the"}};
  auto q = [](const RenderedPrompt& r) { return QString::fromStdString(r.text); };
  QCOMPARE(q(render_chat("chatml", m, true, true)),
           QString("<s><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                   "<|im_start|>assistant\nHello the"));
  QCOMPARE(q(render_chat("llama-2", m, true, true)), QString("<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello the"));
  QCOMPARE(q(render_chat("mistral", m, false, true)), QString("<s> [INST] Be brief.\n\nHi [/INST] Hello the"));
  QCOMPARE(q(render_chat("zephyr", m, true, true)),
           QString("<s><|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\nHello the"));
  QCOMPARE(q(render_chat("vicuna", m, true, true)), QString("<s>Be brief. USER: Hi ASSISTANT: Hello the"));
  QCOMPARE(q(render_chat("none", m, true, true)), QString("<s>Be brief.HiHello the"));
  // Each is the closed rendering with its end of turn cut off.
  for (const std::string& name : chat_template_names()) {
    const QString open = q(render_chat(name, m, false, true));
    QVERIFY2(q(render_chat(name, m, false)).startsWith(open), name.c_str());
  }
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, render_chat("chatml", {{"user", "Hi"}}, true, true));

  const QString path = testpaths::modelFile("llama2-tokenizer/tokenizer.model");
  REQUIRE_MODEL_FILE(path);
  const auto tok_ptr = load_tokenizer(path.toStdString());
    const Tokenizer& tok = *tok_ptr;
  const std::vector<int> open = encode_chat(tok, "zephyr", m, true, 1, 2, true);
  const std::vector<int> closed = encode_chat(tok, "zephyr", m, false, 1, 2);
  QVERIFY(open.back() != 2);
  QVERIFY(std::equal(open.begin(), open.end(), closed.begin()));
  QCOMPARE(fit_chat(tok, "zephyr", m, 1, 2, 4096, 64, true).token_ids, open);
}
