#include "engine/entrypoints/openai/media_fetch.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>

namespace pagedchat::openai {

namespace {

void init_curl() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower_ascii(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

struct Body {
  std::vector<uint8_t> bytes;
  std::size_t max = 0;
  bool too_large = false;
};

std::size_t on_data(char* data, std::size_t size, std::size_t n, void* user) {
  Body& b = *static_cast<Body*>(user);
  const std::size_t len = size * n;
  if (b.bytes.size() + len > b.max) {
    b.too_large = true;
    return 0;  // aborts the transfer
  }
  b.bytes.insert(b.bytes.end(), data, data + len);
  return len;
}

}  // namespace

std::string media_url_host(const std::string& url) {
  init_curl();
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    throw MediaFetchError("the URL does not parse");
  char* scheme = nullptr;
  char* host = nullptr;
  if (curl_url_get(u.get(), CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      curl_url_get(u.get(), CURLUPART_HOST, &host, 0) != CURLUE_OK) {
    curl_free(scheme);
    curl_free(host);
    throw MediaFetchError("the URL has no scheme or host");
  }
  const std::string s = lower_ascii(scheme), h = lower_ascii(host);
  curl_free(scheme);
  curl_free(host);
  if (s != "http" && s != "https") throw MediaFetchError("only http and https URLs are fetched, not " + s);
  return h;
}

bool media_url_allowed(const std::string& url, const std::vector<std::string>& allowed) {
  try {
    const std::string host = media_url_host(url);
    for (const std::string& a : allowed)
      if (!a.empty() && lower_ascii(a) == host) return true;
  } catch (const MediaFetchError&) {
  }
  return false;
}

std::vector<uint8_t> fetch_media(const std::string& url, const MediaFetchLimits& limits) {
  media_url_host(url);  // http(s) with a host, or it throws
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> c(curl_easy_init(), curl_easy_cleanup);
  if (!c) throw MediaFetchError("cannot start an HTTP client");
  Body body;
  body.max = limits.max_bytes;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(c.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c.get(), CURLOPT_FOLLOWLOCATION, 0L);  // another host could be anywhere
  curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, limits.timeout_ms);
  curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c.get(), CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limits.max_bytes));
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c.get(), CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c.get(), CURLOPT_USERAGENT, "PagedChat");
  const CURLcode rc = curl_easy_perform(c.get());
  const std::string limit = std::to_string(limits.max_bytes >> 20) + " MiB";
  if (body.too_large || rc == CURLE_FILESIZE_EXCEEDED) throw MediaFetchError("the image is larger than " + limit);
  if (rc != CURLE_OK)
    throw MediaFetchError(std::string("fetching it failed: ") + (error[0] ? error : curl_easy_strerror(rc)));
  long status = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && status < 400)
    throw MediaFetchError("the server redirected it (HTTP " + std::to_string(status) + "); redirects are not followed");
  if (status != 200) throw MediaFetchError("the server answered HTTP " + std::to_string(status));
  return std::move(body.bytes);
}

}  // namespace pagedchat::openai
