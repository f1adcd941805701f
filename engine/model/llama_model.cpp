#include "engine/model/llama_model.h"

#include <algorithm>

namespace pagedchat {

KVCache::KVCache(const ModelConfig& c, int nb, int bs)
    : num_blocks(nb), block_size(bs), kv_width(c.n_kv_heads * c.head_dim), key(c.n_layers), value(c.n_layers) {
  const std::size_t n = std::size_t(nb) * bs * kv_width;
  for (int l = 0; l < c.n_layers; ++l) {
    key[l].assign(n, 0.0f);
    value[l].assign(n, 0.0f);
  }
}

void KVCache::copy_block(int src, int dst) {
  const std::size_t n = std::size_t(block_size) * kv_width;
  for (std::size_t l = 0; l < key.size(); ++l) {
    std::copy_n(key[l].data() + std::size_t(src) * n, n, key[l].data() + std::size_t(dst) * n);
    std::copy_n(value[l].data() + std::size_t(src) * n, n, value[l].data() + std::size_t(dst) * n);
  }
}

std::size_t KVCache::bytes_per_block(const ModelConfig& c, int bs) {
  return std::size_t(2) * c.n_layers * bs * c.n_kv_heads * c.head_dim * sizeof(float);
}

LlamaModel::LlamaModel(const ModelConfig& config, const LlamaWeights& weights, kernels::Backend& backend,
                       kernels::WeightType weight_type)
    : config_(config), weights_(weights), ops_(backend), weight_type_(weight_type) {
  const int dim = config.dim, hidden = config.hidden_dim;
  const int q_width = config.n_heads * config.head_dim, kv_width = config.n_kv_heads * config.head_dim;
  using kernels::WeightPart;
  for (const LayerWeights& lw : weights.layers) {
    PackedLayer p;
    const WeightPart qkv[] = {{lw.wq, q_width}, {lw.wk, kv_width}, {lw.wv, kv_width}};
    p.qkv = ops_.pack_weights(qkv, dim, weight_type);
    const WeightPart wo[] = {{lw.wo, dim}};
    p.wo = ops_.pack_weights(wo, q_width, weight_type);
    const WeightPart gate_up[] = {{lw.w1, hidden}, {lw.w3, hidden}};
    p.gate_up = ops_.pack_weights(gate_up, dim, weight_type);
    const WeightPart down[] = {{lw.w2, dim}};
    p.down = ops_.pack_weights(down, hidden, weight_type);
    layers_.push_back(std::move(p));
  }
  const WeightPart cls[] = {{weights.wcls, config.vocab_size}};
  classifier_ = ops_.pack_weights(cls, dim, weight_type);
}

std::size_t LlamaModel::packed_bytes() const {
  std::size_t n = classifier_->bytes;
  for (const auto& l : layers_) n += l.qkv->bytes + l.wo->bytes + l.gate_up->bytes + l.down->bytes;
  return n;
}

namespace {
void grow(std::vector<float>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
}
}  // namespace

void LlamaModel::forward(const ForwardBatch& b, KVCache& cache, std::vector<float>& logits) {
  const ModelConfig& c = config_;
  const LlamaWeights& w = weights_;
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

  ops_.embedding(x_.data(), w.token_embedding, b.input_ids.data(), T, dim);
  ops_.rms_norm(xb_.data(), x_.data(), w.layers[0].rms_att, T, dim, c.norm_eps);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const PackedLayer& pl = layers_[l];
    ops_.linear(qkv_.data(), xb_.data(), *pl.qkv, T);
    ops_.qkv_rope_and_cache(q_.data(), qkv_.data(), b.positions.data(), cache.key[l].data(), cache.value[l].data(),
                            b.slot_mapping.data(), T, c.n_heads, c.n_kv_heads, hd, c.rope_theta,
                            c.rope_style == RopeStyle::kNeox);
    ops_.paged_attention(att_.data(), q_.data(), cache.key[l].data(), cache.value[l].data(), meta, c.n_heads,
                         c.n_kv_heads, hd);
    ops_.linear(xb_.data(), att_.data(), *pl.wo, T);
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
