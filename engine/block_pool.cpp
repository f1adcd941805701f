#include "engine/block_pool.h"

#include <stdexcept>
#include <string>

namespace pagedchat {

BlockPool::BlockPool(int num_blocks) : ref_counts_(num_blocks, 0) {
  for (int i = 0; i < num_blocks; ++i) free_queue_.push_back(i);
}

std::vector<int> BlockPool::allocate(int n) {
  if (n > num_free_blocks())
    throw std::logic_error("BlockPool: " + std::to_string(n) + " blocks asked, " + std::to_string(num_free_blocks()) + " free");
  std::vector<int> ids;
  ids.reserve(n);
  for (int i = 0; i < n; ++i) {
    const int id = free_queue_.front();
    free_queue_.pop_front();
    ref_counts_[id] = 1;
    ids.push_back(id);
  }
  return ids;
}

void BlockPool::incref(int block_id) {
  if (ref_counts_.at(block_id) <= 0) throw std::logic_error("BlockPool: incref of free block " + std::to_string(block_id));
  ++ref_counts_[block_id];
}

void BlockPool::free(int block_id) {
  if (ref_counts_.at(block_id) <= 0) throw std::logic_error("BlockPool: double free of block " + std::to_string(block_id));
  if (--ref_counts_[block_id] == 0) free_queue_.push_back(block_id);
}

}  // namespace pagedchat
