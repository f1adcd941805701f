// KVCacheManager: maps requests to blocks (vLLM's v1 KVCacheManager). A request's block table
// covers positions [0, num_computed_tokens + num_new_tokens); slot = block_id * block_size + offset.
// With prefix caching, a new (or preempted) request first takes the registered blocks matching
// its leading full blocks; every block that will be full once the tokens scheduled this step are
// computed is registered when its slots are allocated (vLLM v1's allocate_slots ->
// cache_full_blocks), so a request admitted later in the same step with the same prefix shares it
// instead of computing it again (see allocate_slots() in the .cpp for why that is safe).
// Blocks shared by the n completions of one request are copied before a completion writes into
// them (copy-on-write): the copies are queued for the model runner (take_pending_copies()).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/core/block_pool.h"
#include "engine/core/request.h"

namespace pagedchat {

class KVCacheManager {
 public:
  KVCacheManager(int num_blocks, int block_size, bool enable_prefix_caching);

  /// Prefix-cache hits of a request holding no blocks: its longest run of leading full blocks
  /// already in the cache, capped so at least one token is left to compute (its logits are needed).
  struct ComputedBlocks {
    std::vector<int> block_ids;
    int num_tokens = 0;  ///< block_ids.size() * block_size
  };
  ComputedBlocks get_computed_blocks(Request& request);

  /// Grows the request's block table to hold num_computed_tokens + num_new_tokens tokens. For a
  /// request holding no blocks, `computed` (from get_computed_blocks) is taken first and sets its
  /// num_computed_tokens. With prefix caching, then registers the blocks that are full once those
  /// num_new_tokens are computed (cache_blocks). Returns false, changing nothing, when there are
  /// not enough free blocks.
  bool allocate_slots(Request& request, int num_new_tokens, const ComputedBlocks* computed = nullptr);
  /// Registers the request's blocks that are full once `num_computed_tokens` tokens are computed
  /// (allocate_slots does it for the tokens it allocates; idempotent).
  void cache_blocks(Request& request, int num_computed_tokens);
  /// Makes `child` share every block of `parent` (reference counts; used for n > 1).
  void fork(const Request& parent, Request& child);
  /// Releases every block of the request (its table becomes empty), tail blocks first so that
  /// they are evicted before the shared-prefix blocks. A block it registered ahead of its
  /// computation (past request.num_computed_tokens: allocated for a step that never ran for it,
  /// e.g. preempted while the step was built) loses its registration, so no later request can hit
  /// K/V that were never written. Throws std::logic_error, changing nothing, if such a block is
  /// also held by another request (that request would read K/V nobody writes: the scheduler's
  /// ordering rules it out).
  void free(Request& request);
  /// (source, destination) block pairs to copy before the next forward, then clears them.
  std::vector<std::pair<int, int>> take_pending_copies();

  /// Blocks needed to hold n tokens.
  int blocks_for(int num_tokens) const { return (num_tokens + block_size_ - 1) / block_size_; }
  /// Slot of position `pos` of a request (its table must cover pos).
  int64_t slot(const Request& request, int pos) const {
    return int64_t(request.block_ids[pos / block_size_]) * block_size_ + pos % block_size_;
  }

  int block_size() const { return block_size_; }
  int num_blocks() const { return pool_.num_blocks(); }
  int num_free_blocks() const { return pool_.num_free_blocks(); }
  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  long long prefix_cache_queries() const { return queries_; }  ///< prompt tokens looked up
  long long prefix_cache_hits() const { return hits_; }        ///< of those, tokens found cached

 private:
  BlockKey key_for(const Request& request, int block_index) const;

  BlockPool pool_;
  int block_size_;
  std::vector<std::pair<int, int>> pending_copies_;
  long long queries_ = 0, hits_ = 0;
};

}  // namespace pagedchat
