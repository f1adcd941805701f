// Token embedding lookup (a row of the table per token, widened to float32) and the conversion of
// float32 activations to the 16-bit type of a GEMM's weights.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace pagedchat::cuda {

namespace {

template <typename Load>
__global__ void embedding_kernel(float* out, const void* table, const int* ids, int dim, int elem_bytes, Load load) {
  const int t = blockIdx.x;
  const char* row = static_cast<const char*>(table) + int64_t(ids[t]) * dim * elem_bytes;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) out[int64_t(t) * dim + i] = load(row, i);
}

struct LoadF32 {
  __device__ float operator()(const char* row, int i) const { return reinterpret_cast<const float*>(row)[i]; }
};
struct LoadBF16 {
  __device__ float operator()(const char* row, int i) const {
    return kernels::float_from_bf16(reinterpret_cast<const uint16_t*>(row)[i]);
  }
};
struct LoadF16 {
  __device__ float operator()(const char* row, int i) const {
    return __half2float(__ushort_as_half(reinterpret_cast<const uint16_t*>(row)[i]));
  }
};

__global__ void convert_kernel(uint16_t* dst, const float* src, int64_t n, bool bf16) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = bf16 ? kernels::bf16_from_float(src[i]) : kernels::fp16_from_float(src[i]);
}

}  // namespace

void embedding(float* out, const void* table, kernels::DType dtype, const int* ids, int T, int dim, cudaStream_t stream) {
  if (T <= 0) return;
  const int threads = row_threads(dim) > 256 ? 256 : row_threads(dim);
  switch (dtype) {
    case kernels::DType::kF32: embedding_kernel<<<T, threads, 0, stream>>>(out, table, ids, dim, 4, LoadF32{}); break;
    case kernels::DType::kBF16: embedding_kernel<<<T, threads, 0, stream>>>(out, table, ids, dim, 2, LoadBF16{}); break;
    case kernels::DType::kF16: embedding_kernel<<<T, threads, 0, stream>>>(out, table, ids, dim, 2, LoadF16{}); break;
    default: break;  // the backend converts other tables at load (place_embedding)
  }
}

void convert_activations(uint16_t* dst, const float* src, int64_t n, bool bf16, cudaStream_t stream) {
  if (n <= 0) return;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  convert_kernel<<<unsigned(blocks < 65535 ? blocks : 65535), threads, 0, stream>>>(dst, src, n, bf16);
}

}  // namespace pagedchat::cuda
