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
  if (!mm_key.empty()) {  // text-only blocks keep the hashes they always had
    mix(mm_key.size());
    for (unsigned char c : mm_key) {
      h ^= c;
      h *= kPrime;
    }
  }
  // splitmix64 finaliser: spreads the low-entropy FNV state over all bits.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

BlockPool::BlockPool(int num_blocks, bool enable_caching, bool reserve_null_block)
    : blocks_(num_blocks), caching_(enable_caching), has_null_block_(reserve_null_block && num_blocks > 0) {
  for (int i = has_null_block_ ? 1 : 0; i < num_blocks; ++i) {
    blocks_[i].free_pos = free_queue_.insert(free_queue_.end(), i);
    blocks_[i].in_free_queue = true;
  }
  if (has_null_block_) blocks_[kNullBlock].group = -1;
}

int BlockPool::num_cached_blocks() const {
  int n = 0;
  for (const auto& m : cached_) n += int(m.size());
  return n;
}

int BlockPool::num_cached_free_blocks() const {
  int n = 0;
  for (const auto& m : cached_)
    for (const auto& [hash, id] : m) n += blocks_[id].ref_count == 0;
  return n;
}

void BlockPool::count_use(int group, int delta) {
  if (group >= int(in_use_.size())) in_use_.resize(std::size_t(group) + 1, 0);
  in_use_[std::size_t(group)] += delta;
}

void BlockPool::evict(int block_id) {
  Block& b = blocks_[block_id];
  if (!b.hash) return;
  auto& map = cached_.at(std::size_t(b.group));
  auto it = map.find(*b.hash);
  if (it != map.end() && it->second == block_id) map.erase(it);
  b.hash.reset();
  b.key = {};
}

std::vector<int> BlockPool::allocate(int n, int group) {
  if (group < 0) throw std::logic_error("BlockPool: allocation for group " + std::to_string(group));
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
    b.group = group;
    ids.push_back(id);
  }
  if (n > 0) count_use(group, n);
  return ids;
}

void BlockPool::incref(int block_id) {
  if (has_null_block_ && block_id == kNullBlock) throw std::logic_error("BlockPool: incref of the null block");
  Block& b = blocks_.at(block_id);
  if (b.ref_count == 0) {
    if (!b.hash) throw std::logic_error("BlockPool: incref of free, uncached block " + std::to_string(block_id));
    free_queue_.erase(b.free_pos);
    b.in_free_queue = false;
    count_use(b.group, 1);
  }
  ++b.ref_count;
}

void BlockPool::free(int block_id) {
  if (has_null_block_ && block_id == kNullBlock) throw std::logic_error("BlockPool: free of the null block");
  Block& b = blocks_.at(block_id);
  if (b.ref_count <= 0) throw std::logic_error("BlockPool: double free of block " + std::to_string(block_id));
  if (--b.ref_count == 0) {
    b.free_pos = free_queue_.insert(free_queue_.end(), block_id);
    b.in_free_queue = true;
    count_use(b.group, -1);
  }
}

std::optional<int> BlockPool::lookup(const BlockKey& key, uint64_t key_hash, int group) const {
  if (!caching_ || group < 0 || group >= int(cached_.size())) return std::nullopt;
  const auto& map = cached_[std::size_t(group)];
  auto it = map.find(key_hash);
  if (it == map.end() || !(blocks_[it->second].key == key)) return std::nullopt;
  return it->second;
}

void BlockPool::register_block(int block_id, BlockKey key, uint64_t key_hash) {
  if (!caching_) return;
  Block& b = blocks_.at(block_id);
  if (b.group < 0) return;  // the null block
  if (b.group >= int(cached_.size())) cached_.resize(std::size_t(b.group) + 1);
  auto& map = cached_[std::size_t(b.group)];
  if (b.hash || map.count(key_hash)) return;
  b.hash = key_hash;
  b.key = std::move(key);
  map.emplace(key_hash, block_id);
}

std::optional<uint64_t> BlockPool::block_hash(int block_id) const { return blocks_.at(block_id).hash; }

bool BlockPool::reset_prefix_cache() {
  for (const auto& map : cached_)
    for (const auto& [hash, id] : map)
      if (blocks_[id].ref_count > 0) return false;
  for (auto& b : blocks_) {
    b.hash.reset();
    b.key = {};
  }
  for (auto& map : cached_) map.clear();
  return true;
}

}  // namespace pagedchat
