// Images by URL for the OpenAI server (vLLM's --allowed-media-domains): an `image_url` part with
// an http(s) URL is fetched only when its host is one the server was started with; everything
// else about the fetch is bounded (size, time, no redirects, http and https only).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pagedchat::openai {

/// A fetch that failed, or a URL that may not be fetched; what() says why (the host, the HTTP
/// status, the limit).
class MediaFetchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The lower-case host of an http(s) URL, parsed by libcurl's URL parser (so userinfo, ports and
/// IPv6 brackets are read as a client reads them). Throws MediaFetchError for anything else.
std::string media_url_host(const std::string& url);

/// True when `url`'s host is exactly one of `allowed` (compared without case); false for a URL
/// that does not parse.
bool media_url_allowed(const std::string& url, const std::vector<std::string>& allowed);

struct MediaFetchLimits {
  std::size_t max_bytes = std::size_t(64) << 20;  ///< a larger body is refused (as a picture file)
  long timeout_ms = 20000;                        ///< the whole transfer
};

/// GETs `url` (http or https; redirects are not followed) and returns its body. Throws
/// MediaFetchError for a transfer error, an HTTP status other than 200, or a body above the limit.
std::vector<uint8_t> fetch_media(const std::string& url, const MediaFetchLimits& limits = {});

}  // namespace pagedchat::openai
