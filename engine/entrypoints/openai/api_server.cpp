#include "engine/entrypoints/openai/api_server.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <shared_mutex>
#include <stdexcept>
#include <thread>

#include "engine/async_engine_client.h"
#include "engine/entrypoints/openai/metrics.h"
#include "engine/entrypoints/openai/serving.h"

namespace pagedchat::openai {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  // Every byte of the longer one is looked at, whatever the first difference.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

namespace server_detail {
enum class Route { kHealth, kMetrics, kModels, kCompletions, kChat, kNone };
}  // namespace server_detail
using server_detail::Route;

namespace {

Route route_of(const std::string& path) {
  if (path == "/health") return Route::kHealth;
  if (path == "/metrics") return Route::kMetrics;
  if (path == "/v1/models") return Route::kModels;
  if (path == "/v1/completions") return Route::kCompletions;
  if (path == "/v1/chat/completions") return Route::kChat;
  return Route::kNone;
}
bool is_post_route(Route r) { return r == Route::kCompletions || r == Route::kChat; }

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

std::string header(MHD_Connection* c, const char* name) {
  const char* v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
  return v ? v : "";
}

// The peer has closed its sending side (FIN: closed, or half-closed): poll's POLLRDHUP.
bool peer_closed(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace

namespace server_detail {

// One connection (MHD_OPTION_NOTIFY_CONNECTION's socket context).
struct Connection {
  int fd = -1;
  Clock::time_point since;  // receiving: since when the current request has been awaited
  bool receiving = true;    // a request is being received: the deadline applies
};

// One request (the access handler's con_cls).
struct Call {
  Route route = Route::kNone;
  std::string method;
  std::string body;
  std::optional<ApiError> error;  // found before the body was read; answered once it has been
  std::map<std::string, std::string> extra_headers;
  std::shared_ptr<Connection> connection;
};

}  // namespace server_detail

using server_detail::Call;
using server_detail::Connection;

// ---------------------------------------------------------------------------------------------
struct ApiServer::Impl {
  ApiServer& owner;
  ServerConfig config;
  MHD_Daemon* daemon = nullptr;
  int listen_fd = -1;
  int port = 0;

  std::mutex conn_mu;
  std::map<MHD_Connection*, std::shared_ptr<Connection>> connections;
  std::thread sweeper;
  std::condition_variable sweeper_cv;
  bool stopping = false;  // guarded by conn_mu
  std::atomic<bool> stop_flag{false};

  std::shared_mutex serving_mu;  // shared: a call uses the objects below; unique: set_serving()
  AsyncEngineClient* llm = nullptr;
  OpenAIServing* serving = nullptr;
  ServerMetrics* metrics = nullptr;
  std::mutex calls_mu;
  std::set<const Generation*> generations;  // in flight, for stop()

  Impl(ApiServer& o, ServerConfig c) : owner(o), config(std::move(c)) {}

  // ---- responses ----
  static MHD_Result queue(MHD_Connection* c, int status, const std::string& body, const char* type,
                          const std::map<std::string, std::string>& headers = {}) {
    MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                                      MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    for (const auto& [k, v] : headers) MHD_add_response_header(r, k.c_str(), v.c_str());
    const MHD_Result ret = MHD_queue_response(c, static_cast<unsigned>(status), r);
    MHD_destroy_response(r);
    return ret;
  }
  static MHD_Result queue_error(MHD_Connection* c, const ApiError& e,
                                const std::map<std::string, std::string>& h = {}) {
    return queue(c, e.status(), e.to_json().dump(-1, ' ', false, json::error_handler_t::replace), "application/json",
                 h);
  }

  // ---- checks made once the headers are in ----
  // The Host header of a request to a loopback address must name a loopback host with this
  // server's port (a web page's DNS rebinding sends its own host name).
  // A browser always sends the Host of the page's URL, with its port unless it is 80: a page of
  // another site re-pointed at 127.0.0.1 (DNS rebinding) sends its own name. So a loopback server
  // answers only its loopback names: localhost, [::1], or an IPv4 literal in 127.0.0.0/8 (parsed:
  // "127.evil.example" is a name), with this port or none. A request without a Host (HTTP/1.0)
  // cannot come from a browser.
  bool host_allowed(const std::string& host_header) const {
    if (!is_loopback_host(config.host) || host_header.empty()) return true;  // else the API key guards it
    std::string h = lower(host_header);
    const std::string suffix = ":" + std::to_string(port);
    if (h.size() > suffix.size() && h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0)
      h.resize(h.size() - suffix.size());
    if (h == "localhost" || h == "[::1]") return true;
    in_addr a{};
    return inet_pton(AF_INET, h.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
  }
  bool origin_allowed(const std::string& origin) const {
    for (const std::string& o : config.allowed_origins)
      if (o == "*" || o == origin) return true;
    return false;
  }

  std::optional<ApiError> check_headers(MHD_Connection* c, Call& call, const std::string& url) const {
    const std::string host = header(c, "Host");
    if (!host_allowed(host))
      return ApiError(421,
                      "Misdirected request: this server answers only for localhost, 127.0.0.1 and [::1] "
                      "(with or without :" +
                          std::to_string(port) + "), not Host '" + host.substr(0, 100) + "'");
    const std::string origin = header(c, "Origin");
    if (!origin.empty()) {
      if (!origin_allowed(origin))
        return ApiError(403, "Forbidden: requests from the web page '" + origin.substr(0, 100) +
                                 "' are not allowed (start the server with --allowed-origins to allow it)");
      call.extra_headers["Access-Control-Allow-Origin"] = origin;
      call.extra_headers["Vary"] = "Origin";
    }
    if (call.route == Route::kNone) return ApiError(404, "Not found: " + call.method + " " + url.substr(0, 200));
    const bool post = is_post_route(call.route);
    const bool get = call.method == "GET" || call.method == "HEAD";
    if (call.method == "OPTIONS" && !origin.empty()) return std::nullopt;  // a CORS preflight, allowed above
    if (post ? call.method != "POST" : !get) {
      call.extra_headers["Allow"] = post ? "POST" : "GET, HEAD";
      return ApiError(405,
                      "Method not allowed: " + call.method + " (this path takes " + call.extra_headers["Allow"] + ")");
    }
    if (!config.api_key.empty() && call.route != Route::kHealth && call.route != Route::kMetrics) {
      const std::string auth = header(c, "Authorization");
      if (!constant_time_equal(auth, "Bearer " + config.api_key))
        return ApiError(401, "Unauthorized: a valid API key is needed (Authorization: Bearer <key>)");
    }
    if (!post) return std::nullopt;
    const std::string type = lower(header(c, "Content-Type"));
    const std::string media = type.substr(0, type.find(';'));
    if (media.find_first_not_of(" \t") == std::string::npos ||
        media.substr(0, media.find_last_not_of(" \t") + 1) != "application/json")
      return ApiError(415, "Unsupported media type: the body must be JSON, sent with 'Content-Type: application/json'" +
                               std::string(type.empty() ? "" : " (not '" + type.substr(0, 60) + "')"));
    const std::string encoding = lower(header(c, "Content-Encoding"));
    if (!encoding.empty() && encoding != "identity")
      return ApiError(415, "Unsupported media type: request bodies are read uncompressed (Content-Encoding '" +
                               encoding.substr(0, 30) + "')");
    const std::string length = header(c, "Content-Length");
    if (!length.empty()) {
      errno = 0;
      char* end = nullptr;
      const unsigned long long n = std::strtoull(length.c_str(), &end, 10);
      if (errno == 0 && end && *end == '\0' && n > config.max_body_bytes) return too_large(n);
    }
    return std::nullopt;
  }
  ApiError too_large(unsigned long long n) const {
    return ApiError(413, "The request body is too large" + (n ? " (" + std::to_string(n) + " bytes)" : std::string()) +
                             ": this server takes at most " + std::to_string(config.max_body_bytes) +
                             " bytes (--max-body-bytes)");
  }

  // ---- MHD callbacks ----
  static void on_connection(void* cls, MHD_Connection* c, void** socket_context, MHD_ConnectionNotificationCode code) {
    Impl& s = *static_cast<Impl*>(cls);
    std::lock_guard lk(s.conn_mu);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      auto conn = std::make_shared<Connection>();
      if (const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))
        conn->fd = info->connect_fd;
      conn->since = Clock::now();
      s.connections[c] = conn;
      *socket_context = conn.get();
    } else {
      s.connections.erase(c);
      *socket_context = nullptr;
    }
  }

  static void on_completed(void* cls, MHD_Connection* c, void** con_cls, MHD_RequestTerminationCode) {
    Impl& s = *static_cast<Impl*>(cls);
    delete static_cast<Call*>(*con_cls);
    *con_cls = nullptr;
    std::lock_guard lk(s.conn_mu);
    if (auto it = s.connections.find(c); it != s.connections.end()) {  // the next request's clock starts
      it->second->receiving = true;
      it->second->since = Clock::now();
    }
  }

  static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                               const char* upload, size_t* upload_size, void** con_cls) {
    Impl& s = *static_cast<Impl*>(cls);
    if (!*con_cls) {  // the headers are in
      auto* call = new Call;
      *con_cls = call;
      call->method = method;
      call->route = route_of(url);
      {
        std::lock_guard lk(s.conn_mu);
        if (auto it = s.connections.find(c); it != s.connections.end()) call->connection = it->second;
      }
      call->error = s.check_headers(c, *call, url);
      // Refused before the body: answered now, the body unread (MHD then closes the connection).
      if (call->error && (call->error->status() == 413 || call->error->status() == 421 ||
                          call->error->status() == 403 || call->error->status() == 415)) {
        const MHD_Result r = queue_error(c, *call->error, call->extra_headers);
        call->error.reset();
        call->method = "(answered)";
        return r;
      }
      return MHD_YES;
    }
    Call& call = *static_cast<Call*>(*con_cls);
    if (call.method == "(answered)") {
      *upload_size = 0;
      return MHD_YES;
    }
    if (*upload_size) {  // a piece of the body (chunked bodies decoded by MHD): counted as it comes
      // Past the limit (a chunked body declares no length) the body is dropped and the rest read
      // and discarded, never held: the 413 comes when the body ends, so that the client reads it
      // (answering before would reset the connection under its unread bytes, as nginx's lingering
      // close explains). A body that never ends is cut by the request deadline.
      if (!call.error) {
        if (call.body.size() + *upload_size > s.config.max_body_bytes) {
          call.error = s.too_large(0);
          std::string().swap(call.body);
        } else {
          call.body.append(upload, *upload_size);
        }
      }
      *upload_size = 0;
      return MHD_YES;
    }
    // The whole request is in: no deadline while it is answered.
    bool half_closed = false;
    if (call.connection) {
      std::lock_guard lk(s.conn_mu);
      call.connection->receiving = false;
      half_closed = peer_closed(call.connection->fd);
    }
    if (call.error) {
      if (call.error->status() == 413) malloc_trim(0);  // the body read before the limit is freed
      return queue_error(c, *call.error, call.extra_headers);
    }
    return s.answer(c, call, half_closed);
  }

  // ---- answers ----
  MHD_Result answer(MHD_Connection* c, Call& call, bool half_closed) {
    if (call.method == "OPTIONS") {  // CORS preflight of an allowed origin
      auto h = call.extra_headers;
      h["Access-Control-Allow-Methods"] = is_post_route(call.route) ? "POST, OPTIONS" : "GET, HEAD, OPTIONS";
      // The headers the page's client asked for (the openai npm client adds its x-stainless-*
      // ones): the origin is allowed, so what it sends is its own business; at least the two the
      // API needs.
      const std::string asked = header(c, "Access-Control-Request-Headers");
      h["Access-Control-Allow-Headers"] = asked.empty() ? "Authorization, Content-Type" : asked.substr(0, 2000);
      h["Access-Control-Max-Age"] = "600";
      return queue(c, 204, "", "text/plain", h);
    }
    std::shared_lock lk(serving_mu);
    const bool ready = llm && serving && metrics;
    if (!ready) return queue_error(c, ApiError(503, "The model is still loading"), call.extra_headers);
    switch (call.route) {
      case Route::kHealth:
        return queue(c, 200, "", "text/plain", call.extra_headers);
      case Route::kMetrics:
        return queue(c, 200, metrics->render(llm->stats()), "text/plain; version=0.0.4; charset=utf-8",
                     call.extra_headers);
      case Route::kModels:
        return queue(c, 200, serving->models().dump(), "application/json", call.extra_headers);
      default:
        break;
    }
    const int fd = call.connection ? call.connection->fd : -1;
    // A large body leaves large freed blocks (the body, its JSON, the tokenizer's work): give them
    // back to the system once the call is queued or refused, so a 30 MB prompt does not stay resident.
    struct TrimAfter {
      bool large;
      ~TrimAfter() {
        if (large) malloc_trim(0);
      }
    } trim{call.body.size() >= (1u << 20)};
    try {
      const json body = parse_body(call.body, config.max_json_depth);
      // The raw body too: a JSON Schema's properties keep their order (structured outputs).
      std::optional<ChatCompletionRequest> chat;
      std::optional<CompletionRequest> completion;
      if (call.route == Route::kChat)
        chat = parse_chat_completion_request(body, config.limits, &call.body);
      else
        completion = parse_completion_request(body, config.limits, &call.body);
      std::string().swap(call.body);
      auto g = std::make_shared<Generation>(chat ? serving->start_chat(*chat) : serving->start_completion(*completion));
      track(g.get(), true);
      // A client gone (its connection closed while the answer is made) stops the generation. A
      // client that closed its sending side right after its request (a half-close) still waits
      // for the answer: it cannot be told from one gone before the answer started.
      auto gone = [this, fd, half_closed] { return stop_flag.load() || (!half_closed && peer_closed(fd)); };
      if (g->stream) return stream(c, call, std::move(g), gone);
      json out;
      try {
        out = serving->collect(*g, gone);
      } catch (...) {
        track(g.get(), false);
        throw;
      }
      track(g.get(), false);
      return queue(c, 200, out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json",
                   call.extra_headers);
    } catch (const ApiError& e) {
      return queue_error(c, e, call.extra_headers);
    } catch (const std::exception& e) {
      return queue_error(c, ApiError(500, std::string("internal error: ") + e.what()), call.extra_headers);
    }
  }

  void track(const Generation* g, bool in) {
    std::lock_guard lk(calls_mu);
    if (in)
      generations.insert(g);
    else
      generations.erase(g);
  }

  // Server-sent events ("data: <json>\n\n" ... "data: [DONE]\n\n"), pulled by MHD as it writes.
  struct Stream {
    Impl* server;
    std::shared_ptr<Generation> g;
    std::unique_ptr<EventSource> events;
    std::function<bool()> gone;
    std::string pending;
    std::size_t offset = 0;
    bool ended = false;
  };
  MHD_Result stream(MHD_Connection* c, Call& call, std::shared_ptr<Generation> g, std::function<bool()> gone) {
    auto* st = new Stream{this, g, std::make_unique<EventSource>(*serving, *g), std::move(gone), {}, 0, false};
    MHD_Response* r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, &read_stream, st, &free_stream);
    if (!r) {
      free_stream(st);
      return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    for (const auto& [k, v] : call.extra_headers) MHD_add_response_header(r, k.c_str(), v.c_str());
    const MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
  }
  static ssize_t read_stream(void* cls, uint64_t, char* buf, size_t max) {
    auto& st = *static_cast<Stream*>(cls);
    while (st.offset >= st.pending.size()) {
      if (st.ended) return MHD_CONTENT_READER_END_OF_STREAM;
      if (st.gone()) {
        st.events->abort();
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      std::optional<std::string> data = st.events->next(std::chrono::milliseconds(100));
      if (!data) {
        if (st.events->finished()) st.ended = true;
        continue;
      }
      st.pending = "data: " + *data + "\n\n";
      st.offset = 0;
      if (*data == "[DONE]") st.ended = true;
    }
    const std::size_t n = std::min(max, st.pending.size() - st.offset);
    std::memcpy(buf, st.pending.data() + st.offset, n);
    st.offset += n;
    return static_cast<ssize_t>(n);
  }
  static void free_stream(void* cls) {
    auto* st = static_cast<Stream*>(cls);
    if (!st->ended) st->events->abort();  // the client went away (or the server stops)
    st->server->track(st->g.get(), false);
    delete st;
  }

  // ---- deadlines ----
  void sweep() {
    std::unique_lock lk(conn_mu);
    while (!stopping) {
      sweeper_cv.wait_for(lk, std::chrono::milliseconds(200));
      const auto now = Clock::now();
      const auto limit = std::chrono::seconds(config.request_timeout_s);
      for (auto& [c, conn] : connections)
        if (conn->receiving && conn->fd >= 0 && now - conn->since > limit) {
          ::shutdown(conn->fd, SHUT_RDWR);  // its thread sees the end and closes it
          conn->receiving = false;
          ++owner.timed_out_;
        }
    }
  }
};

// ---------------------------------------------------------------------------------------------
ApiServer::ApiServer(ServerConfig config) : config_(std::move(config)) {
  if (config_.max_body_bytes == 0) throw std::invalid_argument("max_body_bytes must be positive");
  if (config_.max_json_depth < 2) throw std::invalid_argument("max_json_depth must be at least 2");
  if (config_.request_timeout_s < 1) throw std::invalid_argument("request_timeout_s must be at least 1");
  if (config_.max_connections < 1) throw std::invalid_argument("max_connections must be at least 1");
  impl_ = std::make_unique<Impl>(*this, config_);
}

ApiServer::~ApiServer() { stop(); }

int ApiServer::bind() {
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is a failed write, not a dead process
  Impl& s = *impl_;
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  std::string host = config_.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string where = config_.host + ":" + std::to_string(config_.port);
  if (::getaddrinfo(host.c_str(), std::to_string(config_.port).c_str(), &hints, &res) != 0 || !res)
    throw std::runtime_error("cannot listen on " + where + " (not an address of this machine)");
  int fd = -1;
  std::string why;
  for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR (a restart may bind while old connections linger), not SO_REUSEPORT (a second
    // server on the port would bind too and share the clients).
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) throw std::runtime_error("cannot listen on " + where + " (" + (why.empty() ? "no address" : why) + ")");
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  s.port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  s.listen_fd = fd;
  s.daemon = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC, 0, nullptr, nullptr,
      &Impl::on_request, &s, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_CONNECTION, &Impl::on_connection, &s,
      MHD_OPTION_NOTIFY_COMPLETED, &Impl::on_completed, &s, MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned>(config_.max_connections), MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned>(config_.request_timeout_s), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      static_cast<size_t>(64 * 1024), MHD_OPTION_THREAD_STACK_SIZE, static_cast<size_t>(8u << 20), MHD_OPTION_END);
  if (!s.daemon) {
    ::close(fd);
    s.listen_fd = -1;
    throw std::runtime_error("cannot serve on " + where + " (the HTTP server did not start)");
  }
  s.sweeper = std::thread([&s] { s.sweep(); });
  return s.port;
}

void ApiServer::listen() {
  std::unique_lock lk(mu_);
  stopped_cv_.wait(lk, [this] { return stopped_; });
}

void ApiServer::stop() {
  Impl& s = *impl_;
  {
    std::lock_guard lk(mu_);
    if (stopped_ && !s.daemon) return;
    stopped_ = true;
  }
  stopped_cv_.notify_all();
  // The answers in progress end first: their requests are aborted, and for up to 2 s they may
  // still tell their clients so (the engine's "abort" outputs, a stream's [DONE]); then their
  // loops see the flag.
  {
    std::shared_lock serving_lock(s.serving_mu);
    std::lock_guard lk(s.calls_mu);
    if (s.serving)
      for (const Generation* g : s.generations) s.serving->abort(*g);
  }
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lk(s.calls_mu);
      if (s.generations.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  s.stop_flag = true;
  {
    std::lock_guard lk(s.conn_mu);
    s.stopping = true;
    for (auto& [c, conn] : s.connections)
      if (conn->fd >= 0) ::shutdown(conn->fd, SHUT_RDWR);
  }
  s.sweeper_cv.notify_all();
  if (s.sweeper.joinable()) s.sweeper.join();
  if (s.daemon) {
    MHD_stop_daemon(s.daemon);  // joins the connections' threads
    s.daemon = nullptr;
  }
  if (s.listen_fd >= 0) {
    ::close(s.listen_fd);
    s.listen_fd = -1;
  }
}

void ApiServer::set_serving(AsyncEngineClient* llm, OpenAIServing* serving, ServerMetrics* metrics) {
  std::unique_lock lk(impl_->serving_mu);
  impl_->llm = llm;
  impl_->serving = serving;
  impl_->metrics = metrics;
}

}  // namespace pagedchat::openai
