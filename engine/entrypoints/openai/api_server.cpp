#include "engine/entrypoints/openai/api_server.h"

#include <httplib.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "engine/async_engine_client.h"
#include "engine/entrypoints/openai/metrics.h"
#include "engine/entrypoints/openai/serving.h"

namespace pagedchat::openai {

namespace {

using json = nlohmann::json;

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status();
  res.set_content(e.to_json().dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// Streams `g` as server-sent events ("data: <json>\n\n" ... "data: [DONE]\n\n"). A client that goes
// away makes the next write fail: the call's requests are aborted and their blocks freed.
void respond_stream(OpenAIServing& serving, Generation g, httplib::Response& res) {
  auto gen = std::make_shared<Generation>(std::move(g));
  auto finished = std::make_shared<bool>(false);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [&serving, gen, finished](std::size_t, httplib::DataSink& sink) {
        const bool ok = serving.stream(*gen, [&](const std::string& data) {
          const std::string event = "data: " + data + "\n\n";
          return sink.write(event.data(), event.size());
        });
        *finished = true;
        if (ok) sink.done();
        return ok;
      },
      [&serving, gen, finished](bool success) {
        if (!success || !*finished) serving.abort(*gen);
      });
}

}  // namespace

// Debian's compiled libcpp-httplib (0.11) listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG,
// fixed when the library was built). A burst of more simultaneous connections than that overflows
// the accept queue; Linux drops the extra SYNs, so those clients connect only after SYN
// retransmits (1, 2, 4 ... s; after about two minutes they fail). Seen with 100 concurrent clients
// (test_server). listen() again on the bound socket sets the new backlog (POSIX allows it on a
// listening socket; Linux applies it); the socket is the one listening on `port` (no
// SO_REUSEPORT, so no other socket shares it).
void raise_listen_backlog(int port) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_storage addr{};
    socklen_t addr_len = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0) continue;
    int bound = -1;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    if (bound == port) ::listen(fd, SOMAXCONN);
  }
}

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

ApiServer::ApiServer(ServerConfig config) : config_(std::move(config)), server_(std::make_unique<httplib::Server>()) {
  const int threads = config_.num_http_threads > 0 ? config_.num_http_threads : 144;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  server_->set_payload_max_length(config_.max_body_bytes);
  // SO_REUSEADDR (a restart may bind while old connections linger) but not httplib's default
  // SO_REUSEPORT, with which a second server on the same port would bind too and share the clients.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->set_read_timeout(10, 0);
  server_->set_write_timeout(30, 0);
  routes();
}

ApiServer::~ApiServer() { stop(); }

int ApiServer::bind() {
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is a failed write, not a dead process
  if (config_.port == 0) {
    const int port = server_->bind_to_any_port(config_.host);
    if (port <= 0) throw std::runtime_error("cannot listen on " + config_.host + " (any port)");
    raise_listen_backlog(port);
    return port;
  }
  if (!server_->bind_to_port(config_.host, config_.port))
    throw std::runtime_error("cannot listen on " + config_.host + ":" + std::to_string(config_.port) +
                             " (in use, or not an address of this machine)");
  raise_listen_backlog(config_.port);
  return config_.port;
}

// httplib's stop() is lost when it comes before listen_after_bind() has started its loop, so
// stop() repeats it until listen() has returned; listen() announces itself before it checks
// stopping_, stop() sets stopping_ before it checks listening_: one of them sees the other.
void ApiServer::listen() {
  listening_ = true;
  if (!stopping_) server_->listen_after_bind();
  listening_ = false;
}

void ApiServer::stop() {
  stopping_ = true;
  while (listening_) {
    server_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ApiServer::set_serving(AsyncEngineClient* llm, OpenAIServing* serving, ServerMetrics* metrics) {
  std::lock_guard lk(mu_);
  llm_ = llm;
  serving_ = serving;
  metrics_ = metrics;
  ready_ = llm && serving && metrics;
}

void ApiServer::routes() {
  httplib::Server& s = *server_;
  // API key: every /v1 route (vLLM exempts /health and /metrics too).
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (config_.api_key.empty() || req.path.rfind("/v1", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
    if (req.get_header_value("Authorization") == "Bearer " + config_.api_key)
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, ApiError(401, "Unauthorized: a valid API key is needed (Authorization: Bearer <key>)"));
    return httplib::Server::HandlerResponse::Handled;
  });
  s.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message = "Not found: " + req.method + " " + req.path;
    if (res.status == 413)
      message = "The request body is too large";
    else if (res.status == 405)
      message = "Method not allowed: " + req.method + " " + req.path;
    else if (res.status == 400)
      message = "Bad request: the request (or its body) could not be read";
    else if (res.status != 404)
      message = "HTTP error " + std::to_string(res.status);
    send_error(res, ApiError(res.status, message));
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const ApiError& e) {
      send_error(res, e);
    } catch (const std::exception& e) {
      send_error(res, ApiError(500, std::string("internal error: ") + e.what()));
    } catch (...) {
      send_error(res, ApiError(500, "internal error"));
    }
  });

  auto ready = [this](httplib::Response& res) {
    if (ready_) return true;
    send_error(res, ApiError(503, "The model is still loading"));
    return false;
  };
  s.Get("/health", [ready](const httplib::Request&, httplib::Response& res) {
    if (ready(res)) res.set_content("", "text/plain");
  });
  s.Get("/metrics", [this, ready](const httplib::Request&, httplib::Response& res) {
    if (!ready(res)) return;
    res.set_content(metrics_->render(llm_->stats()), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/v1/models", [this, ready](const httplib::Request&, httplib::Response& res) {
    if (ready(res)) res.set_content(serving_->models().dump(), "application/json");
  });
  // httplib 0.11 applies the payload limit to Content-Length bodies only; a chunked one is checked here.
  auto too_big = [this](const httplib::Request& req, httplib::Response& res) {
    if (req.body.size() <= config_.max_body_bytes) return false;
    send_error(res, ApiError(413, "The request body is too large (" + std::to_string(req.body.size()) +
                                      " bytes; at most " + std::to_string(config_.max_body_bytes) + ")"));
    return true;
  };
  // Both POST routes: start the call (errors before any byte is sent), then stream or collect it.
  auto post = [this, ready, too_big](const char* path, auto start) {
    server_->Post(path, [this, ready, too_big, start](const httplib::Request& req, httplib::Response& res) {
      if (!ready(res) || too_big(req, res)) return;
      try {
        Generation g = start(*serving_, parse_body(req.body));
        if (g.stream) return respond_stream(*serving_, std::move(g), res);
        res.set_content(serving_->collect(g).dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
      } catch (const ApiError& e) {
        send_error(res, e);
      }
    });
  };
  post("/v1/completions",
       [](OpenAIServing& sv, const json& body) { return sv.start_completion(parse_completion_request(body)); });
  post("/v1/chat/completions",
       [](OpenAIServing& sv, const json& body) { return sv.start_chat(parse_chat_completion_request(body)); });
  // The other method on a path that exists: 405 with the Allow header (RFC 9110, 15.5.6), not 404.
  auto not_allowed = [](const char* allow) {
    return [allow](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allow);
      send_error(res, ApiError(405, "Method not allowed: " + req.method + " " + req.path + " (this path takes " +
                                        allow + ")"));
    };
  };
  auto other_methods = [&s](const char* path, const httplib::Server::Handler& h) {
    s.Put(path, h);
    s.Patch(path, h);
    s.Delete(path, h);
    s.Options(path, h);
  };
  for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
    s.Get(path, not_allowed("POST"));
    other_methods(path, not_allowed("POST"));
  }
  for (const char* path : {"/health", "/metrics", "/v1/models"}) {
    s.Post(path, not_allowed("GET, HEAD"));
    other_methods(path, not_allowed("GET, HEAD"));
  }
}

}  // namespace pagedchat::openai
