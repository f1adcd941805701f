// RecurrentStateManager: the state slots of a hybrid model's recurrent (Gated DeltaNet) layers —
// vLLM v1's MambaManager idea, with prefix caching through state checkpoints. Pure bookkeeping
// (slot ids); the states live in KVCache::state.
//
// A recurrent layer keeps, per sequence, a fixed-size state instead of a growing KV cache, so a
// prefix-cache hit on the attention layers' blocks is useless unless the recurrent state at that
// token boundary is known too. Every running request holds one slot (its live state). At block
// boundaries the forward also writes a copy of the state into a second slot the request holds
// (its rolling checkpoint, one boundary at a time); the engine registers that checkpoint in the
// cache under the hash of the block that ends at the boundary — at the end of each prompt, every
// kCheckpointIntervalBlocks blocks of a long prompt, and when the request finishes or is preempted
// (the end of a turn). A new request whose prefix matches resumes from the deepest block boundary
// that has both the attention blocks and a checkpoint (KVCacheCoordinator::get_computed_blocks),
// its live slot starting as a copy of the checkpoint.
//
// Slots are one pool: free, held (a running request's live or rolling slot) or cached (a
// registered checkpoint, evicted least recently used when a slot is needed).
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/core/block_pool.h"

namespace pagedchat {

class RecurrentStateManager {
 public:
  /// Checkpoints registered during a long prefill: one at least every this many blocks.
  static constexpr int kCheckpointIntervalBlocks = 32;

  /// num_slots slot ids [0, num_slots); caching off: checkpoints are never registered.
  RecurrentStateManager(int num_slots, bool enable_caching);

  /// A slot for a request: a free one, else the least recently used checkpoint's (evicted), never
  /// `keep`. nullopt when every slot is held.
  std::optional<int> allocate(int keep = -1);
  /// Releases a held slot.
  void free(int slot);
  /// The slot holding the checkpoint registered under `key` (hash `key_hash`), marked most
  /// recently used; nullopt when none.
  std::optional<int> lookup(const BlockKey& key, uint64_t key_hash);
  /// Whether a checkpoint is registered under `key` (no LRU change).
  bool contains(const BlockKey& key, uint64_t key_hash) const;
  /// Makes a held slot a cached checkpoint under `key`; if one is registered under it already,
  /// the slot is freed instead.
  void register_checkpoint(int slot, BlockKey key, uint64_t key_hash);
  /// Drops every cached checkpoint (reset_prefix_cache).
  void reset();

  int num_slots() const { return num_slots_; }
  int num_free_slots() const { return int(free_.size()); }
  /// Slots allocate() could hand out now: free ones and cached checkpoints other than `keep`.
  int num_available(int keep = -1) const {
    return num_free_slots() + num_checkpoints() - (keep >= 0 && checkpoints_.count(keep) ? 1 : 0);
  }
  int num_checkpoints() const { return int(lru_.size()); }
  /// Slots held by requests (live and rolling).
  int num_held_slots() const { return num_slots_ - num_free_slots() - num_checkpoints(); }
  bool caching_enabled() const { return caching_; }

 private:
  struct Checkpoint {
    BlockKey key;
    uint64_t hash;
    std::list<int>::iterator pos;
  };
  void evict(int slot);

  int num_slots_;
  bool caching_;
  std::vector<int> free_;
  std::list<int> lru_;                               // cached checkpoints, least recently used first
  std::unordered_map<int, Checkpoint> checkpoints_;  // slot -> its checkpoint
  std::unordered_multimap<uint64_t, int> by_hash_;   // hash -> slot
};

}  // namespace pagedchat
