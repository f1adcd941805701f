// The Hugging Face hub's public HTTP API, as `huggingface_hub` and llama.cpp's -hf use it:
// search (/api/models), a repository's files with their sizes and SHA-256 (/api/models/{repo}/
// revision/{rev}?blobs=true), and file downloads (/{repo}/resolve/{rev}/{path}, a redirect to a
// CDN on another host) that resume after an interruption and are checked against the hub's
// SHA-256 before they take their name. HF_ENDPOINT and HF_TOKEN are honoured. Facts and sources:
// docs/model-downloads.md. Where the hub leaves a choice to the client (token sources, the token
// never following a redirect to another host, error codes) this follows huggingface_hub's
// behaviour (THIRD_PARTY_NOTICES, 4a); no code of it is copied.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/loader/hub/hub_error.h"
#include "engine/loader/hub/hub_http.h"

namespace pagedchat::hub {

/// Where the hub is and who asks.
struct HubConfig {
  std::string endpoint = "https://huggingface.co";  ///< no trailing '/'
  std::string token;                                ///< "" = anonymous
};

/// HF_ENDPOINT (default https://huggingface.co) and the token: HF_TOKEN, else
/// HUGGING_FACE_HUB_TOKEN, else the file $HF_HOME/token (HF_HOME: $XDG_CACHE_HOME/huggingface,
/// else ~/.cache/huggingface), as huggingface_hub reads them. Never fails.
HubConfig hub_config_from_env();

/// One file of a repository. sha256 is the LFS object's (large files); "" for a file kept in git.
struct HubFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sha256;
};

/// A repository at a revision (GET /api/models/{repo}/revision/{rev}?blobs=true).
struct HubRepo {
  std::string id;      ///< "org/name"
  std::string commit;  ///< the revision's commit sha
  std::string gated;   ///< "" (not gated), "auto" or "manual"
  std::vector<HubFile> files;
  // What the hub parsed from the repository's GGUF (absent for other repositories).
  std::optional<std::uint64_t> parameters;
  std::string architecture;
  std::optional<int> context_length;
};

/// One search result (GET /api/models?search=...&filter=gguf).
struct HubModel {
  std::string id;
  std::uint64_t downloads = 0;
  std::uint64_t likes = 0;
  std::string gated;  ///< "" when not gated
};

/// `repo` "org/name" (letters, digits, '-', '_', '.'; no ".." nor leading '.'): true when it is one.
bool is_repo_id(const std::string& repo);

/// What a user names: "org/name", "org/name:Q4_K_M", or a hub address as a browser shows it
/// (https://huggingface.co/org/name, .../blob/main/file.gguf, .../resolve/main/file.gguf,
/// .../tree/main, hf.co/org/name:Q8_0). `tag` is the :QUANT or the file of a file address;
/// `revision` the address's (default "main"). Returns false when there is no repository id in it.
struct HubTarget {
  std::string repo, tag, revision = "main";
};
bool parse_hub_target(const std::string& text, HubTarget& out);

/// The repository's files at `revision`. Throws HubError: kNotFound, kUnauthorized (private or
/// gated, or a bad token; the message says to set HF_TOKEN), kForbidden (gated, terms not
/// accepted: names the page), kNetwork, kProtocol; std::invalid_argument for a malformed id.
HubRepo fetch_repo(const HubConfig& hub, const std::string& repo, const std::string& revision = "main");

/// Up to `limit` repositories matching `query` that hold GGUF files, most downloaded first.
/// Throws HubError (kNetwork, kProtocol, ...).
std::vector<HubModel> search_models(const HubConfig& hub, const std::string& query, int limit = 20);

/// Downloads `file` of `repo` at `revision` to `dest` (its folders made as needed). The bytes
/// go to `dest`.part, which a later call resumes (Range) after an interruption; once complete its
/// size and (for an LFS file) SHA-256 are checked against the hub's, and only then it is renamed
/// to `dest`. A `dest` already there with the right size (and SHA-256) is kept as it is (returns
/// false: nothing downloaded). Throws HubError: kChecksum (the .part is deleted), kNetwork (the
/// .part stays: call again to resume), kCancelled (progress returned false; the .part stays),
/// kIo, and what fetch_repo throws for the status codes.
bool download_file(const HubConfig& hub, const std::string& repo, const std::string& revision, const HubFile& file,
                   const std::filesystem::path& dest, const ProgressFn& progress = {});

/// The SHA-256 of the file at `path`, lower-case hex. Throws HubError kIo when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

/// The default folder for downloaded models: $XDG_DATA_HOME/PagedChat/models, else
/// ~/.local/share/PagedChat/models (where the app lists them). A repository's files go to
/// <folder>/<org>/<name>/<path>.
std::filesystem::path default_models_dir();

}  // namespace pagedchat::hub
