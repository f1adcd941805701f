// The paged KV cache (vLLM's KV blocks, on the CPU): per layer, K and V tensors
// [num_blocks * block_size, n_kv_heads * head_dim] of the cache's element type (kernels::KvDType:
// float32, or bfloat16 / float16 stored as uint16_t bits); a token's slot is
// block_id * block_size + offset (see engine/core/kv_cache_manager.h).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/config.h"
#include "kernels/ops.h"

namespace pagedchat {

struct KVCache {
  /// Zero-filled K and V of `num_blocks` blocks of `block_size` tokens for every layer of `c`
  /// (n_layers * 2 * num_blocks * block_size * n_kv_heads * head_dim elements of `dtype`).
  KVCache(const ModelConfig& c, int num_blocks, int block_size, kernels::KvDType dtype = kernels::KvDType::kFloat32);
  /// Copies every layer's K and V of block `src` into block `dst` (copy-on-write), bit for bit.
  void copy_block(int src, int dst);
  /// Bytes one block takes over all layers, K and V, in `dtype`.
  static std::size_t bytes_per_block(const ModelConfig& c, int block_size, kernels::KvDType dtype);
  /// Bytes the whole cache holds (num_blocks * bytes_per_block).
  std::size_t bytes() const { return std::size_t(num_blocks) * block_bytes_; }

  /// Layer l's K / V tensor: float* for kFloat32, uint16_t* for the 16-bit types.
  void* key(int l) { return key_[l].get(); }
  void* value(int l) { return value_[l].get(); }
  const void* key(int l) const { return key_[l].get(); }
  const void* value(int l) const { return value_[l].get(); }

  int num_blocks, block_size, kv_width;
  kernels::KvDType dtype;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::size_t block_bytes_ = 0;                       // all layers, K and V
  std::vector<std::unique_ptr<void, Free>> key_, value_;  // [n_layers], 64-byte aligned
};

}  // namespace pagedchat
