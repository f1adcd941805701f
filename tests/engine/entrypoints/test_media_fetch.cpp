// Images by URL (--allowed-media-domains): which URLs the server may fetch (libcurl's parser
// reads the host, so userinfo tricks name the real host), and the fetch itself against a loopback
// HTTP server: a picture, a 404, a redirect (never followed), a body over the limit, a server that
// never answers (the timeout); the chat request's parser refuses other hosts with a 400 naming
// the host and the flag.
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "engine/entrypoints/openai/media_fetch.h"
#include "engine/entrypoints/openai/protocol.h"

using namespace pagedchat::openai;

namespace {

/// An HTTP server on 127.0.0.1 answering every connection with `response` (or nothing, holding
/// the connection, when it is empty) on a thread of its own.
class LoopbackServer {
 public:
  explicit LoopbackServer(std::string response) : response_(std::move(response)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 8);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0 || stop_) {
          if (c >= 0) ::close(c);
          return;
        }
        std::string req;
        char buf[4096];
        while (req.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = ::recv(c, buf, sizeof buf, 0);
          if (n <= 0) break;
          req.append(buf, std::size_t(n));
        }
        if (response_.empty()) {  // never answers: held until the server stops
          held_ = c;
          continue;
        }
        std::size_t sent = 0;
        while (sent < response_.size()) {
          const ssize_t n = ::send(c, response_.data() + sent, response_.size() - sent, MSG_NOSIGNAL);
          if (n <= 0) break;
          sent += std::size_t(n);
        }
        ::close(c);
      }
    });
  }
  ~LoopbackServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    if (held_ >= 0) ::close(held_);
  }
  std::string url(const std::string& path = "/picture.png") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  std::string response_;
  int fd_ = -1, port_ = 0, held_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

std::string picture() {
  std::ifstream f(std::string(VISION_DIR) + "/square.png", std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string fetchError(const std::string& url, const MediaFetchLimits& limits = {}) {
  try {
    fetch_media(url, limits);
  } catch (const MediaFetchError& e) {
    return e.what();
  }
  return "(fetched)";
}

nlohmann::json chatWithImage(const std::string& url) {
  return {
      {"model", "m"},
      {"messages",
       {{{"role", "user"},
         {"content",
          {{{"type", "text"}, {"text", "What is it?"}}, {{"type", "image_url"}, {"image_url", {{"url", url}}}}}}}}}};
}

}  // namespace

class TestMediaFetch : public QObject {
  Q_OBJECT
 private slots:
  void hosts() {
    QCOMPARE(media_url_host("https://Upload.Example.ORG:8443/a/b.png?x=1"), std::string("upload.example.org"));
    // Userinfo names no host: the host is what a client connects to.
    QCOMPARE(media_url_host("http://allowed.example@evil.example/x.png"), std::string("evil.example"));
    for (const char* bad : {"ftp://example.org/x.png", "file:///etc/passwd", "not a url", "http://", "data:,x"})
      QVERIFY_THROWS_EXCEPTION(MediaFetchError, media_url_host(bad));
    const std::vector<std::string> allowed{"upload.example.org", "127.0.0.1"};
    QVERIFY(media_url_allowed("https://UPLOAD.example.org/x.png", allowed));
    QVERIFY(!media_url_allowed("https://evil.upload.example.org/x.png", allowed));  // exact names only
    QVERIFY(!media_url_allowed("https://upload.example.org.evil/x.png", allowed));
    QVERIFY(!media_url_allowed("http://upload.example.org@evil.example/x.png", allowed));
    QVERIFY(!media_url_allowed("ftp://upload.example.org/x.png", allowed));
  }

  void fetches() {
    const std::string png = picture();
    QVERIFY(png.size() > 100);
    LoopbackServer server(ok(png));
    const std::vector<uint8_t> got = fetch_media(server.url());
    QCOMPARE(std::string(got.begin(), got.end()), png);
    // Over the limit: refused, naming it.
    MediaFetchLimits small;
    small.max_bytes = 64;
    QVERIFY2(fetchError(server.url(), small).find("larger than") != std::string::npos,
             fetchError(server.url(), small).c_str());
  }

  void refusals() {
    {
      LoopbackServer server("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      QVERIFY2(fetchError(server.url()).find("404") != std::string::npos, fetchError(server.url()).c_str());
    }
    {
      LoopbackServer server(
          "HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n"
          "Connection: close\r\n\r\n");
      QVERIFY2(fetchError(server.url()).find("redirect") != std::string::npos, fetchError(server.url()).c_str());
    }
    {
      LoopbackServer server("");  // accepts and never answers
      MediaFetchLimits quick;
      quick.timeout_ms = 300;
      QVERIFY2(fetchError(server.url(), quick).find("failed") != std::string::npos,
               fetchError(server.url(), quick).c_str());
    }
  }

  // The request parser: a remote URL is kept for fetching only on an allowed host.
  void requestParsing() {
    RequestLimits limits;
    try {
      parse_chat_completion_request(chatWithImage("https://example.org/x.png"), limits);
      QFAIL("a remote URL was taken without --allowed-media-domains");
    } catch (const ApiError& e) {
      QCOMPARE(e.status(), 400);
      QVERIFY2(std::string(e.what()).find("--allowed-media-domains") != std::string::npos, e.what());
    }
    limits.allowed_media_domains = {"example.org"};
    const ChatCompletionRequest r = parse_chat_completion_request(chatWithImage("https://example.org/x.png"), limits);
    QCOMPARE(r.image_urls.size(), std::size_t(1));
    QCOMPARE(r.image_urls[0], std::string("https://example.org/x.png"));
    QVERIFY(r.images.at(0).empty());
    try {
      parse_chat_completion_request(chatWithImage("https://example.org@other.example/x.png"), limits);
      QFAIL("another host was taken");
    } catch (const ApiError& e) {
      QCOMPARE(e.status(), 400);
      QVERIFY2(std::string(e.what()).find("'other.example'") != std::string::npos, e.what());
    }
    // A data: URL still works beside them.
    const ChatCompletionRequest d = parse_chat_completion_request(chatWithImage("data:image/png;base64,iVBORw0KGgo="),
                                                                  limits);
    QCOMPARE(d.image_urls.at(0), std::string());
    QVERIFY(!d.images.at(0).empty());
    // Its media type must be an image's (any case); the bytes say which format.
    QVERIFY(!parse_chat_completion_request(chatWithImage("data:IMAGE/JPEG;base64,iVBORw0KGgo="), limits)
                 .images.at(0)
                 .empty());
    for (const char* url :
         {"data:text/plain;base64,iVBORw0KGgo=", "data:;base64,iVBORw0KGgo=", "data:image/;base64,iVBORw0KGgo="}) {
      try {
        parse_chat_completion_request(chatWithImage(url), limits);
        QFAIL(url);
      } catch (const ApiError& e) {
        QCOMPARE(e.status(), 400);
        QVERIFY2(std::string(e.what()).find("media type") != std::string::npos, e.what());
      }
    }
    // A long or odd media type is echoed short and printable.
    try {
      parse_chat_completion_request(
          chatWithImage("data:" + std::string(100000, 'x') + std::string("\0a", 2) + ";base64,iVBORw0KGgo="), limits);
      QFAIL("a 100 kB media type was taken");
    } catch (const ApiError& e) {
      QVERIFY2(std::string(e.what()).size() < 400, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestMediaFetch)
#include "test_media_fetch.moc"
