// BlockPool: the KV cache's fixed-size blocks (vLLM's v1 BlockPool): a free queue and a reference
// count per block. Block ids index the per-layer cache tensors [num_blocks * block_size, kv_width].
#pragma once

#include <deque>
#include <vector>

namespace pagedchat {

class BlockPool {
 public:
  explicit BlockPool(int num_blocks);

  int num_blocks() const { return int(ref_counts_.size()); }
  int num_free_blocks() const { return int(free_queue_.size()); }
  /// Takes n free blocks (ref count 1 each). Throws std::logic_error when fewer are free; callers
  /// check num_free_blocks() first.
  std::vector<int> allocate(int n);
  /// Adds a reference to an allocated block (sharing between sequences).
  void incref(int block_id);
  /// Drops one reference; a block whose count reaches 0 returns to the free queue's tail.
  void free(int block_id);
  int ref_count(int block_id) const { return ref_counts_.at(block_id); }

 private:
  std::vector<int> ref_counts_;
  std::deque<int> free_queue_;
};

}  // namespace pagedchat
