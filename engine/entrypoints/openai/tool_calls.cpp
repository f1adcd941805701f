#include "engine/entrypoints/openai/tool_calls.h"

#include <random>

namespace pagedchat::openai {

using json = nlohmann::json;

std::string new_tool_call_id() {
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kChars[rng() % (sizeof(kChars) - 1)];
  return id;
}

std::size_t json_value_end(std::string_view s) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      ++depth;
    else if ((c == '}' || c == ']') && --depth == 0)
      return i + 1;
  }
  return std::string_view::npos;
}

namespace {

constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>";
constexpr std::string_view kGemmaOpen = "<|tool_call>", kGemmaClose = "<tool_call|>", kGemmaQuote = "<|\"|>";

constexpr std::string_view kDeepSeekOpen = "<｜tool▁calls▁begin｜>", kDeepSeekClose = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekCall = "<｜tool▁call▁begin｜>", kDeepSeekCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>", kPhiTag = "functools";

// The tags around a call (DeepSeek: around all the calls) in a tagged format.
std::string_view open_tag(ToolCallFormat f) {
  return f == ToolCallFormat::kGemma4 ? kGemmaOpen : f == ToolCallFormat::kDeepSeek ? kDeepSeekOpen : kOpen;
}
std::string_view close_tag(ToolCallFormat f) {
  return f == ToolCallFormat::kGemma4 ? kGemmaClose : f == ToolCallFormat::kDeepSeek ? kDeepSeekClose : kClose;
}
constexpr std::string_view kPythonTag = "<|python_tag|>", kMistralTag = "[TOOL_CALLS]";

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<json> parse_json(std::string_view text) {
  json v = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return std::nullopt;
  return v;
}

// {"name": "f", "arguments" | "parameters": {...} or a JSON text}: a call, or nothing.
std::optional<ToolCall> call_of(const json& v) {
  if (!v.is_object() || !v.contains("name") || !v["name"].is_string()) return std::nullopt;
  const char* key = v.contains("arguments") ? "arguments" : v.contains("parameters") ? "parameters" : nullptr;
  json args = key ? v[key] : json::object();
  if (args.is_string()) {  // some models write the arguments as a JSON text already
    auto inner = parse_json(args.get<std::string>());
    if (!inner || !inner->is_object()) return std::nullopt;
    args = *inner;
  }
  if (!args.is_object()) return std::nullopt;
  return ToolCall{new_tool_call_id(), v["name"].get<std::string>(),
                  args.dump(-1, ' ', false, json::error_handler_t::replace)};
}

// The schema type of parameter `key` of tool `name` ("" when the tools do not say).
std::string parameter_type(const json& tools, const std::string& name, const std::string& key) {
  if (!tools.is_array()) return {};
  for (const json& t : tools) {
    const json* fn = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
    if (!fn || !fn->is_object() || fn->value("name", "") != name) continue;
    const json params = fn->value("parameters", json::object());
    if (!params.is_object() || !params.contains("properties") || !params["properties"].is_object()) return {};
    const json& prop = params["properties"].value(key, json::object());
    if (prop.is_object() && prop.contains("type") && prop["type"].is_string()) return prop["type"].get<std::string>();
    return {};
  }
  return {};
}

// <function=NAME>(<parameter=KEY>VALUE</parameter>)*</function>, whitespace around.
std::optional<ToolCall> qwen_xml_call(std::string_view inner, const json& tools) {
  std::string_view s = trim(inner);
  constexpr std::string_view kFn = "<function=", kFnEnd = "</function>",
                             kParam = "<parameter=", kParamEnd = "</parameter>";
  if (s.substr(0, kFn.size()) != kFn) return std::nullopt;
  const auto gt = s.find('>');
  if (gt == std::string_view::npos) return std::nullopt;
  const std::string name(trim(s.substr(kFn.size(), gt - kFn.size())));
  if (name.empty()) return std::nullopt;
  s.remove_prefix(gt + 1);
  json args = json::object();
  while (true) {
    s = trim(s);
    if (s.substr(0, kFnEnd.size()) == kFnEnd) break;
    if (s.empty()) break;  // </function> left out: what came is taken
    if (s.substr(0, kParam.size()) != kParam) return std::nullopt;
    const auto pgt = s.find('>');
    if (pgt == std::string_view::npos) return std::nullopt;
    const std::string key(trim(s.substr(kParam.size(), pgt - kParam.size())));
    s.remove_prefix(pgt + 1);
    const auto end = s.find(kParamEnd);
    std::string_view value = s.substr(0, end);
    // The value sits on lines of its own: one newline after the tag and one before its end.
    if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    const std::string type = parameter_type(tools, name, key);
    std::optional<json> parsed;
    if (type != "string") parsed = parse_json(value);
    args[key] = parsed ? *parsed : json(std::string(value));
    if (end == std::string_view::npos) break;
    s.remove_prefix(end + kParamEnd.size());
  }
  return ToolCall{new_tool_call_id(), name, args.dump(-1, ' ', false, json::error_handler_t::replace)};
}

// One value of Gemma 4's call syntax (its template's format_argument): <|"|>text<|"|>, {key:value,...}
// with bare or quoted keys, [value,...], true / false / null, a number; nullopt when malformed.
std::optional<json> gemma_value(std::string_view s, std::size_t& i, int depth = 0) {
  auto ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  };
  auto quoted = [&]() -> std::optional<std::string> {
    const std::size_t end = s.find(kGemmaQuote, i + kGemmaQuote.size());
    if (end == std::string_view::npos) return std::nullopt;
    std::string v(s.substr(i + kGemmaQuote.size(), end - i - kGemmaQuote.size()));
    i = end + kGemmaQuote.size();
    return v;
  };
  if (depth > 64) return std::nullopt;
  ws();
  if (i >= s.size()) return std::nullopt;
  if (s.substr(i, kGemmaQuote.size()) == kGemmaQuote) {
    auto v = quoted();
    if (!v) return std::nullopt;
    return json(*v);
  }
  if (s[i] == '{' || s[i] == '[') {
    const bool object = s[i] == '{';
    const char close = object ? '}' : ']';
    json out = object ? json::object() : json::array();
    ++i;
    ws();
    if (i < s.size() && s[i] == close) {
      ++i;
      return out;
    }
    while (true) {
      std::string key;
      if (object) {
        ws();
        if (s.substr(i, kGemmaQuote.size()) == kGemmaQuote) {
          auto k = quoted();
          if (!k) return std::nullopt;
          key = *k;
        } else {
          const std::size_t colon = s.find(':', i);
          if (colon == std::string_view::npos) return std::nullopt;
          key = std::string(trim(s.substr(i, colon - i)));
          i = colon;
        }
        ws();
        if (i >= s.size() || s[i] != ':') return std::nullopt;
        ++i;
      }
      auto v = gemma_value(s, i, depth + 1);
      if (!v) return std::nullopt;
      if (object)
        out[key] = std::move(*v);
      else
        out.push_back(std::move(*v));
      ws();
      if (i >= s.size()) return std::nullopt;
      if (s[i] == ',') {
        ++i;
        continue;
      }
      if (s[i] != close) return std::nullopt;
      ++i;
      return out;
    }
  }
  const std::size_t end = std::min(s.size(), s.find_first_of(",}]", i));
  const std::string_view word = trim(s.substr(i, end - i));
  i = end;
  if (word.empty()) return std::nullopt;
  if (auto v = parse_json(word); v && !v->is_object() && !v->is_array()) return v;
  return json(std::string(word));  // a bare word: text
}

// Gemma 4's call: "call:NAME{key:value,...}".
std::optional<ToolCall> gemma_call(std::string_view inner) {
  inner = trim(inner);
  if (inner.substr(0, 5) != "call:") return std::nullopt;
  const std::size_t brace = inner.find('{');
  if (brace == std::string_view::npos) return std::nullopt;
  const std::string name(trim(inner.substr(5, brace - 5)));
  std::size_t i = brace;
  auto args = gemma_value(inner, i);
  if (name.empty() || !args || !args->is_object() || !trim(inner.substr(i)).empty()) return std::nullopt;
  return ToolCall{new_tool_call_id(), name, args->dump(-1, ' ', false, json::error_handler_t::replace)};
}

// DeepSeek-R1's calls: "<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>",
// one or more (the last one's end may be missing).
std::optional<std::vector<ToolCall>> deepseek_calls(std::string_view inner) {
  std::vector<ToolCall> calls;
  std::size_t pos = 0;
  while (true) {
    const std::size_t begin = inner.find(kDeepSeekCall, pos);
    if (begin == std::string_view::npos) break;
    if (!trim(inner.substr(pos, begin - pos)).empty()) return std::nullopt;
    const std::size_t end = inner.find(kDeepSeekCallEnd, begin);
    std::string_view one = inner.substr(
        begin + kDeepSeekCall.size(), end == std::string_view::npos ? inner.npos : end - begin - kDeepSeekCall.size());
    pos = end == std::string_view::npos ? inner.size() : end + kDeepSeekCallEnd.size();
    const std::size_t sep = one.find(kDeepSeekSep);
    if (sep == std::string_view::npos) return std::nullopt;
    one.remove_prefix(sep + kDeepSeekSep.size());
    const std::size_t nl = one.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    const std::string name(trim(one.substr(0, nl)));
    std::string_view args = trim(one.substr(nl + 1));
    if (args.substr(0, 7) == "```json") args = trim(args.substr(7));
    if (args.size() >= 3 && args.substr(args.size() - 3) == "```") args = trim(args.substr(0, args.size() - 3));
    auto v = parse_json(args);
    if (name.empty() || !v || !v->is_object()) return std::nullopt;
    calls.push_back(ToolCall{new_tool_call_id(), name, v->dump(-1, ' ', false, json::error_handler_t::replace)});
  }
  if (calls.empty() || !trim(inner.substr(std::min(pos, inner.size()))).empty()) return std::nullopt;
  return calls;
}

std::optional<ToolCall> tagged_call(ToolCallFormat format, std::string_view inner, const json& tools) {
  if (format == ToolCallFormat::kGemma4) return gemma_call(inner);
  if (format == ToolCallFormat::kQwenXml) {
    if (auto c = qwen_xml_call(inner, tools)) return c;
  }
  // Qwen3.5's template takes either form; Hermes models write JSON.
  if (auto v = parse_json(trim(inner))) return call_of(*v);
  return std::nullopt;
}

// The calls of one tagged section (one call but for DeepSeek's).
std::optional<std::vector<ToolCall>> tagged_calls(ToolCallFormat format, std::string_view inner, const json& tools) {
  if (format == ToolCallFormat::kDeepSeek) return deepseek_calls(inner);
  if (auto call = tagged_call(format, inner, tools)) return std::vector<ToolCall>{std::move(*call)};
  return std::nullopt;
}

// A reply that is only calls (Llama 3: objects separated by ';'; Mistral: an array, or
// NAME[ARGS]{...} pieces): its calls, or nothing when any part is not one.
std::optional<std::vector<ToolCall>> whole_reply_calls(ToolCallFormat format, std::string_view text) {
  std::string_view s = trim(text);
  std::vector<ToolCall> calls;
  if (format == ToolCallFormat::kLlama3Json) {
    if (s.substr(0, kPythonTag.size()) == kPythonTag) s = trim(s.substr(kPythonTag.size()));
    while (!s.empty()) {
      if (s.front() != '{') return std::nullopt;
      const std::size_t end = json_value_end(s);
      if (end == std::string_view::npos) return std::nullopt;
      auto v = parse_json(s.substr(0, end));
      auto call = v ? call_of(*v) : std::nullopt;
      if (!call) return std::nullopt;
      calls.push_back(*call);
      s = trim(s.substr(end));
      if (!s.empty() && s.front() == ';') s = trim(s.substr(1));
    }
  } else if (format == ToolCallFormat::kPhi4Mini) {  // functools[{"name", "arguments"}, ...]
    if (s.substr(0, kPhiTag.size()) != kPhiTag) return std::nullopt;
    s = trim(s.substr(kPhiTag.size()));
    auto v = parse_json(s);
    if (!v || !v->is_array()) return std::nullopt;
    for (const json& item : *v) {
      auto call = call_of(item);
      if (!call) return std::nullopt;
      calls.push_back(*call);
    }
  } else {  // kMistral
    if (s.substr(0, kMistralTag.size()) == kMistralTag) s = trim(s.substr(kMistralTag.size()));
    if (!s.empty() && s.front() == '[') {
      auto v = parse_json(s);
      if (!v || !v->is_array()) return std::nullopt;
      for (const json& item : *v) {
        auto call = call_of(item);
        if (!call) return std::nullopt;
        calls.push_back(*call);
      }
    } else {
      while (!s.empty()) {  // NAME[ARGS]{...}, repeated after [TOOL_CALLS]
        const auto args = s.find("[ARGS]");
        if (args == std::string_view::npos) return std::nullopt;
        const std::string name(trim(s.substr(0, args)));
        s = trim(s.substr(args + 6));
        const std::size_t end = s.empty() || s.front() != '{' ? std::string_view::npos : json_value_end(s);
        if (name.empty() || end == std::string_view::npos) return std::nullopt;
        auto call = call_of(json{{"name", name}, {"arguments", parse_json(s.substr(0, end)).value_or(json())}});
        if (!call) return std::nullopt;
        calls.push_back(*call);
        s = trim(s.substr(end));
        if (s.substr(0, kMistralTag.size()) == kMistralTag) s = trim(s.substr(kMistralTag.size()));
      }
    }
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

// The longest suffix of `s` that begins `tag` (held back: the tag may be arriving).
std::size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (std::size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

// How far the text after "<tool_call>" matches a call's head, {"name": "NAME", "arguments": {
enum class Head { kMore, kNo, kYes };
Head call_head(std::string_view s, std::string& name, std::size_t& args_at) {
  std::size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
  };
  auto lit = [&](std::string_view l) {  // kYes: matched; kMore: s ends inside it
    const std::string_view have = s.substr(i, l.size());
    if (l.substr(0, have.size()) != have) return Head::kNo;
    if (have.size() < l.size()) return Head::kMore;
    i += l.size();
    return Head::kYes;
  };
  for (std::string_view part : {std::string_view("{"), std::string_view("\"name\""), std::string_view(":")}) {
    ws();
    if (const Head h = lit(part); h != Head::kYes) return h;
  }
  ws();
  if (i == s.size()) return Head::kMore;
  if (s[i] != '"') return Head::kNo;
  const std::size_t end = s.find_first_of("\"\\", i + 1);
  if (end == std::string_view::npos) return Head::kMore;
  if (s[end] == '\\') return Head::kNo;  // an escaped name: parsed whole
  name = std::string(s.substr(i + 1, end - i - 1));
  i = end + 1;
  for (std::string_view part : {std::string_view(","), std::string_view("\"arguments\""), std::string_view(":")}) {
    ws();
    if (const Head h = lit(part); h != Head::kYes) return h;
  }
  ws();
  if (i == s.size()) return Head::kMore;
  if (s[i] != '{') return Head::kNo;
  args_at = i;
  return Head::kYes;
}
}  // namespace

ToolCallFormat tool_call_format_of(std::string_view src, std::string_view family) {
  if (src.find("<|tool_call>call:") != std::string_view::npos) return ToolCallFormat::kGemma4;
  if (src.find(kDeepSeekCall) != std::string_view::npos) return ToolCallFormat::kDeepSeek;
  if (src.find("<|tool|>") != std::string_view::npos && src.find("<|/tool|>") != std::string_view::npos)
    return ToolCallFormat::kPhi4Mini;
  const bool has_tool_call = src.find(kOpen) != std::string_view::npos;
  if (has_tool_call && src.find("<function=") != std::string_view::npos) return ToolCallFormat::kQwenXml;
  if (has_tool_call) return ToolCallFormat::kHermes;
  // Harmony (gpt-oss): calls on the commentary channel "to=functions.NAME", which the reply's
  // detokenizer writes in the <tool_call> form.
  if (src.find("<|channel|>") != std::string_view::npos && src.find("functions.") != std::string_view::npos)
    return ToolCallFormat::kHarmony;
  if (src.find(kMistralTag) != std::string_view::npos) return ToolCallFormat::kMistral;
  if (src.find(kPythonTag) != std::string_view::npos) return ToolCallFormat::kLlama3Json;
  if (family == "chatml") return ToolCallFormat::kHermes;
  if (family == "llama3") return ToolCallFormat::kLlama3Json;
  if (family == "mistral") return ToolCallFormat::kMistral;
  return ToolCallFormat::kNone;
}

const char* tool_call_format_name(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::kHermes:
      return "hermes";
    case ToolCallFormat::kQwenXml:
      return "qwen3_xml";
    case ToolCallFormat::kLlama3Json:
      return "llama3_json";
    case ToolCallFormat::kMistral:
      return "mistral";
    case ToolCallFormat::kHarmony:
      return "openai";
    case ToolCallFormat::kGemma4:
      return "gemma4";
    case ToolCallFormat::kDeepSeek:
      return "deepseek_v3";
    case ToolCallFormat::kPhi4Mini:
      return "phi4_mini_json";
    case ToolCallFormat::kNone:
      break;
  }
  return "none";
}

ParsedReply parse_tool_calls(ToolCallFormat format, std::string_view text, const json& tools) {
  ParsedReply r;
  if (format == ToolCallFormat::kNone) {
    r.content = std::string(text);
    return r;
  }
  if (format == ToolCallFormat::kLlama3Json || format == ToolCallFormat::kMistral ||
      format == ToolCallFormat::kPhi4Mini) {
    if (auto calls = whole_reply_calls(format, text))
      r.calls = std::move(*calls);
    else
      r.content = std::string(text);
    return r;
  }
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto open = text.find(open_tag(format), pos);
    if (open == std::string_view::npos) break;
    const auto close = text.find(close_tag(format), open + open_tag(format).size());
    const std::string_view inner = text.substr(
        open + open_tag(format).size(),
        close == std::string_view::npos ? text.npos : close - open - open_tag(format).size());
    const std::size_t after = close == std::string_view::npos ? text.size() : close + close_tag(format).size();
    if (auto calls = tagged_calls(format, inner, tools)) {
      r.content += text.substr(pos, open - pos);
      for (ToolCall& c : *calls) r.calls.push_back(std::move(c));
    } else {
      r.content += text.substr(pos, after - pos);  // not a call: the text stays as it was
    }
    pos = after;
  }
  r.content += text.substr(std::min(pos, text.size()));
  if (!r.calls.empty()) r.content = std::string(trim(r.content));
  return r;
}

ToolCallStream::ToolCallStream(ToolCallFormat format, json tools) : format_(format), tools_(std::move(tools)) {}

std::string ToolCallStream::feed(std::string_view text, std::vector<ToolCall>& calls) {
  held_ += text;
  std::string out;
  if (format_ == ToolCallFormat::kNone) {
    out.swap(held_);
    return out;
  }
  if (format_ == ToolCallFormat::kLlama3Json || format_ == ToolCallFormat::kMistral ||
      format_ == ToolCallFormat::kPhi4Mini) {
    if (!decided_) {
      const std::string_view t = trim(held_);
      if (t.empty()) return out;  // only whitespace so far
      // A reply that opens like a call is held whole and parsed at the end.
      if (format_ == ToolCallFormat::kPhi4Mini) {
        if (t.size() < kPhiTag.size() && kPhiTag.substr(0, t.size()) == t) return out;  // maybe "functools"
        whole_ = t.substr(0, kPhiTag.size()) == kPhiTag;
      } else {
        whole_ = t.front() == '{' || t.front() == '[' || t.front() == '<';
      }
      decided_ = true;
    }
    if (!whole_) out.swap(held_);
    return out;
  }
  while (true) {
    if (!in_call_) {
      const auto open = held_.find(open_tag(format_));
      if (open == std::string::npos) {
        const std::size_t keep = partial_tag_suffix(held_, open_tag(format_));
        out += held_.substr(0, held_.size() - keep);
        held_.erase(0, held_.size() - keep);
        return out;
      }
      out += held_.substr(0, open);
      held_.erase(0, open);
      in_call_ = true;
    }
    const auto close = held_.find(close_tag(format_), open_tag(format_).size());
    if (close == std::string::npos) return out;
    const std::string_view inner = std::string_view(held_).substr(open_tag(format_).size(),
                                                                  close - open_tag(format_).size());
    if (auto found = tagged_calls(format_, inner, tools_)) {
      for (ToolCall& c : *found) calls.push_back(std::move(c));
      num_calls_ += int(found->size());
    } else {
      out += held_.substr(0, close + close_tag(format_).size());
    }
    held_.erase(0, close + close_tag(format_).size());
    in_call_ = false;
  }
}

std::string ToolCallStream::finish(std::vector<ToolCall>& calls) {
  std::string rest;
  rest.swap(held_);
  ParsedReply r = parse_tool_calls(format_, rest, tools_);
  num_calls_ += int(r.calls.size());
  for (ToolCall& c : r.calls) calls.push_back(std::move(c));
  return r.calls.empty() ? rest : r.content;
}

void ToolCallStream::add_whole(std::vector<ToolCall>& calls, std::vector<ToolCallDelta>& deltas) {
  // The overloads above counted them already.
  int index = num_calls_ - int(calls.size());
  for (ToolCall& c : calls) deltas.push_back({index++, std::move(c.id), std::move(c.name), std::move(c.arguments)});
  calls.clear();
}

std::string ToolCallStream::feed(std::string_view text, std::vector<ToolCallDelta>& deltas) {
  std::vector<ToolCall> calls;
  if (format_ != ToolCallFormat::kHermes && format_ != ToolCallFormat::kHarmony) {
    std::string out = feed(text, calls);
    add_whole(calls, deltas);
    return out;
  }
  held_ += text;
  std::string out;
  while (true) {
    if (!in_call_) {
      const auto open = held_.find(kOpen);
      if (open == std::string::npos) {
        const std::size_t keep = partial_tag_suffix(held_, kOpen);
        out += held_.substr(0, held_.size() - keep);
        held_.erase(0, held_.size() - keep);
        return out;
      }
      out += held_.substr(0, open);
      held_.erase(0, open);
      in_call_ = true;
      streaming_ = false;
      args_start_ = 0;
    }
    if (!streaming_ && args_start_ == 0) {
      std::string name;
      std::size_t at = 0;
      const Head h = call_head(std::string_view(held_).substr(kOpen.size()), name, at);
      if (h == Head::kMore) return out;
      if (h == Head::kYes) {
        streaming_ = true;
        args_start_ = args_sent_ = kOpen.size() + at;
        deltas.push_back({num_calls_, new_tool_call_id(), std::move(name), ""});
      } else {
        args_start_ = std::string::npos;  // another order: the call is parsed whole
      }
    }
    if (streaming_) {
      const std::size_t n = json_value_end(std::string_view(held_).substr(args_start_));
      const std::size_t upto = n == std::string_view::npos ? held_.size() : args_start_ + n;
      if (upto > args_sent_) deltas.push_back({num_calls_, "", "", held_.substr(args_sent_, upto - args_sent_)});
      args_sent_ = upto;
      if (n == std::string_view::npos) return out;
      const auto close = held_.find(kClose, upto);
      if (close == std::string::npos) return out;
      held_.erase(0, close + kClose.size());
      in_call_ = streaming_ = false;
      ++num_calls_;
      continue;
    }
    const auto close = held_.find(kClose, kOpen.size());
    if (close == std::string::npos) return out;
    const std::string_view inner = std::string_view(held_).substr(kOpen.size(), close - kOpen.size());
    if (auto found = tagged_calls(format_, inner, tools_)) {
      for (ToolCall& c : *found) calls.push_back(std::move(c));
      num_calls_ += int(found->size());
      add_whole(calls, deltas);
    } else {
      out += held_.substr(0, close + kClose.size());
    }
    held_.erase(0, close + kClose.size());
    in_call_ = false;
  }
}

std::string ToolCallStream::finish(std::vector<ToolCallDelta>& deltas) {
  if (streaming_) {  // cut inside a call whose name was sent: it stays a call (its arguments cut)
    held_.clear();
    streaming_ = in_call_ = false;
    ++num_calls_;
    return {};
  }
  std::vector<ToolCall> calls;
  std::string out = finish(calls);
  add_whole(calls, deltas);
  return out;
}

}  // namespace pagedchat::openai
