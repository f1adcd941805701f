// `pagedchat-cli pull REPO[:QUANT]` and `pagedchat-cli search QUERY`: models from the Hugging Face
// hub (engine/loader/hub), as `ollama pull hf.co/REPO:QUANT` and llama.cpp's `-hf REPO:QUANT` take
// them. The file goes to <models folder>/<org>/<name>/, the path is printed on stdout (so that
// `pagedchat-cli chat --model "$(pagedchat-cli pull REPO)"` works), progress on stderr.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "engine/loader/hub/gguf_choice.h"
#include "engine/loader/hub/hf_hub.h"

namespace pagedchat::cli {

namespace {

namespace fs = std::filesystem;
using hub::HubError;

struct PullOptions {
  std::string target;  ///< REPO or REPO:QUANT
  std::string revision = "main";
  std::string models_dir;
  bool list = false;
  int retries = 3;
};

std::string human(std::uint64_t bytes) {
  char buf[32];
  const double b = double(bytes);
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  else if (b >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

/// A progress bar on stderr: redrawn in place on a terminal (at most 10 times a second), else a
/// line at every tenth.
class ProgressBar {
 public:
  explicit ProgressBar(std::string name) : name_(std::move(name)), tty_(isatty(STDERR_FILENO) != 0) {}
  bool operator()(std::uint64_t done, std::uint64_t total) {
    using Clock = std::chrono::steady_clock;
    const auto now = Clock::now();
    if (!started_) {
      started_ = true;
      start_ = now;
      start_bytes_ = done;
    }
    const int percent = total > 0 ? int(100.0 * double(done) / double(total)) : -1;
    if (tty_) {
      if (now - last_ < std::chrono::milliseconds(100) && done != total) return true;
      last_ = now;
      const double secs = std::chrono::duration<double>(now - start_).count();
      const double rate = secs > 0.2 ? double(done - start_bytes_) / secs : 0.0;
      std::fprintf(stderr, "\r%s  %3d%%  %s / %s  %s/s   ", name_.c_str(), std::max(percent, 0), human(done).c_str(),
                   human(total).c_str(), human(std::uint64_t(rate)).c_str());
    } else if (percent >= 0 && percent / 10 > last_tenth_) {
      last_tenth_ = percent / 10;
      std::fprintf(stderr, "%s: %d%% of %s\n", name_.c_str(), last_tenth_ * 10, human(total).c_str());
    }
    return true;
  }
  void finish() {
    if (tty_ && started_) std::fputc('\n', stderr);
  }

 private:
  std::string name_;
  bool tty_;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_, last_;
  std::uint64_t start_bytes_ = 0;
  int last_tenth_ = -1;
};

/// Downloads one file, resuming up to `retries` times after a broken transfer.
void fetch_file(const hub::HubConfig& config, const std::string& repo, const std::string& revision,
                const hub::HubFile& file, const fs::path& dest, int retries) {
  for (int attempt = 0;; ++attempt) {
    ProgressBar bar(file.path);
    try {
      const bool downloaded = hub::download_file(config, repo, revision, file, dest, std::ref(bar));
      bar.finish();
      if (!downloaded)
        std::fprintf(stderr, "%s: already downloaded (%s)\n", file.path.c_str(), human(file.size).c_str());
      return;
    } catch (const HubError& e) {
      bar.finish();
      if (e.kind() != HubError::Kind::kNetwork || attempt >= retries) throw;
      std::string why = e.what();  // said before it is done: no "run again" here
      if (const std::size_t cut = why.find("; run again to resume"); cut != std::string::npos) why.erase(cut);
      std::fprintf(stderr, "pagedchat-cli: %s; resuming now (%d of %d)\n", why.c_str(), attempt + 1, retries);
    }
  }
}

int run_pull(const PullOptions& opt) {
  // org/name[:QUANT], or a pasted address (https://huggingface.co/org/name, a file's blob/ or
  // resolve/ link: that file; hf.co/org/name:QUANT as ollama takes it).
  hub::HubTarget target;
  if (!hub::parse_hub_target(opt.target, target))
    throw std::invalid_argument("'" + opt.target + "' is not a Hugging Face repository (org/name, optionally :QUANT)");
  const std::string repo = target.repo, tag = target.tag;
  const std::string revision = opt.revision != "main" ? opt.revision : target.revision;
  const hub::HubConfig config = hub::hub_config_from_env();
  const hub::HubRepo info = hub::fetch_repo(config, repo, revision);
  const std::vector<hub::GgufModel> models = hub::gguf_models(info);
  const fs::path root = (opt.models_dir.empty() ? hub::default_models_dir() : fs::path(opt.models_dir)) / repo;

  if (opt.list) {
    if (models.empty()) {
      std::printf("%s holds no GGUF file; `pull %s` downloads its Hugging Face folder:\n", repo.c_str(), repo.c_str());
      for (const hub::HubFile& f : hub::hf_folder_files(info))
        std::printf("  %10s  %s\n", human(f.size).c_str(), f.path.c_str());
      return 0;
    }
    std::printf("   %-12s %10s  %-5s %s\n", "QUANT", "SIZE", "FITS", "FILE");
    for (const hub::GgufModel& m : models)
      std::printf(" %c %-12s %10s  %-5s %s%s\n", m.recommended ? '*' : ' ', m.quant.empty() ? "-" : m.quant.c_str(),
                  human(m.size).c_str(), m.fits ? "yes" : "no", m.first_path().c_str(),
                  m.parts.size() > 1 ? (" (+" + std::to_string(m.parts.size() - 1) + " parts)").c_str() : "");
    std::printf("(* recommended for this machine; fits: the file and a fifth more within the memory available now)\n");
    return 0;
  }

  if (models.empty()) {
    if (!tag.empty()) throw std::invalid_argument(repo + " holds no GGUF file, so :" + tag + " names nothing");
    const std::vector<hub::HubFile> files = hub::hf_folder_files(info);
    const bool weights = std::any_of(files.begin(), files.end(), [](const hub::HubFile& f) {
      return f.path.size() > 12 && f.path.compare(f.path.size() - 12, 12, ".safetensors") == 0;
    });
    if (!weights ||
        std::none_of(files.begin(), files.end(), [](const hub::HubFile& f) { return f.path == "config.json"; }))
      throw std::invalid_argument(repo +
                                  " holds neither GGUF files nor a Hugging Face model (config.json and *.safetensors)");
    for (const hub::HubFile& f : files) fetch_file(config, repo, revision, f, root / f.path, opt.retries);
    std::printf("%s\n", root.string().c_str());
    return 0;
  }
  const hub::GgufModel& model = hub::choose_gguf(models, repo, tag);
  if (!model.fits)
    std::fprintf(stderr, "pagedchat-cli: warning: %s (%s) may not fit this machine's available memory\n",
                 model.first_path().c_str(), human(model.size).c_str());
  for (const hub::HubFile& f : model.parts) fetch_file(config, repo, revision, f, root / f.path, opt.retries);
  std::printf("%s\n", (root / model.first_path()).string().c_str());
  return 0;
}

int run_search(const std::string& query, int limit) {
  const hub::HubConfig config = hub::hub_config_from_env();
  const std::vector<hub::HubModel> found = hub::search_models(config, query, limit);
  if (found.empty()) {
    std::fprintf(stderr, "no GGUF repository matches '%s'\n", query.c_str());
    return 1;
  }
  for (const hub::HubModel& m : found)
    std::printf("%-60s %10llu downloads%s\n", m.id.c_str(), static_cast<unsigned long long>(m.downloads),
                m.gated.empty() ? "" : "  (gated)");
  return 0;
}

}  // namespace

Command add_pull_command(CLI::App& app) {
  auto opt = std::make_shared<PullOptions>();
  CLI::App* cmd = app.add_subcommand(
      "pull",
      "Download a model from the Hugging Face hub: REPO[:QUANT] picks a GGUF by quantization (default: the "
      "recommended one for this machine), a repository without GGUF gives its safetensors folder; prints the "
      "path. HF_TOKEN and HF_ENDPOINT are honoured");
  cmd->add_option("model", opt->target, "org/name or org/name:QUANT (e.g. Qwen/Qwen3-4B-GGUF:Q4_K_M)")->required();
  cmd->add_option("--revision", opt->revision, "branch, tag or commit (default main)");
  cmd->add_option("--models-dir", opt->models_dir,
                  "where models go (default: $XDG_DATA_HOME/PagedChat/models, the app's list)");
  cmd->add_flag("--list", opt->list,
                "list the repository's GGUF files (quantization, size, fits) and download nothing");
  cmd->add_option("--retries", opt->retries, "resumes after a broken transfer (default 3)")->check(CLI::Range(0, 100));
  return [opt]() { return run_pull(*opt); };
}

Command add_search_command(CLI::App& app) {
  auto query = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(20);
  CLI::App* cmd = app.add_subcommand("search", "Search the Hugging Face hub for repositories with GGUF files");
  cmd->add_option("query", *query, "words of the repository name")->required();
  cmd->add_option("--limit", *limit, "most results (default 20)")->check(CLI::Range(1, 500));
  return [query, limit]() { return run_search(*query, *limit); };
}

}  // namespace pagedchat::cli
