// Follows the design of vLLM v1's BlockPool (Apache-2.0; THIRD_PARTY_NOTICES).
#include "engine/core/block_pool.h"

#include <stdexcept>

namespace pagedchat {

uint64_t BlockKey::hash() const {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= kPrime;
    }
  };
  mix(parent_hash);
  mix(token_ids.size());
  for (int t : token_ids) mix(uint32_t(t));
  for (unsigned char c : salt) {
    h ^= c;
    h *= kPrime;
  }
  // splitmix64 finaliser: spreads the low-entropy FNV state over all bits.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

BlockPool::BlockPool(int num_blocks, bool enable_caching) : blocks_(num_blocks), caching_(enable_caching) {
  for (int i = 0; i < num_blocks; ++i) {
    blocks_[i].free_pos = free_queue_.insert(free_queue_.end(), i);
    blocks_[i].in_free_queue = true;
  }
}

int BlockPool::num_cached_free_blocks() const {
  int n = 0;
  for (const auto& [hash, id] : cached_) n += blocks_[id].ref_count == 0;
  return n;
}

void BlockPool::evict(int block_id) {
  Block& b = blocks_[block_id];
  if (!b.hash) return;
  auto it = cached_.find(*b.hash);
  if (it != cached_.end() && it->second == block_id) cached_.erase(it);
  b.hash.reset();
  b.key = {};
}

std::vector<int> BlockPool::allocate(int n) {
  if (n > num_free_blocks())
    throw std::logic_error("BlockPool: " + std::to_string(n) + " blocks asked, " + std::to_string(num_free_blocks()) +
                           " free");
  std::vector<int> ids;
  ids.reserve(n);
  for (int i = 0; i < n; ++i) {
    const int id = free_queue_.front();
    free_queue_.pop_front();
    Block& b = blocks_[id];
    b.in_free_queue = false;
    evict(id);
    b.ref_count = 1;
    ids.push_back(id);
  }
  return ids;
}

void BlockPool::incref(int block_id) {
  Block& b = blocks_.at(block_id);
  if (b.ref_count == 0) {
    if (!b.hash) throw std::logic_error("BlockPool: incref of free, uncached block " + std::to_string(block_id));
    free_queue_.erase(b.free_pos);
    b.in_free_queue = false;
  }
  ++b.ref_count;
}

void BlockPool::free(int block_id) {
  Block& b = blocks_.at(block_id);
  if (b.ref_count <= 0) throw std::logic_error("BlockPool: double free of block " + std::to_string(block_id));
  if (--b.ref_count == 0) {
    b.free_pos = free_queue_.insert(free_queue_.end(), block_id);
    b.in_free_queue = true;
  }
}

std::optional<int> BlockPool::lookup(const BlockKey& key, uint64_t key_hash) const {
  if (!caching_) return std::nullopt;
  auto it = cached_.find(key_hash);
  if (it == cached_.end() || !(blocks_[it->second].key == key)) return std::nullopt;
  return it->second;
}

void BlockPool::register_block(int block_id, BlockKey key, uint64_t key_hash) {
  if (!caching_) return;
  Block& b = blocks_.at(block_id);
  if (b.hash || cached_.count(key_hash)) return;
  b.hash = key_hash;
  b.key = std::move(key);
  cached_.emplace(key_hash, block_id);
}

std::optional<uint64_t> BlockPool::block_hash(int block_id) const { return blocks_.at(block_id).hash; }

bool BlockPool::reset_prefix_cache() {
  for (const auto& [hash, id] : cached_)
    if (blocks_[id].ref_count > 0) return false;
  for (auto& b : blocks_) {
    b.hash.reset();
    b.key = {};
  }
  cached_.clear();
  return true;
}

}  // namespace pagedchat
