// Default implementations of the Backend ops that compose from the basic ones (kernels/ops.h), so
// a backend (CUDA) only overrides what it does faster; and the bfloat16 / float16 conversions.
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/ops.h"

namespace pagedchat::kernels {

uint16_t float_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // NaN: keep it quiet
  u += 0x7fffu + ((u >> 16) & 1u);                                          // round to nearest even
  return uint16_t(u >> 16);
}

float bf16_to_float(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

uint16_t float_to_fp16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN: quiet, payload kept
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);                        // >= 65520: infinity
  if (a < 0x38800000u) {  // below 2^-14: a subnormal half, in units of 2^-24
    float m;
    std::memcpy(&m, &a, sizeof m);
    return uint16_t(sign | uint16_t(std::nearbyint(m * 16777216.0f)));  // exact product, RNE (default mode)
  }
  const uint32_t r = a - (112u << 23) + 0xfffu + ((a >> 13) & 1u);  // rebias 127 -> 15, round to nearest even
  return uint16_t(sign | (r >> 13));
}

float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t bits;
  if (e == 0) {
    const float v = float(m) * (1.0f / 16777216.0f);  // zero or subnormal: m * 2^-24, exact
    std::memcpy(&bits, &v, sizeof bits);
    bits |= sign;
  } else if (e == 31) {
    bits = sign | 0x7f800000u | (m << 13) | (m ? 0x00400000u : 0u);  // infinity; NaN made quiet
  } else {
    bits = sign | ((e + 112u) << 23) | (m << 13);  // rebias 15 -> 127
  }
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

std::size_t kv_dtype_bytes(KvDType type) { return type == KvDType::kFloat32 ? sizeof(float) : sizeof(uint16_t); }

const char* kv_dtype_name(KvDType type) {
  switch (type) {
    case KvDType::kFloat32: return "float32";
    case KvDType::kBFloat16: return "bfloat16";
    case KvDType::kFloat16: return "float16";
  }
  return "?";
}

void store_kv(void* dst, const float* src, int64_t n, KvDType type) {
  if (type == KvDType::kFloat32) {
    std::memcpy(dst, src, sizeof(float) * std::size_t(n));
    return;
  }
  uint16_t* d = static_cast<uint16_t*>(dst);
  if (type == KvDType::kBFloat16)
    for (int64_t i = 0; i < n; ++i) d[i] = float_to_bf16(src[i]);
  else
    for (int64_t i = 0; i < n; ++i) d[i] = float_to_fp16(src[i]);
}

void load_kv(float* dst, const void* src, int64_t n, KvDType type) {
  if (type == KvDType::kFloat32) {
    std::memcpy(dst, src, sizeof(float) * std::size_t(n));
    return;
  }
  const uint16_t* s = static_cast<const uint16_t*>(src);
  if (type == KvDType::kBFloat16)
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(s[i]);
  else
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_float(s[i]);
}

std::vector<double> rope_default_inv_freq(int head_dim, double theta) {
  std::vector<double> f(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i) f[i] = std::pow(theta, -double(2 * i) / double(head_dim));
  return f;
}

namespace {

// Float32 rows, stacked; bfloat16 values are kept rounded, as float32.
struct DefaultPackedWeights final : PackedWeights {
  std::vector<float> data;
};

}  // namespace

std::unique_ptr<PackedWeights> Backend::pack_weights(std::span<const WeightPart> parts, int k, WeightType type) {
  auto p = std::make_unique<DefaultPackedWeights>();
  p->cols = k;
  p->type = type;
  for (const WeightPart& part : parts) {
    const std::size_t n = std::size_t(part.rows) * k;
    const std::size_t at = p->data.size();
    p->data.resize(at + n);
    for (std::size_t i = 0; i < n; ++i)
      p->data[at + i] = type == WeightType::kBFloat16 ? bf16_to_float(float_to_bf16(part.data[i])) : part.data[i];
    p->rows += part.rows;
  }
  p->bytes = p->data.size() * sizeof(float);
  return p;
}

void Backend::linear(float* out, const float* x, const PackedWeights& w, int T) {
  matmul(out, x, static_cast<const DefaultPackedWeights&>(w).data.data(), T, w.rows, w.cols);
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
  for (int t = 0; t < T; ++t) rms_norm(x + t * row_stride, x + t * row_stride, weight, heads, head_dim, eps);
}

void Backend::qkv_rope_and_cache(float* q, float* qkv, const int* positions, void* key_cache, void* value_cache,
                                 KvDType cache_type, const int64_t* slot_mapping, int T, const QkvSpec& s) {
  const int qw = s.q_width(), kvw = s.kv_width(), w = s.width();
  if (s.bias) add_bias(qkv, s.bias, T, w);
  if (s.q_norm) rms_norm_heads(qkv, w, s.q_norm, T, s.n_heads, s.head_dim, s.norm_eps);
  if (s.k_norm) rms_norm_heads(qkv + qw, w, s.k_norm, T, s.n_kv_heads, s.head_dim, s.norm_eps);
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

}  // namespace pagedchat::kernels
