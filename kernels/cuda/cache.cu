// reshape_and_cache: K and V rows of the step's tokens into their slots of the paged cache
// (slot = block * block_size + offset; a negative slot is padding), converted to the cache's
// element type, as vLLM's csrc/cache_kernels.cu.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace pagedchat::cuda {

namespace {

template <typename Kv>
__global__ void reshape_and_cache_kernel(const float* k, const float* v, typename Kv::T* key_cache,
                                         typename Kv::T* value_cache, const int64_t* slots, int kv_width) {
  const int t = blockIdx.x;
  const int64_t slot = slots[t];
  if (slot < 0) return;
  for (int i = threadIdx.x; i < kv_width; i += blockDim.x) {
    Kv::store(key_cache, slot * kv_width + i, k[int64_t(t) * kv_width + i]);
    Kv::store(value_cache, slot * kv_width + i, v[int64_t(t) * kv_width + i]);
  }
}

}  // namespace

void reshape_and_cache(const float* k, const float* v, void* key_cache, void* value_cache, kernels::KvDType type,
                       const int64_t* slot_mapping, int T, int kv_width, cudaStream_t stream) {
  if (T <= 0) return;
  const int threads = row_threads(kv_width) > 256 ? 256 : row_threads(kv_width);
  dispatch_kv(type, [&](auto kv) {
    using Kv = decltype(kv);
    reshape_and_cache_kernel<Kv><<<T, threads, 0, stream>>>(k, v, static_cast<typename Kv::T*>(key_cache),
                                                            static_cast<typename Kv::T*>(value_cache), slot_mapping,
                                                            kv_width);
  });
}

}  // namespace pagedchat::cuda
