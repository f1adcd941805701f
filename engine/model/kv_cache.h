// The paged KV cache (vLLM's KV blocks, on the CPU): per layer, K and V tensors
// [num_blocks * block_size, n_kv_heads * head_dim] float32; a token's slot is
// block_id * block_size + offset (see engine/core/kv_cache_manager.h).
#pragma once

#include <cstddef>
#include <vector>

#include "engine/config.h"

namespace pagedchat {

struct KVCache {
  /// Zero-filled K and V of `num_blocks` blocks of `block_size` tokens for every layer of `c`
  /// (n_layers * 2 * num_blocks * block_size * n_kv_heads * head_dim floats).
  KVCache(const ModelConfig& c, int num_blocks, int block_size);
  /// Copies every layer's K and V of block `src` into block `dst` (copy-on-write).
  void copy_block(int src, int dst);
  /// Bytes one block takes over all layers, K and V.
  static std::size_t bytes_per_block(const ModelConfig& c, int block_size);

  int num_blocks, block_size, kv_width;
  std::vector<std::vector<float>> key, value;  // [n_layers][num_blocks * block_size * kv_width]
};

}  // namespace pagedchat
