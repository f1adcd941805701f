#include "engine/model/layers/gated_delta_net.h"

namespace pagedchat::layers {

GatedDeltaNet::GatedDeltaNet(WeightPacker& packer, const GatedDeltaNetWeights& w, int hidden_size,
                             const LinearAttentionConfig& la, float norm_eps, const std::string& where) {
  spec_.num_k_heads = la.num_k_heads;
  spec_.num_v_heads = la.num_v_heads;
  spec_.head_k_dim = la.head_k_dim;
  spec_.head_v_dim = la.head_v_dim;
  spec_.conv_kernel = la.conv_kernel;
  spec_.v_heads_grouped = la.v_heads_grouped;
  spec_.norm_eps = norm_eps;
  in_proj_ = packer.pack({{w.in_proj_qkv, la.conv_dim(), "attn_qkv"},
                          {w.in_proj_z, la.value_dim(), "attn_gate"},
                          {w.in_proj_b, la.num_v_heads, "ssm_beta"},
                          {w.in_proj_a, la.num_v_heads, "ssm_alpha"}},
                         hidden_size, where);
  out_proj_ = packer.pack({{w.out_proj, hidden_size, "ssm_out"}}, la.value_dim(), where);
  kernels::Backend& ops = packer.backend();
  spec_.conv1d = placed_.place(ops, w.conv1d, std::size_t(la.conv_dim()) * la.conv_kernel);
  spec_.dt_bias = placed_.place(ops, w.dt_bias, std::size_t(la.num_v_heads));
  spec_.a = placed_.place(ops, w.a, std::size_t(la.num_v_heads));
  spec_.norm = placed_.place(ops, w.norm, std::size_t(la.head_v_dim));
}

void GatedDeltaNet::forward(kernels::Backend& ops, Workspace& ws, float* out, const float* h,
                            const kernels::DeltaNetSequence* seqs, int num_seqs, int T) {
  float* proj = ws.proj.get<float>(ops, std::size_t(T) * spec_.proj_width());
  float* mixed = ws.mixed.get<float>(ops, std::size_t(T) * spec_.value_dim());
  ops.linear(proj, h, *in_proj_, T);
  ops.gated_delta_net(mixed, proj, spec_, seqs, num_seqs);
  ops.linear(out, mixed, *out_proj_, T);
}

}  // namespace pagedchat::layers
