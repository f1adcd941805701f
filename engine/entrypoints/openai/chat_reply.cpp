#include "engine/entrypoints/openai/chat_reply.h"

#include <stdexcept>

#include "engine/sample/structured/json_schema_grammar.h"

namespace pagedchat::openai {

namespace {
using json = nlohmann::json;
constexpr std::string_view kReplyBlank = " \t\r\n";

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(kReplyBlank);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(kReplyBlank) - b + 1));
}

// The client's parameters schema of a function (an object with no properties when it has none:
// OpenAI's "no arguments").
nlohmann::ordered_json parameters_of(const nlohmann::ordered_json& fn) {
  if (!fn.contains("parameters") || !fn["parameters"].is_object() || fn["parameters"].empty())
    return nlohmann::ordered_json{{"type", "object"}, {"properties", nlohmann::ordered_json::object()}};
  nlohmann::ordered_json p = fn["parameters"];
  if (!p.contains("type")) p["type"] = "object";  // a call's arguments are an object
  return p;
}
}  // namespace

std::vector<ToolCall> complete_forced_calls(std::string_view text, std::size_t& pos) {
  std::vector<ToolCall> out;
  while (true) {
    const std::size_t at = text.find_first_not_of(" \t\r\n[,", pos);
    if (at == std::string_view::npos || text[at] != '{') break;
    const std::size_t n = json_value_end(text.substr(at));
    if (n == std::string_view::npos) break;
    if (auto one = forced_calls("[" + std::string(text.substr(at, n)) + "]"))
      for (ToolCall& c : *one) out.push_back(std::move(c));
    pos = at + n;
  }
  return out;
}

std::optional<std::vector<ToolCall>> forced_calls(std::string_view text) {
  const json v = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!v.is_array() || v.empty()) return std::nullopt;
  std::vector<ToolCall> calls;
  for (const json& item : v) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) return std::nullopt;
    const json args = item.value("parameters", json::object());
    calls.push_back(ToolCall{new_tool_call_id(), item["name"].get<std::string>(),
                             args.dump(-1, ' ', false, json::error_handler_t::replace)});
  }
  return calls;
}

nlohmann::ordered_json tool_parameters_schema(const nlohmann::ordered_json& function) {
  return parameters_of(function);
}

nlohmann::ordered_json enforceable_tools(const nlohmann::ordered_json& tools,
                                         std::vector<std::pair<std::string, std::string>>* refused) {
  nlohmann::ordered_json enforceable = nlohmann::ordered_json::array();
  if (!tools.is_array()) return enforceable;
  for (const auto& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) continue;
    const auto& fn = t["function"];
    try {
      const auto params = tool_parameters_schema(fn);
      if (!params["type"].is_string() || params["type"] != "object")
        throw structured::UnsupportedSchema("its parameters describe no object");
      structured::json_schema_grammar(params);
      enforceable.push_back(t);
    } catch (const structured::UnsupportedSchema& e) {
      if (refused) refused->emplace_back(fn.value("name", ""), e.what());
    }
  }
  return enforceable;
}

nlohmann::ordered_json tool_choice_schema(const nlohmann::ordered_json& tools, const std::string& forced,
                                          const std::string& name, bool parallel_tool_calls) {
  using ojson = nlohmann::ordered_json;
  ojson alternatives = ojson::array();
  for (const ojson& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) continue;
    const ojson& fn = t["function"];
    const std::string fname = fn.value("name", "");
    if (forced == "function") {
      if (fname == name) return parameters_of(fn);
      continue;
    }
    alternatives.push_back(
        ojson{{"type", "object"},
              {"properties", {{"name", {{"type", "string"}, {"enum", {fname}}}}, {"parameters", parameters_of(fn)}}},
              {"required", {"name", "parameters"}}});
  }
  if (forced == "function") throw std::invalid_argument("names the function '" + name + "', which is not in 'tools'");
  if (alternatives.empty()) throw std::invalid_argument("\"required\" needs tools");
  ojson items = alternatives.size() == 1 ? alternatives[0] : ojson{{"anyOf", alternatives}};
  ojson schema = {{"type", "array"}, {"items", std::move(items)}, {"minItems", 1}};
  if (!parallel_tool_calls) schema["maxItems"] = 1;
  return schema;
}

ChatReply parse_chat_reply(const ChatReplyOptions& o, std::string_view text) {
  ChatReply r;
  std::string content;
  if (o.reasoning) {
    ReasoningSplit s = split_reasoning(text, o.reasoning_opened);
    if (s.has_reasoning) r.reasoning = std::move(s.reasoning);
    content = std::move(s.content);
  } else {
    content = std::string(text);
  }
  if (o.forced == "function") {
    // The arguments object, as the stream sends it: also when cut short (max_tokens, a stop
    // string), as vLLM returns it; whoever runs the call checks that it parses.
    r.calls.push_back(ToolCall{new_tool_call_id(), o.forced_name, trimmed(content)});
    return r;
  }
  if (o.forced == "required") {
    // The whole items of the array (all of them, or those before a cut), as the stream sends them.
    std::size_t pos = 0;
    for (ToolCall& c : complete_forced_calls(content, pos)) {
      if (!o.parallel_tool_calls && !r.calls.empty()) break;
      r.calls.push_back(std::move(c));
    }
    if (r.calls.empty()) r.content = std::move(content);
    return r;
  }
  ParsedReply parsed = parse_tool_calls(o.tool_format, content, o.tools);
  if (!o.parallel_tool_calls && parsed.calls.size() > 1) parsed.calls.resize(1);
  r.content = parsed.calls.empty() ? std::move(content) : std::move(parsed.content);
  r.calls = std::move(parsed.calls);
  return r;
}

ChatReplyStream::ChatReplyStream(ChatReplyOptions options) : o_(std::move(options)), reasoning_(o_.reasoning_opened) {
  if (o_.forced.empty() && o_.tool_format != ToolCallFormat::kNone)
    tools_ = std::make_unique<ToolCallStream>(o_.tool_format, o_.tools);
}

ChatReplyStream::~ChatReplyStream() = default;

void ChatReplyStream::add_calls(std::vector<ToolCall>& calls, ChatReplyDelta& d) {
  for (ToolCall& c : calls) {
    if (!o_.parallel_tool_calls && num_calls_ >= 1) break;
    d.tool_calls.push_back(ToolCallDelta{num_calls_++, std::move(c.id), std::move(c.name), std::move(c.arguments)});
  }
  calls.clear();
}

void ChatReplyStream::content(std::string_view text, ChatReplyDelta& d, bool last) {
  if (o_.forced == "function") {
    // The arguments object as it is generated; the call's id and name come with its first piece.
    if (forced_id_.empty()) {  // leading whitespace is no part of the arguments (the whole reply trims it)
      const std::size_t b = text.find_first_not_of(" \t\r\n");
      text = b == std::string_view::npos ? std::string_view() : text.substr(b);
    }
    if (text.empty()) return;
    ToolCallDelta c;
    if (forced_id_.empty()) {
      forced_id_ = new_tool_call_id();
      c.id = forced_id_;
      c.name = o_.forced_name;
      ++num_calls_;
    }
    c.arguments = std::string(text);
    d.tool_calls.push_back(std::move(c));
    return;
  }
  if (o_.forced == "required") {
    // The array `[{"name", "parameters"}, ...]`: each item is sent as a call once it is whole.
    forced_text_ += text;
    std::vector<ToolCall> calls = complete_forced_calls(forced_text_, forced_pos_);
    add_calls(calls, d);
    if (last && num_calls_ == 0) d.content += forced_text_;  // not the array it had to be (cut short)
    return;
  }
  if (!tools_) {
    d.content += text;
    return;
  }
  std::vector<ToolCallDelta> deltas;
  std::string shown = tools_->feed(text, deltas);
  if (last) shown += tools_->finish(deltas);
  for (ToolCallDelta& c : deltas) {
    if (!o_.parallel_tool_calls && c.index >= 1) continue;
    if (!c.id.empty()) ++num_calls_;
    d.tool_calls.push_back(std::move(c));
  }
  // Whitespace alone (around and between calls) waits for text: the whole reply trims it when
  // there are calls.
  blank_ += shown;
  if (blank_.find_first_not_of(" \t\r\n") != std::string::npos) {
    d.content += blank_;
    blank_.clear();
  } else if (last) {
    if (num_calls_ == 0) d.content += blank_;
    blank_.clear();
  }
}

ChatReplyDelta ChatReplyStream::feed(std::string_view text) {
  ChatReplyDelta d;
  std::string content;
  if (o_.reasoning)
    reasoning_.feed(text, d.reasoning, content);
  else
    content = std::string(text);
  this->content(content, d, false);
  return d;
}

ChatReplyDelta ChatReplyStream::finish() {
  ChatReplyDelta d;
  std::string content;
  if (o_.reasoning) reasoning_.finish(d.reasoning, content);
  this->content(content, d, true);
  return d;
}

}  // namespace pagedchat::openai
