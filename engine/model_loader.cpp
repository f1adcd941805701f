#include "engine/model_loader.h"

#include <algorithm>
#include <stdexcept>

#include "engine/llama2c_loader.h"
#include "engine/model_files.h"
#include "engine/random_model.h"

namespace pagedchat {

namespace {

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

ModelBundle load_model(const EngineConfig& config) {
  ModelBundle b;
  b.path = config.model;
  if (is_random_model_spec(config.model)) {
    b.format = "random";
    b.model = make_random_model(config.model);  // token ids only, unless a tokenizer is named
    if (!config.tokenizer.empty()) b.tokenizer = std::make_unique<Tokenizer>(config.tokenizer);
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
    if (b.tokenizer->bos_id() >= 0) mc.bos_id = b.tokenizer->bos_id();
    if (b.tokenizer->eos_id() >= 0) mc.eos_id = b.tokenizer->eos_id();
  }
  prefault(b.model, config);
  return b;
}

}  // namespace pagedchat
