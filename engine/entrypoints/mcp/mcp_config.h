// MCP (Model Context Protocol, modelcontextprotocol.io, spec 2025-06-18) servers as users configure
// them: the `mcpServers` JSON that Claude Desktop, Cursor, LM Studio and VS Code read,
//   {"mcpServers": {"NAME": {"command": "npx", "args": [...], "env": {...}}       (stdio)
//                   "NAME": {"url": "http://...", "headers": {...}}}}            (Streamable HTTP)
// with an optional "type" ("stdio", "http", "streamable-http"; "sse" is the old transport and is
// refused) and "disabled": true.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pagedchat::mcp {

/// A configuration or protocol failure, naming the server where there is one.
class McpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One server: a command started with its stdio as the transport, or a Streamable HTTP URL.
struct ServerConfig {
  std::string name;
  std::string command;                         ///< stdio: the program (looked up on PATH)
  std::vector<std::string> args;               ///< stdio: its arguments
  std::map<std::string, std::string> env;      ///< stdio: variables added to the app's environment
  std::string cwd;                             ///< stdio: working folder ("" = the caller's)
  std::string url;                             ///< HTTP: the MCP endpoint
  std::map<std::string, std::string> headers;  ///< HTTP: sent with every request (Authorization, ...)
  bool enabled = true;                         ///< false: "disabled": true in the file
  bool http() const { return !url.empty(); }
};

/// Reads an `mcpServers` document (or its inner object alone). Throws McpError naming the
/// server and field for a malformed entry (no command or url, both, a non-string argument, an
/// "sse" type, a URL that is not http(s)).
std::vector<ServerConfig> parse_servers_config(std::string_view json_text);

/// The same document written back (`mcpServers`), in name order.
std::string servers_config_json(const std::vector<ServerConfig>& servers);

}  // namespace pagedchat::mcp
