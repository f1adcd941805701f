// Tool calls in a model's output, as OpenAI's `tool_calls`: the text a model writes when it calls
// a function, in its family's format, parsed into calls (name, arguments as a JSON text) and the
// text around them. The parser is chosen by the chat template (its markers), not the model name;
// vLLM's tool parsers (vllm/entrypoints/openai/tool_parsers/: hermes, qwen3_xml, llama3_json,
// mistral) read the same formats.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pagedchat::openai {

/// How a family writes a call.
enum class ToolCallFormat {
  kNone,        ///< no calls are parsed
  kHermes,      ///< <tool_call>{"name": ..., "arguments": {...}}</tool_call> (Hermes, Qwen2.5, Qwen3, SmolLM3)
  kQwenXml,     ///< <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>
                ///< (Qwen3-Coder, Qwen3.5 / 3.6)
  kLlama3Json,  ///< the whole reply one JSON object {"name", "parameters"} (Llama 3.1-3.3), `;` between
                ///< several, after an optional <|python_tag|>
  kMistral,     ///< [TOOL_CALLS][{"name", "arguments"}, ...] (the marker may be decoded away)
  kHarmony,     ///< gpt-oss: "<|channel|>commentary to=functions.NAME<|message|>ARGS<|call|>", which
                ///< ReplyDetokenizer writes as kHermes's <tool_call>{"name", "arguments"}</tool_call>
  kGemma4,      ///< <|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|> (Gemma 4's own syntax:
                ///< bare keys, strings between <|"|> marks)
  kDeepSeek,  ///< <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```
              ///< <｜tool▁call▁end｜>...<｜tool▁calls▁end｜> (DeepSeek-R1 and its distills)
  kPhi4Mini,  ///< functools[{"name", "arguments"}, ...] (Phi-4-mini)
};

/// The format a chat template's tool calls use, from its source's markers ("<function=" inside
/// a "<tool_call>" template: kQwenXml; "<tool_call>": kHermes; "[TOOL_CALLS]": kMistral;
/// "<|python_tag|>" or a Llama 3 template with `tools`: kLlama3Json; "<|channel|>" and "functions.":
/// kHarmony; "<|tool_call>call:": kGemma4; "<｜tool▁call▁begin｜>": kDeepSeek; "<|tool|>" and
/// "<|/tool|>": kPhi4Mini), else by `family` ("chatml"
/// kHermes, "llama3" kLlama3Json, "mistral" kMistral); kNone when neither says.
ToolCallFormat tool_call_format_of(std::string_view template_source, std::string_view family);
/// "hermes", "qwen3_xml", "llama3_json", "mistral", "openai", "gemma4", "deepseek_v3",
/// "phi4_mini_json", "none" (vLLM's --tool-call-parser
/// names).
const char* tool_call_format_name(ToolCallFormat f);

/// One call as OpenAI returns it.
struct ToolCall {
  std::string id;         ///< "call_" and 24 random letters and digits
  std::string name;       ///< the function's name
  std::string arguments;  ///< a JSON object, as text
};

/// A new call id: "call_" and 24 random letters and digits.
std::string new_tool_call_id();

/// The length of the JSON object or array that starts at s[0] ('{' or '['), strings and their
/// escapes skipped; npos when it does not end in `s`.
std::size_t json_value_end(std::string_view s);

/// A reply split into its text and its calls.
struct ParsedReply {
  std::string content;  ///< the text outside the calls (trimmed when there are calls)
  std::vector<ToolCall> calls;
};

/// Splits a whole reply. `tools`: the request's tools (the parameters' schemas type kQwenXml's
/// values: a string parameter stays text, others are read as JSON when they parse). A call that
/// does not parse (unclosed tag, invalid JSON, no name) stays in `content`, as vLLM keeps it.
ParsedReply parse_tool_calls(ToolCallFormat format, std::string_view text, const nlohmann::json& tools);

/// One streamed call's delta, as OpenAI streams them: id and name once (its first delta), then
/// the arguments in pieces.
struct ToolCallDelta {
  int index = 0;
  std::string id, name;  ///< set in a call's first delta only
  std::string arguments;
};

/// The same, for a reply that streams: feed() each piece of text as it comes and take the
/// content that can be shown and the calls completed; finish() at the end. Text that may be the
/// start of a call (a partial "<tool_call>", a reply that opens with '{' or '[') is held back
/// until it is known, so a tag is never shown as content.
class ToolCallStream {
 public:
  ToolCallStream(ToolCallFormat format, nlohmann::json tools);
  /// New text; returns what becomes content now, and adds finished calls to `calls`.
  std::string feed(std::string_view text, std::vector<ToolCall>& calls);
  /// The end of the reply: what was held back, as content or calls.
  std::string finish(std::vector<ToolCall>& calls);
  /// The same as OpenAI streams calls: a call in the JSON tag form (kHermes, kHarmony) that opens
  /// with its name, as models write it ({"name": ..., "arguments": {...}}), is announced as soon
  /// as its name is read and its arguments follow in pieces as they come; other calls come whole
  /// in one delta. Do not mix with the overloads above on one stream.
  std::string feed(std::string_view text, std::vector<ToolCallDelta>& deltas);
  std::string finish(std::vector<ToolCallDelta>& deltas);
  /// Calls returned so far.
  int num_calls() const { return num_calls_; }

 private:
  ToolCallFormat format_;
  nlohmann::json tools_;
  std::string held_;      ///< text not yet returned
  bool in_call_ = false;  ///< held_ starts with an open call tag
  bool whole_ = false;    ///< kLlama3Json / kMistral: the reply is held whole (it began as a call)
  bool decided_ = false;  ///< kLlama3Json / kMistral: whether it did is known
  int num_calls_ = 0;
  bool streaming_ = false;      ///< in a call whose arguments stream (its name was sent)
  std::size_t args_start_ = 0;  ///< where its arguments object starts in held_
  std::size_t args_sent_ = 0;   ///< how far they were sent
  void add_whole(std::vector<ToolCall>& calls, std::vector<ToolCallDelta>& deltas);
};

}  // namespace pagedchat::openai
