#include "engine/loader/model_files.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "engine/loader/llama2c/llama2c_loader.h"

namespace fs = std::filesystem;

namespace pagedchat {
namespace {

std::vector<fs::path> files_with_extension(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string join(const std::vector<fs::path>& paths) {
  std::string s;
  for (const auto& p : paths) s += (s.empty() ? "" : ", ") + p.filename().string();
  return s;
}

}  // namespace

ModelFiles resolve_model_files(const std::string& model, const std::string& tokenizer) {
  if (model.empty()) throw std::runtime_error("no model given");
  std::error_code ec;
  const fs::path path(model);
  if (!fs::exists(path, ec)) throw std::runtime_error("model path '" + model + "' does not exist");
  ModelFiles files;
  fs::path dir;
  if (fs::is_directory(path, ec)) {
    dir = path;
    const auto bins = files_with_extension(path, ".bin");
    std::vector<fs::path> checkpoints;
    std::string rejected;  // "a.bin is truncated: ...; b.bin is not ..."
    for (const auto& b : bins) {
      if (const std::string problem = llama2c_checkpoint_problem(b.string()); problem.empty())
        checkpoints.push_back(b);
      else
        rejected += (rejected.empty() ? "" : "; ") + b.filename().string() + " " + problem;
    }
    if (checkpoints.empty())
      throw std::runtime_error("no llama2.c checkpoint (.bin) found in '" + model + "'" +
                               (rejected.empty() ? std::string() : " (" + rejected + ")"));
    if (checkpoints.size() > 1)
      throw std::runtime_error("several checkpoints in '" + model + "' (" + join(checkpoints) + "): name the file");
    files.checkpoint = checkpoints.front().string();
  } else {
    files.checkpoint = path.string();
    dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    // The file's own problem first: a broken checkpoint matters more than a missing tokenizer.
    if (const std::string problem = llama2c_checkpoint_problem(files.checkpoint); !problem.empty())
      throw std::runtime_error("'" + files.checkpoint + "' " + problem);
  }

  if (!tokenizer.empty()) {
    if (!fs::is_regular_file(tokenizer, ec)) throw std::runtime_error("tokenizer '" + tokenizer + "' does not exist");
    files.tokenizer = tokenizer;
  } else {
    const auto models = files_with_extension(dir, ".model");
    if (models.empty())
      throw std::runtime_error("no sentencepiece tokenizer (.model) found beside '" + files.checkpoint +
                               "'; pass one with --tokenizer");
    if (models.size() > 1) {
      auto it = std::find_if(models.begin(), models.end(),
                             [](const fs::path& p) { return p.filename() == "tokenizer.model"; });
      if (it == models.end())
        throw std::runtime_error("several tokenizers in '" + dir.string() + "' (" + join(models) +
                                 "): pass one with --tokenizer");
      files.tokenizer = it->string();
    } else {
      files.tokenizer = models.front().string();
    }
  }
  return files;
}

}  // namespace pagedchat
