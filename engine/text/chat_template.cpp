#include "engine/text/chat_template.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/text/builtin_chat_templates.h"
#include "engine/text/jinja/jinja.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

namespace {

// What replaces the last message's content when a reply is continued: the rendering is cut right
// after it (see ChatTemplate::render). Control characters a template does not touch.
constexpr std::string_view kContinueMarker = "\x1e<pagedchat-continue>\x1e";

std::string names_list() {
  std::string s;
  for (const auto& n : chat_template_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Python's str.strip() on ASCII whitespace.
std::string strip(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

bool contains(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }

const BuiltinChatTemplate& builtin_or_throw(const std::string& name) {
  if (const BuiltinChatTemplate* b = find_builtin_chat_template(name)) return *b;
  throw ChatTemplateError("unknown chat template '" + name + "' (known: " + names_list() +
                          ", auto, or the path of a .jinja file)");
}

// The roles and role order a built-in renders (`m` is a JSON array of message objects).
void validate(const BuiltinChatTemplate& spec, const nlohmann::ordered_json& m) {
  const std::string& name = spec.name;
  if (m.empty()) throw ChatTemplateError("chat template '" + name + "': no messages to render");
  auto role_of = [&](size_t i) { return m[i]["role"].get<std::string>(); };
  for (size_t i = 0; i < m.size(); ++i) {
    const std::string role = role_of(i);
    if (role != "system" && role != "user" && role != "assistant")
      // The role as a JSON string: control characters (a NUL) escaped, so the message reads whole.
      throw ChatTemplateError("chat template '" + name + "': message " + std::to_string(i + 1) + " has role " +
                              nlohmann::json(role).dump() + "; roles are system, user and assistant");
    if (!m[i].contains("content") || !m[i]["content"].is_string())
      throw ChatTemplateError("chat template '" + name + "': message " + std::to_string(i + 1) +
                              " has no text \"content\"");
  }
  if (spec.order != ChatRoleOrder::kAlternating) return;
  const size_t first = role_of(0) == "system" ? 1 : 0;
  if (first == m.size())
    throw ChatTemplateError("chat template '" + name + "': a system message needs a user message after it");
  for (size_t i = first; i < m.size(); ++i) {
    const char* expected = (i - first) % 2 == 0 ? "user" : "assistant";
    if (role_of(i) != expected)
      throw ChatTemplateError("chat template '" + name +
                              "': conversation roles must alternate user/assistant/user/... after an optional "
                              "first system message; message " +
                              std::to_string(i + 1) + " is '" + role_of(i) + "', expected '" + expected + "'");
  }
}

// Every message an object with a string "role" (what every template reads).
void check_shape(const std::string& origin, const nlohmann::ordered_json& m) {
  if (!m.is_array()) throw ChatTemplateError(origin + ": the messages must be a JSON array");
  if (m.empty()) throw ChatTemplateError(origin + ": no messages to render");
  for (size_t i = 0; i < m.size(); ++i)
    if (!m[i].is_object() || !m[i].contains("role") || !m[i]["role"].is_string())
      throw ChatTemplateError(origin + ": message " + std::to_string(i + 1) +
                              " is not an object with a \"role\" string");
}

nlohmann::ordered_json to_json(const std::vector<ChatMessage>& messages) {
  nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
  for (const ChatMessage& m : messages) {
    nlohmann::ordered_json j = {{"role", m.role}, {"content", m.content}};
    if (!m.fields_json.empty()) {
      const auto fields = nlohmann::ordered_json::parse(m.fields_json, nullptr, false);
      if (!fields.is_object()) throw ChatTemplateError("a message's further fields are not a JSON object");
      for (const auto& [key, value] : fields.items()) j[key] = value;
    }
    msgs.push_back(std::move(j));
  }
  return msgs;
}

}  // namespace

bool is_reserved_template_variable(std::string_view name) {
  static constexpr std::string_view kReserved[] = {"messages",
                                                   "add_generation_prompt",
                                                   "bos_token",
                                                   "eos_token",
                                                   "raise_exception",
                                                   "strftime_now",
                                                   "namespace",
                                                   "range",
                                                   "true",
                                                   "false",
                                                   "none",
                                                   "True",
                                                   "False",
                                                   "None"};
  return std::find(std::begin(kReserved), std::end(kReserved), name) != std::end(kReserved);
}

namespace {

bool is_plain_role(std::string_view role) {
  if (role.empty() || role.size() > 32) return false;
  for (char c : role)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

// Renders `t` with the conversation as data and the options as trusted variables.
TemplatedText render_jinja(const jinja::Template& t, const nlohmann::ordered_json& messages, const ChatRenderOptions& o,
                           bool add_generation_prompt) {
  nlohmann::ordered_json vars = {{"add_generation_prompt", add_generation_prompt}};
  if (o.bos_token) vars["bos_token"] = *o.bos_token;
  if (o.eos_token) vars["eos_token"] = *o.eos_token;
  if (o.enable_thinking) vars["enable_thinking"] = *o.enable_thinking;
  jinja::Value context = jinja::value_from_json(vars, /*is_data=*/false);
  jinja::Value msgs = jinja::value_from_json(messages, /*is_data=*/true);
  // A role is a name the caller chose from a few (system, user, assistant, tool, ...), not text
  // a user typed: a plain lowercase name is template text, so that a template may build a
  // special token from it ('<|' + role + '|>' writes Phi-3's <|user|>). Anything else stays data.
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    jinja::Value m = msgs.at(i);
    const jinja::Value role = m.get("role");
    if (role.is_string() && is_plain_role(role.as_string()))
      m.set("role", jinja::Value::string(role.as_string(), /*is_data=*/false), /*key_is_data=*/true);
  }
  context.set("messages", msgs);
  if (!o.extra_variables_json.empty()) {
    nlohmann::ordered_json extra;
    try {
      extra = nlohmann::ordered_json::parse(o.extra_variables_json);
    } catch (const nlohmann::ordered_json::exception& e) {
      throw ChatTemplateError(std::string("chat template variables: not valid JSON: ") + e.what());
    }
    if (!extra.is_object()) throw ChatTemplateError("chat template variables must be a JSON object");
    for (const auto& [key, value] : extra.items())
      if (!is_reserved_template_variable(key)) context.set(key, jinja::value_from_json(value, /*is_data=*/true));
  }
  return t.render(context);
}

// One rendering of `t`, continued or not (see ChatTemplate::render).
TemplatedText render_with(const jinja::Template& t, const std::string& origin, const nlohmann::ordered_json& messages,
                          const ChatRenderOptions& o) {
  if (!o.continue_final_message) return render_jinja(t, messages, o, o.add_generation_prompt);
  const nlohmann::ordered_json& last = messages.back();
  if (last["role"] != "assistant" || !last.contains("content") || !last["content"].is_string())
    throw ChatTemplateError(origin + ": only an assistant message can be continued; the last message is '" +
                            last["role"].get<std::string>() + "'");
  // As transformers' continue_final_message: render the closed conversation and cut right after
  // the last message's content. A marker stands in for the content so that the cut is exact even
  // when the text also appears earlier; the content goes back in as it is.
  nlohmann::ordered_json marked = messages;
  marked.back()["content"] = std::string(kContinueMarker);
  const TemplatedText closed = render_jinja(t, marked, o, /*add_generation_prompt=*/false);
  const size_t at = closed.text.rfind(kContinueMarker);
  if (at == std::string::npos)
    throw ChatTemplateError(origin + ": cannot continue the last message (the template does not write it as it is)");
  TemplatedText open = prefix_of(closed, at);
  open.append(last["content"].get<std::string>(), /*is_data=*/true);
  return open;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ChatTemplateError("cannot read the chat template file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text of special token `id`, or "" for none (-1).
std::string token_text(const Tokenizer& tok, int id) {
  return id >= 0 && id < tok.vocab_size() ? tok.id_to_piece(id) : "";
}

}  // namespace

const std::vector<std::string>& chat_template_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const BuiltinChatTemplate& t : builtin_chat_templates()) n.push_back(t.name);
    return n;
  }();
  return names;
}

ChatTemplate ChatTemplate::builtin(const std::string& name) {
  const BuiltinChatTemplate& b = builtin_or_throw(name);
  // Parsed once per process; the sources are ours and covered by test_chat_template.
  static const std::vector<std::shared_ptr<const jinja::Template>> parsed = [] {
    std::vector<std::shared_ptr<const jinja::Template>> v;
    for (const BuiltinChatTemplate& t : builtin_chat_templates())
      v.push_back(std::make_shared<const jinja::Template>(t.source, "built-in chat template '" + t.name + "'"));
    return v;
  }();
  ChatTemplate t;
  t.name_ = t.family_ = b.name;
  t.origin_ = "chat template '" + b.name + "'";
  t.jinja_ = parsed[size_t(&b - builtin_chat_templates().data())];
  if (b.name == "gemma4") t.reasoning_field_ = "reasoning_content";  // stored reasoning is dropped
  t.reasoning_ = reasoning_controls_of(b.source, b.name);
  return t;
}

ChatTemplate ChatTemplate::from_jinja(const std::string& source, const std::string& origin) {
  ChatTemplate t;
  t.name_ = "jinja";
  t.source_ = source;
  t.family_ = detect_chat_template(source);
  if (contains(source, "<|channel|>") && contains(source, "<|message|>"))
    t.reasoning_field_ = "thinking";  // Harmony (gpt-oss)
  else if (contains(source, "<|channel>") && contains(source, "<channel|>"))
    t.reasoning_field_ = "reasoning_content";  // Gemma 4
  t.reasoning_ = reasoning_controls_of(source);
  // A call's arguments joined into text with + or ~ (DeepSeek-R1: "'```json' + '\\n' +
  // tool['function']['arguments']"): the template wants the JSON text, not an object.
  static const std::regex joined(R"((arguments['"]?\]?\s*[+~])|([+~]\s*[\w.\[\]'"]*arguments\b))");
  t.arguments_as_text_ = std::regex_search(source, joined);
  t.origin_ = origin;
  try {
    t.jinja_ = std::make_shared<const jinja::Template>(source, origin);
  } catch (const jinja::Error& e) {
    throw ChatTemplateError(std::string(e.what()));
  }
  return t;
}

const std::vector<std::string>& ChatTemplate::end_of_turn_markers() const {
  return builtin_or_throw(family_).end_of_turn;
}

TemplatedText ChatTemplate::render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options,
                                   std::string* warning) const {
  return render(to_json(messages), options, warning);
}

namespace {
// `messages` with each call's arguments in the form the template takes: `as_text`, an object
// written as its JSON text; otherwise a JSON text that holds an object parsed into it (OpenAI's
// messages carry the text; a stored reply's calls too). nullopt when nothing changes.
std::optional<nlohmann::ordered_json> convert_arguments(const nlohmann::ordered_json& messages, bool as_text) {
  std::optional<nlohmann::ordered_json> out;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (!m.is_object() || !m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    for (std::size_t k = 0; k < m["tool_calls"].size(); ++k) {
      const auto& c = m["tool_calls"][k];
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object() ||
          !c["function"].contains("arguments"))
        continue;
      const auto& args = c["function"]["arguments"];
      nlohmann::ordered_json converted;
      if (as_text && args.is_object()) {
        converted = args.dump();
      } else if (!as_text && args.is_string()) {
        converted = nlohmann::ordered_json::parse(args.get<std::string>(), nullptr, /*allow_exceptions=*/false);
        if (!converted.is_object()) continue;  // not an object's text: left as it is
      } else {
        continue;
      }
      if (!out) out = messages;
      (*out)[i]["tool_calls"][k]["function"]["arguments"] = std::move(converted);
    }
  }
  return out;
}
}  // namespace

TemplatedText ChatTemplate::render(const nlohmann::ordered_json& messages, const ChatRenderOptions& options,
                                   std::string* warning) const {
  if (warning) warning->clear();
  check_shape(origin_, messages);
  // Earlier calls' arguments go to templates as objects (transformers' convention, which vLLM
  // follows), to templates that join them into text (DeepSeek-R1's) as the JSON text.
  const std::optional<nlohmann::ordered_json> converted = convert_arguments(messages, arguments_as_text_);
  const nlohmann::ordered_json& m = converted ? *converted : messages;
  if (!reasoning_field_.empty()) return render_split(split_reasoning(m), options, warning);
  return render_split(m, options, warning);
}

TemplatedText ChatTemplate::render_split(const nlohmann::ordered_json& messages, const ChatRenderOptions& options,
                                         std::string* warning) const {
  if (is_builtin()) {
    validate(builtin_or_throw(name_), messages);
    ChatRenderOptions o = options;  // the built-ins write bos_token/eos_token unconditionally
    if (!o.bos_token) o.bos_token = "";
    if (!o.eos_token) o.eos_token = "";
    try {
      return render_with(*jinja_, origin_, messages, o);
    } catch (const jinja::Error& e) {
      throw ChatTemplateError(std::string(e.what()));
    }
  }
  return render_jinja(messages, options, warning);
}

nlohmann::ordered_json ChatTemplate::split_reasoning(const nlohmann::ordered_json& messages) const {
  // Replies stored as ReplyDetokenizer wrote them: "<think>R</think>A" -> reasoning R, content A.
  nlohmann::ordered_json split = messages;
  for (auto& m : split) {
    if (m.value("role", "") != "assistant" || m.contains(reasoning_field_) || !m.contains("content") ||
        !m["content"].is_string())
      continue;
    const std::string c = m["content"].get<std::string>();
    const std::size_t first = c.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || c.compare(first, 7, "<think>") != 0) continue;
    // Every <think>…</think> block (one per analysis message) to thinking, the rest to content.
    std::string thinking, content;
    std::size_t at = 0;
    for (std::size_t open; (open = c.find("<think>", at)) != std::string::npos;) {
      const std::size_t close = c.find("</think>", open);
      if (close == std::string::npos) break;
      content += c.substr(at, open - at);
      thinking += (thinking.empty() ? "" : "\n\n") + strip(c.substr(open + 7, close - open - 7));
      at = close + 8;
    }
    content += c.substr(at);
    m[reasoning_field_] = thinking;
    m["content"] = strip(content);
  }
  return split;
}

TemplatedText ChatTemplate::render_jinja(const nlohmann::ordered_json& messages, const ChatRenderOptions& options,
                                         std::string* warning) const {
  try {
    return render_with(*jinja_, origin_, messages, options);
  } catch (const jinja::Error& e) {
    if (!options.fallback_to_builtin) throw ChatTemplateError(std::string(e.what()));
    // The model's template failed (it refused the conversation, or it needs something the
    // interpreter does not do): its family's built-in renders the same format.
    const std::string why = e.what();
    const ChatTemplate fallback = builtin(family_);
    TemplatedText out;
    try {
      out = fallback.render(messages, options);
    } catch (const ChatTemplateError& again) {
      throw ChatTemplateError(why + " (the built-in '" + family_ + "' template failed too: " + again.what() + ")");
    }
    if (warning) *warning = why + "; rendered with the built-in chat template '" + family_ + "' instead";
    return out;
  }
}

std::string detect_chat_template(const std::string& jinja, std::string* reason) {
  if (reason) reason->clear();
  const std::string trimmed = strip(jinja);
  if (trimmed.empty()) return "none";
  for (const std::string& n : chat_template_names())
    if (trimmed == n) return n;
  if (contains(jinja, "<|start_header_id|>")) return "llama3";
  if (contains(jinja, "<｜Assistant｜>")) return "deepseek-r1";
  if (contains(jinja, "<|im_start|>")) return "chatml";
  if (contains(jinja, "<|turn>") && contains(jinja, "<turn|>")) return "gemma4";
  if (contains(jinja, "<start_of_turn>")) return "gemma";
  if (contains(jinja, "<|user|>") && contains(jinja, "<|end|>")) return "phi3";
  if (contains(jinja, "<|user|>") && contains(jinja, "<|assistant|>")) return "zephyr";
  if (contains(jinja, "<<SYS>>")) return "llama-2";
  if (contains(jinja, "[INST]")) return "mistral";
  if (contains(jinja, "USER:") || contains(jinja, "ASSISTANT:")) return "vicuna";
  if (reason)
    *reason = "the chat template matches none of the built-in formats (" + names_list() +
              "); using plain continuation ('none'); choose one with --chat-template";
  return "none";
}

ChatTemplate resolve_chat_template(const std::string& override_spec, const std::string& model_template_text,
                                   const std::string& model_name, std::string* warning) {
  if (warning) warning->clear();
  if (!override_spec.empty() && override_spec != "auto") {
    if (find_builtin_chat_template(override_spec)) return ChatTemplate::builtin(override_spec);
    std::error_code ec;
    const bool is_file = std::filesystem::is_regular_file(override_spec, ec);
    if (is_file || override_spec.ends_with(".jinja"))
      return ChatTemplate::from_jinja(read_file(override_spec), "the chat template '" + override_spec + "'");
    builtin_or_throw(override_spec);  // throws, listing the names
  }
  const std::string trimmed = strip(model_template_text);
  if (trimmed.empty()) return ChatTemplate::builtin("none");
  if (find_builtin_chat_template(trimmed)) return ChatTemplate::builtin(trimmed);
  try {
    return ChatTemplate::from_jinja(model_template_text, "the chat template of " + model_name);
  } catch (const ChatTemplateError& e) {
    std::string reason;
    const std::string family = detect_chat_template(model_template_text, &reason);
    if (warning)
      *warning = std::string(e.what()) + "; using the built-in chat template '" + family + "' instead" +
                 (reason.empty() ? "" : " (" + reason + ")");
    return ChatTemplate::builtin(family);
  }
}

ChatEncodeOptions chat_encode_options(const Tokenizer& tokenizer, bool model_adds_bos, int model_bos_id) {
  ChatEncodeOptions o;
  const int bos = model_bos_id >= 0 ? model_bos_id : tokenizer.bos_id();
  o.bos_id = model_adds_bos ? bos : -1;
  return o;
}

ChatRenderOptions chat_render_options(const Tokenizer& tokenizer, bool add_generation_prompt,
                                      const ChatEncodeOptions& options) {
  ChatRenderOptions r;
  r.add_generation_prompt = add_generation_prompt;
  r.continue_final_message = options.continue_final_message;
  r.enable_thinking = options.enable_thinking;
  r.extra_variables_json = options.extra_variables_json;
  r.bos_token = token_text(tokenizer, tokenizer.bos_id());
  r.eos_token = token_text(tokenizer, tokenizer.eos_id());
  return r;
}

std::vector<int> encode_rendered_prompt(const Tokenizer& tokenizer, const TemplatedText& prompt,
                                        const ChatEncodeOptions& options) {
  std::vector<int> ids = tokenizer.encode_templated(prompt);
  if (options.bos_id >= 0 && (ids.empty() || ids.front() != options.bos_id)) ids.insert(ids.begin(), options.bos_id);
  return ids;
}

std::vector<int> encode_chat(const Tokenizer& tokenizer, const ChatTemplate& tmpl,
                             const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                             const ChatEncodeOptions& options, std::string* warning, TemplatedText* prompt_out) {
  TemplatedText prompt = tmpl.render(messages, chat_render_options(tokenizer, add_generation_prompt, options), warning);
  std::vector<int> ids = encode_rendered_prompt(tokenizer, prompt, options);
  if (prompt_out) *prompt_out = std::move(prompt);
  return ids;
}

bool prompt_opens_reasoning(const TemplatedText& prompt) {
  constexpr std::string_view kOpen = "<think>";
  const size_t end = prompt.text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos || end + 1 < kOpen.size()) return false;
  const size_t at = end + 1 - kOpen.size();
  return std::string_view(prompt.text).substr(at, kOpen.size()) == kOpen && prompt.is_template_text(at, end + 1);
}

int chat_reply_reserve(int max_tokens, int max_model_len) {
  return std::max(1, std::min(max_tokens, max_model_len / 4));
}

int chat_stable_prefix(const Tokenizer& tokenizer, const ChatTemplate& tmpl, const std::vector<ChatMessage>& messages,
                       const ChatEncodeOptions& options, const std::vector<int>& prompt_ids) {
  if (options.continue_final_message) return 0;  // the prompt has no generation prompt to leave out
  auto common = [&](const std::vector<int>& ids) {
    return static_cast<int>(std::mismatch(ids.begin(), ids.end(), prompt_ids.begin(), prompt_ids.end()).first -
                            ids.begin());
  };
  // The next turn's shape: a reply, then a user message (a reply followed by a user message is
  // rendered as history: Qwen3.5 drops its reasoning, and no "<think>" opens it). What it shares
  // with this prompt is what the next turn repeats, "<|im_start|>assistant\n" included.
  std::vector<ChatMessage> next = messages;
  next.push_back({"assistant", "ok"});
  next.push_back({"user", "ok"});
  try {
    return common(encode_chat(tokenizer, tmpl, next, /*add_generation_prompt=*/false, options));
  } catch (const ChatTemplateError&) {
    // A template that refuses that shape: the conversation without the generation prompt.
  }
  return common(encode_chat(tokenizer, tmpl, messages, /*add_generation_prompt=*/false, options));
}

ChatPrompt fit_chat(const Tokenizer& tokenizer, const ChatTemplate& tmpl, const std::vector<ChatMessage>& messages,
                    const ChatEncodeOptions& options, int max_model_len, int max_tokens) {
  const size_t budget = static_cast<size_t>(std::max(0, max_model_len - chat_reply_reserve(max_tokens, max_model_len)));
  // The kept head: the system message, and with kTruncateMiddle the first turn too (up to the
  // second user message, when the conversation has one before its newest).
  size_t first = !messages.empty() && messages.front().role == "system" ? 1 : 0;
  if (options.context_overflow == ContextOverflow::kTruncateMiddle) {
    std::vector<size_t> users;
    for (size_t i = first; i < messages.size(); ++i)
      if (messages[i].role == "user") users.push_back(i);
    if (users.size() >= 3) first = users[1];  // head = system + turn 1; the newest turn always stays
  }
  // Where the kept conversation may start after the head: its first message, or any later user message.
  std::vector<size_t> cuts = {first};
  for (size_t i = first + 1; i < messages.size(); ++i)
    if (messages[i].role == "user") cuts.push_back(i);
  std::string warning;
  TemplatedText rendered;
  auto encode_from = [&](size_t cut) {
    std::vector<ChatMessage> kept(messages.begin(), messages.begin() + static_cast<long>(first));
    kept.insert(kept.end(), messages.begin() + static_cast<long>(cut), messages.end());
    return encode_chat(tokenizer, tmpl, kept, /*add_generation_prompt=*/true, options, &warning, &rendered);
  };
  std::vector<int> ids = encode_from(first);  // also validates the whole conversation
  std::string first_warning = warning;
  bool opens = prompt_opens_reasoning(rendered);
  size_t chosen = 0;
  if (ids.size() > budget && options.context_overflow == ContextOverflow::kStopAtLimit && cuts.size() > 1)
    throw ChatTooLongError("the conversation needs " + std::to_string(ids.size()) +
                               " prompt tokens and room for the reply; max_model_len is " +
                               std::to_string(max_model_len),
                           static_cast<int>(ids.size()), max_model_len, /*conversation=*/true);
  if (ids.size() > budget && cuts.size() > 1) {
    // The fewest dropped turns that fit: binary search (fewer messages render fewer tokens), so a
    // long history costs O(log turns) renders. When none fits, the newest turn alone.
    size_t lo = 1, hi = cuts.size() - 1;
    std::optional<std::vector<int>> hi_ids;
    std::string hi_warning;
    TemplatedText hi_rendered;
    bool hi_opens = false;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      std::vector<int> m = encode_from(cuts[mid]);
      if (m.size() <= budget) {
        hi = mid;
        hi_ids = std::move(m);
        hi_warning = warning;
        hi_rendered = rendered;
        hi_opens = prompt_opens_reasoning(rendered);
      } else {
        lo = mid + 1;
      }
    }
    if (hi_ids) {
      ids = std::move(*hi_ids);
      first_warning = hi_warning;
      rendered = std::move(hi_rendered);
      opens = hi_opens;
    } else {
      ids = encode_from(cuts[hi]);
      first_warning = warning;
      opens = prompt_opens_reasoning(rendered);
    }
    chosen = hi;
  }
  const int n = static_cast<int>(ids.size());
  if (n >= max_model_len)
    throw ChatTooLongError("the newest message needs " + std::to_string(n) + " prompt tokens; max_model_len is " +
                               std::to_string(max_model_len),
                           n, max_model_len);
  ChatPrompt out;
  out.token_ids = std::move(ids);
  out.max_tokens = std::min(max_tokens, max_model_len - n);
  out.num_dropped_messages = static_cast<int>(cuts[chosen] - first);
  out.first_dropped_message = static_cast<int>(first);
  out.warning = std::move(first_warning);
  out.opens_reasoning = opens;
  out.rendered = std::move(rendered);
  if (options.find_stable_prefix) {
    std::vector<ChatMessage> kept(messages.begin(), messages.begin() + static_cast<long>(first));
    kept.insert(kept.end(), messages.begin() + static_cast<long>(cuts[chosen]), messages.end());
    out.stable_prefix_tokens = chat_stable_prefix(tokenizer, tmpl, kept, options, out.token_ids);
  }
  return out;
}

ChatStopConditions chat_stop_conditions(const ChatTemplate& tmpl, const Tokenizer& tokenizer) {
  ChatStopConditions c;
  for (const std::string& marker : tmpl.end_of_turn_markers()) {
    const std::optional<int> id = tokenizer.piece_to_id(marker);
    if (id && tokenizer.is_control(*id))
      c.stop_token_ids.push_back(*id);
    else
      c.stop.push_back(marker);
  }
  return c;
}

}  // namespace pagedchat
