#include "engine/core/kv_cache_manager.h"

#include <algorithm>

namespace pagedchat {

KVCacheManager::KVCacheManager(int num_blocks, int block_size, bool enable_prefix_caching)
    : pool_(num_blocks, enable_prefix_caching), block_size_(block_size) {}

BlockKey KVCacheManager::key_for(const Request& r, int i) const {
  BlockKey key;
  key.parent_hash = i == 0 ? 0 : r.block_hashes[i - 1];
  key.token_ids.assign(r.token_ids.begin() + i * block_size_, r.token_ids.begin() + (i + 1) * block_size_);
  if (i == 0) key.salt = r.cache_salt;  // the chain carries it to every later block
  return key;
}

KVCacheManager::ComputedBlocks KVCacheManager::get_computed_blocks(Request& r) {
  ComputedBlocks out;
  if (!pool_.caching_enabled() || !r.block_ids.empty()) return out;
  const int max_blocks = (r.num_tokens() - 1) / block_size_;  // leave >= 1 token to compute
  queries_ += r.num_tokens();
  for (int i = 0; i < max_blocks; ++i) {
    if (int(r.block_hashes.size()) <= i) {
      const BlockKey key = key_for(r, i);
      r.block_hashes.push_back(key.hash());
    }
    const auto hit = pool_.lookup(key_for(r, i), r.block_hashes[i]);
    if (!hit) break;
    out.block_ids.push_back(*hit);
  }
  out.num_tokens = int(out.block_ids.size()) * block_size_;
  hits_ += out.num_tokens;
  return out;
}

bool KVCacheManager::allocate_slots(Request& r, int num_new_tokens, const ComputedBlocks* computed) {
  const bool take_computed = computed && r.block_ids.empty() && !computed->block_ids.empty();
  int num_computed = r.num_computed_tokens;
  int table = int(r.block_ids.size());
  int free_after_hits = pool_.num_free_blocks();
  if (take_computed) {
    num_computed = computed->num_tokens;
    table = int(computed->block_ids.size());
    for (int b : computed->block_ids) free_after_hits -= pool_.ref_count(b) == 0;  // leave the free queue
  }
  // Copy-on-write: the first block written this step is shared with a sibling completion.
  const int first_block = num_computed / block_size_;
  const bool cow = !take_computed && first_block < table && pool_.ref_count(r.block_ids[first_block]) > 1;
  const int needed = std::max(0, blocks_for(num_computed + num_new_tokens) - table) + (cow ? 1 : 0);
  if (needed > free_after_hits) return false;

  if (take_computed) {
    for (int b : computed->block_ids) pool_.incref(b);
    r.block_ids = computed->block_ids;
    r.num_computed_tokens = computed->num_tokens;
    r.num_cached_blocks = int(computed->block_ids.size());
  }
  if (cow) {
    const int old_block = r.block_ids[first_block];
    const int new_block = pool_.allocate(1).front();
    pending_copies_.emplace_back(old_block, new_block);
    pool_.free(old_block);  // drops this request's reference; the siblings keep theirs
    r.block_ids[first_block] = new_block;
  }
  const int grow = blocks_for(num_computed + num_new_tokens) - int(r.block_ids.size());
  if (grow > 0)
    for (int id : pool_.allocate(grow)) r.block_ids.push_back(id);
  return true;
}

void KVCacheManager::cache_blocks(Request& r, int num_computed_tokens) {
  if (!pool_.caching_enabled()) return;
  const int full = std::min<int>(num_computed_tokens / block_size_, int(r.block_ids.size()));
  for (int i = r.num_cached_blocks; i < full; ++i) {
    BlockKey key = key_for(r, i);
    const uint64_t h = key.hash();
    if (int(r.block_hashes.size()) <= i) r.block_hashes.push_back(h);
    pool_.register_block(r.block_ids[i], std::move(key), h);
  }
  r.num_cached_blocks = std::max(r.num_cached_blocks, full);
}

void KVCacheManager::fork(const Request& parent, Request& child) {
  for (int b : parent.block_ids) pool_.incref(b);
  child.block_ids = parent.block_ids;
  child.block_hashes = parent.block_hashes;
  child.num_cached_blocks = parent.num_cached_blocks;
}

void KVCacheManager::free(Request& r) {
  for (auto it = r.block_ids.rbegin(); it != r.block_ids.rend(); ++it) pool_.free(*it);
  r.block_ids.clear();
  r.num_cached_blocks = 0;
}

std::vector<std::pair<int, int>> KVCacheManager::take_pending_copies() {
  std::vector<std::pair<int, int>> out;
  out.swap(pending_copies_);
  return out;
}

}  // namespace pagedchat
