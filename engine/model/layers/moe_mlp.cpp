#include "engine/model/layers/moe_mlp.h"

#include <algorithm>
#include <cmath>

namespace pagedchat::layers {
namespace {

// Most routed rows one pass of MoeMlp::forward runs (decode of up to 128 tokens at top-8: one
// pass); a prefill chunk takes several, each with scratch of this many rows.
constexpr int kPassRows = 1024;

}  // namespace

MoeMlp::MoeMlp(WeightPacker& packer, const MoeWeights& w, int hidden, const MoeConfig& moe, MlpActivation act,
               const std::string& where)
    : moe_(moe), hidden_(hidden), act_(act) {
  // The router stays float32 (as every converter writes it), so rounding cannot change a route.
  const std::vector<kernels::WeightPart> router{{w.router.data, moe.num_experts, w.router.dtype, kernels::DType::kF32}};
  router_ = packer.backend().pack_weights(router, hidden);
  const int ef = moe.expert_intermediate_size;
  for (int e = 0; e < moe.num_experts; ++e) {
    const std::string at = where + "expert " + std::to_string(e) + ": ";
    Expert x;
    x.gate_up = packer.pack({{w.gate[e], ef, "gate"}, {w.up[e], ef, "up"}}, hidden, at);
    x.down = packer.pack({{w.down[e], hidden, "down"}}, ef, at);
    experts_.push_back(std::move(x));
  }
  if (w.expert_scale) expert_scale_.assign(w.expert_scale, w.expert_scale + moe.num_experts);
  if (moe.biases) {
    // Router bias, and per expert [gate bias | up bias] (the stacked rows' order) and down bias.
    router_bias_ = placed_.place(packer.backend(), w.router_bias, std::size_t(moe.num_experts));
    bias_host_.assign(std::size_t(moe.num_experts) * (2 * ef + hidden), 0.0f);
    for (int e = 0; e < moe.num_experts; ++e) {
      float* b = bias_host_.data() + std::size_t(e) * (2 * ef + hidden);
      std::copy_n(w.gate_bias.at(std::size_t(e)), ef, b);
      std::copy_n(w.up_bias.at(std::size_t(e)), ef, b + ef);
      std::copy_n(w.down_bias.at(std::size_t(e)), hidden, b + 2 * ef);
    }
    bias_ = placed_.place(packer.backend(), bias_host_.data(), bias_host_.size());
  }
  if (const int sf = moe.shared_expert_intermediate_size; sf > 0) {
    shared_ = std::make_unique<GatedMlp>(packer, w.shared_gate, w.shared_up, w.shared_down, hidden, sf, act,
                                         where + "shared expert: ");
    if (moe.shared_expert_gated) {
      const std::vector<kernels::WeightPart> g{{w.shared_gate_inp, 1, kernels::DType::kF32, kernels::DType::kF32}};
      shared_gate_inp_ = packer.backend().pack_weights(g, hidden);
    }
  }
}

std::size_t MoeMlp::packed_bytes() const {
  std::size_t n = router_->bytes;
  for (const Expert& e : experts_) n += e.gate_up->bytes + e.down->bytes;
  if (shared_) n += shared_->packed_bytes() + (shared_gate_inp_ ? shared_gate_inp_->bytes : 0);
  return n;
}

std::vector<std::pair<int, float>> MoeMlp::route(const float* lg, const MoeConfig& moe) {
  const int E = moe.num_experts, K = moe.num_experts_per_tok;
  std::vector<int> order(static_cast<std::size_t>(E));
  for (int e = 0; e < E; ++e) order[e] = e;
  // Top-k by logit (= by probability); ties go to the lower expert id.
  std::partial_sort(order.begin(), order.begin() + K, order.end(),
                    [&](int a, int b) { return lg[a] > lg[b] || (lg[a] == lg[b] && a < b); });
  const double mx = lg[order[0]];
  std::vector<double> p(static_cast<std::size_t>(K));
  double sum = 0.0;
  if (moe.softmax_before_topk) {
    for (int e = 0; e < E; ++e) sum += std::exp(double(lg[e]) - mx);
    for (int i = 0; i < K; ++i) p[i] = std::exp(double(lg[order[i]]) - mx) / sum;
  } else {  // softmax over the selected logits only
    for (int i = 0; i < K; ++i) sum += (p[i] = std::exp(double(lg[order[i]]) - mx));
    for (int i = 0; i < K; ++i) p[i] /= sum;
  }
  double norm = 0.0;
  for (int i = 0; i < K; ++i) norm += p[i];
  std::vector<std::pair<int, float>> out;
  for (int i = 0; i < K; ++i) out.emplace_back(order[i], float(moe.norm_topk_prob ? p[i] / norm : p[i]));
  return out;
}

void MoeMlp::forward(kernels::Backend& ops, Workspace& ws, float* y, const float* x, int T, const float* router_in) {
  const int E = moe_.num_experts, ef = moe_.expert_intermediate_size, dim = hidden_;
  float* logits = ws.router_logits.get<float>(ops, std::size_t(T) * E);
  ops.linear(logits, router_in ? router_in : x, *router_, T);
  if (router_bias_) ops.add_bias(logits, router_bias_, T, E);
  logits_host_.resize(std::size_t(T) * E);
  ops.copy_to_host(logits_host_.data(), logits, logits_host_.size() * sizeof(float));
  // Each expert's tokens, in token order.
  rows_by_expert_.assign(std::size_t(E), {});
  weights_by_expert_.assign(std::size_t(E), {});
  for (int t = 0; t < T; ++t)
    for (const auto& [e, w] : route(logits_host_.data() + std::size_t(t) * E, moe_)) {
      rows_by_expert_[e].push_back(t);
      weights_by_expert_[e].push_back(expert_scale_.empty() ? w : w * expert_scale_[std::size_t(e)]);
    }
  std::vector<int> all_rows;
  std::vector<float> all_weights;
  std::vector<int> offset(std::size_t(E) + 1, 0);
  for (int e = 0; e < E; ++e) {
    all_rows.insert(all_rows.end(), rows_by_expert_[e].begin(), rows_by_expert_[e].end());
    all_weights.insert(all_weights.end(), weights_by_expert_[e].begin(), weights_by_expert_[e].end());
    offset[e + 1] = int(all_rows.size());
  }
  const int* rows = ws.rows.upload(ops, all_rows);
  const float* weights = ws.weights.upload(ops, all_weights);
  // Passes over consecutive experts of at most kPassRows routed rows (or one expert's, if more):
  // each pass is one grouped GEMM per matrix, and bounds the scratch a long prefill chunk needs.
  std::vector<int> pass_end;
  int pass_rows = 1;
  for (int e0 = 0; e0 < E;) {
    int e1 = e0 + 1;
    while (e1 < E && offset[e1 + 1] - offset[e0] <= kPassRows) ++e1;
    pass_end.push_back(e1);
    pass_rows = std::max(pass_rows, offset[e1] - offset[e0]);
    e0 = e1;
  }
  float* xe = ws.expert_in.get<float>(ops, std::size_t(pass_rows) * dim);
  float* gu = ws.gate_up.get<float>(ops, std::size_t(pass_rows) * 2 * ef);
  float* he = ws.hidden.get<float>(ops, std::size_t(pass_rows) * ef);
  float* ye = ws.expert_out.get<float>(ops, std::size_t(pass_rows) * dim);
  zeros_.assign(std::size_t(T) * dim, 0.0f);
  ops.copy_to_backend(y, zeros_.data(), zeros_.size() * sizeof(float));
  std::vector<const kernels::PackedWeights*> gate_up, down;
  std::vector<int> group_offsets, group_experts;
  const std::size_t bias_stride = std::size_t(2) * ef + dim;
  for (int e0 = 0; const int e1 : pass_end) {
    const int base = offset[e0], n = offset[e1] - base;
    gate_up.clear();
    down.clear();
    group_offsets.assign(1, 0);
    group_experts.clear();
    for (int e = e0; e < e1; ++e) {
      if (offset[e + 1] == offset[e]) continue;  // not routed to: its weights are not read
      gate_up.push_back(experts_[e].gate_up.get());
      down.push_back(experts_[e].down.get());
      group_offsets.push_back(offset[e + 1] - base);
      group_experts.push_back(e);
    }
    e0 = e1;
    if (n == 0) continue;
    ops.gather_rows(xe, x, rows + base, n, dim);
    ops.grouped_linear(gu, xe, gate_up, group_offsets.data());
    if (bias_)
      for (std::size_t i = 0; i < group_experts.size(); ++i)
        ops.add_bias(gu + std::size_t(group_offsets[i]) * 2 * ef, bias_ + group_experts[i] * bias_stride,
                     group_offsets[i + 1] - group_offsets[i], 2 * ef);
    gated_activation(ops, act_, he, gu, n, ef);
    ops.grouped_linear(ye, he, down, group_offsets.data());
    if (bias_)
      for (std::size_t i = 0; i < group_experts.size(); ++i)
        ops.add_bias(ye + std::size_t(group_offsets[i]) * dim, bias_ + group_experts[i] * bias_stride + 2 * ef,
                     group_offsets[i + 1] - group_offsets[i], dim);
    ops.scatter_add_rows(y, ye, rows + base, weights + base, n, dim);
  }
  if (!shared_) return;
  // The shared expert on every token, weighted by its sigmoid gate (1 when ungated).
  float* ys = ws.shared_out.get<float>(ops, std::size_t(T) * dim);
  shared_->forward(ops, ws, ys, x, T);
  shared_weights_.assign(std::size_t(T), 1.0f);
  if (shared_gate_inp_) {
    float* g = ws.router_logits.get<float>(ops, std::size_t(T));
    ops.linear(g, x, *shared_gate_inp_, T);
    ops.copy_to_host(shared_weights_.data(), g, std::size_t(T) * sizeof(float));
    for (float& v : shared_weights_) v = 1.0f / (1.0f + std::exp(-v));
  }
  identity_rows_.resize(std::size_t(T));
  for (int t = 0; t < T; ++t) identity_rows_[std::size_t(t)] = t;
  ops.scatter_add_rows(y, ys, ws.rows.upload(ops, identity_rows_), ws.weights.upload(ops, shared_weights_), T, dim);
}

}  // namespace pagedchat::layers
