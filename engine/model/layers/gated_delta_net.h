// GatedDeltaNet: the linear-attention token mixer of Qwen3-Next / Qwen3.5 / Qwen3.6 (vLLM's
// Qwen3NextGatedDeltaNet; transformers modeling_qwen3_next.py):
//
//   [qkv | z | b | a] = h · [W_qkv; W_z; W_b; W_a]^T     one stacked linear
//   per sequence, in token order (Backend::gated_delta_net):
//     x = silu(causal conv1d(qkv))                       conv_kernel taps, state: last inputs
//     q, k L2-normalised per key head; value head j reads key head j % num_k_heads (GGUF order)
//     or j / (num_v_heads / num_k_heads) (Hugging Face order, LinearAttentionConfig::v_heads_grouped)
//     g = A_j softplus(a_j + dt_bias_j);  beta = sigmoid(b_j)
//     S_j = exp(g) S_j + beta (v_j - exp(g) S_j k) k^T;  o_j = S_j q / sqrt(head_k_dim)
//     o_j = rms_norm(o_j) · norm · silu(z_j)
//   out = o · W_out^T
//
// The state (conv inputs and S, float32) is the sequence's, in its state slot
// (engine/model/kv_cache.h); a checkpoint of it may be written at one token of the step
// (DeltaNetSequence::save_after), for prefix caching at block boundaries.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/model/layers/layer_common.h"
#include "engine/model/model_weights.h"

namespace pagedchat::layers {

class GatedDeltaNet {
 public:
  /// Packs w's four input projections as one matrix and its output projection as `packer` says;
  /// places the conv taps, dt_bias, A and the norm weight. Throws std::invalid_argument naming
  /// `where` + the tensor when a matrix's rows are not whole blocks of its type.
  GatedDeltaNet(WeightPacker& packer, const GatedDeltaNetWeights& w, int hidden_size, const LinearAttentionConfig& la,
                float norm_eps, const std::string& where);
  /// out [T, hidden] = the mixer's output for h [T, hidden] (out may alias h); `seqs` give each
  /// sequence's rows and state (state pointers of this layer).
  void forward(kernels::Backend& ops, Workspace& ws, float* out, const float* h, const kernels::DeltaNetSequence* seqs,
               int num_seqs, int T);
  std::size_t packed_bytes() const { return in_proj_->bytes + out_proj_->bytes; }
  const kernels::GatedDeltaNetSpec& spec() const { return spec_; }

 private:
  kernels::GatedDeltaNetSpec spec_;
  std::unique_ptr<kernels::PackedWeights> in_proj_, out_proj_;
  Placed placed_;
};

}  // namespace pagedchat::layers
