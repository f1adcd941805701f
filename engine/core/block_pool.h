// BlockPool: the KV cache's fixed-size blocks (vLLM's v1 BlockPool). Each block has a reference
// count; blocks nobody references sit in a free queue ordered least recently used first. With
// prefix caching, a full block is also registered under a hash of (parent block's hash, its token
// ids, the request's cache salt); a freed block keeps that registration, so a later request with
// the same prefix can take it back, until it is reused for something else (evicted) from the
// head of the free queue. Lookups compare the stored key, so a hash collision is a miss, never a
// wrong hit.
//
// KV-cache groups (engine/core/kv_cache_groups.h) share the pool: a block is allocated for one
// group at a time and registered in that group's map (the same tokens hold different K/V in a
// full and in a sliding group: vLLM's BlockHashWithGroupId). A pool for a model with sliding
// windows reserves block 0 as the null block (vLLM's null_block): never allocated nor freed, it
// stands in block tables for the blocks a sliding window has left behind.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace pagedchat {

/// What identifies the contents of one full block: its parent's hash, its token ids, a salt, and
/// the images whose positions it holds (their identities and offsets: vLLM's extra keys).
struct BlockKey {
  uint64_t parent_hash = 0;
  std::vector<int> token_ids;
  std::string salt;
  std::string mm_key;
  bool operator==(const BlockKey&) const = default;
  /// 64-bit hash of the key (FNV-1a over the parent hash, the ids and the salt, then a final mix).
  uint64_t hash() const;
};

class BlockPool {
 public:
  /// Block ids that stand for no block in a table (the null block; only with reserve_null_block).
  static constexpr int kNullBlock = 0;

  /// num_blocks ids; with reserve_null_block, id kNullBlock is taken out for good.
  BlockPool(int num_blocks, bool enable_caching, bool reserve_null_block = false);

  /// Every block id, the null block included (what the KV cache's tensors hold).
  int num_blocks() const { return int(blocks_.size()); }
  /// Blocks that can ever be handed out: num_blocks() less the null block.
  int num_usable_blocks() const { return num_blocks() - (has_null_block_ ? 1 : 0); }
  bool has_null_block() const { return has_null_block_; }
  /// Blocks referenced by some request, allocated for `group`.
  int num_blocks_in_use(int group) const { return group < int(in_use_.size()) ? in_use_[std::size_t(group)] : 0; }
  /// The group a block was last allocated for (0 for one never allocated; -1 for the null block).
  int group_of(int block_id) const { return blocks_.at(block_id).group; }
  /// Blocks that can be handed out now: unreferenced ones, cached or not.
  int num_free_blocks() const { return int(free_queue_.size()); }
  /// Unreferenced blocks that still hold a registered prefix (evictable).
  int num_cached_free_blocks() const;
  /// Blocks registered in the prefix cache (referenced or not), in every group.
  int num_cached_blocks() const;
  bool caching_enabled() const { return caching_; }

  /// Takes n blocks from the head of the free queue (evicting their registrations) for `group`,
  /// each with a reference count of 1. Throws std::logic_error when fewer are free; callers check first.
  std::vector<int> allocate(int n, int group = 0);
  /// Adds a reference; an unreferenced (cached) block leaves the free queue.
  void incref(int block_id);
  /// Drops one reference; at 0 the block joins the free queue's tail (most recently used).
  void free(int block_id);
  int ref_count(int block_id) const { return blocks_.at(block_id).ref_count; }

  /// The block of `group` registered under `key`, if any (no reference taken).
  std::optional<int> lookup(const BlockKey& key, uint64_t key_hash, int group = 0) const;
  /// Registers a full, referenced block under `key` in the group it was allocated for (no-op when
  /// caching is off, when the block is already registered, or when another block of that group
  /// already holds that key).
  void register_block(int block_id, BlockKey key, uint64_t key_hash);
  /// The hash a block is registered under, if any.
  std::optional<uint64_t> block_hash(int block_id) const;
  /// Drops the block's registration (if any), whatever its reference count: used for a block that
  /// was registered before its K/V were computed and whose computation will not happen (its
  /// request was preempted or freed before the step ran), so the hash never points at garbage.
  void unregister_block(int block_id) { evict(block_id); }
  /// Drops every registration of unreferenced blocks (vLLM's reset_prefix_cache); returns false
  /// when some registered blocks are still in use.
  bool reset_prefix_cache();

 private:
  struct Block {
    int ref_count = 0;
    std::optional<uint64_t> hash;
    BlockKey key;
    std::list<int>::iterator free_pos;
    bool in_free_queue = false;
    int group = 0;
  };
  void evict(int block_id);
  void count_use(int group, int delta);

  std::vector<Block> blocks_;
  std::list<int> free_queue_;
  std::vector<std::unordered_map<uint64_t, int>> cached_;  // per group: hash -> block id
  std::vector<int> in_use_;                                // per group: referenced blocks
  bool caching_;
  bool has_null_block_;
};

}  // namespace pagedchat
