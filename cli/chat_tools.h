// Tools in `pagedchat-cli chat`: the MCP servers of an `mcpServers` file (--mcp-config), their
// tools given to the model's chat template, the model's calls read from its reply in its
// template's format, each call asked about on the terminal before it runs (--allow-tools names
// the tools that need no asking), and the results sent back, until the model answers or
// --max-tool-steps calls have run.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/mcp/mcp_client.h"
#include "engine/entrypoints/openai/chat_reply.h"

namespace pagedchat {
class ChatTemplate;
}

namespace pagedchat::cli {

/// The command line's tool settings.
struct ChatToolOptions {
  std::string mcp_config;                ///< the mcpServers file ("" = no tools)
  std::vector<std::string> allow_tools;  ///< tools run without asking ("*" = all)
  int max_tool_steps = 8;                ///< tool calls per user message, at most
  /// "auto" (the model decides), "required" (a call to some tool) or a tool's name (a call to it):
  /// the last two force the first reply to each message by constrained decoding, as the server's
  /// tool_choice does; the replies after the results are "auto".
  std::string tool_choice = "auto";
};

class ChatTools {
 public:
  /// Starts the enabled servers of the file and lists their tools; a server that fails is left
  /// out with a warning on stderr. Throws mcp::McpError when the file cannot be read or parsed,
  /// or tool_choice names no tool there.
  ChatTools(const ChatToolOptions& options, const ChatTemplate& tmpl);
  ~ChatTools();

  /// True when at least one tool is there.
  bool any() const { return !tools_.empty(); }
  /// OpenAI `tools` for the chat template's `tools` variable.
  const nlohmann::json& tools() const { return tools_; }
  int max_steps() const { return max_steps_; }

  /// The JSON Schema text that forces a message's first reply (tool_choice "required" or a name),
  /// or "" for "auto".
  const std::string& forced_schema() const { return forced_schema_; }
  /// The reply split into reasoning, content and calls: the template's format, or (`forced`: the
  /// reply was constrained by forced_schema()) the forced JSON.
  openai::ChatReply parse(const std::string& reply, bool forced = false) const;

  /// Runs one call after asking (or as --allow-tools says); returns the text that goes back to
  /// the model as the tool's message: its result, its error, or that the user denied it. Never
  /// throws: a server's failure is told to the model and on stderr.
  std::string run(const openai::ToolCall& call);

 private:
  bool approve(const openai::ToolCall& call);
  openai::ChatReplyOptions reply_options_, forced_options_;
  std::string forced_schema_;
  std::vector<std::unique_ptr<mcp::Client>> clients_;
  std::vector<mcp::ToolRoute> routes_;
  nlohmann::json tools_ = nlohmann::json::array();
  std::set<std::string> always_;  ///< tools approved for the rest of the session
  bool allow_all_ = false;
  int max_steps_ = 8;
};

}  // namespace pagedchat::cli
