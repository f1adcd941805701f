// The weights of a decoder-only transformer (Llama, Qwen2, Qwen3 families), whatever file they came from: pointers to row-major
// float32 tensors that live in a memory-mapped file or in buffers the loader owns.
#pragma once

#include <memory>
#include <vector>

#include "engine/config.h"
#include "engine/loader/mapped_file.h"

namespace pagedchat {

/// One transformer layer. Shapes (rows x cols, row-major): wq [n_heads*hd, dim], wk/wv
/// [n_kv_heads*hd, dim], wo [dim, n_heads*hd], w1 (gate)/w3 (up) [hidden, dim], w2 (down)
/// [dim, hidden], norms [dim]; the optional tensors (null when the config does not use them):
/// bq [n_heads*hd], bk/bv [n_kv_heads*hd] (config.attention_qkv_bias; a null one of them counts as
/// zero), bo [dim] (config.attention_out_bias), q_norm/k_norm [hd] (config.qk_norm).
struct LayerWeights {
  const float* rms_att = nullptr;
  const float* wq = nullptr;
  const float* wk = nullptr;
  const float* wv = nullptr;
  const float* wo = nullptr;
  const float* bq = nullptr;
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  const float* rms_ffn = nullptr;
  const float* w1 = nullptr;
  const float* w2 = nullptr;
  const float* w3 = nullptr;
};

/// The weights of a decoder-only transformer (see ModelConfig).
struct ModelWeights {
  const float* token_embedding = nullptr;  ///< [vocab, dim]
  std::vector<LayerWeights> layers;
  const float* rms_final = nullptr;        ///< [dim]
  const float* wcls = nullptr;             ///< [vocab, dim]; == token_embedding when tied
};

/// A loaded model: its shape, its weights and whatever keeps them alive.
struct LoadedModel {
  ModelConfig config;
  ModelWeights weights;
  std::vector<std::unique_ptr<MappedFile>> files;  ///< mappings weights point into
  std::vector<std::vector<float>> buffers;         ///< weights converted or built in memory

  /// A new owned float32 buffer of n values (stable address).
  float* allocate(std::size_t n) {
    buffers.emplace_back(n);
    return buffers.back().data();
  }
  /// Bytes of weights resident: owned buffers plus mapped files.
  std::size_t resident_bytes() const {
    std::size_t n = 0;
    for (const auto& b : buffers) n += b.size() * sizeof(float);
    for (const auto& f : files) n += f->size();
    return n;
  }
};

}  // namespace pagedchat
