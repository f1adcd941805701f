#include "engine/loader/hub/hub_http.h"

#include <curl/curl.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <mutex>

#include "engine/loader/hub/hub_error.h"

namespace pagedchat::hub {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

struct Exchange {
  HttpResponse response;
  std::size_t max_body = 0;
  bool too_big = false;
  std::FILE* file = nullptr;  // download: the body goes here (only for a 2xx answer)
  std::uint64_t written = 0, offset = 0, total = 0;
  bool restarted = false, write_failed = false, cancelled = false;
  const ProgressFn* progress = nullptr;
};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto& ex = *static_cast<Exchange*>(user);
  const std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect): its own headers
    ex.response.headers.clear();
    return size * n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string value = line.substr(colon + 1);
  const std::size_t b = value.find_first_not_of(" \t"), e = value.find_last_not_of(" \t\r\n");
  value = b == std::string::npos ? std::string() : value.substr(b, e - b + 1);
  ex.response.headers[lower(line.substr(0, colon))] = value;
  return size * n;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto& ex = *static_cast<Exchange*>(user);
  const std::size_t bytes = size * n;
  if (!ex.file) {
    if (ex.response.body.size() + bytes > ex.max_body) {
      ex.too_big = true;
      return 0;
    }
    ex.response.body.append(data, bytes);
    return bytes;
  }
  if (std::fwrite(data, 1, bytes, ex.file) != bytes) {
    ex.write_failed = true;
    return 0;
  }
  ex.written += bytes;
  return bytes;
}

int on_progress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto& ex = *static_cast<Exchange*>(user);
  if (!ex.progress || !*ex.progress) return 0;
  const std::uint64_t base = ex.restarted ? 0 : ex.offset;
  const std::uint64_t total = dltotal > 0 ? base + std::uint64_t(dltotal) : ex.total;
  if (!(*ex.progress)(base + std::uint64_t(dlnow), total)) {
    ex.cancelled = true;
    return 1;
  }
  return 0;
}

std::unique_ptr<CURL, CurlDeleter> make_handle(const std::string& url, const std::string& bearer, Exchange& ex,
                                               std::unique_ptr<curl_slist, SlistDeleter>& headers) {
  global_init();
  std::unique_ptr<CURL, CurlDeleter> c(curl_easy_init());
  if (!c) throw HubError(HubError::Kind::kNetwork, "cannot start an HTTP client (libcurl)");
  CURL* h = c.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_USERAGENT, "pagedchat/hub-client");
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
  // A stalled transfer (under 1 byte/s for 60 s) fails instead of hanging; it can be resumed.
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  curl_slist* list = nullptr;
  // The token as a header: curl (>= 7.83) does not send a custom Authorization header to another
  // host after a redirect, as huggingface_hub drops it for the CDN.
  if (!bearer.empty()) list = curl_slist_append(list, ("Authorization: Bearer " + bearer).c_str());
  headers.reset(list);
  if (list) curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  return c;
}

[[noreturn]] void network_error(const std::string& url, CURLcode code, const char* detail) {
  throw HubError(HubError::Kind::kNetwork,
                 "no answer from " + url + ": " + (detail && *detail ? detail : curl_easy_strerror(code)));
}

}  // namespace

HttpResponse http_get(const std::string& url, const std::string& bearer, std::size_t max_body) {
  Exchange ex;
  ex.max_body = max_body;
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto c = make_handle(url, bearer, ex, headers);
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c.get(), CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c.get(), CURLOPT_TIMEOUT, 120L);
  const CURLcode rc = curl_easy_perform(c.get());
  if (ex.too_big)
    throw HubError(HubError::Kind::kProtocol, url + " answered more than " + std::to_string(max_body) + " bytes");
  if (rc != CURLE_OK) network_error(url, rc, error);
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &ex.response.status);
  char* last = nullptr;
  curl_easy_getinfo(c.get(), CURLINFO_EFFECTIVE_URL, &last);
  ex.response.url = last ? last : url;
  return std::move(ex.response);
}

HttpResponse http_download(const std::string& url, const std::string& bearer, const std::string& file,
                           std::uint64_t offset, const ProgressFn& progress, bool* restarted) {
  Exchange ex;
  ex.offset = offset;
  ex.progress = &progress;
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto c = make_handle(url, bearer, ex, headers);
  CURL* h = c.get();
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  if (offset > 0) curl_easy_setopt(h, CURLOPT_RANGE, (std::to_string(offset) + "-").c_str());
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &ex);
  // The body goes to the file only for a successful answer: an error page is kept in memory.
  // The status is known when the first body byte arrives, so the file is opened lazily there.
  struct Sink {
    Exchange* ex;
    CURL* h;
    std::string path;
    std::FILE* f = nullptr;
    ~Sink() {
      if (f) std::fclose(f);
    }
  } sink{&ex, h, file};
  auto write = +[](char* data, std::size_t size, std::size_t n, void* user) -> std::size_t {
    auto& s = *static_cast<Sink*>(user);
    long status = 0;
    curl_easy_getinfo(s.h, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 300) {  // an error page: kept for the message (bounded)
      s.ex->max_body = 1 << 20;
      s.ex->file = nullptr;
      return on_body(data, size, n, s.ex);
    }
    if (!s.f) {
      s.ex->restarted = s.ex->offset > 0 && status == 200;  // the range was ignored: from the start
      s.f = std::fopen(s.path.c_str(), s.ex->offset > 0 && !s.ex->restarted ? "ab" : "wb");
      if (!s.f) {
        s.ex->write_failed = true;
        return 0;
      }
    }
    s.ex->file = s.f;
    return on_body(data, size, n, s.ex);
  };
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  const CURLcode rc = curl_easy_perform(h);
  if (sink.f) {
    if (std::fflush(sink.f) != 0) ex.write_failed = true;
    std::fclose(sink.f);
    sink.f = nullptr;
  }
  if (restarted) *restarted = ex.restarted;
  if (ex.write_failed) throw HubError(HubError::Kind::kIo, "cannot write " + file);
  if (ex.cancelled) throw HubError(HubError::Kind::kCancelled, "download cancelled");
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ex.response.status);
  char* last = nullptr;
  curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &last);
  ex.response.url = last ? last : url;
  if (rc != CURLE_OK && ex.response.status < 300) {
    if (ex.written == 0) network_error(url, rc, error);
    throw HubError(HubError::Kind::kNetwork, "the download of " + url + " broke after " + std::to_string(ex.written) +
                                                 " bytes (" + (*error ? std::string(error) : curl_easy_strerror(rc)) +
                                                 "); run again to resume");
  }
  return std::move(ex.response);
}

std::string url_encode_path(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += char(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string url_encode_query(const std::string& s) {
  std::string out = url_encode_path(s);
  std::string fixed;
  for (char c : out) fixed += c == '/' ? std::string("%2F") : std::string(1, c);
  return fixed;
}

}  // namespace pagedchat::hub
