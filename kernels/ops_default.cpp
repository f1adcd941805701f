// Default implementations of the Backend ops that compose from the basic ones (kernels/ops.h), so
// a backend (CUDA) only overrides what it does faster; and the KV cache's element conversions.
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/ops.h"

namespace pagedchat::kernels {

namespace {
constexpr int kQ8Block = 32;       // values per q8_0 block
constexpr int kQ8BlockBytes = 34;  // f16 d + 32 int8

// One ggml block_q8_0 from 32 floats (quantize_row_q8_0_ref's formula).
void quantize_q8_block(uint8_t* dst, const float* x) {
  float amax = 0.0f;
  bool finite = true;
  for (int j = 0; j < kQ8Block; ++j) {
    finite = finite && std::isfinite(x[j]);
    amax = std::max(amax, std::fabs(x[j]));
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const uint16_t dh = finite ? fp32_to_fp16(d) : uint16_t(0x7e00);  // NaN: the block reads back NaN
  dst[0] = uint8_t(dh & 0xff);
  dst[1] = uint8_t(dh >> 8);
  for (int j = 0; j < kQ8Block; ++j) {
    const float q = finite ? std::round(x[j] * id) : 0.0f;
    dst[2 + j] = uint8_t(int8_t(std::clamp(q, -127.0f, 127.0f)));
  }
}
}  // namespace

std::size_t kv_row_bytes(KvDType type, int64_t n) {
  switch (type) {
    case KvDType::kFloat32:
      return std::size_t(n) * sizeof(float);
    case KvDType::kBFloat16:
    case KvDType::kFloat16:
      return std::size_t(n) * sizeof(uint16_t);
    case KvDType::kQ8_0:
      if (n % kQ8Block != 0)
        throw std::invalid_argument("a q8_0 KV cache needs rows of whole 32-element blocks, got " + std::to_string(n) +
                                    " elements");
      return std::size_t(n / kQ8Block) * kQ8BlockBytes;
  }
  return 0;
}

int kv_block_elems(KvDType type) { return type == KvDType::kQ8_0 ? kQ8Block : 1; }

const char* kv_dtype_name(KvDType type) {
  switch (type) {
    case KvDType::kFloat32:
      return "float32";
    case KvDType::kBFloat16:
      return "bfloat16";
    case KvDType::kFloat16:
      return "float16";
    case KvDType::kQ8_0:
      return "q8_0";
  }
  return "?";
}

void store_kv(void* dst, const float* src, int64_t n, KvDType type) {
  switch (type) {
    case KvDType::kFloat32:
      std::memcpy(dst, src, sizeof(float) * std::size_t(n));
      return;
    case KvDType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = float_to_bf16(src[i]);
      return;
    case KvDType::kFloat16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = fp32_to_fp16(src[i]);
      return;
    case KvDType::kQ8_0:
      for (int64_t b = 0; b < n / kQ8Block; ++b)
        quantize_q8_block(static_cast<uint8_t*>(dst) + b * kQ8BlockBytes, src + b * kQ8Block);
      return;
  }
}

void load_kv(float* dst, const void* src, int64_t n, KvDType type) {
  switch (type) {
    case KvDType::kFloat32:
      std::memcpy(dst, src, sizeof(float) * std::size_t(n));
      return;
    case KvDType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(static_cast<const uint16_t*>(src)[i]);
      return;
    case KvDType::kFloat16:
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(static_cast<const uint16_t*>(src)[i]);
      return;
    case KvDType::kQ8_0:
      for (int64_t b = 0; b < n / kQ8Block; ++b) {
        const uint8_t* blk = static_cast<const uint8_t*>(src) + b * kQ8BlockBytes;
        const float d = fp16_to_fp32(uint16_t(blk[0] | (blk[1] << 8)));
        for (int j = 0; j < kQ8Block; ++j) dst[b * kQ8Block + j] = d * float(int8_t(blk[2 + j]));
      }
      return;
  }
}

std::vector<double> rope_default_inv_freq(int head_dim, double theta) {
  std::vector<double> f(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i) f[i] = std::pow(theta, -double(2 * i) / double(head_dim));
  return f;
}

void check_weight_part(const WeightPart& part, int k) {
  if (!part.data && part.rows > 0) throw std::invalid_argument("weight part has no data");
  if (part.rows < 0 || k < 0) throw std::invalid_argument("weight part with negative rows or columns");
  dtype_row_bytes(part.dtype, k);  // throws for a partial block
  if (part.packed != part.dtype && part.packed != DType::kF32 && part.packed != DType::kF16 &&
      part.packed != DType::kBF16)
    throw std::invalid_argument(std::string("a ") + dtype_name(part.dtype) + " matrix cannot be packed as " +
                                dtype_name(part.packed));
}

namespace {

constexpr std::align_val_t kHostAlign{64};

// Zero-filled, 64-byte aligned host memory. From kLazyBytes up (the KV cache's per-layer K and V
// buffers) an anonymous private mapping: Linux supplies zero pages as they are first written, so
// what is reserved but not yet used (KV blocks no request has reached) is not resident, and a
// model loads in its weights' memory plus what its requests write. Smaller ones: operator new and
// memset.
class HostBuffer final : public Buffer {
 public:
  static constexpr std::size_t kLazyBytes = std::size_t(1) << 21;

  explicit HostBuffer(std::size_t bytes) {
    bytes_ = bytes;
    if (bytes >= kLazyBytes) {
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      data_ = p;
      mapped_ = true;
      return;
    }
    data_ = ::operator new(bytes > 0 ? bytes : 1, kHostAlign);
    std::memset(data_, 0, bytes);
  }
  ~HostBuffer() override {
    if (mapped_)
      ::munmap(data_, bytes_);
    else
      ::operator delete(data_, kHostAlign);
  }

 private:
  bool mapped_ = false;
};

}  // namespace

std::unique_ptr<Buffer> allocate_host(std::size_t bytes) { return std::make_unique<HostBuffer>(bytes); }

std::unique_ptr<Buffer> Backend::allocate(std::size_t bytes) { return allocate_host(bytes); }

void Backend::copy_to_backend(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

void Backend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

void Backend::copy_in_backend(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

const void* Backend::place(const void* src, std::size_t, std::unique_ptr<Buffer>& holder) {
  holder.reset();
  return src;
}

const void* Backend::place_embedding(const void* table, DType dtype, int vocab, int dim,
                                     std::unique_ptr<Buffer>& holder, DType* packed) {
  *packed = dtype;
  return place(table, dtype_row_bytes(dtype, dim) * std::size_t(vocab), holder);
}

bool Backend::device_memory_info(std::size_t*, std::size_t*) { return false; }

void Backend::gather_rows(float* out, const float* x, const int* rows, int S, int dim) {
  for (int s = 0; s < S; ++s)
    std::memmove(out + int64_t(s) * dim, x + int64_t(rows[s]) * dim, sizeof(float) * std::size_t(dim));
}

namespace {

// Float32 rows, stacked; bfloat16 values are kept rounded, as float32.
struct DefaultPackedWeights final : PackedWeights {
  std::vector<float> data;
};

}  // namespace

std::unique_ptr<PackedWeights> Backend::pack_weights(std::span<const WeightPart> parts, int k,
                                                     const SourceDone& /*source_done*/) {
  auto p = std::make_unique<DefaultPackedWeights>();
  p->cols = k;
  for (const WeightPart& part : parts) {
    check_weight_part(part, k);
    const std::size_t at = p->data.size(), row_bytes = dtype_row_bytes(part.dtype, k);
    p->data.resize(at + std::size_t(part.rows) * k);
    for (int r = 0; r < part.rows; ++r)
      dequantize_row_as(part.dtype, part.packed, static_cast<const uint8_t*>(part.data) + r * row_bytes,
                        p->data.data() + at + std::size_t(r) * k, k);
    p->rows += part.rows;
  }
  p->bytes = p->data.size() * sizeof(float);
  return p;
}

void Backend::linear(float* out, const float* x, const PackedWeights& w, int T) {
  matmul(out, x, static_cast<const DefaultPackedWeights&>(w).data.data(), T, w.rows, w.cols);
}

void Backend::grouped_linear(float* out, const float* x, std::span<const PackedWeights* const> w, const int* offsets) {
  if (w.empty()) return;
  const int n = w[0]->rows, k = w[0]->cols;
  for (const PackedWeights* g : w)
    if (g->rows != n || g->cols != k)
      throw std::invalid_argument("grouped_linear: every group's matrix must have the same shape");
  for (std::size_t g = 0; g < w.size(); ++g) {
    const int rows = offsets[g + 1] - offsets[g];
    if (rows > 0) linear(out + int64_t(offsets[g]) * n, x + int64_t(offsets[g]) * k, *w[g], rows);
  }
}

void Backend::fused_add_rms_norm(float* out, float* residual, const float* y, const float* weight, int T, int dim,
                                 float eps) {
  add(residual, y, int64_t(T) * dim);
  rms_norm(out, residual, weight, T, dim, eps);
}

void Backend::silu_and_mul_stacked(float* out, const float* gate_up, int T, int hidden) {
  for (int t = 0; t < T; ++t) {
    const float* g = gate_up + int64_t(t) * 2 * hidden;
    silu_and_mul(out + int64_t(t) * hidden, g, g + hidden, 1, hidden);
  }
}

void Backend::add_bias(float* x, const float* bias, int T, int n) {
  for (int t = 0; t < T; ++t) add(x + int64_t(t) * n, bias, n);
}

void Backend::rms_norm_heads(float* x, int64_t row_stride, const float* weight, int T, int heads, int head_dim,
                             float eps) {
  if (weight) {
    for (int t = 0; t < T; ++t) rms_norm(x + t * row_stride, x + t * row_stride, weight, heads, head_dim, eps);
    return;
  }
  // No weight: host memory only (a device backend overrides this op).
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h) {
      float* v = x + t * row_stride + int64_t(h) * head_dim;
      float ss = 0.0f;
      for (int i = 0; i < head_dim; ++i) ss += v[i] * v[i];
      const float r = 1.0f / std::sqrt(ss / float(head_dim) + eps);
      for (int i = 0; i < head_dim; ++i) v[i] = r * v[i];
    }
}

void Backend::qkv_rope_and_cache(float* q, float* qkv, const int* positions, void* key_cache, void* value_cache,
                                 KvDType cache_type, const int64_t* slot_mapping, int T, const QkvSpec& s) {
  const int qw = s.q_width(), kvw = s.kv_width(), w = s.width();
  if (s.kv_row_width != 0 && s.kv_row_width != kvw)
    throw std::logic_error(
        "qkv_rope_and_cache: cache rows wider than the layer's K/V need a backend with mixed head sizes");
  if (s.bias) add_bias(qkv, s.bias, T, w);
  if (s.q_norm) rms_norm_heads(qkv, w, s.q_norm, T, s.n_heads, s.head_dim, s.norm_eps);
  if (s.k_norm) rms_norm_heads(qkv + qw, w, s.k_norm, T, s.n_kv_heads, s.head_dim, s.norm_eps);
  if (s.v_norm) rms_norm_heads(qkv + qw + kvw, w, nullptr, T, s.n_kv_heads, s.head_dim, s.norm_eps);
  std::vector<float> k(std::size_t(T) * kvw), v(std::size_t(T) * kvw);
  for (int t = 0; t < T; ++t) {
    const float* row = qkv + int64_t(t) * w;
    std::memcpy(q + int64_t(t) * qw, row, sizeof(float) * qw);
    std::memcpy(k.data() + int64_t(t) * kvw, row + qw, sizeof(float) * kvw);
    std::memcpy(v.data() + int64_t(t) * kvw, row + qw + kvw, sizeof(float) * kvw);
  }
  rotary_embedding(q, k.data(), positions, T, s.n_heads, s.n_kv_heads, s.rope);
  reshape_and_cache(k.data(), v.data(), key_cache, value_cache, cache_type, slot_mapping, T, kvw);
}

// The defaults of the later ops below are host loops: valid where backend memory is host memory
// (a device backend overrides them, or reports them unsupported).

// 0.5 x (1 + tanh z) as x / (1 + exp(-2z)): the same value (1 + tanh z = 2 / (1 + e^-2z)) without
// 1 + tanh z cancelling for negative x.
void Backend::gelu_tanh_and_mul_stacked(float* out, const float* gate_up, int T, int hidden) {
  constexpr float kC = 0.7978845608028654f;  // sqrt(2 / pi)
  for (int t = 0; t < T; ++t) {
    const float* g = gate_up + int64_t(t) * 2 * hidden;
    for (int i = 0; i < hidden; ++i) {
      const float x = g[i];
      out[int64_t(t) * hidden + i] = x / (1.0f + std::exp(-2.0f * kC * (x + 0.044715f * x * x * x))) * g[hidden + i];
    }
  }
}

void Backend::swiglu_oai_stacked(float* out, const float* gate_up, int T, int hidden, float alpha, float limit) {
  for (int t = 0; t < T; ++t) {
    const float* g = gate_up + int64_t(t) * 2 * hidden;
    for (int i = 0; i < hidden; ++i) {
      const float x = std::min(g[i], limit), u = std::clamp(g[hidden + i], -limit, limit);
      out[int64_t(t) * hidden + i] = (u + 1.0f) * (x / (1.0f + std::exp(-alpha * x)));
    }
  }
}

void Backend::scale(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void Backend::softcap(float* x, float cap, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void Backend::softmax_rows(float* x, int T, int n) {
  for (int t = 0; t < T; ++t) {
    float* r = x + int64_t(t) * n;
    float m = -INFINITY;
    for (int i = 0; i < n; ++i) m = std::max(m, r[i]);
    double sum = 0.0;  // a long row's float sum would drift by ~sqrt(n) ulp
    for (int i = 0; i < n; ++i) sum += (r[i] = std::exp(r[i] - m));
    for (int i = 0; i < n; ++i) r[i] = float(r[i] / sum);
  }
}

void Backend::scatter_add_rows(float* x, const float* y, const int* rows, const float* weights, int S, int dim) {
  for (int s = 0; s < S; ++s) {
    float* dst = x + int64_t(rows[s]) * dim;
    const float* src = y + int64_t(s) * dim;
    for (int i = 0; i < dim; ++i) dst[i] += weights[s] * src[i];
  }
}

void Backend::gated_delta_net(float*, const float*, const GatedDeltaNetSpec&, const DeltaNetSequence*, int) {
  throw std::logic_error(std::string(name()) + " backend: gated_delta_net has no kernel");
}

void Backend::sigmoid_mul(float* x, const float* gate, int64_t gate_stride, int T, int n) {
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < n; ++i) {
      float& v = x[int64_t(t) * n + i];
      v = v / (1.0f + std::exp(-gate[int64_t(t) * gate_stride + i]));
    }
}

void Backend::gelu_tanh_mul(float* x, const float* y, int64_t y_stride, int T, int n) {
  constexpr float kC = 0.7978845608028654f;  // sqrt(2 / pi)
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < n; ++i) {
      float& v = x[int64_t(t) * n + i];
      const float g = v;
      v = g / (1.0f + std::exp(-2.0f * kC * (g + 0.044715f * g * g * g))) * y[int64_t(t) * y_stride + i];
    }
}

const char* op_feature_name(OpFeature feature) {
  switch (feature) {
    case OpFeature::kSlidingWindow:
      return "sliding-window attention";
    case OpFeature::kAttentionScale:
      return "an attention scale other than 1/sqrt(head_dim)";
    case OpFeature::kLogitSoftcap:
      return "attention logit soft-capping";
    case OpFeature::kPartialRotary:
      return "partial rotary embedding";
    case OpFeature::kNoRope:
      return "layers without rotary embedding (NoPE)";
    case OpFeature::kGeluTanh:
      return "the tanh GELU activation (GeGLU)";
    case OpFeature::kScale:
      return "scaling and soft-capping";
    case OpFeature::kMixtureOfExperts:
      return "mixture of experts";
    case OpFeature::kGatedDeltaNet:
      return "Gated DeltaNet linear attention";
    case OpFeature::kAttentionSinks:
      return "attention sinks";
    case OpFeature::kSwigluOai:
      return "the clamped SwiGLU of gpt-oss";
    case OpFeature::kMixedHeadSizes:
      return "layers with different head sizes in one KV cache";
    case OpFeature::kKeyEnds:
      return "bidirectional attention among an image's tokens";
    case OpFeature::kMRope:
      return "multi-section rotary positions of image tokens (M-RoPE)";
  }
  return "?";
}

}  // namespace pagedchat::kernels
