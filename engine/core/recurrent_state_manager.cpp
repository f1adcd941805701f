#include "engine/core/recurrent_state_manager.h"

#include <stdexcept>
#include <string>

namespace pagedchat {

RecurrentStateManager::RecurrentStateManager(int num_slots, bool enable_caching)
    : num_slots_(num_slots), caching_(enable_caching) {
  if (num_slots < 1) throw std::invalid_argument("RecurrentStateManager: " + std::to_string(num_slots) + " slots");
  for (int s = num_slots - 1; s >= 0; --s) free_.push_back(s);
}

std::optional<int> RecurrentStateManager::allocate(int keep) {
  if (!free_.empty()) {
    const int s = free_.back();
    free_.pop_back();
    return s;
  }
  for (auto it = lru_.begin(); it != lru_.end(); ++it)
    if (*it != keep) {
      const int s = *it;
      evict(s);
      free_.pop_back();  // evict() put it there
      return s;
    }
  return std::nullopt;
}

void RecurrentStateManager::free(int slot) {
  if (slot < 0 || slot >= num_slots_ || checkpoints_.count(slot))
    throw std::logic_error("RecurrentStateManager: freeing slot " + std::to_string(slot) + ", which is not held");
  free_.push_back(slot);
}

std::optional<int> RecurrentStateManager::lookup(const BlockKey& key, uint64_t key_hash) {
  auto [b, e] = by_hash_.equal_range(key_hash);
  for (auto it = b; it != e; ++it) {
    Checkpoint& c = checkpoints_.at(it->second);
    if (c.key == key) {
      lru_.splice(lru_.end(), lru_, c.pos);
      return it->second;
    }
  }
  return std::nullopt;
}

bool RecurrentStateManager::contains(const BlockKey& key, uint64_t key_hash) const {
  auto [b, e] = by_hash_.equal_range(key_hash);
  for (auto it = b; it != e; ++it)
    if (checkpoints_.at(it->second).key == key) return true;
  return false;
}

void RecurrentStateManager::register_checkpoint(int slot, BlockKey key, uint64_t key_hash) {
  if (!caching_ || contains(key, key_hash)) {
    free(slot);
    return;
  }
  lru_.push_back(slot);
  by_hash_.emplace(key_hash, slot);
  checkpoints_.emplace(slot, Checkpoint{std::move(key), key_hash, std::prev(lru_.end())});
}

void RecurrentStateManager::evict(int slot) {
  auto it = checkpoints_.find(slot);
  auto [b, e] = by_hash_.equal_range(it->second.hash);
  for (auto h = b; h != e; ++h)
    if (h->second == slot) {
      by_hash_.erase(h);
      break;
    }
  lru_.erase(it->second.pos);
  checkpoints_.erase(it);
  free_.push_back(slot);
}

void RecurrentStateManager::reset() {
  while (!lru_.empty()) evict(lru_.front());
}

}  // namespace pagedchat
