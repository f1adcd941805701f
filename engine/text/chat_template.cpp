#include "engine/text/chat_template.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "engine/text/tokenizer.h"

namespace pagedchat {

namespace {

constexpr std::string_view kBosText = "<s>";
constexpr std::string_view kEosText = "</s>";

// Collects the pieces of a rendered prompt (adjacent text runs merged).
class Builder {
 public:
  void text(std::string_view s) {
    if (s.empty()) return;
    if (pieces_.empty() || pieces_.back().kind != PromptPiece::Kind::kText) pieces_.push_back({});
    pieces_.back().text += s;
  }
  void bos() { pieces_.push_back({PromptPiece::Kind::kBos, {}}); }
  void eos() { pieces_.push_back({PromptPiece::Kind::kEos, {}}); }
  std::vector<PromptPiece>& pieces() { return pieces_; }

 private:
  std::vector<PromptPiece> pieces_;
};

// Python's str.strip() on ASCII whitespace (what the Jinja templates' .strip() does to ASCII text).
std::string strip(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

bool has_system(const std::vector<ChatMessage>& m) { return !m.empty() && m.front().role == "system"; }

using Messages = std::vector<ChatMessage>;

// llama-2: meta-llama/Llama-2-7b-chat-hf tokenizer_config.json "chat_template", which writes
// Meta's llama/generation.py chat_completion format as text: every user turn is
// "<s>[INST] " + content.strip() + " [/INST]", every assistant turn " " + content.strip() + " </s>";
// the system message is wrapped in "<<SYS>>\n...\n<</SYS>>\n\n" and put before the first user
// message (inside that strip()). No generation prompt: the user turn already ends at "[/INST]".
void render_llama2(Builder& b, const Messages& m, bool) {
  const bool sys = has_system(m);
  for (size_t i = sys ? 1 : 0, k = 0; i < m.size(); ++i, ++k) {
    std::string content = m[i].content;
    if (k == 0 && sys) content = "<<SYS>>\n" + m[0].content + "\n<</SYS>>\n\n" + content;
    if (m[i].role == "user") {
      b.bos();
      b.text("[INST] " + strip(content) + " [/INST]");
    } else {
      b.text(" " + strip(content) + " ");
      b.eos();
    }
  }
}

// mistral: mistralai/Mistral-7B-Instruct-v0.2 (and v0.1) tokenizer_config.json "chat_template",
// Mistral's "v1" format: bos_token, then per user turn " [INST] " + content + " [/INST]" (the
// system message + "\n\n" prepended to the first user message's content), per assistant turn
// " " + content + eos_token. Contents are not stripped.
void render_mistral(Builder& b, const Messages& m, bool) {
  const bool sys = has_system(m);
  b.bos();
  for (size_t i = sys ? 1 : 0, k = 0; i < m.size(); ++i, ++k) {
    if (m[i].role == "user") {
      const std::string content = k == 0 && sys ? m[0].content + "\n\n" + m[i].content : m[i].content;
      b.text(" [INST] " + content + " [/INST]");
    } else {
      b.text(" " + m[i].content);
      b.eos();
    }
  }
}

// chatml: OpenAI's ChatML as Hugging Face models carry it (e.g. teknium/OpenHermes-2.5-Mistral-7B):
// "<|im_start|>" + role + "\n" + content + "<|im_end|>\n" per message, "<|im_start|>assistant\n"
// as the generation prompt.
void render_chatml(Builder& b, const Messages& m, bool gen) {
  for (const ChatMessage& msg : m) b.text("<|im_start|>" + msg.role + "\n" + msg.content + "<|im_end|>\n");
  if (gen) b.text("<|im_start|>assistant\n");
}

// zephyr: TinyLlama/TinyLlama-1.1B-Chat-v1.0 (= HuggingFaceH4/zephyr-7b-beta) "chat_template":
// "<|" + role + "|>\n" + content + eos_token + "\n" per message (the "\n" after the expression is
// kept by Jinja's trim_blocks), "<|assistant|>\n" as the generation prompt.
void render_zephyr(Builder& b, const Messages& m, bool gen) {
  for (const ChatMessage& msg : m) {
    b.text("<|" + msg.role + "|>\n" + msg.content);
    b.eos();
    b.text("\n");
  }
  if (gen) b.text("<|assistant|>\n");
}

// vicuna: FastChat's "vicuna_v1.1" conversation template (lm-sys/FastChat fastchat/conversation.py;
// vicuna-7b-v1.5 ships no Jinja template): SeparatorStyle.ADD_COLON_TWO with sep " ", sep2 "</s>":
// system + " ", then "USER: " + U + " " and "ASSISTANT: " + A + "</s>", and "ASSISTANT:" as the
// generation prompt. Contents are stripped, as FastChat's chat loop stores them.
constexpr std::string_view kVicunaSystem =
    "A chat between a curious user and an artificial intelligence assistant. "
    "The assistant gives helpful, detailed, and polite answers to the user's questions.";

void render_vicuna(Builder& b, const Messages& m, bool gen) {
  const bool sys = has_system(m);
  b.text((sys ? strip(m[0].content) : std::string(kVicunaSystem)) + " ");
  for (size_t i = sys ? 1 : 0; i < m.size(); ++i) {
    if (m[i].role == "user") {
      b.text("USER: " + strip(m[i].content) + " ");
    } else {
      b.text("ASSISTANT: " + strip(m[i].content));
      b.eos();
    }
  }
  if (gen) b.text("ASSISTANT:");
}

// none: the contents concatenated as they are (a story model continues the text).
void render_none(Builder& b, const Messages& m, bool) {
  for (const ChatMessage& msg : m) b.text(msg.content);
}

enum class RoleOrder { kAny, kAlternating };

struct TemplateSpec {
  std::string name;
  void (*render)(Builder&, const Messages&, bool);
  RoleOrder order;
  bool space_is_prefix;  // a text run's leading space after a special token is sentencepiece's "▁"
  std::vector<std::string> stop;
};

const std::vector<TemplateSpec>& registry() {
  static const std::vector<TemplateSpec> specs = {
      {"llama-2", render_llama2, RoleOrder::kAlternating, false, {"[INST]"}},
      {"mistral", render_mistral, RoleOrder::kAlternating, true, {"[INST]"}},
      {"chatml", render_chatml, RoleOrder::kAny, false, {"<|im_end|>", "<|im_start|>"}},
      {"zephyr", render_zephyr, RoleOrder::kAny, false, {"<|user|>", "<|system|>"}},
      {"vicuna", render_vicuna, RoleOrder::kAlternating, false, {"USER:"}},
      {"none", render_none, RoleOrder::kAny, false, {}},
  };
  return specs;
}

std::string names_list() {
  std::string s;
  for (const auto& n : chat_template_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const TemplateSpec& spec_for(const std::string& name) {
  for (const TemplateSpec& s : registry())
    if (s.name == name) return s;
  throw std::invalid_argument("unknown chat template '" + name + "' (known: " + names_list() + ", or auto)");
}

void validate(const TemplateSpec& spec, const Messages& m) {
  if (m.empty()) throw std::invalid_argument("chat template '" + spec.name + "': no messages to render");
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i].role != "system" && m[i].role != "user" && m[i].role != "assistant")
      throw std::invalid_argument("chat template '" + spec.name + "': message " + std::to_string(i + 1) +
                                  " has role '" + m[i].role + "'; roles are system, user and assistant");
  if (spec.order != RoleOrder::kAlternating) return;
  const size_t first = has_system(m) ? 1 : 0;
  if (first == m.size())
    throw std::invalid_argument("chat template '" + spec.name + "': a system message needs a user message after it");
  for (size_t i = first; i < m.size(); ++i) {
    const char* expected = (i - first) % 2 == 0 ? "user" : "assistant";
    if (m[i].role != expected)
      throw std::invalid_argument("chat template '" + spec.name + "': conversation roles must alternate "
                                  "user/assistant/user/... after an optional first system message; message " +
                                  std::to_string(i + 1) + " is '" + m[i].role + "', expected '" + expected + "'");
  }
}

bool contains(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }

}  // namespace

const std::vector<std::string>& chat_template_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const TemplateSpec& s : registry()) n.push_back(s.name);
    return n;
  }();
  return names;
}

const std::vector<std::string>& chat_template_stop_strings(const std::string& name) { return spec_for(name).stop; }

std::string detect_chat_template(const std::string& jinja, std::string* reason) {
  if (reason) reason->clear();
  const std::string trimmed = strip(jinja);
  if (trimmed.empty()) return "none";
  for (const std::string& n : chat_template_names())
    if (trimmed == n) return n;
  if (contains(jinja, "<|im_start|>")) return "chatml";
  if (contains(jinja, "<|user|>") && contains(jinja, "<|assistant|>") && !contains(jinja, "<|end|>")) return "zephyr";
  if (contains(jinja, "<<SYS>>")) return "llama-2";
  if (contains(jinja, "[INST]")) return "mistral";
  if (contains(jinja, "USER:") || contains(jinja, "ASSISTANT:")) return "vicuna";
  if (reason)
    *reason = "the model's chat template matches none of the known formats (" + names_list() +
              "); using plain continuation ('none'); choose one with --chat-template";
  return "none";
}

std::string resolve_chat_template(const std::string& override_name, const std::string& model_template_text,
                                  std::string* reason) {
  if (override_name.empty() || override_name == "auto") return detect_chat_template(model_template_text, reason);
  if (reason) reason->clear();
  return spec_for(override_name).name;
}

RenderedPrompt render_chat(const std::string& name, const std::vector<ChatMessage>& messages,
                           bool add_generation_prompt, bool continue_final_message) {
  const TemplateSpec& spec = spec_for(name);
  validate(spec, messages);
  Builder b;
  if (!continue_final_message) {
    spec.render(b, messages, add_generation_prompt);
  } else {
    // Render with a marker in place of the last reply, then cut everything after the marker (the
    // end of the turn) and put the reply back as it is.
    if (messages.back().role != "assistant")
      throw std::invalid_argument("chat template '" + spec.name +
                                  "': only an assistant message can be continued; the last message is '" +
                                  messages.back().role + "'");
    constexpr std::string_view kMarker = "\x1e<pagedchat-continue>\x1e";
    Messages marked = messages;
    marked.back().content = std::string(kMarker);
    spec.render(b, marked, false);
    auto& ps = b.pieces();
    bool found = false;
    for (size_t i = 0; i < ps.size() && !found; ++i) {
      if (ps[i].kind != PromptPiece::Kind::kText) continue;
      const size_t at = ps[i].text.rfind(kMarker);
      if (at == std::string::npos) continue;
      ps[i].text = ps[i].text.substr(0, at) + messages.back().content;
      ps.resize(i + 1);
      if (ps[i].text.empty()) ps.pop_back();
      found = true;
    }
    if (!found) throw std::logic_error("chat template '" + spec.name + "': cannot continue the last message");
  }
  auto& pieces = b.pieces();
  if (pieces.empty() || pieces.front().kind != PromptPiece::Kind::kBos) pieces.insert(pieces.begin(), PromptPiece{PromptPiece::Kind::kBos, {}});
  RenderedPrompt r;
  r.template_name = spec.name;
  for (const PromptPiece& p : pieces)
    r.text += p.kind == PromptPiece::Kind::kText ? std::string_view(p.text)
              : p.kind == PromptPiece::Kind::kBos ? kBosText
                                                  : kEosText;
  r.pieces = std::move(pieces);
  return r;
}

std::vector<int> encode_chat(const Tokenizer& tokenizer, const std::string& name,
                             const std::vector<ChatMessage>& messages, bool add_generation_prompt, int bos_id,
                             int eos_id, bool continue_final_message) {
  const TemplateSpec& spec = spec_for(name);
  const RenderedPrompt r = render_chat(name, messages, add_generation_prompt, continue_final_message);
  std::vector<int> ids;
  for (const PromptPiece& p : r.pieces) {
    if (p.kind == PromptPiece::Kind::kBos) {
      if (bos_id >= 0) ids.push_back(bos_id);
    } else if (p.kind == PromptPiece::Kind::kEos) {
      if (eos_id >= 0) ids.push_back(eos_id);
    } else {
      std::string_view text = p.text;
      if (spec.space_is_prefix && !text.empty() && text.front() == ' ') text.remove_prefix(1);
      const std::vector<int> part = tokenizer.encode(text, /*add_bos=*/false);
      ids.insert(ids.end(), part.begin(), part.end());
    }
  }
  return ids;
}

int chat_reply_reserve(int max_tokens, int max_model_len) {
  return std::max(1, std::min(max_tokens, max_model_len / 4));
}

ChatPrompt fit_chat(const Tokenizer& tokenizer, const std::string& name, const std::vector<ChatMessage>& messages,
                    int bos_id, int eos_id, int max_model_len, int max_tokens, bool continue_final_message) {
  const size_t budget = static_cast<size_t>(std::max(0, max_model_len - chat_reply_reserve(max_tokens, max_model_len)));
  const size_t first = has_system(messages) ? 1 : 0;
  // Where the kept conversation may start: its first message, or any later user message.
  std::vector<size_t> cuts = {first};
  for (size_t i = first + 1; i < messages.size(); ++i)
    if (messages[i].role == "user") cuts.push_back(i);
  auto encode_from = [&](size_t cut) {
    std::vector<ChatMessage> kept(messages.begin(), messages.begin() + static_cast<long>(first));
    kept.insert(kept.end(), messages.begin() + static_cast<long>(cut), messages.end());
    return encode_chat(tokenizer, name, kept, /*add_generation_prompt=*/true, bos_id, eos_id, continue_final_message);
  };
  std::vector<int> ids = encode_from(first);  // also validates the whole conversation
  size_t chosen = 0;
  if (ids.size() > budget && cuts.size() > 1) {
    // The fewest dropped turns that fit: binary search (fewer messages render fewer tokens), so a
    // long history costs O(log turns) encodes. When none fits, the newest turn alone.
    size_t lo = 1, hi = cuts.size() - 1;
    std::optional<std::vector<int>> hi_ids;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      std::vector<int> m = encode_from(cuts[mid]);
      if (m.size() <= budget) {
        hi = mid;
        hi_ids = std::move(m);
      } else {
        lo = mid + 1;
      }
    }
    ids = hi_ids ? std::move(*hi_ids) : encode_from(cuts[hi]);
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
  return out;
}

}  // namespace pagedchat
