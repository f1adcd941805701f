// MoeMlp: a mixture-of-experts feed-forward (ModelConfig::moe; Qwen3-MoE, and the next families'
// variants). A float32 router scores each token; per token the top-k experts and their weights
// (softmax over all experts then top-k — Qwen3-MoE, Mixtral — or top-k then softmax over the
// selected logits — gpt-oss; renormalised when norm_topk_prob). The tokens routed to each expert
// are gathered and run through that expert's packed gate+up and down as one batched GEMM per
// expert and matrix, every routed expert in one Backend::grouped_linear call (vLLM's fused_moe
// groups tokens by expert the same way; llama.cpp's mul_mat_id), and scatter_add_rows adds the weighted outputs back in
// expert order, so a token's result is the same whatever else is in the batch. Sources: transformers
// modeling_qwen3_moe.py (Qwen3MoeSparseMoeBlock), llama.cpp's llm_build_moe_ffn. A shared expert
// (MoeConfig::shared_expert_intermediate_size; Qwen2-MoE, Qwen3.5-MoE) runs on every token and is
// added with the per-token gate sigmoid(x · shared_gate_inp) (transformers modeling_qwen2_moe.py
// Qwen2MoeSparseMoeBlock; ik_llama.cpp's llm_build_std_moe_ffn with ffn_gate_inp_shexp). gpt-oss
// (MoeConfig::biases): the router adds a bias, each expert's gate/up and down add theirs, and the
// experts' activation is the clamped SwiGLU (transformers modeling_gpt_oss.py GptOssMLP). Gemma 4
// (MoeWeights::expert_scale): each expert's output is scaled by its own factor, folded into the
// routing weights; its router reads an input of its own (forward's router_in).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/model/layers/gated_mlp.h"
#include "engine/model/layers/layer_common.h"

namespace pagedchat::layers {

class MoeMlp {
 public:
  /// The experts and router of `w` (num_experts of each), packed as `packer` says; the router
  /// always as float32.
  MoeMlp(WeightPacker& packer, const MoeWeights& w, int hidden, const MoeConfig& moe, MlpActivation act,
         const std::string& where);
  /// y [T, hidden] = the experts' weighted sum for each row of x [T, hidden]; y must not alias x.
  /// `router_in` [T, hidden]: what the router scores instead of x (Gemma 4's own router input;
  /// null: x).
  void forward(kernels::Backend& ops, Workspace& ws, float* y, const float* x, int T, const float* router_in = nullptr);
  std::size_t packed_bytes() const;

  /// The routing of one token's router logits [num_experts]: (expert, weight) of the top k, as
  /// `moe` says (ties go to the lower expert id). Exposed for tests.
  static std::vector<std::pair<int, float>> route(const float* logits, const MoeConfig& moe);

 private:
  struct Expert {
    std::unique_ptr<kernels::PackedWeights> gate_up, down;
  };
  MoeConfig moe_;
  int hidden_;
  MlpActivation act_;
  std::unique_ptr<kernels::PackedWeights> router_;
  std::vector<Expert> experts_;
  std::unique_ptr<GatedMlp> shared_;                         // the shared expert, if any
  std::unique_ptr<kernels::PackedWeights> shared_gate_inp_;  // [1, hidden] float32, if gated
  // Host-side routing state, reused across steps.
  std::vector<float> logits_host_, zeros_;
  std::vector<std::vector<int>> rows_by_expert_;
  std::vector<std::vector<float>> weights_by_expert_;
  std::vector<float> shared_weights_;
  std::vector<float> expert_scale_;  // MoeWeights::expert_scale on the host; empty: 1
  std::vector<int> identity_rows_;
  // MoeConfig::biases: the router's [E] and per expert [gate | up | down] biases, in backend memory.
  std::vector<float> bias_host_;
  const float *router_bias_ = nullptr, *bias_ = nullptr;
  Placed placed_;
};

}  // namespace pagedchat::layers
