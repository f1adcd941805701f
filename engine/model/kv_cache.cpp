#include "engine/model/kv_cache.h"

#include <cstring>
#include <new>

namespace pagedchat {

namespace {

constexpr std::align_val_t kAlign{64};

void* zeroed(std::size_t bytes) {
  void* p = ::operator new(bytes > 0 ? bytes : 1, kAlign);
  std::memset(p, 0, bytes);
  return p;
}

}  // namespace

void KVCache::Free::operator()(void* p) const { ::operator delete(p, kAlign); }

KVCache::KVCache(const ModelConfig& c, int nb, int bs, kernels::KvDType dt)
    : num_blocks(nb), block_size(bs), kv_width(c.n_kv_heads * c.head_dim), dtype(dt),
      block_bytes_(bytes_per_block(c, bs, dt)) {
  const std::size_t n = std::size_t(nb) * bs * kv_width * kernels::kv_dtype_bytes(dt);
  for (int l = 0; l < c.n_layers; ++l) {
    key_.emplace_back(zeroed(n));
    value_.emplace_back(zeroed(n));
  }
}

void KVCache::copy_block(int src, int dst) {
  if (src == dst) return;
  const std::size_t n = std::size_t(block_size) * kv_width * kernels::kv_dtype_bytes(dtype);
  for (std::size_t l = 0; l < key_.size(); ++l) {
    char* k = static_cast<char*>(key_[l].get());
    char* v = static_cast<char*>(value_[l].get());
    std::memcpy(k + std::size_t(dst) * n, k + std::size_t(src) * n, n);
    std::memcpy(v + std::size_t(dst) * n, v + std::size_t(src) * n, n);
  }
}

std::size_t KVCache::bytes_per_block(const ModelConfig& c, int bs, kernels::KvDType dt) {
  return std::size_t(2) * c.n_layers * bs * c.n_kv_heads * c.head_dim * kernels::kv_dtype_bytes(dt);
}

}  // namespace pagedchat
