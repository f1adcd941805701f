#include "engine/model/decoder_model.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "engine/model/rope_frequencies.h"

namespace pagedchat {

namespace {

// Throws when the weights and the config's options disagree.
void check_weights(const ModelConfig& c, const ModelWeights& w) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("model weights do not fit the config: " + what);
  };
  if (int(w.layers.size()) != c.n_layers)
    fail(std::to_string(w.layers.size()) + " layers, config says " + std::to_string(c.n_layers));
  if (!w.token_embedding || !w.rms_final || !w.wcls) fail("token embedding, final norm or classifier missing");
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string at = "layer " + std::to_string(l) + ": ";
    for (const auto& [p, name] : {std::pair<bool, const char*>{lw.rms_att != nullptr, "attention norm"},
                                  {bool(lw.wq), "wq"},
                                  {bool(lw.wk), "wk"},
                                  {bool(lw.wv), "wv"},
                                  {bool(lw.wo), "wo"},
                                  {lw.rms_ffn != nullptr, "ffn norm"},
                                  {bool(lw.w1), "w1 (gate)"},
                                  {bool(lw.w2), "w2 (down)"},
                                  {bool(lw.w3), "w3 (up)"}})
      if (!p) fail(at + name + " missing");
    if (!c.attention_qkv_bias && (lw.bq || lw.bk || lw.bv))
      fail(at + "q/k/v biases given but attention_qkv_bias is off");
    if (c.attention_out_bias != (lw.bo != nullptr))
      fail(at + (c.attention_out_bias ? "attention_out_bias is on but bo is missing"
                                      : "bo given but attention_out_bias is off"));
    if (c.qk_norm != (lw.q_norm != nullptr) || c.qk_norm != (lw.k_norm != nullptr))
      fail(at +
           (c.qk_norm ? "qk_norm is on but q_norm or k_norm is missing" : "q_norm/k_norm given but qk_norm is off"));
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
        throw std::invalid_argument(where + std::string(name) + " is " + kernels::dtype_name(t.dtype) +
                                    " with rows of " + std::to_string(k) + " values, not a whole number of its " +
                                    std::to_string(be) + "-value blocks");
      const kernels::DType as = dtype == WeightDType::kAuto ? ops_.auto_weight_type(t.dtype)
                                                            : packed_dtype(t.dtype, dtype);
      wp.push_back({t.data, rows, t.dtype, as});
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
    p.rms_att = place(lw.rms_att, dim);
    p.rms_ffn = place(lw.rms_ffn, dim);
    p.q_norm = place(lw.q_norm, config.head_dim);
    p.k_norm = place(lw.k_norm, config.head_dim);
    p.bo = place(lw.bo, dim);
    p.qkv_bias_placed = p.qkv_bias.empty() ? nullptr : place(p.qkv_bias.data(), p.qkv_bias.size());
    layers_.push_back(std::move(p));
  }
  classifier_ = pack({{weights.wcls, config.vocab_size, "classifier"}}, dim, "");
  if (dim % kernels::dtype_block_elems(weights.token_embedding.dtype) != 0)
    throw std::invalid_argument(std::string("token embedding is ") +
                                kernels::dtype_name(weights.token_embedding.dtype) + " with rows of " +
                                std::to_string(dim) + " values, not whole blocks");
  inv_freq_placed_ = place(inv_freq_.data(), inv_freq_.size());
  rms_final_ = place(weights.rms_final, dim);
  placed_.emplace_back();
  embedding_ = ops_.place_embedding(weights.token_embedding.data, weights.token_embedding.dtype, config.vocab_size, dim,
                                    placed_.back(), &embedding_dtype_);
  // On the CPU embedding() reads the table in place, a row per token: once its pages are dropped,
  // only the rows of tokens seen come back.
  if (packed) packed(weights.token_embedding.data, weights.token_embedding.bytes(std::size_t(config.vocab_size) * dim));
  std::vector<std::pair<std::string, int>> counts(type_counts.begin(), type_counts.end());
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [name, n] : counts)
    packed_types_ += (packed_types_.empty() ? "" : ", ") + name + " x " + std::to_string(n);
}

std::size_t DecoderModel::packed_bytes() const {
  std::size_t n = classifier_->bytes;
  for (const auto& l : layers_) n += l.qkv->bytes + l.wo->bytes + l.gate_up->bytes + l.down->bytes;
  return n;
}

template <typename T>
const T* DecoderModel::place(const T* host, std::size_t n) {
  if (!host) return nullptr;
  placed_.emplace_back();
  return static_cast<const T*>(ops_.place(host, n * sizeof(T), placed_.back()));
}

template <typename T>
T* DecoderModel::workspace(std::unique_ptr<kernels::Buffer>& buf, std::size_t n) {
  if (!buf || buf->bytes() < n * sizeof(T)) {
    buf.reset();  // free the smaller one first
    buf = ops_.allocate(n * sizeof(T));
  }
  return static_cast<T*>(buf->data());
}

template <typename T>
const T* DecoderModel::upload(std::unique_ptr<kernels::Buffer>& buf, const std::vector<T>& host) {
  T* p = workspace<T>(buf, std::max<std::size_t>(host.size(), 1));
  ops_.copy_to_backend(p, host.data(), host.size() * sizeof(T));
  return p;
}

kernels::QkvSpec DecoderModel::qkv_spec(int layer) const {
  const ModelConfig& c = config_;
  const PackedLayer& pl = layers_[layer];
  kernels::QkvSpec s;
  s.n_heads = c.n_heads;
  s.n_kv_heads = c.n_kv_heads;
  s.head_dim = c.head_dim;
  s.bias = pl.qkv_bias_placed;
  s.q_norm = pl.q_norm;
  s.k_norm = pl.k_norm;
  s.norm_eps = c.norm_eps;
  s.rope.head_dim = c.head_dim;
  s.rope.neox = c.rope_style == RopeStyle::kNeox;
  s.rope.inv_freq = inv_freq_placed_;
  return s;
}

void DecoderModel::forward(const ForwardBatch& b, KVCache& cache, std::vector<float>& logits) {
  const ModelConfig& c = config_;
  const int T = b.num_tokens();
  const int dim = c.dim, hidden = c.hidden_dim, hd = c.head_dim;
  const int q_width = c.n_heads * hd, kv_width = c.n_kv_heads * hd;
  float* x = workspace<float>(x_, std::size_t(T) * dim);
  float* xb = workspace<float>(xb_, std::size_t(T) * dim);
  float* qkv = workspace<float>(qkv_, std::size_t(T) * (q_width + 2 * kv_width));
  float* q = workspace<float>(q_, std::size_t(T) * q_width);
  float* att = workspace<float>(att_, std::size_t(T) * q_width);
  float* gate_up = workspace<float>(gate_up_, std::size_t(T) * 2 * hidden);
  float* hb = workspace<float>(hb_, std::size_t(T) * hidden);
  const int* ids = upload(ids_, b.input_ids);
  const int* positions = upload(positions_, b.positions);
  const int64_t* slots = upload(slots_, b.slot_mapping);

  kernels::AttentionMetadata meta;
  meta.query_start_loc = upload(query_start_, b.query_start_loc);
  meta.seq_lens = upload(seq_lens_, b.seq_lens);
  meta.block_tables = upload(block_tables_, b.block_tables);
  meta.max_blocks_per_seq = b.max_blocks_per_seq;
  meta.num_requests = b.num_requests();
  meta.block_size = cache.block_size;
  meta.num_tokens = T;
  for (int r = 0; r < meta.num_requests; ++r) {
    meta.max_query_len = std::max(meta.max_query_len, b.query_start_loc[r + 1] - b.query_start_loc[r]);
    meta.max_seq_len = std::max(meta.max_seq_len, b.seq_lens[r]);
  }

  ops_.embedding(x, embedding_, embedding_dtype_, ids, T, dim);
  ops_.rms_norm(xb, x, layers_[0].rms_att, T, dim, c.norm_eps);
  for (int l = 0; l < c.n_layers; ++l) {
    const PackedLayer& pl = layers_[l];
    ops_.linear(qkv, xb, *pl.qkv, T);
    ops_.qkv_rope_and_cache(q, qkv, positions, cache.key(l), cache.value(l), cache.dtype, slots, T, qkv_spec(l));
    ops_.paged_attention(att, q, cache.key(l), cache.value(l), cache.dtype, meta,
                         kernels::AttentionSpec{c.n_heads, c.n_kv_heads, hd});
    ops_.linear(xb, att, *pl.wo, T);
    if (pl.bo) ops_.add_bias(xb, pl.bo, T, dim);
    ops_.fused_add_rms_norm(xb, x, xb, pl.rms_ffn, T, dim, c.norm_eps);
    ops_.linear(gate_up, xb, *pl.gate_up, T);
    ops_.silu_and_mul_stacked(hb, gate_up, T, hidden);
    ops_.linear(xb, hb, *pl.down, T);
    if (l + 1 < c.n_layers)
      ops_.fused_add_rms_norm(xb, x, xb, layers_[l + 1].rms_att, T, dim, c.norm_eps);
    else
      ops_.add(x, xb, std::int64_t(T) * dim);
  }

  // Final norm and classifier only for the rows that sample.
  const int S = int(b.logits_indices.size());
  float* sel = workspace<float>(sel_, std::size_t(std::max(S, 1)) * dim);
  float* out = workspace<float>(logits_, std::size_t(std::max(S, 1)) * c.vocab_size);
  ops_.gather_rows(sel, x, upload(logit_rows_, b.logits_indices), S, dim);
  ops_.rms_norm(sel, sel, rms_final_, S, dim, c.norm_eps);
  ops_.linear(out, sel, *classifier_, S);
  logits.resize(std::size_t(S) * c.vocab_size);
  ops_.copy_to_host(logits.data(), out, logits.size() * sizeof(float));
}

}  // namespace pagedchat
