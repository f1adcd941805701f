// ApiServer: the OpenAI-compatible HTTP server (vLLM's vllm/entrypoints/openai/api_server.py) on
// GNU libmicrohttpd (Debian's libmicrohttpd-dev; it parses HTTP/1.1 with pipelining, chunked
// bodies and half-closed connections, and runs a thread per connection, so a slow client holds
// only its own). Routes:
//   GET /health, GET /metrics, GET /v1/models, POST /v1/completions, POST /v1/chat/completions
// Until set_serving() is called (the model is still loading) every route but /health answers 503.
// Errors are OpenAI's JSON error object with the status (400, 401, 403, 404, 405, 408, 413, 415,
// 421, 500, 503).
//
// What a client may send is bounded (docs/security.md): the body (max_body_bytes, counted while it
// is read, however it is transferred; compressed bodies are refused), the nesting of its JSON
// (max_json_depth, checked before the JSON is parsed), the time to send a whole request
// (request_timeout_s, from the connection's start or the end of the previous response), the
// connections at once (max_connections). On a loopback address the Host header must name it
// (DNS rebinding); a browser's Origin must be in allowed_origins; a POST must be
// application/json (no form a web page can send without a preflight). A client that closes its
// connection while its answer is generated has its requests aborted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/entrypoints/openai/protocol.h"

namespace pagedchat {
class AsyncEngineClient;
}

namespace pagedchat::openai {

class OpenAIServing;
class ServerMetrics;

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8000;                           ///< 0 = any free port (bind() returns it)
  std::string api_key;                       ///< when set, /v1/* needs "Authorization: Bearer <api_key>" (else 401)
  std::size_t max_body_bytes = 32u << 20;    ///< larger request bodies get 413, as soon as they are larger
  int max_json_depth = 64;                   ///< deeper nesting of arrays and objects in a body: 400
  int request_timeout_s = 30;                ///< a request not received whole in this time: 408, connection closed
  int max_connections = 1000;                ///< connections at once; more are refused at accept
  std::vector<std::string> allowed_origins;  ///< browser origins allowed (CORS); "*" = any; empty = none
  RequestLimits limits;                      ///< what one call may ask for (stop strings, sequences)
};

/// True for a loopback host name or address (localhost, 127.x.y.z, ::1).
bool is_loopback_host(const std::string& host);

/// Time-constant comparison (for API keys): true when `a` and `b` are equal.
bool constant_time_equal(const std::string& a, const std::string& b);

class ApiServer {
 public:
  explicit ApiServer(ServerConfig config);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  /// Binds the listening socket and starts answering (503 until set_serving()); returns the port.
  /// Throws std::runtime_error when the address cannot be bound (in use, not local).
  int bind();
  /// Blocks until stop() (call after bind()). Returns at once when stop() came first.
  void listen();
  /// Stops: the requests of open connections are aborted first (their answers end at once), then
  /// the connections close and listen() returns. Thread-safe; waits for the connections' threads.
  void stop();
  /// The engine is ready: routes stop answering 503. The objects must outlive the server (or
  /// the next set_serving(nullptr, ...), which waits for the calls using them).
  void set_serving(AsyncEngineClient* llm, OpenAIServing* serving, ServerMetrics* metrics);

  /// Connections closed because their request was not received in time (for tests and logs).
  long long timed_out_connections() const { return timed_out_; }

  struct Impl;

 private:
  ServerConfig config_;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
  std::atomic<long long> timed_out_{0};
};

}  // namespace pagedchat::openai
