// Loader for llama2.c checkpoints (karpathy/llama2.c, run.c's legacy format): a header of 7 int32
// (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; vocab_size > 0 means the
// classifier shares the token embedding), then float32 weights in run.c's order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/mapped_file.h"

namespace pagedchat {

/// Pointers into the mapped checkpoint. Per-layer tensors are stacked over layers:
/// wq [L, n_heads*hd, dim], wk/wv [L, n_kv_heads*hd, dim], wo [L, dim, n_heads*hd],
/// w1/w3 [L, hidden, dim], w2 [L, dim, hidden], norms [L, dim]; all row-major float32.
struct LlamaWeights {
  const float* token_embedding = nullptr;  ///< [vocab, dim]
  const float* rms_att = nullptr;
  const float* wq = nullptr;
  const float* wk = nullptr;
  const float* wv = nullptr;
  const float* wo = nullptr;
  const float* rms_ffn = nullptr;
  const float* w1 = nullptr;
  const float* w2 = nullptr;
  const float* w3 = nullptr;
  const float* rms_final = nullptr;        ///< [dim]
  const float* wcls = nullptr;             ///< [vocab, dim]; == token_embedding when shared
};

/// A loaded model: its shape, its weights and the mapping that keeps them alive.
struct LoadedModel {
  ModelConfig config;
  LlamaWeights weights;
  std::unique_ptr<MappedFile> file;  ///< the mapping the weights point into, or
  std::vector<float> owned;           ///< weights built in memory (random models)
};

/// True when `path` starts with a plausible llama2.c header whose implied size fits the file.
bool looks_like_llama2c_checkpoint(const std::string& path);

/// Loads a llama2.c checkpoint by mmap. Every header value is range-checked and every tensor's
/// extent is checked against the file size before use. Throws std::runtime_error naming the file
/// and the problem ("truncated: needs N bytes, has M", "n_heads 0 out of range", ...).
LoadedModel load_llama2c(const std::string& path);

}  // namespace pagedchat
