// Follows the design of vLLM v1's KVCacheManager (Apache-2.0; THIRD_PARTY_NOTICES).
#include "engine/core/kv_cache_manager.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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
  // Register now the blocks this step fills, before their K/V exist (as vLLM v1 does), so that
  // another request with the same prefix admitted later in this same step (or in a later one)
  // takes them from get_computed_blocks and computes only its remaining tokens: the "send to all
  // panes" case, where every pane's request arrives before one step(). This is safe because
  //  - within one forward, DecoderModel::forward (engine/model/decoder_model.cpp) runs, layer by
  //    layer, qkv_rope_and_cache for ALL the batch's tokens (writing every scheduled token's K/V
  //    into its slot) before paged_attention for any of them, and each op finishes (the thread
  //    pool joins) before the next starts; so the request sharing a block reads, in every layer,
  //    K/V its owner wrote earlier in that same layer, identical to what it would have written
  //    itself (a K/V row depends only on the tokens up to its position; linear() is batch
  //    invariant). The sharer never writes into the shared blocks: its own tokens start after them.
  //  - a block registered here whose step does not run for its request (preempted while the step
  //    is built) is unregistered by free(): the scheduler preempts only while scheduling running
  //    requests and takes prefix hits (admits waiting requests) only in a step that preempted
  //    nobody, so such a block is never shared by the time it is freed.
  cache_blocks(r, r.num_computed_tokens + num_new_tokens);
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
  // Blocks [first_pending, num_cached_blocks) were registered by this request for tokens it has not
  // computed (see allocate_slots). Nobody else may hold them; unregister them as they are freed.
  const int first_pending = std::min<int>(r.num_computed_tokens / block_size_, int(r.block_ids.size()));
  const int end_pending = std::min<int>(r.num_cached_blocks, int(r.block_ids.size()));
  for (int i = first_pending; i < end_pending; ++i) {
    const int b = r.block_ids[i];
    if (pool_.ref_count(b) > 1 && pool_.block_hash(b))
      throw std::logic_error("KVCacheManager: request " + r.request_id + " frees block " + std::to_string(b) +
                             ", registered for tokens not yet computed, while another request shares it");
  }
  for (int i = first_pending; i < end_pending; ++i) pool_.unregister_block(r.block_ids[i]);
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
