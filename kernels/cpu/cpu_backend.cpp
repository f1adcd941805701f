// CPU implementation of the op interface (kernels/ops.h). Threaded over output rows / (token,
// head) pairs; every reduction has a fixed order independent of batch size.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "kernels/ops.h"

namespace pagedchat::kernels {
namespace {

// Dot product with 16 partial sums reduced as a fixed tree: vectorisable, and deterministic for a
// given n (the same code runs for every row and every batch).
inline float dot(const float* __restrict a, const float* __restrict b, int n) {
  float acc[16] = {};
  int i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) acc[j] += a[i + j] * b[i + j];
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  for (int w = 8; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0] + tail;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int num_threads) : pool_(num_threads) {}
  const char* name() const override { return "cpu"; }
  int num_threads() const override { return pool_.num_threads(); }

  void embedding(float* out, const float* table, const int* ids, int T, int dim) override {
    for (int t = 0; t < T; ++t)
      std::memcpy(out + int64_t(t) * dim, table + int64_t(ids[t]) * dim, sizeof(float) * dim);
  }

  void rms_norm(float* out, const float* x, const float* weight, int T, int dim, float eps) override {
    for (int t = 0; t < T; ++t) {
      const float* xr = x + int64_t(t) * dim;
      float* o = out + int64_t(t) * dim;
      float ss = dot(xr, xr, dim) / dim + eps;
      ss = 1.0f / std::sqrt(ss);
      for (int j = 0; j < dim; ++j) o[j] = weight[j] * (ss * xr[j]);
    }
  }

  void matmul(float* out, const float* x, const float* w, int T, int n, int k) override {
    constexpr int kRowBlock = 16;  // weight rows kept hot in cache while every token passes
    pool_.parallel_for(
        n,
        [&](int64_t r0, int64_t r1) {
          for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
            const int64_t re = std::min<int64_t>(r1, rb + kRowBlock);
            for (int t = 0; t < T; ++t) {
              const float* xr = x + int64_t(t) * k;
              float* o = out + int64_t(t) * n;
              for (int64_t r = rb; r < re; ++r) o[r] = dot(w + r * k, xr, k);
            }
          }
        },
        kRowBlock);
  }

  void rotary_embedding(float* q, float* k, const int* positions, int T, int n_heads, int n_kv_heads,
                        int head_dim, float theta, bool neox) override {
    const int half = head_dim / 2;
    for (int t = 0; t < T; ++t) {
      const float pos = float(positions[t]);
      auto rotate = [&](float* v, int heads) {
        for (int h = 0; h < heads; ++h) {
          float* vh = v + int64_t(h) * head_dim;
          for (int i = 0; i < half; ++i) {
            // run.c: freq = 1 / theta^(2i / head_dim); angle = pos * freq.
            const float freq = 1.0f / std::pow(theta, float(2 * i) / float(head_dim));
            const float val = pos * freq;
            const float c = std::cos(val), s = std::sin(val);
            float& x0 = neox ? vh[i] : vh[2 * i];
            float& x1 = neox ? vh[i + half] : vh[2 * i + 1];
            const float v0 = x0, v1 = x1;
            x0 = v0 * c - v1 * s;
            x1 = v0 * s + v1 * c;
          }
        }
      };
      rotate(q + int64_t(t) * n_heads * head_dim, n_heads);
      rotate(k + int64_t(t) * n_kv_heads * head_dim, n_kv_heads);
    }
  }

  void reshape_and_cache(const float* k, const float* v, float* key_cache, float* value_cache,
                         const int64_t* slot_mapping, int T, int kv_width) override {
    for (int t = 0; t < T; ++t) {
      const int64_t slot = slot_mapping[t];
      if (slot < 0) continue;
      std::memcpy(key_cache + slot * kv_width, k + int64_t(t) * kv_width, sizeof(float) * kv_width);
      std::memcpy(value_cache + slot * kv_width, v + int64_t(t) * kv_width, sizeof(float) * kv_width);
    }
  }

  void paged_attention(float* out, const float* q, const float* key_cache, const float* value_cache,
                       const AttentionMetadata& meta, int n_heads, int n_kv_heads, int head_dim) override {
    const int T = meta.query_start_loc[meta.num_requests];
    const int kv_width = n_kv_heads * head_dim;
    const int group = n_heads / n_kv_heads;
    const float scale = 1.0f / std::sqrt(float(head_dim));
    // Token -> request index, so work can be split over (token, head) pairs.
    token_request_.resize(T);
    for (int r = 0; r < meta.num_requests; ++r)
      for (int t = meta.query_start_loc[r]; t < meta.query_start_loc[r + 1]; ++t) token_request_[t] = r;

    pool_.parallel_for(int64_t(T) * n_heads, [&](int64_t w0, int64_t w1) {
      thread_local std::vector<float> att;
      for (int64_t w = w0; w < w1; ++w) {
        const int t = int(w / n_heads), h = int(w % n_heads);
        const int r = token_request_[t];
        const int q_len = meta.query_start_loc[r + 1] - meta.query_start_loc[r];
        const int pos = meta.seq_lens[r] - q_len + (t - meta.query_start_loc[r]);
        const int ctx = pos + 1;
        const int* table = meta.block_tables + int64_t(r) * meta.max_blocks_per_seq;
        const float* qh = q + int64_t(t) * n_heads * head_dim + int64_t(h) * head_dim;
        const int64_t kv_off = int64_t(h / group) * head_dim;
        if (int(att.size()) < ctx) att.resize(ctx);
        float maxv = -INFINITY;
        for (int p = 0; p < ctx; ++p) {
          const int64_t slot = int64_t(table[p / meta.block_size]) * meta.block_size + p % meta.block_size;
          const float s = dot(qh, key_cache + slot * kv_width + kv_off, head_dim) * scale;
          att[p] = s;
          maxv = std::max(maxv, s);
        }
        float sum = 0.0f;
        for (int p = 0; p < ctx; ++p) {
          att[p] = std::exp(att[p] - maxv);
          sum += att[p];
        }
        float* o = out + int64_t(t) * n_heads * head_dim + int64_t(h) * head_dim;
        std::fill(o, o + head_dim, 0.0f);
        for (int p = 0; p < ctx; ++p) {
          const int64_t slot = int64_t(table[p / meta.block_size]) * meta.block_size + p % meta.block_size;
          const float a = att[p] / sum;
          const float* vh = value_cache + slot * kv_width + kv_off;
          for (int d = 0; d < head_dim; ++d) o[d] += a * vh[d];
        }
      }
    });
  }

  void silu_and_mul(float* out, const float* gate, const float* up, int T, int hidden) override {
    const int64_t n = int64_t(T) * hidden;
    for (int64_t i = 0; i < n; ++i) {
      const float g = gate[i];
      out[i] = g * (1.0f / (1.0f + std::exp(-g))) * up[i];
    }
  }

  void add(float* x, const float* y, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
  }

 private:
  cpu::ThreadPool pool_;
  std::vector<int> token_request_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int num_threads) { return std::make_unique<CpuBackend>(num_threads); }

}  // namespace pagedchat::kernels
