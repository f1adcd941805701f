// Follows the design of vLLM v1's FullAttentionManager and SlidingWindowManager (Apache-2.0;
// THIRD_PARTY_NOTICES).
#include "engine/core/single_type_kv_cache_manager.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pagedchat {

BlockKey block_key(const Request& r, int i, int bs) {
  BlockKey key;
  key.parent_hash = i == 0 ? 0 : r.block_hashes.at(std::size_t(i) - 1);
  key.token_ids.assign(r.token_ids.begin() + std::ptrdiff_t(i) * bs, r.token_ids.begin() + std::ptrdiff_t(i + 1) * bs);
  if (i == 0) key.salt = r.cache_salt;  // the chain carries it to every later block
  for (const MultiModalPlaceholder& m : r.mm_inputs)
    if (m.offset < (i + 1) * bs && m.end() > i * bs)
      key.mm_key += m.identity + "@" + std::to_string(m.offset - i * bs) + ";";
  return key;
}

uint64_t block_hash(Request& r, int i, int bs) {
  while (int(r.block_hashes.size()) <= i) r.block_hashes.push_back(block_key(r, int(r.block_hashes.size()), bs).hash());
  return r.block_hashes[std::size_t(i)];
}

std::optional<int> SingleTypeKVCacheManager::cached_block(Request& r, int i) const {
  const uint64_t h = block_hash(r, i, block_size_);
  return pool_.lookup(block_key(r, i, block_size_), h, group_);
}

int SingleTypeKVCacheManager::num_blocks_to_allocate(const std::vector<int>& table, int first_write, int num_tokens,
                                                     bool may_copy) const {
  const int first = first_write / block_size_;
  const bool cow = may_copy && first < int(table.size()) && !is_null(table[std::size_t(first)]) &&
                   pool_.ref_count(table[std::size_t(first)]) > 1;
  return std::max(0, blocks_for(num_tokens) - int(table.size())) + (cow ? 1 : 0);
}

void SingleTypeKVCacheManager::allocate(std::vector<int>& table, int first_write, int num_tokens, bool may_copy,
                                        std::vector<std::pair<int, int>>& copies) {
  // Copy-on-write: the first block written this step is shared with a sibling completion.
  const int first = first_write / block_size_;
  if (may_copy && first < int(table.size()) && !is_null(table[std::size_t(first)]) &&
      pool_.ref_count(table[std::size_t(first)]) > 1) {
    const int old_block = table[std::size_t(first)];
    const int new_block = pool_.allocate(1, group_).front();
    copies.emplace_back(old_block, new_block);
    pool_.free(old_block);  // drops this request's reference; the siblings keep theirs
    table[std::size_t(first)] = new_block;
  }
  const int grow = blocks_for(num_tokens) - int(table.size());
  if (grow > 0)
    for (int id : pool_.allocate(grow, group_)) table.push_back(id);
}

std::vector<int> FullAttentionManager::find_longest_cache_hit(Request& r, int max_blocks) const {
  std::vector<int> hit;
  for (int i = 0; i < max_blocks; ++i) {
    // The hashes form a chain: past the first miss nothing can be cached.
    const auto b = cached_block(r, i);
    if (!b) break;
    hit.push_back(*b);
  }
  return hit;
}

SlidingWindowManager::SlidingWindowManager(BlockPool& pool, int group, int block_size, int sliding_window)
    : SingleTypeKVCacheManager(pool, group, block_size),
      window_(sliding_window),
      contiguous_blocks_((sliding_window - 1 + block_size - 1) / block_size) {
  if (sliding_window < 1) throw std::invalid_argument("SlidingWindowManager: window " + std::to_string(sliding_window));
  if (!pool.has_null_block()) throw std::logic_error("SlidingWindowManager: the block pool has no null block");
}

std::vector<int> SlidingWindowManager::find_longest_cache_hit(Request& r, int max_blocks) const {
  // The first token after a hit of h blocks, at position h * block_size, reads the W - 1 positions
  // before it: the last contiguous_blocks_ blocks before h. Search from the right for the latest
  // such run; the blocks before it are not needed (null). A run reaching back to block 0 is a hit
  // even when shorter (nothing precedes it).
  std::vector<int> hit(std::size_t(std::max(0, max_blocks)), BlockPool::kNullBlock);
  if (contiguous_blocks_ == 0) return hit;  // W = 1: a token reads only itself
  int run = 0;
  for (int i = max_blocks - 1; i >= 0; --i) {
    const auto b = cached_block(r, i);
    if (!b) {
      run = 0;
      continue;
    }
    hit[std::size_t(i)] = *b;
    if (++run >= contiguous_blocks_) {
      hit.resize(std::size_t(i + run));
      return hit;
    }
  }
  hit.resize(std::size_t(run));  // the run starting at block 0, if any
  return hit;
}

void SlidingWindowManager::remove_skipped_blocks(std::vector<int>& table, int num_computed_tokens) {
  // Entries before a null one were nulled by an earlier call: stop there.
  for (int i = std::min<int>(first_needed_block(num_computed_tokens), int(table.size())) - 1; i >= 0; --i) {
    int& b = table[std::size_t(i)];
    if (b == BlockPool::kNullBlock) break;
    pool_.free(b);  // stays registered in the prefix cache until evicted
    b = BlockPool::kNullBlock;
  }
}

}  // namespace pagedchat
