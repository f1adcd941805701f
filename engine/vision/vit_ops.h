// The pieces every vision encoder here is built of (engine/vision/*_encoder.cpp): reading a
// projector file's tensors by name and shape, LayerNorm, biases, activations and unmasked
// multi-head attention over one image's patches, on the CPU backend's GEMMs and short loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/vision/vision_encoder.h"
#include "kernels/ops.h"

namespace pagedchat::vit {

[[noreturn]] inline void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

inline std::string shape_str(const std::vector<uint64_t>& ne) {
  std::string s = "[";
  for (std::size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

/// Whether n values of an F32, F16 or BF16 tensor at `data` are all finite (true for other types:
/// their scales are not looked at).
inline bool finite_floats(GgmlType type, const uint8_t* data, uint64_t n) {
  if (type == GgmlType::F32) {
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t v;
      std::memcpy(&v, data + i * 4, 4);
      if ((v & 0x7F800000u) == 0x7F800000u) return false;
    }
  } else if (type == GgmlType::F16 || type == GgmlType::BF16) {
    const uint16_t mask = type == GgmlType::F16 ? 0x7C00 : 0x7F80;
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, data + i * 2, 2);
      if ((v & mask) == mask) return false;
    }
  }
  return true;
}

/// Reads a projector file's tensors by name with their expected ggml shapes (ne order); every
/// failure names the file and the tensor.
class TensorSource {
 public:
  TensorSource(const GgufFile& f, const std::string& path) : f_(f), path_(path) {}

  const GgufTensorInfo& info(const std::string& name, std::vector<uint64_t> ne) const {
    const GgufTensorInfo* t = f_.find_tensor(name);
    if (!t) fail(path_, "tensor '" + name + "' is missing");
    std::vector<uint64_t> have = t->ne;
    while (have.size() > ne.size() && have.back() == 1) have.pop_back();
    if (have != ne) fail(path_, "tensor '" + name + "' has shape " + shape_str(t->ne) + ", expected " + shape_str(ne));
    if (!can_dequantize(t->type))
      fail(path_,
           "tensor '" + name + "' has type " + ggml_type_name(uint32_t(t->type)) + ", which this engine cannot read");
    return *t;
  }
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }

  /// The tensor as float32, every value checked finite.
  std::vector<float> floats(const std::string& name, std::vector<uint64_t> ne) const {
    const GgufTensorInfo& t = info(name, std::move(ne));
    std::vector<float> out(t.n_elements);
    dequantize(t.type, f_.tensor_data(t), out.data(), t.n_elements);
    for (float v : out)
      if (!std::isfinite(v)) fail(path_, "tensor '" + name + "' holds a value that is not finite");
    return out;
  }

  /// A [rows, k] matrix (ggml ne {k, rows}) packed for linear() in its file's type; F32, F16 and
  /// BF16 values are checked finite (a NaN would reach the sampler through every image).
  std::unique_ptr<kernels::PackedWeights> matrix(kernels::Backend& b, const std::string& name, int rows, int k,
                                                 std::size_t& bytes) const {
    const GgufTensorInfo& t = info(name, {uint64_t(k), uint64_t(rows)});
    const std::optional<kernels::DType> dt = dtype_of(t.type);
    if (!dt) fail(path_, "tensor '" + name + "' has a type the kernels cannot compute with");
    if (!finite_floats(t.type, f_.tensor_data(t), t.n_elements))
      fail(path_, "tensor '" + name + "' holds a value that is not finite");
    kernels::WeightPart part{f_.tensor_data(t), rows, *dt, *dt};
    try {
      auto w = b.pack_weights(std::span<const kernels::WeightPart>(&part, 1), k);
      bytes += w->bytes;
      return w;
    } catch (const std::invalid_argument& e) {
      fail(path_, "tensor '" + name + "': " + e.what());
    }
  }

 private:
  const GgufFile& f_;
  const std::string& path_;
};

/// LayerNorm of T rows of n floats in place: (x - mean) / sqrt(var + eps) * w + b (mean and
/// variance in float64).
inline void layer_norm(float* x, const float* w, const float* b, int T, int n, float eps) {
  for (int t = 0; t < T; ++t) {
    float* r = x + std::size_t(t) * std::size_t(n);
    double mean = 0;
    for (int i = 0; i < n; ++i) mean += r[i];
    mean /= n;
    double var = 0;
    for (int i = 0; i < n; ++i) var += (r[i] - mean) * (r[i] - mean);
    const float inv = float(1.0 / std::sqrt(var / n + eps));
    for (int i = 0; i < n; ++i) r[i] = (r[i] - float(mean)) * inv * w[i] + b[i];
  }
}

/// x[t, i] += b[i] for T rows of b.size() floats.
inline void add_bias(float* x, const std::vector<float>& b, int T) {
  const std::size_t n = b.size();
  for (int t = 0; t < T; ++t)
    for (std::size_t i = 0; i < n; ++i) x[std::size_t(t) * n + i] += b[i];
}

/// fn(begin, end) over [0, n) split into `threads` contiguous parts, run on that many threads.
template <typename Fn>
void parallel_rows(int n, int threads, Fn fn) {
  threads = std::max(1, std::min(threads, n));
  if (threads == 1) return fn(0, n);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i)
    pool.emplace_back(fn, int(int64_t(n) * i / threads), int(int64_t(n) * (i + 1) / threads));
  fn(0, int(int64_t(n) / threads));
  for (std::thread& t : pool) t.join();
}

/// GELU, tanh approximation (transformers gelu_pytorch_tanh).
inline float gelu_tanh(float x) {
  const float c = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
}

/// GELU, exact: x * Φ(x) (torch nn.GELU()).
inline float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f)); }

/// x[0, n) = act(x) in place, split over `threads`.
inline void activate(float* x, std::size_t n, VisionConfig::Activation act, int threads);

/// The FFN's activation over T rows of n floats: GELU-tanh through the backend's vectorized
/// kernel (gelu_tanh_mul by a row of ones), the others as activate().
inline void activate_rows(kernels::Backend& b, float* x, int T, int n, VisionConfig::Activation act, int threads) {
  if (act != VisionConfig::Activation::kGeluTanh) return activate(x, std::size_t(T) * std::size_t(n), act, threads);
  thread_local std::vector<float> ones;
  ones.assign(std::size_t(n), 1.0f);
  b.gelu_tanh_mul(x, ones.data(), 0, T, n);
}

inline void activate(float* x, std::size_t n, VisionConfig::Activation act, int threads) {
  const int chunks = int(std::min<std::size_t>(n, 1u << 20));
  parallel_rows(chunks, threads, [&](int c0, int c1) {
    const std::size_t a = n * std::size_t(c0) / std::size_t(chunks), e = n * std::size_t(c1) / std::size_t(chunks);
    for (std::size_t i = a; i < e; ++i) {
      const float v = x[i];
      x[i] = act == VisionConfig::Activation::kGeluTanh  ? gelu_tanh(v)
             : act == VisionConfig::Activation::kGeluErf ? gelu_erf(v)
             : act == VisionConfig::Activation::kSilu    ? v / (1.0f + std::exp(-v))
                                                         : v / (1.0f + std::exp(-1.702f * v));
    }
  });
}

/// Multi-head attention without a mask over one image's N patches, a head at a time: scores =
/// Q·Kᵀ · scale (default 1 / sqrt(head_dim)) and out = P·V as GEMMs (the backend's matmul()), each
/// row's softmax (softmax_rows()) between them. q, k, v: N rows of H floats each, `stride` floats
/// apart (head h = dims h·hd .. h·hd + hd - 1); att: [N, H]. Keeps its scratch between calls.
class Attention {
 public:
  /// qkv: [N, 3H] rows (q | k | v).
  void run(kernels::Backend& b, int threads, const float* qkv, float* att, int N, int H, int heads) {
    run(b, threads, qkv, qkv + H, qkv + 2 * H, 3 * H, att, N, H, heads, 1.0f / std::sqrt(float(H / heads)));
  }
  void run(kernels::Backend& b, int threads, const float* q, const float* k, const float* v, int stride, float* att,
           int N, int H, int heads, float scale) {
    const int hd = H / heads;
    qh_.resize(std::size_t(N) * std::size_t(hd));
    kh_.resize(qh_.size());
    vt_.resize(qh_.size());
    oh_.resize(qh_.size());
    const int rows = int(std::clamp<int64_t>((int64_t(1) << 24) / N, 1, N));
    scores_.resize(std::size_t(rows) * std::size_t(N));
    for (int hh = 0; hh < heads; ++hh) {
      parallel_rows(N, threads, [&](int t0, int t1) {
        for (int t = t0; t < t1; ++t) {
          const std::size_t at = std::size_t(t) * std::size_t(stride) + std::size_t(hh * hd);
          for (int d = 0; d < hd; ++d) {
            qh_[std::size_t(t) * std::size_t(hd) + std::size_t(d)] = q[at + std::size_t(d)] * scale;
            kh_[std::size_t(t) * std::size_t(hd) + std::size_t(d)] = k[at + std::size_t(d)];
          }
        }
      });
      parallel_rows(hd, threads, [&](int d0, int d1) {
        for (int d = d0; d < d1; ++d)
          for (int t = 0; t < N; ++t)
            vt_[std::size_t(d) * std::size_t(N) + std::size_t(t)] =
                v[std::size_t(t) * std::size_t(stride) + std::size_t(hh * hd + d)];
      });
      // Queries in blocks, so the scores of a large image (16k patches) stay ~64 MiB.
      for (int r0 = 0; r0 < N; r0 += rows) {
        const int R = std::min(rows, N - r0);
        b.matmul(scores_.data(), qh_.data() + std::size_t(r0) * std::size_t(hd), kh_.data(), R, N, hd);
        b.softmax_rows(scores_.data(), R, N);
        b.matmul(oh_.data() + std::size_t(r0) * std::size_t(hd), scores_.data(), vt_.data(), R, hd, N);
      }
      for (int t = 0; t < N; ++t)
        std::copy_n(oh_.data() + std::size_t(t) * std::size_t(hd), hd,
                    att + std::size_t(t) * std::size_t(H) + std::size_t(hh * hd));
    }
  }

 private:
  std::vector<float> qh_, kh_, vt_, oh_, scores_;
};

}  // namespace pagedchat::vit
