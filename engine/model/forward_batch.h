// ForwardBatch: one flattened step of T tokens from R requests, as the model runner builds it
// (vLLM's input_ids / positions / slot_mapping / attention metadata; see kernels::AttentionMetadata).
#pragma once

#include <cstdint>
#include <vector>

namespace pagedchat {

struct ForwardBatch {
  std::vector<int> input_ids;         ///< [T]
  std::vector<int> positions;         ///< [T]
  std::vector<int64_t> slot_mapping;  ///< [T]
  std::vector<int> query_start_loc;   ///< [R + 1]
  std::vector<int> seq_lens;          ///< [R]
  std::vector<int> block_tables;      ///< [R * max_blocks_per_seq], unused entries 0
  int max_blocks_per_seq = 0;
  std::vector<int> logits_indices;  ///< token indices whose logits are computed, in output order

  int num_tokens() const { return int(input_ids.size()); }
  int num_requests() const { return int(seq_lens.size()); }
};

}  // namespace pagedchat
