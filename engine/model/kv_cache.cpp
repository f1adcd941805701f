#include "engine/model/kv_cache.h"

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

}  // namespace pagedchat
