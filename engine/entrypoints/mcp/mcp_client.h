// An MCP client (Model Context Protocol, spec 2025-06-18): connects to one server over a
// Transport, initializes the session, lists its tools (all pages) and calls them, answering the
// server's pings and cancelling a call the user stops (notifications/cancelled). Used by the app's
// panes and by `pagedchat-cli chat --mcp-config`.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/mcp/mcp_config.h"
#include "engine/entrypoints/mcp/transport.h"

namespace pagedchat::mcp {

/// The protocol version this client asks for (it accepts the server's 2025-03-26 or later).
inline constexpr const char* kProtocolVersion = "2025-06-18";

/// One tool a server offers.
struct Tool {
  std::string name;
  std::string description;
  nlohmann::json input_schema;  ///< a JSON Schema object ({"type": "object"} when it gave none)
};

/// What a call returned: content blocks as MCP sends them ("text", "image", "audio",
/// "resource_link", "resource"), isError, and structuredContent when given.
struct ToolResult {
  nlohmann::json content = nlohmann::json::array();
  nlohmann::json structured;  ///< null when none
  bool is_error = false;
  /// The text a model gets: text blocks joined by newlines, other blocks named
  /// ("[image: image/png, 1234 bytes]"), structuredContent as JSON when there is no text.
  std::string text() const;
};

/// Limits on what a server may send and how long it may take.
struct ClientLimits {
  std::chrono::milliseconds startup_timeout{60000};  ///< initialize (npx may install first)
  std::chrono::milliseconds request_timeout{60000};  ///< tools/list, and each tool call
  std::size_t max_message_bytes = std::size_t(16) << 20;
  std::size_t max_tools = 1000;  ///< more tools than this: refused (a model cannot use them anyway)
  int max_pages = 100;           ///< tools/list pages followed
};

class Client {
 public:
  /// Connects (starts the command, or reaches the URL) and initializes. Throws McpError naming
  /// the server and what failed (cannot start, exited, timed out, a JSON-RPC error, a protocol
  /// version older than 2025-03-26).
  explicit Client(ServerConfig config, ClientLimits limits = {});
  /// For tests: over a given transport.
  Client(ServerConfig config, std::unique_ptr<Transport> transport, ClientLimits limits = {});
  ~Client();

  const ServerConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  /// The server's serverInfo ("name version") and the protocol version agreed on.
  const std::string& server_info() const { return server_info_; }
  const std::string& protocol_version() const { return protocol_version_; }
  /// Instructions the server gave at initialize ("" when none).
  const std::string& instructions() const { return instructions_; }

  /// tools/list, every page; a tool without a name is skipped, one without an object schema
  /// gets {"type": "object"} (skipped() says which). Throws McpError as the constructor.
  std::vector<Tool> list_tools();
  /// Tools list_tools() skipped, and why.
  const std::vector<std::string>& skipped() const { return skipped_; }

  /// tools/call. `cancelled` is polled while it waits: true sends notifications/cancelled and
  /// throws McpError("... stopped"). A tool's own failure is a result with is_error (the model is
  /// told); a protocol failure, timeout or a server gone throws McpError naming the server.
  ToolResult call_tool(const std::string& name, const nlohmann::json& arguments,
                       const std::function<bool()>& cancelled = {});

  /// False once the server is gone, or once a request timed out (a server that hung is not asked
  /// again).
  bool alive() const;

 private:
  nlohmann::json request(const std::string& method, nlohmann::json params, std::chrono::milliseconds timeout,
                         const std::function<bool()>& cancelled = {});
  void notify(const std::string& method, nlohmann::json params);
  void initialize();
  [[noreturn]] void fail(const std::string& what) const;

  ServerConfig config_;
  ClientLimits limits_;
  std::unique_ptr<Transport> transport_;
  long long next_id_ = 1;
  std::string server_info_, protocol_version_, instructions_;
  std::vector<std::string> skipped_;
  bool timed_out_ = false;
};

/// Tools of several servers under one name each, as a model sees them: OpenAI `tools` entries
/// ({"type": "function", "function": {"name", "description", "parameters"}}), and which server runs
/// which. A name two servers share is given to the first; the second's is renamed
/// "SERVER__NAME" (characters a function name may not hold become '_').
struct ToolRoute {
  std::string function;  ///< the name the model calls
  std::string server;    ///< the server's name
  std::string tool;      ///< the tool's own name there
};
nlohmann::json openai_tools(const std::vector<std::pair<std::string, std::vector<Tool>>>& servers,
                            std::vector<ToolRoute>& routes);

}  // namespace pagedchat::mcp
