#include "engine/llama_model.h"

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

LlamaModel::LlamaModel(const ModelConfig& config, const LlamaWeights& weights, kernels::Backend& backend)
    : config_(config), weights_(weights), ops_(backend) {}

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
  grow(xb_, std::size_t(T) * std::max(dim, q_width));
  grow(q_, std::size_t(T) * q_width);
  grow(k_, std::size_t(T) * kv_width);
  grow(v_, std::size_t(T) * kv_width);
  grow(att_, std::size_t(T) * q_width);
  grow(hb_, std::size_t(T) * hidden);
  grow(hb2_, std::size_t(T) * hidden);

  kernels::AttentionMetadata meta;
  meta.query_start_loc = b.query_start_loc.data();
  meta.seq_lens = b.seq_lens.data();
  meta.block_tables = b.block_tables.data();
  meta.max_blocks_per_seq = b.max_blocks_per_seq;
  meta.num_requests = b.num_requests();
  meta.block_size = cache.block_size;

  ops_.embedding(x_.data(), w.token_embedding, b.input_ids.data(), T, dim);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    ops_.rms_norm(xb_.data(), x_.data(), lw.rms_att, T, dim, c.norm_eps);
    ops_.matmul(q_.data(), xb_.data(), lw.wq, T, q_width, dim);
    ops_.matmul(k_.data(), xb_.data(), lw.wk, T, kv_width, dim);
    ops_.matmul(v_.data(), xb_.data(), lw.wv, T, kv_width, dim);
    ops_.rotary_embedding(q_.data(), k_.data(), b.positions.data(), T, c.n_heads, c.n_kv_heads, hd, c.rope_theta,
                           c.rope_style == RopeStyle::kNeox);
    ops_.reshape_and_cache(k_.data(), v_.data(), cache.key[l].data(), cache.value[l].data(), b.slot_mapping.data(), T,
                           kv_width);
    ops_.paged_attention(att_.data(), q_.data(), cache.key[l].data(), cache.value[l].data(), meta, c.n_heads,
                         c.n_kv_heads, hd);
    ops_.matmul(xb_.data(), att_.data(), lw.wo, T, dim, q_width);
    ops_.add(x_.data(), xb_.data(), std::int64_t(T) * dim);

    ops_.rms_norm(xb_.data(), x_.data(), lw.rms_ffn, T, dim, c.norm_eps);
    ops_.matmul(hb_.data(), xb_.data(), lw.w1, T, hidden, dim);
    ops_.matmul(hb2_.data(), xb_.data(), lw.w3, T, hidden, dim);
    ops_.silu_and_mul(hb_.data(), hb_.data(), hb2_.data(), T, hidden);
    ops_.matmul(xb_.data(), hb_.data(), lw.w2, T, dim, hidden);
    ops_.add(x_.data(), xb_.data(), std::int64_t(T) * dim);
  }

  // Final norm and classifier only for the rows that sample.
  const int S = int(b.logits_indices.size());
  grow(sel_, std::size_t(S) * dim);
  for (int s = 0; s < S; ++s)
    std::copy_n(x_.data() + std::size_t(b.logits_indices[s]) * dim, dim, sel_.data() + std::size_t(s) * dim);
  ops_.rms_norm(sel_.data(), sel_.data(), w.rms_final, S, dim, c.norm_eps);
  logits.resize(std::size_t(S) * c.vocab_size);
  ops_.matmul(logits.data(), sel_.data(), w.wcls, S, c.vocab_size, dim);
}

}  // namespace pagedchat
