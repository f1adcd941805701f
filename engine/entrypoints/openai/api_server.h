// ApiServer: the OpenAI-compatible HTTP server (vLLM's vllm/entrypoints/openai/api_server.py) on
// cpp-httplib (Debian's libcpp-httplib-dev; chosen over Qt's QHttpServer 6.4, which cannot stream a
// response as it is produced, and so that the CLI needs no Qt event loop). Routes:
//   GET /health, GET /metrics, GET /v1/models, POST /v1/completions, POST /v1/chat/completions
// Until set_serving() is called (the model is still loading) every route but /health answers 503.
// Errors are OpenAI's JSON error object with the status (400, 401, 404, 405, 413, 500, 503).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

namespace httplib {
class Server;
}

namespace pagedchat {
class AsyncEngineClient;
}

namespace pagedchat::openai {

class OpenAIServing;
class ServerMetrics;

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8000;                         ///< 0 = any free port (bind() returns it)
  std::string api_key;                     ///< when set, /v1/* needs "Authorization: Bearer <api_key>" (else 401)
  std::size_t max_body_bytes = 32u << 20;  ///< larger request bodies get 413
  int num_http_threads = 0;                ///< connections served at once (each stream holds one); 0 = 144
};

/// True for a loopback host name or address (localhost, 127.x.y.z, ::1).
bool is_loopback_host(const std::string& host);

class ApiServer {
 public:
  explicit ApiServer(ServerConfig config);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  /// Binds the listening socket; returns the port. Throws std::runtime_error when the address
  /// cannot be bound (in use, not local).
  int bind();
  /// Serves until stop() (blocks; call after bind()). Returns at once when stop() came first.
  void listen();
  /// Stops listening (also when listen() is only about to start); open streams end when their
  /// client's next write fails. Thread-safe.
  void stop();
  /// The engine is ready: routes stop answering 503. The objects must outlive the server.
  void set_serving(AsyncEngineClient* llm, OpenAIServing* serving, ServerMetrics* metrics);

 private:
  void routes();
  ServerConfig config_;
  std::unique_ptr<httplib::Server> server_;
  std::mutex mu_;
  AsyncEngineClient* llm_ = nullptr;
  OpenAIServing* serving_ = nullptr;
  ServerMetrics* metrics_ = nullptr;
  std::atomic<bool> ready_{false};
  std::atomic<bool> listening_{false}, stopping_{false};
};

}  // namespace pagedchat::openai
