// The block-table logic of one KV-cache group (vLLM v1's single_type_kv_cache_manager.py): what a
// group of full-attention layers and a group of sliding-window layers differ in. The tables
// themselves live in the requests (Request::block_ids[group]); the coordinator
// (engine/core/kv_cache_coordinator.h) runs these for every group of a request.
//
//   FullAttentionManager   every block of the sequence stays in the table; a prefix-cache hit is
//                          the run of leading full blocks found in the cache.
//   SlidingWindowManager   the query at position p reads keys p - W < k <= p only. Before each
//                          allocation, the blocks no token from num_computed_tokens on can read
//                          (every position < num_computed_tokens - W + 1) go back to the pool
//                          and their entries become the null block: a long sequence holds about
//                          W / block_size + 1 blocks. A prefix-cache hit at block boundary h
//                          needs only the ceil((W - 1) / block_size) blocks before h (the W - 1
//                          keys the first token to compute reads); the earlier entries are null.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/core/block_pool.h"
#include "engine/core/request.h"

namespace pagedchat {

/// The prefix-cache key of block i of a request (parent hash, token ids, salt on block 0).
BlockKey block_key(const Request& request, int block_index, int block_size);
/// The hash of block i of a request's chain, computing and storing r.block_hashes up to it.
uint64_t block_hash(Request& request, int block_index, int block_size);

class SingleTypeKVCacheManager {
 public:
  SingleTypeKVCacheManager(BlockPool& pool, int group, int block_size)
      : pool_(pool), group_(group), block_size_(block_size) {}
  virtual ~SingleTypeKVCacheManager() = default;

  int group() const { return group_; }
  /// 0 for full attention.
  virtual int sliding_window() const = 0;

  /// The prefix-cache hit of this group among the request's first max_blocks full blocks: the
  /// table it would start with (null entries for blocks it need not hold); its size is the hit in
  /// blocks. No references are taken.
  virtual std::vector<int> find_longest_cache_hit(Request& request, int max_blocks) const = 0;
  /// True when every shorter prefix of a hit is a hit too (full attention): the coordinator then
  /// looks the group up once and truncates.
  virtual bool hit_is_downward_closed() const = 0;
  /// Releases the table's blocks that no token from position num_computed_tokens on reads, and
  /// puts the null block in their entries. Full attention: none.
  virtual void remove_skipped_blocks(std::vector<int>& table, int num_computed_tokens) = 0;

  /// Blocks `table` takes from the free queue to hold num_tokens tokens when the step writes from
  /// position first_write: the new entries, plus one when the block holding first_write is shared
  /// with another request (copy-on-write; only when may_copy).
  int num_blocks_to_allocate(const std::vector<int>& table, int first_write, int num_tokens, bool may_copy) const;
  /// Makes `table` hold num_tokens tokens as num_blocks_to_allocate counts (the caller checked
  /// that the pool has them); a copy-on-write appends (source, destination) to `copies`.
  void allocate(std::vector<int>& table, int first_write, int num_tokens, bool may_copy,
                std::vector<std::pair<int, int>>& copies);

 protected:
  int blocks_for(int num_tokens) const { return (num_tokens + block_size_ - 1) / block_size_; }
  bool is_null(int block_id) const { return pool_.has_null_block() && block_id == BlockPool::kNullBlock; }
  std::optional<int> cached_block(Request& request, int block_index) const;

  BlockPool& pool_;
  int group_;
  int block_size_;
};

class FullAttentionManager final : public SingleTypeKVCacheManager {
 public:
  using SingleTypeKVCacheManager::SingleTypeKVCacheManager;
  int sliding_window() const override { return 0; }
  std::vector<int> find_longest_cache_hit(Request& request, int max_blocks) const override;
  bool hit_is_downward_closed() const override { return true; }
  void remove_skipped_blocks(std::vector<int>&, int) override {}
};

class SlidingWindowManager final : public SingleTypeKVCacheManager {
 public:
  /// The pool must have a null block.
  SlidingWindowManager(BlockPool& pool, int group, int block_size, int sliding_window);
  int sliding_window() const override { return window_; }
  std::vector<int> find_longest_cache_hit(Request& request, int max_blocks) const override;
  bool hit_is_downward_closed() const override { return false; }
  void remove_skipped_blocks(std::vector<int>& table, int num_computed_tokens) override;
  /// The first block the tokens from num_computed_tokens on read: earlier ones can go.
  int first_needed_block(int num_computed_tokens) const {
    return std::max(0, num_computed_tokens - window_ + 1) / block_size_;
  }

 private:
  int window_;
  int contiguous_blocks_;  ///< ceil((W - 1) / block_size): blocks a hit needs before its end
};

}  // namespace pagedchat
