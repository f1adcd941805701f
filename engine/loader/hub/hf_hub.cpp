#include "engine/loader/hub/hf_hub.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>

namespace pagedchat::hub {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string trim(std::string s) {
  const std::size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string header(const HttpResponse& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? std::string() : it->second;
}

/// Throws the HubError an answer >= 400 means (huggingface_hub's hf_raise_for_status rules).
void raise_for_status(const HubConfig& hub, const HttpResponse& r, const std::string& repo, const std::string& what) {
  if (r.status < 400) return;
  const std::string code = header(r, "x-error-code");
  std::string message = header(r, "x-error-message");
  if (message.empty() && r.body.size() < 2000) {
    try {
      const nlohmann::json j = nlohmann::json::parse(r.body);
      if (j.is_object() && j.contains("error") && j["error"].is_string()) message = j["error"].get<std::string>();
    } catch (const std::exception&) {
    }
  }
  const std::string said = message.empty() ? std::string() : " (the hub says: " + message + ")";
  const std::string page = hub.endpoint + "/" + repo;
  if (code == "GatedRepo" || (r.status == 403 && message.find("gated") != std::string::npos)) {
    if (hub.token.empty() || r.status == 401)
      throw HubError(HubError::Kind::kUnauthorized, repo + " is gated: accept its terms at " + page +
                                                        ", then set HF_TOKEN to a token of that account");
    throw HubError(
        HubError::Kind::kForbidden,
        repo + " is gated and this token's account has not been granted access: accept its terms at " + page + said);
  }
  if (code == "RevisionNotFound") throw HubError(HubError::Kind::kNotFound, what + ": no such revision" + said);
  if (code == "EntryNotFound") throw HubError(HubError::Kind::kNotFound, what + ": no such file in " + repo + said);
  if (r.status == 401) {
    if (!hub.token.empty() && message.find("Invalid credentials") != std::string::npos)
      throw HubError(HubError::Kind::kUnauthorized, "the hub refused the token in HF_TOKEN as invalid" + said);
    throw HubError(HubError::Kind::kUnauthorized,
                   repo + " was not found, or it is private or gated" +
                       (hub.token.empty() ? ": check the name, or set HF_TOKEN to a token with access" : said));
  }
  if (r.status == 403) throw HubError(HubError::Kind::kForbidden, what + ": access denied" + said);
  if (r.status == 404 || code == "RepoNotFound")
    throw HubError(
        HubError::Kind::kNotFound,
        what + ": not found" + said +
            (code.empty() && message.empty() ? " (no hub error code: is HF_ENDPOINT " + hub.endpoint + " a hub?)"
                                             : std::string()));
  if (r.status == 429)
    throw HubError(HubError::Kind::kNetwork, what + ": the hub is rate-limiting requests; try again later" + said);
  throw HubError(r.status >= 500 ? HubError::Kind::kNetwork : HubError::Kind::kProtocol,
                 what + ": HTTP " + std::to_string(r.status) + said);
}

nlohmann::json parse_json(const HttpResponse& r, const std::string& what) {
  try {
    return nlohmann::json::parse(r.body);
  } catch (const std::exception&) {
    throw HubError(HubError::Kind::kProtocol, what + ": the answer is not JSON (is HF_ENDPOINT a hub?)");
  }
}

std::string gated_of(const nlohmann::json& j) {
  if (!j.contains("gated")) return {};
  const auto& g = j["gated"];
  if (g.is_string()) return g.get<std::string>();
  return {};
}

std::string hex(const unsigned char* d, unsigned n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < n; ++i) {
    s += digits[d[i] >> 4];
    s += digits[d[i] & 15];
  }
  return s;
}

struct MdDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::uint64_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : std::uint64_t(n);
}

}  // namespace

HubConfig hub_config_from_env() {
  HubConfig c;
  std::string endpoint = trim(env("HF_ENDPOINT"));
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (!endpoint.empty()) c.endpoint = endpoint;
  c.token = trim(env("HF_TOKEN"));
  if (c.token.empty()) c.token = trim(env("HUGGING_FACE_HUB_TOKEN"));
  if (c.token.empty()) {
    std::string home = env("HF_HOME");
    if (home.empty()) {
      const std::string cache = env("XDG_CACHE_HOME");
      home = !cache.empty() ? cache + "/huggingface" : env("HOME") + "/.cache/huggingface";
    }
    std::ifstream in(home + "/token");
    if (in) {
      std::string t;
      std::getline(in, t);
      c.token = trim(t);
    }
  }
  return c;
}

bool is_repo_id(const std::string& repo) {
  const std::size_t slash = repo.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= repo.size() ||
      repo.find('/', slash + 1) != std::string::npos)
    return false;
  if (repo.size() > 200 || repo.find("..") != std::string::npos || repo[0] == '.' || repo[slash + 1] == '.')
    return false;
  for (char c : repo)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/')) return false;
  return true;
}

bool parse_hub_target(const std::string& text, HubTarget& out) {
  std::string t = trim(text);
  for (const char* prefix : {"https://", "http://"})
    if (t.rfind(prefix, 0) == 0) t = t.substr(std::string(prefix).size());
  for (const char* host : {"huggingface.co/", "www.huggingface.co/", "hf.co/"})
    if (t.rfind(host, 0) == 0) t = t.substr(std::string(host).size());
  if (const std::size_t q = t.find_first_of("?#"); q != std::string::npos) t.resize(q);
  while (!t.empty() && t.back() == '/') t.pop_back();
  out = HubTarget{};
  // org/name[:tag] or org/name/(blob|resolve|tree)/rev[/path]
  const std::size_t first = t.find('/');
  if (first == std::string::npos) return false;
  const std::size_t second = t.find('/', first + 1);
  std::string repo = t.substr(0, second);
  if (second != std::string::npos) {
    const std::string rest = t.substr(second + 1);  // blob/main/path
    const std::size_t a = rest.find('/');
    const std::string kind = rest.substr(0, a);
    if (kind != "blob" && kind != "resolve" && kind != "tree") return false;
    if (a != std::string::npos) {
      const std::string after = rest.substr(a + 1);
      const std::size_t b = after.find('/');
      out.revision = after.substr(0, b);
      if (b != std::string::npos && kind != "tree") out.tag = after.substr(b + 1);
    }
    if (out.revision.empty()) out.revision = "main";
  } else if (const std::size_t colon = repo.find(':'); colon != std::string::npos) {
    out.tag = repo.substr(colon + 1);
    repo.resize(colon);
  }
  out.repo = repo;
  return is_repo_id(repo);
}

HubRepo fetch_repo(const HubConfig& hub, const std::string& repo, const std::string& revision) {
  if (!is_repo_id(repo)) throw std::invalid_argument("'" + repo + "' is not a Hugging Face repository id (org/name)");
  const std::string what = repo + (revision == "main" ? "" : "@" + revision);
  const HttpResponse r = http_get(
      hub.endpoint + "/api/models/" + url_encode_path(repo) + "/revision/" + url_encode_query(revision) + "?blobs=true",
      hub.token);
  raise_for_status(hub, r, repo, what);
  const nlohmann::json j = parse_json(r, what);
  if (!j.is_object() || !j.contains("siblings") || !j["siblings"].is_array())
    throw HubError(HubError::Kind::kProtocol, what + ": the hub's answer lists no files");
  HubRepo out;
  out.id = j.value("id", repo);
  out.commit = j.value("sha", std::string());
  out.gated = gated_of(j);
  for (const auto& s : j["siblings"]) {
    if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string()) continue;
    HubFile f;
    f.path = s["rfilename"].get<std::string>();
    // A path that would leave the repository's folder is never used.
    if (f.path.empty() || f.path[0] == '/' || f.path.find("..") != std::string::npos ||
        f.path.find('\\') != std::string::npos)
      continue;
    if (s.contains("size")) {
      if (!s["size"].is_number_unsigned()) continue;  // a size that is no size: not this hub's file
      f.size = s["size"].get<std::uint64_t>();
    }
    if (s.contains("lfs") && s["lfs"].is_object()) {
      const auto& lfs = s["lfs"];
      if (lfs.contains("sha256") && lfs["sha256"].is_string()) f.sha256 = lfs["sha256"].get<std::string>();
      if (lfs.contains("size") && lfs["size"].is_number_unsigned()) f.size = lfs["size"].get<std::uint64_t>();
    }
    out.files.push_back(std::move(f));
  }
  if (j.contains("gguf") && j["gguf"].is_object()) {
    const auto& g = j["gguf"];
    if (g.contains("total") && g["total"].is_number_unsigned()) out.parameters = g["total"].get<std::uint64_t>();
    if (g.contains("architecture") && g["architecture"].is_string())
      out.architecture = g["architecture"].get<std::string>();
    if (g.contains("context_length") && g["context_length"].is_number_integer())
      out.context_length = g["context_length"].get<int>();
  }
  return out;
}

std::vector<HubModel> search_models(const HubConfig& hub, const std::string& query, int limit) {
  const std::string url = hub.endpoint + "/api/models?search=" + url_encode_query(query) +
                          "&filter=gguf&sort=downloads&direction=-1&limit=" + std::to_string(std::max(1, limit));
  const HttpResponse r = http_get(url, hub.token);
  raise_for_status(hub, r, query, "search '" + query + "'");
  const nlohmann::json j = parse_json(r, "search '" + query + "'");
  if (!j.is_array()) throw HubError(HubError::Kind::kProtocol, "search '" + query + "': the answer is not a list");
  std::vector<HubModel> out;
  for (const auto& m : j) {
    if (!m.is_object()) continue;
    HubModel h;
    if (m.contains("id") && m["id"].is_string())
      h.id = m["id"].get<std::string>();
    else if (m.contains("modelId") && m["modelId"].is_string())
      h.id = m["modelId"].get<std::string>();
    if (!is_repo_id(h.id)) continue;
    if (m.contains("downloads") && m["downloads"].is_number_unsigned())
      h.downloads = m["downloads"].get<std::uint64_t>();
    if (m.contains("likes") && m["likes"].is_number_unsigned()) h.likes = m["likes"].get<std::uint64_t>();
    h.gated = gated_of(m);
    out.push_back(std::move(h));
  }
  return out;
}

std::string sha256_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw HubError(HubError::Kind::kIo, "cannot read " + path.string());
  std::unique_ptr<EVP_MD_CTX, MdDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw HubError(HubError::Kind::kIo, "SHA-256 is not available (OpenSSL)");
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), std::size_t(in.gcount()));
  }
  if (in.bad()) throw HubError(HubError::Kind::kIo, "cannot read " + path.string());
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &n);
  return hex(digest, n);
}

bool download_file(const HubConfig& hub, const std::string& repo, const std::string& revision, const HubFile& file,
                   const fs::path& dest, const ProgressFn& progress) {
  const auto verified = [&](const fs::path& p) {
    if (file.size > 0 && file_size_or_zero(p) != file.size) return false;
    return file.sha256.empty() || sha256_file(p) == file.sha256;
  };
  std::error_code ec;
  if (fs::exists(dest, ec) && file.size > 0 && file_size_or_zero(dest) == file.size && verified(dest)) return false;
  fs::create_directories(dest.parent_path(), ec);
  if (ec)
    throw HubError(HubError::Kind::kIo, "cannot make the folder " + dest.parent_path().string() + ": " + ec.message());
  const fs::path part = dest.string() + ".part";
  std::uint64_t offset = file_size_or_zero(part);
  if (file.size > 0 && offset > file.size) {  // not this file's beginning: start over
    fs::remove(part, ec);
    offset = 0;
  }
  if (file.size > offset) {
    const fs::space_info space = fs::space(dest.parent_path(), ec);
    const std::uint64_t need = file.size - offset;
    if (!ec && space.available < need)
      throw HubError(HubError::Kind::kIo, repo + "/" + file.path + " needs " + std::to_string(need / 1000000) +
                                              " MB more and " + dest.parent_path().string() + " has " +
                                              std::to_string(space.available / 1000000) + " MB free");
  }
  const std::string url = hub.endpoint + "/" + url_encode_path(repo) + "/resolve/" + url_encode_query(revision) + "/" +
                          url_encode_path(file.path);
  const std::string what = repo + "/" + file.path;
  if (file.size == 0 || offset < file.size) {
    const HttpResponse r = http_download(url, hub.token, part.string(), offset,
                                         [&](std::uint64_t done, std::uint64_t total) {
                                           return !progress || progress(done, file.size > 0 ? file.size : total);
                                         });
    if (r.status == 416 && offset > 0) {  // the range starts at or past the end: restart once
      fs::remove(part, ec);
      return download_file(hub, repo, revision, file, dest, progress);
    }
    raise_for_status(hub, r, repo, what);
  }
  const std::uint64_t got = file_size_or_zero(part);
  if (file.size > 0 && got < file.size)
    throw HubError(HubError::Kind::kNetwork, what + ": the transfer stopped at " + std::to_string(got) + " of " +
                                                 std::to_string(file.size) + " bytes; run again to resume");
  if (file.size > 0 && got != file.size) {
    fs::remove(part, ec);
    throw HubError(HubError::Kind::kChecksum, what + ": got " + std::to_string(got) + " bytes, the hub announced " +
                                                  std::to_string(file.size) + "; the partial file was deleted");
  }
  if (!file.sha256.empty()) {
    const std::string sum = sha256_file(part);
    if (sum != file.sha256) {
      fs::remove(part, ec);
      throw HubError(HubError::Kind::kChecksum, what + ": SHA-256 " + sum + " differs from the hub's " + file.sha256 +
                                                    "; the download was deleted");
    }
  }
  fs::rename(part, dest, ec);
  if (ec)
    throw HubError(HubError::Kind::kIo,
                   "cannot rename " + part.string() + " to " + dest.string() + ": " + ec.message());
  return true;
}

fs::path default_models_dir() {
  const std::string data = env("XDG_DATA_HOME");
  const fs::path base = !data.empty() ? fs::path(data) : fs::path(env("HOME")) / ".local/share";
  return base / "PagedChat" / "models";
}

}  // namespace pagedchat::hub
