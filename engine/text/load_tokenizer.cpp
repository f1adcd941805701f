// load_tokenizer(): picks the Tokenizer implementation from what the path is (see tokenizer.h).
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/text/bpe/tokenizer_json.h"
#include "engine/text/sentencepiece_tokenizer.h"
#include "engine/text/tokenizer.h"

namespace fs = std::filesystem;

namespace pagedchat {

namespace {

std::unique_ptr<Tokenizer> load_json(const fs::path& json) {
  std::error_code ec;
  const fs::path config = json.parent_path() / "tokenizer_config.json";
  return bpe::load_tokenizer_json(json.string(), fs::is_regular_file(config, ec) ? config.string() : std::string());
}

std::unique_ptr<Tokenizer> load_file(const fs::path& p) {
  const std::string path = p.string();
  if (is_gguf_file(path) || p.extension() == ".gguf") return load_gguf_tokenizer(GgufFile::open(path));
  if (p.extension() == ".json") return load_json(p);
  return SentencePieceTokenizer::load_file(path);
}

// A folder: a Hugging Face folder (tokenizer.json preferred, else tokenizer.model), else a
// llama2.c folder's one sentencepiece .model, else its one .gguf.
std::unique_ptr<Tokenizer> load_folder(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_regular_file(dir / "tokenizer.json", ec)) return load_json(dir / "tokenizer.json");
  if (fs::is_regular_file(dir / "tokenizer.model", ec))
    return SentencePieceTokenizer::load_file((dir / "tokenizer.model").string());
  std::vector<fs::path> models, ggufs;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    if (e.path().extension() == ".model") models.push_back(e.path());
    if (e.path().extension() == ".gguf") ggufs.push_back(e.path());
  }
  if (models.size() == 1) return SentencePieceTokenizer::load_file(models.front().string());
  if (models.empty() && ggufs.size() == 1) return load_file(ggufs.front());
  if (models.size() > 1 || ggufs.size() > 1)
    throw std::runtime_error("'" + dir.string() + "' holds several tokenizers (" + std::to_string(models.size()) +
                             " .model, " + std::to_string(ggufs.size()) + " .gguf files); name the file");
  throw std::runtime_error(
      "'" + dir.string() +
      "' holds no tokenizer (looked for tokenizer.json, tokenizer.model, a .model or a .gguf file)");
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return load_folder(p);
  if (!fs::is_regular_file(p, ec))
    throw std::runtime_error("tokenizer file '" + path + "' does not exist or is not a file");
  return load_file(p);
}

}  // namespace pagedchat
