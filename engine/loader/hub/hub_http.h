// HubHttp: the few HTTP requests the Hugging Face hub client makes, over libcurl (Debian's
// libcurl4-openssl-dev): a GET of a JSON document, and a file download that resumes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace pagedchat::hub {

/// A finished HTTP exchange. `headers` are the last response's (after redirects), names in
/// lower case; `url` the last URL requested.
struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  std::string url;
};

/// Called as bytes arrive: (bytes of the file on disk, total bytes or 0 if unknown). Returning
/// false cancels the transfer (throws HubError kCancelled).
using ProgressFn = std::function<bool(std::uint64_t done, std::uint64_t total)>;

/// GET `url` with `bearer` as the Authorization token ("" = none), following redirects (libcurl
/// sends the token only to the host it was given for, never to the host of a redirect). A body
/// over `max_body` bytes is cut and fails. Throws HubError kNetwork when no response came (DNS,
/// TCP, TLS, timeout), naming the URL and curl's reason.
HttpResponse http_get(const std::string& url, const std::string& bearer, std::size_t max_body = 64 << 20);

/// Streams `url` into `file` (opened for append at `offset` bytes already there): sends
/// `Range: bytes=offset-` when offset > 0. Returns the response (body empty) once the transfer
/// ends; when the server ignored the range (200 instead of 206) the file is truncated and written
/// from its start (`restarted`). A status >= 400 writes nothing. Throws HubError kNetwork when
/// the connection fails or drops (what was written stays), kCancelled when `progress` said so.
HttpResponse http_download(const std::string& url, const std::string& bearer, const std::string& file,
                           std::uint64_t offset, const ProgressFn& progress, bool* restarted = nullptr);

/// `s` with every byte outside [A-Za-z0-9-._~/] percent-encoded (a repository path in a URL).
std::string url_encode_path(const std::string& s);
/// `s` percent-encoded for a query parameter's value.
std::string url_encode_query(const std::string& s);

}  // namespace pagedchat::hub
