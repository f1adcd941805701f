#include "engine/loader/model_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_loader.h"
#include "engine/loader/llama2c/llama2c_loader.h"
#include "engine/loader/model_files.h"
#include "engine/loader/random_model.h"
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

// A folder with no llama2.c checkpoint but exactly one .gguf file names that file.
std::string single_gguf_in(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {};
  std::string found;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (!e.is_regular_file(ec)) continue;
    if (e.path().extension() == ".bin" && looks_like_llama2c_checkpoint(e.path().string())) return {};
    if (e.path().extension() == ".gguf") {
      if (!found.empty()) return {};  // ambiguous: let the llama2.c resolver explain
      found = e.path().string();
    }
  }
  return found;
}

// Reads every mapped file once (reporting progress), so the first requests do not stall on disk
// reads and the app can show a progress bar in bytes. The file is read with pread into a small
// buffer, which fills the page cache without mapping the pages into this process: the weights
// that get packed then fault in from the cache one matrix at a time and are released after it
// (the loader's packed callback), so the resident set never holds the whole file beside its
// packed copy (gpt-oss-20b's layer shape: a load-time peak of 1.27x file + KV before, when every
// page was touched here). Touches the mapped pages instead when the file cannot be read again.
void prefault(const LoadedModel& model, const EngineConfig& config) {
  std::uint64_t total = 0, done = 0;
  for (const auto& f : model.files) total += f->size();
  for (const auto& b : model.buffers) total += b.size() * sizeof(float);
  constexpr std::size_t kChunk = 16u << 20, kPage = 4096;
  std::vector<unsigned char> buffer;
  volatile unsigned char sink = 0;
  for (const auto& f : model.files) {
    const int fd = ::open(f->path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && buffer.empty()) buffer.resize(kChunk);
    for (std::size_t off = 0; off < f->size(); off += kChunk) {
      const std::size_t end = std::min(f->size(), off + kChunk);
      bool read = fd >= 0;
      for (std::size_t at = off; read && at < end;) {
        const ssize_t n = ::pread(fd, buffer.data(), end - at, off_t(at));
        if (n <= 0)
          read = n < 0 && errno == EINTR;
        else
          at += std::size_t(n);
      }
      if (!read)
        for (std::size_t p = off; p < end; p += kPage) sink = sink + f->data()[p];
      done += end - off;
      if (config.load_progress) config.load_progress(done, total);
    }
    if (fd >= 0) ::close(fd);
  }
  done = total;  // owned buffers were filled by the loader
  if (config.load_progress) config.load_progress(done, total);
}

}  // namespace

void check_vocab_sizes(const Tokenizer& tokenizer, int model_vocab_size, const std::string& model_path,
                       bool allow_padding) {
  const int n = tokenizer.vocab_size();
  if (n == model_vocab_size) return;
  // A Hugging Face model may have more embedding rows than its tokenizer has tokens: Qwen pads
  // 151669 tokens to 151936 (Qwen2.5-7B: 152064) rows in config.json's vocab_size; vLLM and
  // transformers accept that, the extra ids are never produced by the tokenizer. Padding is a few
  // hundred rows; a model whose vocabulary is much larger belongs to another tokenizer. (GGUF
  // converters write the padding rows into the vocabulary as [PAD] tokens, so there sizes match.)
  // A tokenizer with ids the model has no row for is always wrong.
  if (allow_padding && n < model_vocab_size && model_vocab_size - n <= n / 16 + 1024) return;
  throw std::runtime_error("tokenizer '" + tokenizer.path() + "' has " + std::to_string(n) + " tokens but the model '" +
                           model_path + "' has a vocabulary of " + std::to_string(model_vocab_size) +
                           (n > model_vocab_size ? ": the tokenizer has ids the model has no embedding for"
                                                 : ": they do not belong together"));
}

ModelBundle load_model(const EngineConfig& in) {
  EngineConfig config = in;
  if (const std::string gguf = single_gguf_in(config.model); !gguf.empty()) config.model = gguf;
  ModelBundle b;
  b.path = config.model;
  if (is_random_model_spec(config.model)) {
    b.format = "random";
    b.model = make_random_model(config.model);  // token ids only, unless a tokenizer is named
    if (!config.tokenizer.empty()) b.tokenizer = load_tokenizer(config.tokenizer);
  } else if (is_gguf_file(config.model) || std::filesystem::path(config.model).extension() == ".gguf") {
    // A ".gguf" without the magic is reported as a broken GGUF file, not as a llama2.c one.
    b.format = "gguf";  // weights, vocabulary and chat template in one file
    GgufModel g = load_gguf(config.model, /*with_tokenizer=*/config.tokenizer.empty());
    b.model = std::move(g.model);
    b.tokenizer = config.tokenizer.empty() ? std::move(g.tokenizer) : load_tokenizer(config.tokenizer);
    b.chat_template = std::move(g.chat_template);
    b.model.config.add_bos = g.add_bos;
  } else if (const std::string hf = hf_folder_of(config.model); !hf.empty()) {
    b = load_hf_folder(hf, config.tokenizer);  // bos/eos ids from config.json, not the tokenizer
  } else {
    const ModelFiles files = resolve_model_files(config.model, config.tokenizer);
    b.format = "llama2.c";
    b.path = files.checkpoint;
    b.model = load_llama2c(files.checkpoint);
    b.tokenizer = load_tokenizer(files.tokenizer);
  }
  ModelConfig& mc = b.model.config;
  if (b.tokenizer) {
    // Padding rows are allowed where the tokenizer is not the file's own list of the rows (a
    // Hugging Face tokenizer.json, or one named with --tokenizer); a GGUF vocabulary has a token
    // per row.
    check_vocab_sizes(*b.tokenizer, mc.vocab_size, b.path,
                      /*allow_padding=*/b.format == "huggingface" || !config.tokenizer.empty());
    if (b.format != "huggingface" && b.tokenizer->bos_id() >= 0) mc.bos_id = b.tokenizer->bos_id();
    if (b.format != "huggingface" && b.tokenizer->eos_id() >= 0) mc.eos_id = b.tokenizer->eos_id();
    // Every end-of-generation token the vocabulary declares stops generation too (GGUF eot/eom,
    // tokenizer_config.json's eos_token), as llama.cpp's EOG set and vLLM do.
    std::vector<int> eog = b.tokenizer->eos_ids();
    // The family's own end-of-reply tokens (gpt-oss's <|return|> and <|call|>) where the vocabulary has them.
    if (const ModelFamily* fam = find_family_by_gguf_name(mc.architecture))
      for (std::string_view piece : fam->end_of_generation_tokens)
        if (const std::optional<int> id = b.tokenizer->piece_to_id(piece)) eog.push_back(*id);
    for (int id : eog)
      if (id != mc.eos_id && id < mc.vocab_size &&
          std::find(mc.extra_eos_ids.begin(), mc.extra_eos_ids.end(), id) == mc.extra_eos_ids.end())
        mc.extra_eos_ids.push_back(id);
  }
  prefault(b.model, config);
  return b;
}

}  // namespace pagedchat
