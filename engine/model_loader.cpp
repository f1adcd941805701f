#include "engine/model_loader.h"

#include <stdexcept>

#include "engine/llama2c_loader.h"
#include "engine/model_files.h"
#include "engine/random_model.h"

namespace pagedchat {

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
  return b;
}

}  // namespace pagedchat
