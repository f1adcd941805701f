// The paged KV cache (vLLM's KV blocks, in the backend's memory: host or device), laid out by
// KV-cache group (engine/core/kv_cache_groups.h): group_size K tensors and group_size V tensors,
// each [num_blocks * block_size, kv_width] of the cache's element type (kv_width =
// ModelConfig::kv_cache_width(): n_kv_heads * head_dim, the widest layer's where they differ)
// (kernels::KvDType: float32, bfloat16 / float16 stored as uint16_t bits, or q8_0 blocks; a row
// takes kernels::kv_row_bytes(dtype, kv_width) bytes). Layer l is the i-th layer of its group
// (KVCacheGroups::layer_tensor) and uses tensor i, so the layers of different groups share
// tensors: a block id belongs to one group at a time (the KVCacheCoordinator hands it out), and
// holds that group's layers. A model with one group (no sliding windows) has one tensor per layer.
// A token's slot in group g is block_ids[g][pos / block_size] * block_size + pos % block_size
// (see engine/core/kv_cache_coordinator.h).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/config.h"
#include "engine/core/kv_cache_groups.h"
#include "kernels/ops.h"

namespace pagedchat {

struct KVCache {
  /// Zero-filled K and V of `num_blocks` blocks of `block_size` tokens for the KV-cache groups of
  /// `c` (2 * group_size * num_blocks * block_size rows of n_kv_heads * head_dim elements of
  /// `dtype`), in `backend`'s memory (Backend::allocate), or host memory without one. Throws
  /// std::invalid_argument for q8_0 when the rows are not whole 32-element blocks.
  /// With recurrent (Gated DeltaNet) layers, also `num_state_slots` zero-filled state slots: per
  /// recurrent layer [num_state_slots][linear_attn.state_floats()] float32 (vLLM's MambaCache).
  KVCache(const ModelConfig& c, int num_blocks, int block_size, kernels::KvDType dtype = kernels::KvDType::kFloat32,
          kernels::Backend* backend = nullptr, int num_state_slots = 0);
  /// Copies block `src` into block `dst` in every tensor, K and V (copy-on-write), bit for bit.
  void copy_block(int src, int dst);
  /// Bytes one block id takes: K and V of group_size layers, in `dtype` (for one group: every
  /// layer, as before groups).
  static std::size_t bytes_per_block(const ModelConfig& c, int block_size, kernels::KvDType dtype);
  /// The same for a grouping computed already.
  static std::size_t bytes_per_block(const ModelConfig& c, const KVCacheGroups& groups, int block_size,
                                     kernels::KvDType dtype);
  /// Bytes the whole cache holds (num_blocks * bytes_per_block).
  std::size_t bytes() const { return std::size_t(num_blocks) * block_bytes_; }

  /// Layer l's K / V tensor (its group's tensor): float* for kFloat32, uint16_t* for the 16-bit
  /// types, q8_0 blocks.
  void* key(int l) { return key_[tensor(l)]->data(); }
  void* value(int l) { return value_[tensor(l)]->data(); }
  const void* key(int l) const { return key_[tensor(l)]->data(); }
  const void* value(int l) const { return value_[tensor(l)]->data(); }

  /// Recurrent layer l's state in slot `slot` (ModelConfig::linear_attn.state_floats() floats).
  float* state(int l, int slot) {
    return static_cast<float*>(state_[std::size_t(state_index_.at(std::size_t(l)))]->data()) +
           std::size_t(slot) * state_floats_;
  }
  /// Copies state slot `src` to `dst` in every recurrent layer (src < 0: zeroes dst), bit for bit.
  void copy_state(int src, int dst);
  /// Bytes one state slot takes over every recurrent layer (0 without recurrent layers).
  static std::size_t bytes_per_state_slot(const ModelConfig& c) { return c.recurrent_state_floats() * sizeof(float); }
  int num_state_slots = 0;

  int num_groups() const { return groups_.num_groups(); }
  /// The KV-cache group of layer l: its slots and block tables are the batch's group's.
  int group_of_layer(int l) const { return groups_.layer_group.at(std::size_t(l)); }
  const KVCacheGroups& groups() const { return groups_; }

  int num_blocks, block_size, kv_width;
  kernels::KvDType dtype;

 private:
  std::size_t tensor(int l) const { return std::size_t(groups_.layer_tensor.at(std::size_t(l))); }

  kernels::Backend* backend_;  // null: host memory
  KVCacheGroups groups_;
  std::size_t block_bytes_ = 0;                                // group_size tensors, K and V
  std::vector<std::unique_ptr<kernels::Buffer>> key_, value_;  // [group_size], 64-byte aligned
  std::vector<std::unique_ptr<kernels::Buffer>> state_;        // per recurrent layer
  std::vector<int> state_index_;                               // [n_layers] index into state_, -1: none
  std::size_t state_floats_ = 0;                               // of one layer and slot
};

}  // namespace pagedchat
