// RMSNorm (plain, per head, and fused with the residual add), a thread block per vector, as
// vLLM's csrc/layernorm_kernels.cu; the per-element arithmetic is kernels/norm_math.h's.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/norm_math.h"

namespace pagedchat::cuda {

namespace {

__global__ void rms_norm_kernel(float* out, const float* x, const float* weight, int per_row, int64_t row_stride, int dim,
                                float eps) {
  const int64_t off = int64_t(blockIdx.x / per_row) * row_stride + int64_t(blockIdx.x % per_row) * dim;
  const float* xr = x + off;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) ss += xr[i] * xr[i];
  const float scale = kernels::rms_inv_scale(block_sum(ss), dim, eps);  // block_sum synchronises: out may be x
  for (int i = threadIdx.x; i < dim; i += blockDim.x)
    out[off + i] = kernels::rms_norm_value(xr[i], scale, weight ? weight[i] : 1.0f);  // null: no weight
}

// residual += y; out = rms_norm(residual). out may alias y: every y is read before the block sum.
__global__ void fused_add_rms_norm_kernel(float* out, float* residual, const float* y, const float* weight, int dim,
                                          float eps) {
  const int64_t off = int64_t(blockIdx.x) * dim;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const float r = residual[off + i] + y[off + i];
    residual[off + i] = r;
    ss += r * r;
  }
  const float scale = kernels::rms_inv_scale(block_sum(ss), dim, eps);
  for (int i = threadIdx.x; i < dim; i += blockDim.x)
    out[off + i] = kernels::rms_norm_value(residual[off + i], scale, weight[i]);
}

}  // namespace

void rms_norm(float* out, const float* x, const float* weight, int rows, int per_row, int64_t row_stride, int dim,
              float eps, cudaStream_t stream) {
  if (rows <= 0) return;
  rms_norm_kernel<<<rows, row_threads(dim), 0, stream>>>(out, x, weight, per_row, row_stride, dim, eps);
}

void fused_add_rms_norm(float* out, float* residual, const float* y, const float* weight, int T, int dim, float eps,
                        cudaStream_t stream) {
  if (T <= 0) return;
  fused_add_rms_norm_kernel<<<T, row_threads(dim), 0, stream>>>(out, residual, y, weight, dim, eps);
}

}  // namespace pagedchat::cuda
