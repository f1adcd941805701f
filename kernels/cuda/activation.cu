// Elementwise kernels: SwiGLU (vLLM's csrc/activation_kernels.cu; kernels/norm_math.h's formula),
// the residual add, a bias per row, and the gather of the rows whose logits are wanted.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/norm_math.h"

namespace pagedchat::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxRows = 65535;  // grid.y limit

unsigned grid_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b < 65535 ? b : 65535);
}

__global__ void silu_and_mul_kernel(float* out, const float* gate, const float* up, int hidden, int64_t in_stride) {
  const int t = blockIdx.y;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < hidden; i += gridDim.x * blockDim.x)
    out[int64_t(t) * hidden + i] = kernels::silu_and_mul_value(gate[t * in_stride + i], up[t * in_stride + i]);
}

__global__ void scale_kernel(float* x, float s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) x[i] *= s;
}

__global__ void add_kernel(float* x, const float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) x[i] += y[i];
}

__global__ void add_bias_kernel(float* x, const float* bias, int n) {
  const int t = blockIdx.y;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[int64_t(t) * n + i] += bias[i];
}

__global__ void gather_rows_kernel(float* out, const float* x, const int* rows, int dim) {
  const int s = blockIdx.x;
  const float* src = x + int64_t(rows[s]) * dim;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) out[int64_t(s) * dim + i] = src[i];
}

// Rows of `n` elements: enough blocks across a row for ~kThreads elements each, T rows in grid.y.
dim3 row_grid(int T, int n) {
  const int across = (n + kThreads - 1) / kThreads;
  return dim3(unsigned(across < 1024 ? across : 1024), unsigned(T));
}

}  // namespace

void silu_and_mul(float* out, const float* gate, const float* up, int T, int hidden, int64_t in_stride, cudaStream_t stream) {
  for (int t0 = 0; t0 < T && hidden > 0; t0 += kMaxRows) {  // grid.y is at most 65535
    const int rows = T - t0 < kMaxRows ? T - t0 : kMaxRows;
    silu_and_mul_kernel<<<row_grid(rows, hidden), kThreads, 0, stream>>>(out + int64_t(t0) * hidden, gate + t0 * in_stride,
                                                                          up + t0 * in_stride, hidden, in_stride);
  }
}

void scale(float* x, float s, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, s, n);
}

void add(float* x, const float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  add_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, y, n);
}

void add_bias(float* x, const float* bias, int T, int n, cudaStream_t stream) {
  for (int t0 = 0; t0 < T && n > 0; t0 += kMaxRows) {
    const int rows = T - t0 < kMaxRows ? T - t0 : kMaxRows;
    add_bias_kernel<<<row_grid(rows, n), kThreads, 0, stream>>>(x + int64_t(t0) * n, bias, n);
  }
}

void gather_rows(float* out, const float* x, const int* rows, int S, int dim, cudaStream_t stream) {
  if (S <= 0) return;
  gather_rows_kernel<<<S, kThreads, 0, stream>>>(out, x, rows, dim);
}

}  // namespace pagedchat::cuda
