// How an MCP client exchanges JSON-RPC 2.0 messages with a server (MCP spec 2025-06-18,
// "Transports"): over a subprocess's stdin/stdout, one message per line, or over Streamable HTTP
// (each message POSTed; the answer a JSON body or a stream of server-sent events).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/mcp/mcp_config.h"

namespace pagedchat::mcp {

/// One connection to one server. send() and receive() may be called from one thread at a time.
class Transport {
 public:
  virtual ~Transport() = default;
  /// Sends one message. Throws McpError when the server is gone or refuses it (HTTP status).
  virtual void send(const nlohmann::json& message) = 0;
  /// The next message from the server, waiting up to `timeout`; nullopt when none came in time
  /// or the server is gone (alive() says which). A message the server sent that was no JSON-RPC
  /// (garbage on stdout) or too long is skipped and counted in problem().
  virtual std::optional<nlohmann::json> receive(std::chrono::milliseconds timeout) = 0;
  /// False once the server has exited or the connection failed for good.
  virtual bool alive() const = 0;
  /// What went wrong, for messages: the exit status and the last lines of stderr, an HTTP error,
  /// skipped output; "" when nothing did.
  virtual std::string problem() const = 0;
  /// Tells the transport the protocol version agreed on (HTTP sends it as MCP-Protocol-Version).
  virtual void set_protocol_version(const std::string&) {}
};

/// Limits every transport applies.
struct TransportLimits {
  std::size_t max_message_bytes = std::size_t(16) << 20;  ///< a longer message is skipped
};

/// Starts `config.command` with `config.args` (PATH lookup), its stdin and stdout the transport,
/// its stderr kept for messages. Throws McpError when it cannot be started. The destructor closes
/// its stdin, then ends it (SIGTERM, SIGKILL after 2 s).
std::unique_ptr<Transport> make_stdio_transport(const ServerConfig& config, TransportLimits limits = {});

/// Streamable HTTP to `config.url` with `config.headers` (libcurl); keeps the Mcp-Session-Id the
/// server gives and ends the session (DELETE) in the destructor.
std::unique_ptr<Transport> make_http_transport(const ServerConfig& config, TransportLimits limits = {});

}  // namespace pagedchat::mcp
