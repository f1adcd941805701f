// KVCacheManager: maps requests to blocks (vLLM's v1 KVCacheManager). A request's block table
// covers positions [0, num_computed_tokens + num_new_tokens); slot = block_id * block_size + offset.
#pragma once

#include <cstdint>

#include "engine/block_pool.h"
#include "engine/request.h"

namespace pagedchat {

class KVCacheManager {
 public:
  KVCacheManager(int num_blocks, int block_size) : pool_(num_blocks), block_size_(block_size) {}

  /// Grows the request's block table so it can hold num_computed_tokens + num_new_tokens tokens.
  /// Returns false (and changes nothing) when there are not enough free blocks.
  bool allocate_slots(Request& request, int num_new_tokens);
  /// Releases every block of the request (its table becomes empty).
  void free(Request& request);
  /// Blocks needed to hold n tokens.
  int blocks_for(int num_tokens) const { return (num_tokens + block_size_ - 1) / block_size_; }
  /// Slot of position `pos` of a request (its table must cover pos).
  int64_t slot(const Request& request, int pos) const {
    return int64_t(request.block_ids[pos / block_size_]) * block_size_ + pos % block_size_;
  }

  int block_size() const { return block_size_; }
  int num_blocks() const { return pool_.num_blocks(); }
  int num_free_blocks() const { return pool_.num_free_blocks(); }
  const BlockPool& pool() const { return pool_; }

 private:
  BlockPool pool_;
  int block_size_;
};

}  // namespace pagedchat
