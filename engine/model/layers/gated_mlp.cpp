#include "engine/model/layers/gated_mlp.h"

namespace pagedchat::layers {

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
  if (act_ == MlpActivation::kGeluTanh)
    ops.gelu_tanh_and_mul_stacked(h, gu, T, intermediate_);
  else
    ops.silu_and_mul_stacked(h, gu, T, intermediate_);
  ops.linear(y, h, *down_, T);
}

}  // namespace pagedchat::layers
