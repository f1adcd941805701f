#include "engine/model/layers/attention.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

namespace pagedchat::layers {

Attention::Attention(WeightPacker& packer, const LayerWeights& w, const AttentionOptions& opt, const std::string& where)
    : opt_(opt) {
  const int q_width = opt.n_heads * opt.head_dim, kv_width = opt.n_kv_heads * opt.head_dim;
  if (opt.output_gate) {
    // The file interleaves [q_h | gate_h] per head: pack the query rows of every head (then k,
    // v) as one matrix and the gate rows as another.
    const std::size_t head_bytes = w.q_proj.bytes(std::size_t(opt.head_dim) * opt.hidden_size);
    std::vector<WeightTensor> q_rows, gate_rows;
    for (int h = 0; h < opt.n_heads; ++h) {
      const auto* base = static_cast<const unsigned char*>(w.q_proj.data) + 2 * std::size_t(h) * head_bytes;
      q_rows.emplace_back(base, w.q_proj.dtype);
      gate_rows.emplace_back(base + head_bytes, w.q_proj.dtype);
    }
    std::vector<WeightPacker::Part> parts, gates;
    for (int h = 0; h < opt.n_heads; ++h) {
      parts.push_back({q_rows[std::size_t(h)], opt.head_dim, "q_proj"});
      gates.push_back({gate_rows[std::size_t(h)], opt.head_dim, "q_proj (gate)"});
    }
    parts.push_back({w.k_proj, kv_width, "k_proj"});
    parts.push_back({w.v_proj, kv_width, "v_proj"});
    qkv_ = packer.pack(std::span<const WeightPacker::Part>(parts), opt.hidden_size, where);
    gate_ = packer.pack(std::span<const WeightPacker::Part>(gates), opt.hidden_size, where);
  } else if (opt.shared_kv) {
    qkv_ = packer.pack({{w.q_proj, q_width, "q_proj"}}, opt.hidden_size, where);
  } else {
    qkv_ = packer.pack({{w.q_proj, q_width, "q_proj"}, {w.k_proj, kv_width, "k_proj"}, {w.v_proj, kv_width, "v_proj"}},
                       opt.hidden_size, where);
  }
  o_proj_ = packer.pack({{w.o_proj, opt.hidden_size, "o_proj"}}, q_width, where);
  kernels::Backend& ops = packer.backend();
  if (opt.qkv_bias) {
    qkv_bias_.assign(std::size_t(q_width + 2 * kv_width), 0.0f);
    if (w.bq) std::copy_n(w.bq, q_width, qkv_bias_.begin());
    if (w.bk) std::copy_n(w.bk, kv_width, qkv_bias_.begin() + q_width);
    if (w.bv) std::copy_n(w.bv, kv_width, qkv_bias_.begin() + q_width + kv_width);
    bias_ = placed_.place(ops, qkv_bias_.data(), qkv_bias_.size());
  }
  q_norm_ = placed_.place(ops, w.q_norm, std::size_t(opt.head_dim));
  if (!opt.shared_kv) k_norm_ = placed_.place(ops, w.k_norm, std::size_t(opt.head_dim));
  bo_ = placed_.place(ops, w.bo, std::size_t(opt.hidden_size));
  if (opt.sinks) {
    if (!w.sinks) throw std::invalid_argument(where + "attention sinks missing");
    sinks_ = placed_.place(ops, w.sinks, std::size_t(opt.n_heads));
  }
}

void Attention::forward(kernels::Backend& ops, Workspace& ws, float* out, const float* h, const int* positions,
                        const KvCacheLayer& cache, int T, const int* mrope_positions) {
  const int hd = opt_.head_dim, q_width = opt_.n_heads * hd, kv_width = opt_.n_kv_heads * hd;
  float* qkv = ws.qkv.get<float>(ops, std::size_t(T) * (q_width + 2 * kv_width));
  float* q = ws.q.get<float>(ops, std::size_t(T) * q_width);
  float* att = ws.attn.get<float>(ops, std::size_t(T) * q_width);
  kernels::RopeSpec rope;
  rope.head_dim = hd;
  rope.rotary_dim = opt_.rotary_dim;
  rope.neox = opt_.neox;
  rope.inv_freq = opt_.inv_freq;
  if (mrope_positions && opt_.inv_freq) {
    rope.mrope_positions = mrope_positions;
    rope.mrope_sections = opt_.mrope_sections;
  }
  if (opt_.shared_kv) {
    // Only q: its bias, norm and RoPE as qkv_rope_and_cache would apply them (the same kernels).
    ops.linear(q, h, *qkv_, T);
    if (bias_) ops.add_bias(q, bias_, T, q_width);
    if (q_norm_) ops.rms_norm_heads(q, q_width, q_norm_, T, opt_.n_heads, hd, opt_.norm_eps);
    if (opt_.inv_freq) ops.rotary_embedding(q, nullptr, positions, T, opt_.n_heads, 0, rope);
  } else {
    ops.linear(qkv, h, *qkv_, T);
    kernels::QkvSpec s;
    s.n_heads = opt_.n_heads;
    s.n_kv_heads = opt_.n_kv_heads;
    s.head_dim = hd;
    s.bias = bias_;
    s.q_norm = q_norm_;
    s.k_norm = k_norm_;
    s.norm_eps = opt_.norm_eps;
    s.rope = rope;
    s.v_norm = opt_.v_norm;
    s.kv_row_width = opt_.kv_row_width;
    ops.qkv_rope_and_cache(q, qkv, positions, cache.key, cache.value, cache.dtype, cache.slot_mapping, T, s);
  }
  kernels::AttentionSpec as;
  as.n_heads = opt_.n_heads;
  as.n_kv_heads = opt_.n_kv_heads;
  as.head_dim = hd;
  as.scale = opt_.scale > 0.0f ? opt_.scale : 1.0f / std::sqrt(float(hd));
  as.sliding_window = opt_.sliding_window;
  as.sinks = sinks_;
  as.kv_row_width = opt_.kv_row_width;
  ops.paged_attention(att, q, cache.key, cache.value, cache.dtype, *cache.meta, as);
  if (gate_) {
    float* gate = ws.gate.get<float>(ops, std::size_t(T) * q_width);
    ops.linear(gate, h, *gate_, T);
    ops.sigmoid_mul(att, gate, q_width, T, q_width);
  }
  ops.linear(out, att, *o_proj_, T);
  if (bo_) ops.add_bias(out, bo_, T, opt_.hidden_size);
}

}  // namespace pagedchat::layers
