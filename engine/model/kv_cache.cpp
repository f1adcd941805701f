#include "engine/model/kv_cache.h"

#include <algorithm>
#include <cstring>

namespace pagedchat {

KVCache::KVCache(const ModelConfig& c, int nb, int bs, kernels::KvDType dt, kernels::Backend* backend,
                 int num_state_slots_)
    : num_state_slots(num_state_slots_),
      num_blocks(nb),
      block_size(bs),
      kv_width(c.kv_cache_width()),
      dtype(dt),
      backend_(backend),
      groups_(KVCacheGroups::of(c)),
      block_bytes_(bytes_per_block(c, groups_, bs, dt)) {
  const std::size_t n = std::size_t(nb) * bs * kernels::kv_row_bytes(dt, kv_width);
  for (int t = 0; t < groups_.group_size; ++t) {
    key_.push_back(backend ? backend->allocate(n) : kernels::allocate_host(n));
    value_.push_back(backend ? backend->allocate(n) : kernels::allocate_host(n));
  }
  state_floats_ = c.linear_attn.state_floats();
  state_index_.assign(std::size_t(std::max(0, c.n_layers)), -1);
  for (int l = 0; l < c.n_layers; ++l) {
    if (!c.layer(l).is_recurrent()) continue;
    state_index_[std::size_t(l)] = int(state_.size());
    const std::size_t bytes = std::max<std::size_t>(1, std::size_t(num_state_slots) * state_floats_ * sizeof(float));
    state_.push_back(backend ? backend->allocate(bytes) : kernels::allocate_host(bytes));
  }
}

void KVCache::copy_state(int src, int dst) {
  if (src == dst) return;
  const std::size_t n = state_floats_ * sizeof(float);
  for (auto& buf : state_) {
    char* base = static_cast<char*>(buf->data());
    if (src < 0)
      std::memset(base + std::size_t(dst) * n, 0, n);  // host memory: recurrent layers run on the CPU only
    else if (backend_)
      backend_->copy_in_backend(base + std::size_t(dst) * n, base + std::size_t(src) * n, n);
    else
      std::memcpy(base + std::size_t(dst) * n, base + std::size_t(src) * n, n);
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
  return std::size_t(2) * groups.group_size * bs * kernels::kv_row_bytes(dt, c.kv_cache_width());
}

}  // namespace pagedchat
