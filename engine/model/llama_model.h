// LlamaModel: the Llama forward (llama2.c's run.c, batched and paged) over the op interface:
// per layer RMSNorm -> Q/K/V (one stacked linear) -> RoPE + reshape_and_cache (fused) -> paged
// attention -> Wo -> residual add + RMSNorm (fused) -> gate/up (one stacked linear) -> SwiGLU ->
// down -> residual add + next layer's RMSNorm (fused); then the final RMSNorm and the classifier,
// computed only for the tokens whose logits are wanted. The weight matrices are packed once, at
// construction, in the backend's layout and the configured weight type.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/config.h"
#include "engine/model/model_weights.h"
#include "kernels/ops.h"

namespace pagedchat {

/// The paged KV cache: per layer, K and V tensors [num_blocks * block_size, n_kv_heads * head_dim]
/// float32.
struct KVCache {
  KVCache(const ModelConfig& c, int num_blocks, int block_size);
  /// Copies every layer's K and V of block `src` into block `dst` (copy-on-write).
  void copy_block(int src, int dst);
  /// Bytes one block takes over all layers, K and V.
  static std::size_t bytes_per_block(const ModelConfig& c, int block_size);

  int num_blocks, block_size, kv_width;
  std::vector<std::vector<float>> key, value;  // [n_layers][num_blocks * block_size * kv_width]
};

/// One flattened batch of T tokens from R requests (see kernels::AttentionMetadata).
struct ForwardBatch {
  std::vector<int> input_ids;        ///< [T]
  std::vector<int> positions;        ///< [T]
  std::vector<int64_t> slot_mapping; ///< [T]
  std::vector<int> query_start_loc;  ///< [R + 1]
  std::vector<int> seq_lens;         ///< [R]
  std::vector<int> block_tables;     ///< [R * max_blocks_per_seq], unused entries 0
  int max_blocks_per_seq = 0;
  std::vector<int> logits_indices;   ///< token indices whose logits are computed, in output order

  int num_tokens() const { return int(input_ids.size()); }
  int num_requests() const { return int(seq_lens.size()); }
};

class LlamaModel {
 public:
  /// Packs the matrices of `weights` for `backend` (float32 copies, or bfloat16 ones rounded to
  /// nearest even); `weights` must stay alive (the embedding table and norms are read in place).
  LlamaModel(const ModelConfig& config, const LlamaWeights& weights, kernels::Backend& backend,
             kernels::WeightType weight_type = kernels::WeightType::kFloat32);

  /// Runs the batch, writing K/V of its tokens into `cache`; fills `logits` with
  /// [logits_indices.size(), vocab_size] float32 rows.
  void forward(const ForwardBatch& batch, KVCache& cache, std::vector<float>& logits);

  kernels::WeightType weight_type() const { return weight_type_; }
  /// Bytes of the packed weight copies.
  std::size_t packed_bytes() const;

 private:
  struct PackedLayer {
    std::unique_ptr<kernels::PackedWeights> qkv, wo, gate_up, down;
  };

  const ModelConfig config_;
  const LlamaWeights weights_;
  kernels::Backend& ops_;
  kernels::WeightType weight_type_;
  std::vector<PackedLayer> layers_;
  std::unique_ptr<kernels::PackedWeights> classifier_;
  // Activations, grown to the largest batch seen (no per-step allocation afterwards).
  std::vector<float> x_, xb_, qkv_, q_, att_, gate_up_, hb_, sel_;
};

}  // namespace pagedchat
