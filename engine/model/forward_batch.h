// ForwardBatch: one flattened step of T tokens from R requests, as the model runner builds it
// (vLLM's input_ids / positions / slot_mapping / attention metadata; see kernels::AttentionMetadata).
// The slots and block tables are per KV-cache group (engine/core/kv_cache_groups.h): the batch's
// own fields are group 0's, extra_groups[g - 1] group g's; layer l reads and writes through the
// tables of KVCache::group_of_layer(l). A model with one group (no sliding windows) has no
// extra_groups.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace pagedchat {

struct ForwardBatch {
  /// One KV-cache group's slots and block tables (the same requests and tokens as the batch).
  struct KVGroupTables {
    std::vector<int64_t> slot_mapping;  ///< [T]
    std::vector<int> block_tables;      ///< [R * max_blocks_per_seq]
    int max_blocks_per_seq = 0;
  };

  std::vector<int> input_ids;         ///< [T]
  std::vector<int> positions;         ///< [T]
  std::vector<int64_t> slot_mapping;  ///< [T], group 0; negative: padding, nothing written
  std::vector<int> query_start_loc;   ///< [R + 1]
  std::vector<int> seq_lens;          ///< [R]
  /// [R * max_blocks_per_seq], group 0. Unused entries, and the entries of blocks a sliding
  /// window has released, hold block 0 (BlockPool::kNullBlock), never read.
  std::vector<int> block_tables;
  int max_blocks_per_seq = 0;
  std::vector<KVGroupTables> extra_groups;  ///< groups 1 .. n-1
  std::vector<int> logits_indices;          ///< token indices whose logits are computed, in output order
  /// Token indices whose hidden states (the residual stream after the last layer and the final
  /// norm: what the classifier reads) DecoderModel::hidden() returns, in this order; for
  /// speculative decoding's MTP head, which reads the target's.
  std::vector<int> hidden_indices;
  /// An MTP head's second input (DecoderModel built with an MtpInput): [T, hidden_size] float32,
  /// per token the hidden state it is paired with (host memory); empty for other models.
  std::vector<float> input_hidden;
  /// Tokens whose input is an embedding given here instead of their id's row of the embedding
  /// table (an image's encoder output, engine/vision/): token index and a host pointer to
  /// hidden_size floats, used as is (no embedding scale). Empty for text.
  struct EmbedRow {
    int token = 0;
    const float* row = nullptr;
  };
  std::vector<EmbedRow> input_embeds;
  /// [T] or empty: per token the end (exclusive) of the key positions it attends to
  /// (kernels::AttentionMetadata::key_ends): its position + 1 (causal), or the end of its image
  /// for a model whose image tokens attend both ways (Gemma 3).
  std::vector<int> key_ends;
  /// [T] or empty (only with key_ends): per token the first key position it sees on
  /// sliding-window layers when before its window (kernels::AttentionMetadata::key_begins: an
  /// image token of Gemma 4 sees its whole image); its position otherwise.
  std::vector<int> key_begins;
  /// [T * 3] or empty: per token its (t, h, w) M-RoPE positions (ModelConfig::mrope_sections;
  /// Qwen3-VL's image tokens take their place in the image's grid, and the text after an image
  /// continues at the image's start + max(grid width, grid height)). Empty: RoPE uses positions.
  std::vector<int> mrope_positions;

  // Recurrent (Gated DeltaNet) layers: empty for models without them.
  /// A checkpoint of a request's recurrent state after `after` of its tokens in this step (1 ..
  /// its token count), written to state slot `slot` (prefix caching at a block boundary).
  struct StateSave {
    int request = 0, after = 0, slot = 0;
  };
  std::vector<int> state_slots;                   ///< [R] each request's state slot
  std::vector<StateSave> state_saves;             ///< at most DeltaNetSequence::kMaxSaves per request
  std::vector<std::pair<int, int>> state_copies;  ///< (source, destination) slots copied before the
                                                  ///< forward, in order; source -1: zero the destination

  int num_tokens() const { return int(input_ids.size()); }
  int num_requests() const { return int(seq_lens.size()); }
  int num_kv_groups() const { return 1 + int(extra_groups.size()); }
  /// Group g's tables (g = 0: the batch's own fields).
  const std::vector<int64_t>& group_slot_mapping(int g) const {
    return g == 0 ? slot_mapping : extra_groups[std::size_t(g) - 1].slot_mapping;
  }
  const std::vector<int>& group_block_tables(int g) const {
    return g == 0 ? block_tables : extra_groups[std::size_t(g) - 1].block_tables;
  }
  int group_max_blocks_per_seq(int g) const {
    return g == 0 ? max_blocks_per_seq : extra_groups[std::size_t(g) - 1].max_blocks_per_seq;
  }
  /// For code that runs a model outside the engine (tests, harnesses) with group 0's tables
  /// filled in: gives groups 1 .. num_groups-1 the same tables with every block id moved up by
  /// g * group_blocks (slots by g * group_blocks * block_size; negative slots stay padding), so
  /// each group writes blocks of its own (groups share the cache's tensors: two groups must never
  /// share a block id). The cache then needs num_groups * group_blocks blocks.
  void add_shifted_groups(int num_groups, int group_blocks, int block_size) {
    extra_groups.clear();
    for (int g = 1; g < num_groups; ++g) {
      KVGroupTables t;
      t.max_blocks_per_seq = max_blocks_per_seq;
      t.block_tables = block_tables;
      for (int& b : t.block_tables) b += g * group_blocks;
      t.slot_mapping = slot_mapping;
      for (int64_t& s : t.slot_mapping)
        if (s >= 0) s += int64_t(g) * group_blocks * block_size;
      extra_groups.push_back(std::move(t));
    }
  }
};

}  // namespace pagedchat
