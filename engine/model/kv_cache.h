// The paged KV cache (vLLM's KV blocks, in the backend's memory: host or device): per layer, K and V tensors
// [num_blocks * block_size, n_kv_heads * head_dim] of the cache's element type (kernels::KvDType:
// float32, bfloat16 / float16 stored as uint16_t bits, or q8_0 blocks; a row takes
// kernels::kv_row_bytes(dtype, kv_width) bytes); a token's slot is
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
  /// (n_layers * 2 * num_blocks * block_size rows of n_kv_heads * head_dim elements of `dtype`), in
  /// `backend`'s memory (Backend::allocate), or host memory without one. Throws
  /// std::invalid_argument for q8_0 when the rows are not whole 32-element blocks.
  KVCache(const ModelConfig& c, int num_blocks, int block_size, kernels::KvDType dtype = kernels::KvDType::kFloat32,
          kernels::Backend* backend = nullptr);
  /// Copies every layer's K and V of block `src` into block `dst` (copy-on-write), bit for bit.
  void copy_block(int src, int dst);
  /// Bytes one block takes over all layers, K and V, in `dtype`.
  static std::size_t bytes_per_block(const ModelConfig& c, int block_size, kernels::KvDType dtype);
  /// Bytes the whole cache holds (num_blocks * bytes_per_block).
  std::size_t bytes() const { return std::size_t(num_blocks) * block_bytes_; }

  /// Layer l's K / V tensor: float* for kFloat32, uint16_t* for the 16-bit types, q8_0 blocks.
  void* key(int l) { return key_[l]->data(); }
  void* value(int l) { return value_[l]->data(); }
  const void* key(int l) const { return key_[l]->data(); }
  const void* value(int l) const { return value_[l]->data(); }

  int num_blocks, block_size, kv_width;
  kernels::KvDType dtype;

 private:
  kernels::Backend* backend_;                                  // null: host memory
  std::size_t block_bytes_ = 0;                                // all layers, K and V
  std::vector<std::unique_ptr<kernels::Buffer>> key_, value_;  // [n_layers], 64-byte aligned
};

}  // namespace pagedchat
