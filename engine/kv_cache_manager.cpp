#include "engine/kv_cache_manager.h"

namespace pagedchat {

bool KVCacheManager::allocate_slots(Request& request, int num_new_tokens) {
  const int needed = blocks_for(request.num_computed_tokens + num_new_tokens) - int(request.block_ids.size());
  if (needed <= 0) return true;
  if (needed > pool_.num_free_blocks()) return false;
  for (int id : pool_.allocate(needed)) request.block_ids.push_back(id);
  return true;
}

void KVCacheManager::free(Request& request) {
  // Free in reverse so the tail blocks (least likely shared later) are reused first.
  for (auto it = request.block_ids.rbegin(); it != request.block_ids.rend(); ++it) pool_.free(*it);
  request.block_ids.clear();
}

}  // namespace pagedchat
