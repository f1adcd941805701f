#include "engine/model/layers/gated_mlp.h"

namespace pagedchat::layers {

void gated_activation(kernels::Backend& ops, MlpActivation act, float* out, const float* gate_up, int T, int width) {
  switch (act) {
    case MlpActivation::kGeluTanh:
      return ops.gelu_tanh_and_mul_stacked(out, gate_up, T, width);
    case MlpActivation::kSwigluOai:
      // transformers GptOssExperts: alpha 1.702, limit 7.0 (fixed in the model's code, not its config).
      return ops.swiglu_oai_stacked(out, gate_up, T, width, 1.702f, 7.0f);
    case MlpActivation::kSilu:
      break;
  }
  ops.silu_and_mul_stacked(out, gate_up, T, width);
}

GatedMlp::GatedMlp(WeightPacker& packer, const WeightTensor& gate, const WeightTensor& up, const WeightTensor& down,
                   int hidden, int intermediate, MlpActivation act, const std::string& where)
    : intermediate_(intermediate), act_(act) {
  gate_up_ = packer.pack({{gate, intermediate, "gate_proj"}, {up, intermediate, "up_proj"}}, hidden, where);
  down_ = packer.pack({{down, hidden, "down_proj"}}, intermediate, where);
}

void GatedMlp::forward(kernels::Backend& ops, Workspace& ws, float* y, const float* x, int T) const {
  float* gu = ws.gate_up.get<float>(ops, std::size_t(T) * 2 * intermediate_);
  float* h = ws.hidden.get<float>(ops, std::size_t(T) * intermediate_);
  ops.linear(gu, x, *gate_up_, T);
  gated_activation(ops, act_, h, gu, T, intermediate_);
  ops.linear(y, h, *down_, T);
}

}  // namespace pagedchat::layers
