// The Streamable HTTP transport (MCP spec 2025-06-18): every message is a POST to the endpoint
// with "Accept: application/json, text/event-stream"; the server answers a request with a JSON
// body or with server-sent events that carry its messages and end with the response, and a
// notification or response with 202. The session id the server gives at initialize goes back on
// every later request (Mcp-Session-Id), as does the protocol version. Each POST runs on a thread of
// its own (libcurl's easy interface), so that a long tool call streams while a cancellation is
// sent.
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <thread>

#include "engine/entrypoints/mcp/transport.h"

namespace pagedchat::mcp {

namespace {
using json = nlohmann::json;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

class HttpTransport final : public Transport {
 public:
  HttpTransport(const ServerConfig& c, TransportLimits limits) : config_(c), limits_(limits) {
    static std::once_flag curl_init;
    std::call_once(curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  ~HttpTransport() override {
    if (!session_id().empty()) post("", "DELETE");  // ends the session; its answer does not matter
    closing_ = true;
    std::lock_guard lock(threads_mutex_);
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  void send(const json& message) override {
    std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
    // The initialize request's answer carries the session id every later message needs: it is
    // awaited before anything else is sent.
    const bool initialize = message.value("method", "") == "initialize";
    std::lock_guard lock(threads_mutex_);
    threads_.emplace_back([this, body = std::move(body)] { post(body, "POST"); });
    if (initialize) {
      threads_.back().join();
      threads_.pop_back();
    }
  }

  std::optional<json> receive(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [this] { return !queue_.empty(); });
    if (queue_.empty()) return std::nullopt;
    json m = std::move(queue_.front());
    queue_.pop_front();
    return m;
  }

  bool alive() const override { return true; }  // each POST connects anew; failures come as messages

  std::string problem() const override { return {}; }  // each failure is told in its own message

  void set_protocol_version(const std::string& v) override {
    std::lock_guard lock(mutex_);
    protocol_version_ = v;
  }

 private:
  struct Call {
    HttpTransport* self;
    std::string content_type, body, sse_buffer;
    std::size_t bytes = 0;
    bool too_long = false;
  };

  std::string session_id() const {
    std::lock_guard lock(mutex_);
    return session_id_;
  }

  void push(json m) {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(m));
    cv_.notify_all();
  }

  void fail(const std::string& what) { push(json{{"_transport_error", what}}); }

  // One JSON-RPC message or a batch (an array) from the server.
  void take(const std::string& text) {
    if (trim(text).empty()) return;
    json m = json::parse(text, nullptr, false);
    if (m.is_array()) {
      for (json& one : m)
        if (one.is_object()) push(std::move(one));
    } else if (m.is_object()) {
      push(std::move(m));
    } else {
      fail("it sent an answer that is no JSON: " + trim(text).substr(0, 80));
    }
  }

  // Complete events in the SSE buffer: their data lines joined (the spec's event stream format).
  void take_events(Call& c, bool end) {
    std::string& b = c.sse_buffer;
    while (true) {
      std::size_t cut = b.find("\n\n");
      std::size_t skip = 2;
      if (const std::size_t crlf = b.find("\r\n\r\n"); crlf != std::string::npos && crlf < cut) {
        cut = crlf;
        skip = 4;
      }
      if (cut == std::string::npos) {
        if (!end) return;
        cut = b.size();
        skip = 0;
      }
      const std::string event = b.substr(0, cut);
      b.erase(0, std::min(b.size(), cut + skip));
      std::string data;
      std::size_t pos = 0;
      while (pos < event.size()) {
        std::size_t nl = event.find('\n', pos);
        if (nl == std::string::npos) nl = event.size();
        std::string line = event.substr(pos, nl - pos);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("data:", 0) == 0) {
          std::string v = line.substr(5);
          if (!v.empty() && v.front() == ' ') v.erase(0, 1);
          if (!data.empty()) data += "\n";
          data += v;
        }
        pos = nl + 1;
      }
      take(data);
      if (b.empty()) return;
    }
  }

  static size_t on_header(char* p, size_t size, size_t n, void* user) {
    Call& c = *static_cast<Call*>(user);
    const std::string line(p, size * n);
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      const std::string key = lower(trim(line.substr(0, colon))), value = trim(line.substr(colon + 1));
      if (key == "content-type") c.content_type = lower(value);
      if (key == "mcp-session-id") {
        std::lock_guard lock(c.self->mutex_);
        c.self->session_id_ = value;
      }
    }
    return size * n;
  }

  static size_t on_body(char* p, size_t size, size_t n, void* user) {
    Call& c = *static_cast<Call*>(user);
    c.bytes += size * n;
    if (c.content_type.find("text/event-stream") != std::string::npos) {
      c.sse_buffer.append(p, size * n);
      if (c.sse_buffer.size() > c.self->limits_.max_message_bytes) {
        c.too_long = true;
        return 0;  // aborts the transfer
      }
      c.self->take_events(c, false);
    } else {
      c.body.append(p, size * n);
      if (c.body.size() > c.self->limits_.max_message_bytes) {
        c.too_long = true;
        return 0;
      }
    }
    return size * n;
  }

  static int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<Call*>(user)->self->closing_ ? 1 : 0;
  }

  void post(const std::string& body, const char* method) {
    CURL* h = curl_easy_init();
    if (!h) return fail("libcurl could not start a request");
    Call c{this, {}, {}, {}};
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Accept: application/json, text/event-stream");
    {
      std::lock_guard lock(mutex_);
      if (!session_id_.empty()) headers = curl_slist_append(headers, ("Mcp-Session-Id: " + session_id_).c_str());
      if (!protocol_version_.empty())
        headers = curl_slist_append(headers, ("MCP-Protocol-Version: " + protocol_version_).c_str());
    }
    for (const auto& [k, v] : config_.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
    curl_easy_setopt(h, CURLOPT_URL, config_.url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (std::string(method) != "POST") curl_easy_setopt(h, CURLOPT_TIMEOUT, 5L);
    if (std::string(method) == "POST") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
    }
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &HttpTransport::on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &c);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &HttpTransport::on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &c);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &HttpTransport::on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &c);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    const CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    if (std::string(method) != "POST" || closing_) return;
    if (c.too_long)
      return fail("it sent an answer longer than " + std::to_string(limits_.max_message_bytes >> 20) + " MiB");
    if (rc != CURLE_OK) return fail(std::string("HTTP request failed: ") + curl_easy_strerror(rc));
    if (status >= 400) {
      // An HTML page is no MCP endpoint's answer (the old HTTP+SSE transport, a web server).
      if (c.content_type.find("text/html") != std::string::npos)
        return fail("HTTP " + std::to_string(status) +
                    ": an HTML page, no MCP endpoint (is the URL the server's Streamable HTTP endpoint? the old "
                    "HTTP+SSE transport is not supported)");
      std::string detail = trim(c.body).substr(0, 200);
      // A JSON-RPC error in the body is the server's own answer: given to the waiting request.
      const json m = json::parse(c.body, nullptr, false);
      if (m.is_object() && m.contains("error") && m.contains("id") && !m["id"].is_null()) return push(m);
      return fail("HTTP " + std::to_string(status) + (detail.empty() ? "" : ": " + detail));
    }
    if (c.content_type.find("text/event-stream") != std::string::npos)
      take_events(c, true);
    else if (status != 202)
      take(c.body);
  }

  ServerConfig config_;
  TransportLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<json> queue_;
  std::string session_id_, protocol_version_;
  std::atomic<bool> closing_{false};
  std::mutex threads_mutex_;
  std::list<std::thread> threads_;
};
}  // namespace

std::unique_ptr<Transport> make_http_transport(const ServerConfig& config, TransportLimits limits) {
  return std::make_unique<HttpTransport>(config, limits);
}

}  // namespace pagedchat::mcp
