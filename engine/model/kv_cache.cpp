#include "engine/model/kv_cache.h"

#include <cstring>

namespace pagedchat {

KVCache::KVCache(const ModelConfig& c, int nb, int bs, kernels::KvDType dt, kernels::Backend* backend)
    : num_blocks(nb),
      block_size(bs),
      kv_width(c.n_kv_heads * c.head_dim),
      dtype(dt),
      backend_(backend),
      groups_(KVCacheGroups::of(c)),
      block_bytes_(bytes_per_block(c, groups_, bs, dt)) {
  const std::size_t n = std::size_t(nb) * bs * kernels::kv_row_bytes(dt, kv_width);
  for (int t = 0; t < groups_.group_size; ++t) {
    key_.push_back(backend ? backend->allocate(n) : kernels::allocate_host(n));
    value_.push_back(backend ? backend->allocate(n) : kernels::allocate_host(n));
  }
}

void KVCache::copy_block(int src, int dst) {
  if (src == dst) return;
  const std::size_t n = std::size_t(block_size) * kernels::kv_row_bytes(dtype, kv_width);
  auto copy = [&](void* d, const void* s) {
    if (backend_)
      backend_->copy_in_backend(d, s, n);
    else
      std::memcpy(d, s, n);
  };
  for (std::size_t t = 0; t < key_.size(); ++t) {
    char* k = static_cast<char*>(key_[t]->data());
    char* v = static_cast<char*>(value_[t]->data());
    copy(k + std::size_t(dst) * n, k + std::size_t(src) * n);
    copy(v + std::size_t(dst) * n, v + std::size_t(src) * n);
  }
}

std::size_t KVCache::bytes_per_block(const ModelConfig& c, int bs, kernels::KvDType dt) {
  return bytes_per_block(c, KVCacheGroups::of(c), bs, dt);
}

std::size_t KVCache::bytes_per_block(const ModelConfig& c, const KVCacheGroups& groups, int bs, kernels::KvDType dt) {
  return std::size_t(2) * groups.group_size * bs * kernels::kv_row_bytes(dt, int64_t(c.n_kv_heads) * c.head_dim);
}

}  // namespace pagedchat
