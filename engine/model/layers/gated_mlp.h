// GatedMlp: the dense feed-forward of every family, out = down(act(gate(x)) * up(x)) with act SiLU
// (SwiGLU: Llama, Qwen, Phi-3, SmolLM3, EXAONE 4), GELU-tanh (GeGLU: Gemma) or gpt-oss's clamped
// SwiGLU. Gate and up are
// packed as one stacked matrix, so one linear computes both. Sources: transformers LlamaMLP,
// Gemma3MLP; vLLM's MergedColumnParallelLinear + SiluAndMul / GeluAndMul(approximate="tanh").
#pragma once

#include <memory>
#include <string>

#include "engine/config.h"
#include "engine/model/layers/layer_common.h"

namespace pagedchat::layers {

/// out [T, width] = act(gate) * up of stacked rows gate_up [T, 2 * width] ([gate | up] per row),
/// for every MlpActivation (the clamped SwiGLU with gpt-oss's alpha 1.702 and limit 7).
void gated_activation(kernels::Backend& ops, MlpActivation act, float* out, const float* gate_up, int T, int width);

class GatedMlp {
 public:
  /// gate / up [intermediate, hidden], down [hidden, intermediate], in their file types.
  GatedMlp(WeightPacker& packer, const WeightTensor& gate, const WeightTensor& up, const WeightTensor& down, int hidden,
           int intermediate, MlpActivation act, const std::string& where);
  /// y [T, hidden] = the MLP of x [T, hidden]; y may alias x. Intermediates live in `ws`.
  void forward(kernels::Backend& ops, Workspace& ws, float* y, const float* x, int T) const;
  std::size_t packed_bytes() const { return gate_up_->bytes + down_->bytes; }

 private:
  std::unique_ptr<kernels::PackedWeights> gate_up_, down_;
  int intermediate_;
  MlpActivation act_;
};

}  // namespace pagedchat::layers
