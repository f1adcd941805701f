// A chat reply's text as OpenAI's message fields: reasoning (`reasoning_content`), content and
// `tool_calls`, whole (a chat.completion) or in deltas (chat.completion.chunk). Calls come from
// the model's own format when tool_choice is "auto" (tool_calls.h), or from the JSON that
// constrained decoding forced when it is "required" or a named function (as vLLM does it: the
// named function's arguments object; for "required" an array of {"name", "parameters"}).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/openai/reasoning_parser.h"
#include "engine/entrypoints/openai/tool_calls.h"

namespace pagedchat::openai {

/// How a call's tool_choice shapes its reply.
struct ChatReplyOptions {
  bool reasoning = false;         ///< split a leading "<think>…</think>" into reasoning_content
  bool reasoning_opened = false;  ///< the prompt opened the block (DeepSeek-R1)
  /// tool_choice "auto": the model's call format (kNone: no calls are parsed).
  ToolCallFormat tool_format = ToolCallFormat::kNone;
  nlohmann::json tools = nlohmann::json::array();
  bool parallel_tool_calls = true;  ///< false: only the first call is returned
  /// tool_choice "required" ("required") or a named function ("function"); "" otherwise.
  std::string forced;
  std::string forced_name;  ///< the named function
};

/// A whole reply's fields.
struct ChatReply {
  std::optional<std::string> reasoning;  ///< set when the reply reasoned
  std::string content;                   ///< "" with calls and no text: content is null
  std::vector<ToolCall> calls;
};

/// Splits a whole reply.
ChatReply parse_chat_reply(const ChatReplyOptions& options, std::string_view text);

/// What one streamed piece adds.
struct ChatReplyDelta {
  std::string reasoning, content;
  std::vector<ToolCallDelta> tool_calls;
  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

/// The same for a reply that streams: feed() each piece, finish() at the end.
class ChatReplyStream {
 public:
  explicit ChatReplyStream(ChatReplyOptions options);
  ~ChatReplyStream();
  ChatReplyDelta feed(std::string_view text);
  ChatReplyDelta finish();
  /// Calls begun so far.
  int num_calls() const { return num_calls_; }

 private:
  void content(std::string_view text, ChatReplyDelta& d, bool last);
  void add_calls(std::vector<ToolCall>& calls, ChatReplyDelta& d);
  ChatReplyOptions o_;
  ReasoningStream reasoning_;
  std::unique_ptr<ToolCallStream> tools_;  // tool_choice "auto"
  std::string forced_text_;                // tool_choice "required": the array so far
  std::size_t forced_pos_ = 0;             // where the next item of the array starts
  std::string forced_id_;                  // the named function's call id, once begun
  std::string blank_;                      // whitespace-only content held back
  int num_calls_ = 0;
};

/// The whole items of a "required" array `text` from `pos` on (the array may be cut short), as
/// calls; `pos` moves past them.
std::vector<ToolCall> complete_forced_calls(std::string_view text, std::size_t& pos);

/// Parses the "required" array `[{"name", "parameters"}, ...]` into calls (nullopt when it is not
/// one).
std::optional<std::vector<ToolCall>> forced_calls(std::string_view text);

/// The schema a call's arguments must meet: `function`'s "parameters" with "type": "object" when
/// it names no type; an object with no members when it has none (OpenAI's no-argument tool).
nlohmann::ordered_json tool_parameters_schema(const nlohmann::ordered_json& function);

/// The tools of `tools` (an OpenAI tools array) whose parameters constrained decoding can enforce
/// (an object schema structured::json_schema_grammar() compiles), in order; each one left out is
/// added to `refused` as its name and why, when given.
nlohmann::ordered_json enforceable_tools(const nlohmann::ordered_json& tools,
                                         std::vector<std::pair<std::string, std::string>>* refused = nullptr);

/// The JSON Schema that tool_choice `forced` ("required" or "function" naming `name`) puts on the
/// reply, from `tools` (their parameters in the client's key order). Throws std::invalid_argument
/// for a name that is none of the tools.
nlohmann::ordered_json tool_choice_schema(const nlohmann::ordered_json& tools, const std::string& forced,
                                          const std::string& name, bool parallel_tool_calls);

}  // namespace pagedchat::openai
