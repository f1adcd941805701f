#include "engine/model/decoder_model.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <stdexcept>
#include <string>

#include "engine/model/rope_frequencies.h"

namespace pagedchat {

namespace {

void grow(std::vector<float>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
}

// Throws when the weights and the config's options disagree.
void check_weights(const ModelConfig& c, const ModelWeights& w) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("model weights do not fit the config: " + what); };
  if (int(w.layers.size()) != c.n_layers)
    fail(std::to_string(w.layers.size()) + " layers, config says " + std::to_string(c.n_layers));
  if (!w.token_embedding || !w.rms_final || !w.wcls) fail("token embedding, final norm or classifier missing");
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string at = "layer " + std::to_string(l) + ": ";
    for (const auto& [p, name] : {std::pair<bool, const char*>{lw.rms_att != nullptr, "attention norm"},
                                  {bool(lw.wq), "wq"}, {bool(lw.wk), "wk"}, {bool(lw.wv), "wv"}, {bool(lw.wo), "wo"},
                                  {lw.rms_ffn != nullptr, "ffn norm"}, {bool(lw.w1), "w1 (gate)"},
                                  {bool(lw.w2), "w2 (down)"}, {bool(lw.w3), "w3 (up)"}})
      if (!p) fail(at + name + " missing");
    if (!c.attention_qkv_bias && (lw.bq || lw.bk || lw.bv)) fail(at + "q/k/v biases given but attention_qkv_bias is off");
    if (c.attention_out_bias != (lw.bo != nullptr))
      fail(at + (c.attention_out_bias ? "attention_out_bias is on but bo is missing" : "bo given but attention_out_bias is off"));
    if (c.qk_norm != (lw.q_norm != nullptr) || c.qk_norm != (lw.k_norm != nullptr))
      fail(at + (c.qk_norm ? "qk_norm is on but q_norm or k_norm is missing" : "q_norm/k_norm given but qk_norm is off"));
  }
}

}  // namespace

DecoderModel::DecoderModel(const ModelConfig& config, const ModelWeights& weights, kernels::Backend& backend,
                           WeightDType dtype, const PackedCallback& packed)
    : config_(config), weights_(weights), ops_(backend), weight_dtype_(dtype) {
  check_weights(config, weights);
  try {
    inv_freq_ = pagedchat::rope_inv_freq(config);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("model config: ") + e.what());
  }
  const int dim = config.dim, hidden = config.hidden_dim;
  const int q_width = config.n_heads * config.head_dim, kv_width = config.n_kv_heads * config.head_dim;
  std::map<std::string, int> type_counts;
  // Packs the parts [{tensor, rows, name}] (each [rows, k]) as one stacked matrix.
  auto pack = [&](std::initializer_list<std::tuple<const WeightTensor&, int, const char*>> parts, int k,
                  const std::string& where) {
    std::vector<kernels::WeightPart> wp;
    for (const auto& [t, rows, name] : parts) {
      const int be = kernels::dtype_block_elems(t.dtype);
      if (k % be != 0)
        throw std::invalid_argument(where + std::string(name) + " is " + kernels::dtype_name(t.dtype) + " with rows of " +
                                    std::to_string(k) + " values, not a whole number of its " + std::to_string(be) +
                                    "-value blocks");
      wp.push_back({t.data, rows, t.dtype, packed_dtype(t.dtype, dtype)});
      ++type_counts[kernels::dtype_name(wp.back().packed)];
    }
    auto p = ops_.pack_weights(wp, k);
    if (packed)
      for (const auto& [t, rows, name] : parts) packed(t.data, t.bytes(std::size_t(rows) * k));
    return p;
  };
  int l = 0;
  for (const LayerWeights& lw : weights.layers) {
    const std::string at = "layer " + std::to_string(l++) + ": ";
    PackedLayer p;
    p.qkv = pack({{lw.wq, q_width, "wq"}, {lw.wk, kv_width, "wk"}, {lw.wv, kv_width, "wv"}}, dim, at);
    p.wo = pack({{lw.wo, dim, "wo"}}, q_width, at);
    p.gate_up = pack({{lw.w1, hidden, "w1 (gate)"}, {lw.w3, hidden, "w3 (up)"}}, dim, at);
    p.down = pack({{lw.w2, dim, "w2 (down)"}}, hidden, at);
    if (config.attention_qkv_bias) {
      p.qkv_bias.assign(std::size_t(q_width + 2 * kv_width), 0.0f);
      if (lw.bq) std::copy_n(lw.bq, q_width, p.qkv_bias.begin());
      if (lw.bk) std::copy_n(lw.bk, kv_width, p.qkv_bias.begin() + q_width);
      if (lw.bv) std::copy_n(lw.bv, kv_width, p.qkv_bias.begin() + q_width + kv_width);
    }
    layers_.push_back(std::move(p));
  }
  classifier_ = pack({{weights.wcls, config.vocab_size, "classifier"}}, dim, "");
  if (dim % kernels::dtype_block_elems(weights.token_embedding.dtype) != 0)
    throw std::invalid_argument(std::string("token embedding is ") + kernels::dtype_name(weights.token_embedding.dtype) +
                                " with rows of " + std::to_string(dim) + " values, not whole blocks");
  // embedding() reads the table in place, a row per token: once its pages are dropped, only the
  // rows of tokens seen come back.
  if (packed) packed(weights.token_embedding.data, weights.token_embedding.bytes(std::size_t(config.vocab_size) * dim));
  std::vector<std::pair<std::string, int>> counts(type_counts.begin(), type_counts.end());
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [name, n] : counts) packed_types_ += (packed_types_.empty() ? "" : ", ") + name + " x " + std::to_string(n);
}

std::size_t DecoderModel::packed_bytes() const {
  std::size_t n = classifier_->bytes;
  for (const auto& l : layers_) n += l.qkv->bytes + l.wo->bytes + l.gate_up->bytes + l.down->bytes;
  return n;
}

kernels::QkvSpec DecoderModel::qkv_spec(int layer) const {
  const ModelConfig& c = config_;
  const LayerWeights& lw = weights_.layers[layer];
  kernels::QkvSpec s;
  s.n_heads = c.n_heads;
  s.n_kv_heads = c.n_kv_heads;
  s.head_dim = c.head_dim;
  s.bias = layers_[layer].qkv_bias.empty() ? nullptr : layers_[layer].qkv_bias.data();
  s.q_norm = lw.q_norm;
  s.k_norm = lw.k_norm;
  s.norm_eps = c.norm_eps;
  s.rope.head_dim = c.head_dim;
  s.rope.neox = c.rope_style == RopeStyle::kNeox;
  s.rope.inv_freq = inv_freq_.data();
  return s;
}

void DecoderModel::forward(const ForwardBatch& b, KVCache& cache, std::vector<float>& logits) {
  const ModelConfig& c = config_;
  const ModelWeights& w = weights_;
  const int T = b.num_tokens();
  const int dim = c.dim, hidden = c.hidden_dim, hd = c.head_dim;
  const int q_width = c.n_heads * hd, kv_width = c.n_kv_heads * hd;
  grow(x_, std::size_t(T) * dim);
  grow(xb_, std::size_t(T) * dim);
  grow(qkv_, std::size_t(T) * (q_width + 2 * kv_width));
  grow(q_, std::size_t(T) * q_width);
  grow(att_, std::size_t(T) * q_width);
  grow(gate_up_, std::size_t(T) * 2 * hidden);
  grow(hb_, std::size_t(T) * hidden);

  kernels::AttentionMetadata meta;
  meta.query_start_loc = b.query_start_loc.data();
  meta.seq_lens = b.seq_lens.data();
  meta.block_tables = b.block_tables.data();
  meta.max_blocks_per_seq = b.max_blocks_per_seq;
  meta.num_requests = b.num_requests();
  meta.block_size = cache.block_size;

  ops_.embedding(x_.data(), w.token_embedding.data, w.token_embedding.dtype, b.input_ids.data(), T, dim);
  ops_.rms_norm(xb_.data(), x_.data(), w.layers[0].rms_att, T, dim, c.norm_eps);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const PackedLayer& pl = layers_[l];
    ops_.linear(qkv_.data(), xb_.data(), *pl.qkv, T);
    ops_.qkv_rope_and_cache(q_.data(), qkv_.data(), b.positions.data(), cache.key(l), cache.value(l), cache.dtype,
                            b.slot_mapping.data(), T, qkv_spec(l));
    ops_.paged_attention(att_.data(), q_.data(), cache.key(l), cache.value(l), cache.dtype, meta, c.n_heads,
                         c.n_kv_heads, hd);
    ops_.linear(xb_.data(), att_.data(), *pl.wo, T);
    if (lw.bo) ops_.add_bias(xb_.data(), lw.bo, T, dim);
    ops_.fused_add_rms_norm(xb_.data(), x_.data(), xb_.data(), lw.rms_ffn, T, dim, c.norm_eps);
    ops_.linear(gate_up_.data(), xb_.data(), *pl.gate_up, T);
    ops_.silu_and_mul_stacked(hb_.data(), gate_up_.data(), T, hidden);
    ops_.linear(xb_.data(), hb_.data(), *pl.down, T);
    if (l + 1 < c.n_layers)
      ops_.fused_add_rms_norm(xb_.data(), x_.data(), xb_.data(), w.layers[l + 1].rms_att, T, dim, c.norm_eps);
    else
      ops_.add(x_.data(), xb_.data(), std::int64_t(T) * dim);
  }

  // Final norm and classifier only for the rows that sample.
  const int S = int(b.logits_indices.size());
  grow(sel_, std::size_t(S) * dim);
  for (int s = 0; s < S; ++s)
    std::copy_n(x_.data() + std::size_t(b.logits_indices[s]) * dim, dim, sel_.data() + std::size_t(s) * dim);
  ops_.rms_norm(sel_.data(), sel_.data(), w.rms_final, S, dim, c.norm_eps);
  logits.resize(std::size_t(S) * c.vocab_size);
  ops_.linear(logits.data(), sel_.data(), *classifier_, S);
}

}  // namespace pagedchat
