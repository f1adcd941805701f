// The CUDA backend (kernels/ops.h) and the C entry points of libpagedchat_cuda.so
// (kernels/cuda/cuda_entry.h). Activations float32 in device memory; weight matrices on the device
// as float32, float16 or bfloat16 (quantized GGUF types dequantized to bfloat16 at load); GEMMs by
// cuBLAS (cublasGemmEx, float32 accumulation; float32 weights with the pedantic float32 compute
// type, so no TF32); the other ops are the kernels of cuda_kernels.h, all on one stream. Errors
// of asynchronous work surface at the next copy_to_host().
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_entry.h"
#include "kernels/cuda/cuda_kernels.h"

namespace pagedchat::cuda {

namespace {

using kernels::DType;

std::string mib(std::size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

// Makes `device` the calling thread's current device (a no-op when it already is). Every call
// into CUDA from this backend goes through it first: the runtime's current device is per host
// thread, and the engine calls the backend from whichever thread runs the step (the app's
// worker, AsyncLLM's loop, a benchmark), so on cuda:N with N > 0 a launch, a cuBLAS call or a
// free would otherwise go to device 0.
void bind_device(int device) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != device) cudaSetDevice(device);
}

class CudaBuffer final : public kernels::Buffer {
 public:
  CudaBuffer(void* p, std::size_t bytes, int device) : device_(device) {
    data_ = p;
    bytes_ = bytes;
  }
  ~CudaBuffer() override {
    bind_device(device_);
    cudaFree(data_);
  }

 private:
  int device_;
};

// A stacked weight matrix [rows, cols] of `type` (F32, F16 or BF16) in device memory.
struct CudaPackedWeights final : kernels::PackedWeights {
  std::unique_ptr<kernels::Buffer> mem;
  DType type = DType::kBF16;
};

int element_bytes(DType t) { return t == DType::kF32 ? 4 : 2; }

// Converts `rows` rows of k values of `part` (from row r0) to `type` into host memory `dst`, on
// up to `threads` threads.
void convert_rows(const kernels::WeightPart& part, int r0, int rows, int k, DType type, void* dst, int threads) {
  const std::size_t in_row = kernels::dtype_row_bytes(part.dtype, k);
  auto work = [&](int b, int e) {
    std::vector<float> f(static_cast<std::size_t>(k));
    for (int r = b; r < e; ++r) {
      kernels::dequantize_row_as(part.dtype, type,
                                 static_cast<const uint8_t*>(part.data) + std::size_t(r0 + r) * in_row, f.data(), k);
      if (type == DType::kF32) {
        std::memcpy(static_cast<float*>(dst) + std::size_t(r) * k, f.data(), sizeof(float) * std::size_t(k));
        continue;
      }
      uint16_t* d = static_cast<uint16_t*>(dst) + std::size_t(r) * k;
      for (int i = 0; i < k; ++i)
        d[i] = type == DType::kBF16 ? kernels::bf16_from_float(f[i]) : kernels::fp16_from_float(f[i]);
    }
  };
  threads = std::max(1, std::min(threads, rows / 64));
  std::vector<std::thread> pool;
  const int per = (rows + threads - 1) / threads;
  for (int i = 1; i < threads; ++i) pool.emplace_back(work, std::min(rows, i * per), std::min(rows, (i + 1) * per));
  work(0, std::min(rows, per));
  for (auto& t : pool) t.join();
}

class CudaBackend final : public kernels::Backend {
 public:
  CudaBackend(int device, int num_threads, bool enforce_eager)
      : device_(device),
        threads_(num_threads > 0 ? num_threads : int(std::max(1u, std::thread::hardware_concurrency()))),
        enforce_eager_(enforce_eager) {
    check(cudaSetDevice(device), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    char buf[400];
    std::snprintf(buf, sizeof buf, "cuda:%d %s (sm_%d%d, %.1f GiB)", device, prop.name, prop.major, prop.minor,
                  double(prop.totalGlobalMem) / double(1ull << 30));
    description_ = buf;
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    if (cublasCreate(&blas_) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS could not be initialised");
    cublasSetStream(blas_, stream_);
  }
  ~CudaBackend() override {
    bind();
    cudaStreamSynchronize(stream_);
    if (blas_) cublasDestroy(blas_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  const char* name() const override { return "cuda"; }
  int num_threads() const override { return threads_; }
  std::string description() const override { return description_; }

  // ---- memory ----
  std::unique_ptr<kernels::Buffer> allocate(std::size_t bytes) override {
    bind();
    const std::size_t n = std::max<std::size_t>(bytes, 256);
    void* p = nullptr;
    if (cudaMalloc(&p, n) != cudaSuccess) {
      cudaGetLastError();
      std::size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw std::runtime_error("out of GPU memory: " + mib(n) + " could not be allocated on " + description_ + " (" +
                               mib(free_b) + " free of " + mib(total_b) + ")");
    }
    auto buf = std::make_unique<CudaBuffer>(p, bytes, device_);
    check(cudaMemsetAsync(p, 0, n, stream_), "cudaMemset");
    return buf;
  }
  void copy_to_backend(void* dst, const void* src, std::size_t bytes) override {
    bind();  // a step starts with its uploads, perhaps on another thread than the last
    if (bytes) note(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "copy to the device");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    bind();
    if (bytes) note(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "copy to the host");
    note(cudaStreamSynchronize(stream_), "a kernel");
    note(cudaGetLastError(), "a kernel launch");
    if (!error_.empty()) throw std::runtime_error("CUDA error on " + description_ + ": " + error_);
  }
  void copy_in_backend(void* dst, const void* src, std::size_t bytes) override {
    bind();
    if (bytes) note(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "copy on the device");
  }
  const void* place(const void* src, std::size_t bytes, std::unique_ptr<kernels::Buffer>& holder) override {
    bind();
    holder = allocate(bytes);
    check(cudaMemcpyAsync(holder->data(), src, bytes, cudaMemcpyHostToDevice, stream_), "copy to the device");
    return holder->data();
  }
  const void* place_embedding(const void* table, DType dtype, int vocab, int dim,
                              std::unique_ptr<kernels::Buffer>& holder, DType* packed) override {
    bind();
    if (dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16) {
      *packed = dtype;
      return place(table, kernels::dtype_row_bytes(dtype, dim) * std::size_t(vocab), holder);
    }
    *packed = DType::kBF16;  // a quantized table: dequantized to bfloat16 once
    const kernels::WeightPart part{table, vocab, dtype, DType::kBF16};
    holder = allocate(std::size_t(vocab) * dim * 2);
    upload_rows(part, dim, DType::kBF16, static_cast<char*>(holder->data()));
    return holder->data();
  }
  bool device_memory_info(std::size_t* free_bytes, std::size_t* total_bytes) override {
    bind();
    cudaStreamSynchronize(stream_);
    return cudaMemGetInfo(free_bytes, total_bytes) == cudaSuccess;
  }
  DType auto_weight_type(DType file) const override { return file == DType::kF16 ? DType::kF16 : DType::kBF16; }

  // ---- weights and GEMMs ----
  std::unique_ptr<kernels::PackedWeights> pack_weights(std::span<const kernels::WeightPart> parts, int k,
                                                       const SourceDone& /*source_done*/ = {}) override {
    bind();
    bool all_f32 = true, all_f16 = true;
    for (const auto& part : parts) {
      kernels::check_weight_part(part, k);
      all_f32 = all_f32 && part.packed == DType::kF32;
      all_f16 = all_f16 && part.packed == DType::kF16;
    }
    auto p = std::make_unique<CudaPackedWeights>();
    p->type = all_f32 ? DType::kF32 : all_f16 ? DType::kF16 : DType::kBF16;
    p->cols = k;
    for (const auto& part : parts) p->rows += part.rows;
    p->bytes = std::size_t(p->rows) * k * element_bytes(p->type);
    p->mem = allocate(p->bytes);
    char* at = static_cast<char*>(p->mem->data());
    for (const auto& part : parts) {
      upload_rows(part, k, p->type, at);
      at += std::size_t(part.rows) * k * element_bytes(p->type);
    }
    return p;
  }
  void linear(float* out, const float* x, const kernels::PackedWeights& w, int T) override {
    bind();
    const auto& pw = static_cast<const CudaPackedWeights&>(w);
    gemm(out, x, pw.mem->data(), pw.type, T, pw.rows, pw.cols);
  }
  void matmul(float* out, const float* x, const float* w, int T, int n, int k) override {
    bind();
    gemm(out, x, w, DType::kF32, T, n, k);
  }

  // ---- the other ops ----
  void embedding(float* out, const void* table, DType dtype, const int* ids, int T, int dim) override {
    bind();
    if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
      fail(std::string("embedding: a ") + kernels::dtype_name(dtype) + " table must go through place_embedding()");
      return;
    }
    cuda::embedding(out, table, dtype, ids, T, dim, stream_);
    launched();
  }
  void rms_norm(float* out, const float* x, const float* weight, int T, int dim, float eps) override {
    bind();
    cuda::rms_norm(out, x, weight, T, 1, dim, dim, eps, stream_);
    launched();
  }
  void fused_add_rms_norm(float* out, float* residual, const float* y, const float* weight, int T, int dim,
                          float eps) override {
    bind();
    cuda::fused_add_rms_norm(out, residual, y, weight, T, dim, eps, stream_);
    launched();
  }
  void rms_norm_heads(float* x, int64_t row_stride, const float* weight, int T, int heads, int head_dim,
                      float eps) override {
    bind();
    cuda::rms_norm(x, x, weight, T * heads, heads, row_stride, head_dim, eps, stream_);
    launched();
  }
  void rotary_embedding(float* q, float* k, const int* positions, int T, int n_heads, int n_kv_heads,
                        const kernels::RopeSpec& rope) override {
    bind();
    if (!head_dim_ok(rope.head_dim) || !rope_ok(rope)) return;
    cuda::rotary_embedding(q, k, positions, T, n_heads, n_kv_heads, rope, stream_);
    launched();
  }
  void reshape_and_cache(const float* k, const float* v, void* key_cache, void* value_cache, kernels::KvDType type,
                         const int64_t* slot_mapping, int T, int kv_width) override {
    bind();
    cuda::reshape_and_cache(k, v, key_cache, value_cache, type, slot_mapping, T, kv_width, stream_);
    launched();
  }
  void qkv_rope_and_cache(float* q, float* qkv, const int* positions, void* key_cache, void* value_cache,
                          kernels::KvDType type, const int64_t* slot_mapping, int T,
                          const kernels::QkvSpec& spec) override {
    bind();
    if (!head_dim_ok(spec.head_dim) || !rope_ok(spec.rope)) return;
    if (spec.kv_row_width != 0 && spec.kv_row_width != spec.kv_width())
      return unsupported(kernels::OpFeature::kMixedHeadSizes, "qkv_rope_and_cache");
    if (spec.v_norm) return fail("qkv_rope_and_cache: the V RMSNorm (Gemma 4) has no CUDA kernel yet");
    cuda::qkv_rope_and_cache(q, qkv, positions, key_cache, value_cache, type, slot_mapping, T, spec, stream_);
    launched();
  }
  void paged_attention(float* out, const float* q, const void* key_cache, const void* value_cache,
                       kernels::KvDType type, const kernels::AttentionMetadata& meta,
                       const kernels::AttentionSpec& spec) override {
    bind();
    const int n_heads = spec.n_heads, n_kv_heads = spec.n_kv_heads, head_dim = spec.head_dim;
    if (meta.num_tokens <= 0 || !head_dim_ok(head_dim)) return;
    if (spec.sliding_window > 0) return unsupported(kernels::OpFeature::kSlidingWindow, "paged_attention");
    if (spec.logit_softcap > 0.0f) return unsupported(kernels::OpFeature::kLogitSoftcap, "paged_attention");
    if (spec.sinks) return unsupported(kernels::OpFeature::kAttentionSinks, "paged_attention");
    if (spec.kv_row_width != 0 && spec.row_width() != int64_t(n_kv_heads) * head_dim)
      return unsupported(kernels::OpFeature::kMixedHeadSizes, "paged_attention");
    if (n_kv_heads <= 0 || n_heads % n_kv_heads) {
      fail("paged_attention: " + std::to_string(n_heads) + " query heads cannot share " + std::to_string(n_kv_heads) +
           " KV heads");
      return;
    }
    float* scratch = grow(attention_scratch_, attention_scratch_floats(meta, n_heads, head_dim) * sizeof(float));
    cuda::paged_attention(out, q, key_cache, value_cache, type, meta, n_heads, n_kv_heads, head_dim,
                          spec.scale != 0.0f ? spec.scale : 1.0f / std::sqrt(float(head_dim)), scratch, stream_);
    launched();
  }
  void silu_and_mul(float* out, const float* gate, const float* up, int T, int hidden) override {
    bind();
    cuda::silu_and_mul(out, gate, up, T, hidden, hidden, stream_);
    launched();
  }
  void silu_and_mul_stacked(float* out, const float* gate_up, int T, int hidden) override {
    bind();
    cuda::silu_and_mul(out, gate_up, gate_up + hidden, T, hidden, int64_t(2) * hidden, stream_);
    launched();
  }
  void add(float* x, const float* y, int64_t n) override {
    bind();
    cuda::add(x, y, n, stream_);
    launched();
  }
  void add_bias(float* x, const float* bias, int T, int n) override {
    bind();
    cuda::add_bias(x, bias, T, n, stream_);
    launched();
  }
  void gather_rows(float* out, const float* x, const int* rows, int S, int dim) override {
    bind();
    cuda::gather_rows(out, x, rows, S, dim, stream_);
    launched();
  }
  void scale(float* x, float s, int64_t n) override {
    bind();
    cuda::scale(x, s, n, stream_);
    launched();
  }
  // No CUDA kernels yet (supports() says so); the defaults would touch device memory from the host.
  void softcap(float*, float, int64_t) override { unsupported(kernels::OpFeature::kScale, "softcap"); }
  void softmax_rows(float*, int, int) override { unsupported(kernels::OpFeature::kScale, "softmax_rows"); }
  void gelu_tanh_and_mul_stacked(float*, const float*, int, int) override {
    unsupported(kernels::OpFeature::kGeluTanh, "gelu_tanh_and_mul_stacked");
  }
  void swiglu_oai_stacked(float*, const float*, int, int, float, float) override {
    unsupported(kernels::OpFeature::kSwigluOai, "swiglu_oai_stacked");
  }
  void gelu_tanh_mul(float*, const float*, int64_t, int, int) override {
    unsupported(kernels::OpFeature::kGeluTanh, "gelu_tanh_mul");
  }
  void scatter_add_rows(float*, const float*, const int*, const float*, int, int) override {
    unsupported(kernels::OpFeature::kMixtureOfExperts, "scatter_add_rows");
  }
  bool supports(kernels::OpFeature feature) const override {
    switch (feature) {
      case kernels::OpFeature::kAttentionScale:
        return true;
      case kernels::OpFeature::kSlidingWindow:
      case kernels::OpFeature::kLogitSoftcap:
      case kernels::OpFeature::kPartialRotary:
      case kernels::OpFeature::kNoRope:
      case kernels::OpFeature::kGeluTanh:
      case kernels::OpFeature::kScale:  // scale() runs, softcap() does not
      case kernels::OpFeature::kMixtureOfExperts:
      case kernels::OpFeature::kGatedDeltaNet:
      case kernels::OpFeature::kAttentionSinks:
      case kernels::OpFeature::kSwigluOai:
      case kernels::OpFeature::kMixedHeadSizes:
      case kernels::OpFeature::kKeyEnds:
      case kernels::OpFeature::kMRope:
        return false;
    }
    return false;
  }

 private:
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
    }
  }
  // Remembers the first error of asynchronous work (reported by copy_to_host).
  void note(cudaError_t e, const char* what) {
    if (e != cudaSuccess && error_.empty()) error_ = std::string(what) + ": " + cudaGetErrorString(e);
  }
  void fail(const std::string& what) {
    if (error_.empty()) error_ = what;
  }
  // The kernels keep a head in registers and shared memory: at most kMaxHeadDim, even.
  bool head_dim_ok(int head_dim) {
    if (head_dim > 0 && head_dim <= kMaxHeadDim && head_dim % 2 == 0) return true;
    fail("head_dim " + std::to_string(head_dim) + " is not supported on CUDA (even, at most " +
         std::to_string(kMaxHeadDim) + ")");
    return false;
  }
  // An op asked for a feature supports() denies: the error copy_to_host reports.
  void unsupported(kernels::OpFeature feature, const char* op) {
    fail(std::string(op) + ": " + kernels::op_feature_name(feature) + " has no CUDA kernel yet");
  }
  // The rope kernels rotate whole heads with frequencies given.
  bool rope_ok(const kernels::RopeSpec& rope) {
    if (!rope.inv_freq) {
      unsupported(kernels::OpFeature::kNoRope, "rotary_embedding");
      return false;
    }
    if (rope.rotary_dims() != rope.head_dim) {
      unsupported(kernels::OpFeature::kPartialRotary, "rotary_embedding");
      return false;
    }
    return true;
  }
  // The calling thread's current device is this backend's (bind_device).
  void bind() const { bind_device(device_); }
  // After a launcher: a bad launch configuration is reported at once by the runtime.
  void launched() { note(cudaGetLastError(), "a kernel launch"); }
  // Device scratch of at least `bytes`, kept and grown (the profiling pass grows it to its largest).
  float* grow(std::unique_ptr<kernels::Buffer>& buf, int64_t bytes) {
    if (bytes <= 0) return nullptr;
    if (!buf || buf->bytes() < std::size_t(bytes)) {
      buf.reset();
      buf = allocate(std::size_t(bytes));
    }
    return static_cast<float*>(buf->data());
  }
  // `part` converted to `type` rows at device memory `dst`, through a host buffer of <= 64 MiB.
  void upload_rows(const kernels::WeightPart& part, int k, DType type, char* dst) {
    const std::size_t row_bytes = std::size_t(k) * element_bytes(type);
    const int chunk = int(std::max<std::size_t>(1, (std::size_t(64) << 20) / std::max<std::size_t>(row_bytes, 1)));
    std::vector<char> host(std::min<std::size_t>(std::size_t(chunk), std::size_t(std::max(part.rows, 1))) * row_bytes);
    for (int r = 0; r < part.rows; r += chunk) {
      const int n = std::min(chunk, part.rows - r);
      convert_rows(part, r, n, k, type, host.data(), threads_);
      // On the backend's stream (after allocate()'s memset), finished before `host` is refilled.
      check(cudaMemcpyAsync(dst + std::size_t(r) * row_bytes, host.data(), std::size_t(n) * row_bytes,
                            cudaMemcpyHostToDevice, stream_),
            "copy of weights to the device");
      check(cudaStreamSynchronize(stream_), "copy of weights to the device");
    }
  }
  // out[T, n] = x[T, k] . w[n, k]^T: column-major out^T = w^T(op T) x^T.
  void gemm(float* out, const float* x, const void* w, DType wt, int T, int n, int k) {
    if (T <= 0 || n <= 0) return;
    const void* b = x;
    cudaDataType type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F_PEDANTIC;
    if (wt != DType::kF32) {
      auto* xs = reinterpret_cast<uint16_t*>(grow(x16_, int64_t(T) * k * 2));
      cuda::convert_activations(xs, x, int64_t(T) * k, wt == DType::kBF16, stream_);
      launched();
      b = xs;
      type = wt == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
    }
    const float alpha = 1.0f, beta = 0.0f;
    const cublasStatus_t st = cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, n, T, k, &alpha, w, type, k, b, type, k,
                                           &beta, out, CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) fail(std::string("cublasGemmEx: ") + cublasGetStatusString(st));
  }

  int device_;
  int threads_;
  bool enforce_eager_;  // CUDA graphs are not captured yet: every step is eager either way
  std::string description_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::string error_;
  std::unique_ptr<kernels::Buffer> attention_scratch_, x16_;
};

void copy_message(char* dst, std::size_t len, const std::string& s) {
  if (!dst || len == 0) return;
  std::snprintf(dst, len, "%s", s.c_str());
}

}  // namespace

}  // namespace pagedchat::cuda

extern "C" {

__attribute__((visibility("default"))) const char* pagedchat_cuda_abi() { return PAGEDCHAT_OPS_ABI; }

__attribute__((visibility("default"))) int pagedchat_cuda_device_count(char* why, std::size_t why_len) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    pagedchat::cuda::copy_message(
        why, why_len, std::string("no usable CUDA device (no NVIDIA driver, or no GPU?): ") + cudaGetErrorString(e));
    return 0;
  }
  if (n == 0) pagedchat::cuda::copy_message(why, why_len, "no CUDA device");
  return n;
}

__attribute__((visibility("default"))) pagedchat::kernels::Backend* pagedchat_cuda_create_backend(
    int device, int num_threads, int enforce_eager, char* error, std::size_t error_len) {
  try {
    return new pagedchat::cuda::CudaBackend(device, num_threads, enforce_eager != 0);
  } catch (const std::exception& e) {
    pagedchat::cuda::copy_message(error, error_len, e.what());
    return nullptr;
  }
}

}  // extern "C"
