#include "engine/loader/model_loader.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "engine/loader/gguf/gguf_llama.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_loader.h"
#include "engine/loader/llama2c/llama2c_loader.h"
#include "engine/loader/model_files.h"
#include "engine/loader/random_model.h"

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

// Reads every mapped page once (reporting progress), so the first requests do not stall on page
// faults and the app can show a progress bar in bytes.
void prefault(const LoadedModel& model, const EngineConfig& config) {
  std::uint64_t total = 0, done = 0;
  for (const auto& f : model.files) total += f->size();
  for (const auto& b : model.buffers) total += b.size() * sizeof(float);
  constexpr std::size_t kChunk = 16u << 20, kPage = 4096;
  volatile unsigned char sink = 0;
  for (const auto& f : model.files)
    for (std::size_t off = 0; off < f->size(); off += kChunk) {
      const std::size_t end = std::min(f->size(), off + kChunk);
      for (std::size_t p = off; p < end; p += kPage) sink = sink + f->data()[p];
      done += end - off;
      if (config.load_progress) config.load_progress(done, total);
    }
  done = total;  // owned buffers were filled by the loader
  if (config.load_progress) config.load_progress(done, total);
}

}  // namespace

ModelBundle load_model(const EngineConfig& in) {
  EngineConfig config = in;
  if (const std::string gguf = single_gguf_in(config.model); !gguf.empty()) config.model = gguf;
  ModelBundle b;
  b.path = config.model;
  if (is_random_model_spec(config.model)) {
    b.format = "random";
    b.model = make_random_model(config.model);  // token ids only, unless a tokenizer is named
    if (!config.tokenizer.empty()) b.tokenizer = std::make_unique<Tokenizer>(config.tokenizer);
  } else if (is_gguf_file(config.model) || std::filesystem::path(config.model).extension() == ".gguf") {
    // A ".gguf" without the magic is reported as a broken GGUF file, not as a llama2.c one.
    b.format = "gguf";  // weights, vocabulary and chat template in one file
    GgufModel g = load_gguf(config.model, /*with_tokenizer=*/config.tokenizer.empty());
    b.model = std::move(g.model);
    b.tokenizer = config.tokenizer.empty() ? std::move(g.tokenizer) : std::make_unique<Tokenizer>(config.tokenizer);
    b.chat_template = std::move(g.chat_template);
    b.model.config.add_bos = g.add_bos;
  } else if (const std::string hf = hf_folder_of(config.model); !hf.empty()) {
    b = load_hf_folder(hf, config.tokenizer);  // bos/eos ids from config.json, not the tokenizer
  } else {
    const ModelFiles files = resolve_model_files(config.model, config.tokenizer);
    b.format = "llama2.c";
    b.path = files.checkpoint;
    b.model = load_llama2c(files.checkpoint);
    b.tokenizer = std::make_unique<Tokenizer>(files.tokenizer);
  }
  ModelConfig& mc = b.model.config;
  if (b.tokenizer) {
    if (b.tokenizer->vocab_size() != mc.vocab_size)
      throw std::runtime_error("tokenizer '" + b.tokenizer->path() + "' has " + std::to_string(b.tokenizer->vocab_size()) +
                               " pieces but the model '" + b.path + "' has a vocabulary of " +
                               std::to_string(mc.vocab_size) + ": they do not belong together");
    if (b.format != "huggingface" && b.tokenizer->bos_id() >= 0) mc.bos_id = b.tokenizer->bos_id();
    if (b.format != "huggingface" && b.tokenizer->eos_id() >= 0) mc.eos_id = b.tokenizer->eos_id();
  }
  prefault(b.model, config);
  return b;
}

}  // namespace pagedchat
