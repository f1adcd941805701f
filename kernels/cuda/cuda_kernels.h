// Host-side launchers of the CUDA kernels, one .cu file per idea (vLLM's csrc/ layout):
// embedding.cu, layernorm.cu, pos_encoding.cu, cache.cu, attention.cu, activation.cu. Every
// pointer is device memory; every launch goes on `stream` and returns at once (no launch for
// empty shapes). Shapes and formulas are those of the Backend op of the same name (kernels/ops.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/ops.h"

namespace pagedchat::cuda {

// embedding.cu: table rows of F32, F16 or BF16 (quantized tables are converted at load).
void embedding(float* out, const void* table, kernels::DType dtype, const int* ids, int T, int dim,
               cudaStream_t stream);
// Activations converted for a 16-bit GEMM: dst[n] = src[n] as bfloat16 (bf16 true) or float16 bits.
void convert_activations(uint16_t* dst, const float* src, int64_t n, bool bf16, cudaStream_t stream);

// layernorm.cu. RMSNorm of `rows` vectors of `dim`: vector i at x + (i / per_row) * row_stride +
// (i % per_row) * dim (per_row = 1 for a plain [T, dim] matrix, heads for Qwen3's q/k norms).
void rms_norm(float* out, const float* x, const float* weight, int rows, int per_row, int64_t row_stride, int dim,
              float eps, cudaStream_t stream);
void fused_add_rms_norm(float* out, float* residual, const float* y, const float* weight, int T, int dim, float eps,
                        cudaStream_t stream);

// pos_encoding.cu
void rotary_embedding(float* q, float* k, const int* positions, int T, int n_heads, int n_kv_heads,
                      const kernels::RopeSpec& rope, cudaStream_t stream);
void qkv_rope_and_cache(float* q, float* qkv, const int* positions, void* key_cache, void* value_cache,
                        kernels::KvDType type, const int64_t* slot_mapping, int T, const kernels::QkvSpec& spec,
                        cudaStream_t stream);

// cache.cu
void reshape_and_cache(const float* k, const float* v, void* key_cache, void* value_cache, kernels::KvDType type,
                       const int64_t* slot_mapping, int T, int kv_width, cudaStream_t stream);

// attention.cu. Partitions of this many context tokens per thread block (vLLM's v2 PARTITION_SIZE).
constexpr int kAttentionPartition = 512;
/// Floats of scratch paged_attention needs for `meta` (0 when one partition suffices: v1).
int64_t attention_scratch_floats(const kernels::AttentionMetadata& meta, int n_heads, int head_dim);
/// head_dim at most kMaxHeadDim.
constexpr int kMaxHeadDim = 256;
void paged_attention(float* out, const float* q, const void* key_cache, const void* value_cache, kernels::KvDType type,
                     const kernels::AttentionMetadata& meta, int n_heads, int n_kv_heads, int head_dim, float scale,
                     float* scratch, cudaStream_t stream);

// activation.cu. out[t, i] = silu(gate[t * in_stride + i]) * up[t * in_stride + i], i < hidden.
void silu_and_mul(float* out, const float* gate, const float* up, int T, int hidden, int64_t in_stride,
                  cudaStream_t stream);
void add(float* x, const float* y, int64_t n, cudaStream_t stream);
void add_bias(float* x, const float* bias, int T, int n, cudaStream_t stream);
void gather_rows(float* out, const float* x, const int* rows, int S, int dim, cudaStream_t stream);
/// x[n] *= s.
void scale(float* x, float s, int64_t n, cudaStream_t stream);

}  // namespace pagedchat::cuda
