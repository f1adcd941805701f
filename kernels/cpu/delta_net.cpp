// Gated DeltaNet's recurrent core on the CPU. Sources: Yang, Kautz, Hatamizadeh, "Gated Delta
// Networks: Improving Mamba2 with Delta Rule" (2024), eq. for S_t; transformers
// modeling_qwen3_next.py (torch_causal_conv1d_update, torch_recurrent_gated_delta_rule, the
// gated RMSNorm) for the order of operations; ik_llama.cpp's delta_net graph for the GGUF
// conventions (value head j reads key head j % num_k_heads; q/k L2 norm x / max(||x||, eps);
// the state clamped to +-1e6 as its kernel does). Written here, not copied.
#include "kernels/cpu/delta_net.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pagedchat::cpu {

namespace {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

float dot(const float* a, const float* b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void l2_normalize(float* x, int n, float eps) {
  const float inv = 1.0f / std::max(std::sqrt(dot(x, x, n)), eps);
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace

void gated_delta_net(ThreadPool& pool, const IsaKernels& isa, float* out, const float* proj,
                     const kernels::GatedDeltaNetSpec& spec, const kernels::DeltaNetSequence* seqs, int num_seqs,
                     std::vector<float>& scratch) {
  const int C = spec.conv_dim(), V = spec.value_dim(), K = spec.conv_kernel, nk = spec.num_k_heads,
            nv = spec.num_v_heads, dk = spec.head_k_dim, dv = spec.head_v_dim, width = spec.proj_width();
  const int64_t conv_floats = int64_t(K - 1) * C;
  int T = 0;
  for (int s = 0; s < num_seqs; ++s) T = std::max(T, seqs[s].start + seqs[s].len);
  if (scratch.size() < std::size_t(T) * C) scratch.resize(std::size_t(T) * C);
  float* x = scratch.data();  // [T, C]: silu(conv(qkv)), q and k heads then L2-normalised

  // 1. Causal depthwise conv per (sequence, channel range): out_t[c] = sum_i w[c][i] xx[t + i]
  // over xx = [conv state (K - 1 rows); the sequence's qkv rows]; then the new conv state.
  const int64_t channel_chunk = 64;
  const int64_t chunks_per_seq = (C + channel_chunk - 1) / channel_chunk;
  pool.parallel_chunks(int64_t(num_seqs) * chunks_per_seq, 1, [&](int64_t b, int64_t e, int) {
    std::vector<float> window(static_cast<std::size_t>(K), 0.0f);
    for (int64_t item = b; item < e; ++item) {
      const kernels::DeltaNetSequence& sq = seqs[item / chunks_per_seq];
      const int c0 = int(item % chunks_per_seq * channel_chunk), c1 = std::min<int>(C, c0 + int(channel_chunk));
      float* conv_state = sq.state;  // [K - 1][C]
      for (int c = c0; c < c1; ++c) {
        const float* w = spec.conv1d + int64_t(c) * K;
        for (int i = 0; i < K - 1; ++i) window[std::size_t(i)] = conv_state[int64_t(i) * C + c];
        for (int t = 0; t < sq.len; ++t) {
          const int row = sq.start + t;
          window[std::size_t(K - 1)] = proj[int64_t(row) * width + c];
          float acc = 0.0f;
          for (int i = 0; i < K; ++i) acc += w[i] * window[std::size_t(i)];
          x[int64_t(row) * C + c] = silu(acc);
          // The checkpoint's conv state: the K - 1 inputs up to token save_after - 1.
          if (sq.save_to && t + 1 == sq.save_after)
            for (int i = 1; i < K; ++i) sq.save_to[int64_t(i - 1) * C + c] = window[std::size_t(i)];
          for (int i = 0; i + 1 < K; ++i) window[std::size_t(i)] = window[std::size_t(i) + 1];
        }
        for (int i = 0; i < K - 1; ++i) conv_state[int64_t(i) * C + c] = window[std::size_t(i)];
      }
    }
  });

  // 2. q and k heads L2-normalised, per token.
  for (int s = 0; s < num_seqs; ++s)
    for (int t = 0; t < seqs[s].len; ++t) {
      float* r = x + int64_t(seqs[s].start + t) * C;
      for (int h = 0; h < 2 * nk; ++h) l2_normalize(r + int64_t(h) * dk, dk, spec.norm_eps);
    }

  // 3. The delta rule per (sequence, value head), then the gated RMSNorm of its output.
  const float scale = 1.0f / std::sqrt(float(dk));
  pool.parallel_chunks(int64_t(num_seqs) * nv, 1, [&](int64_t b, int64_t e, int) {
    std::vector<float> o(static_cast<std::size_t>(dv), 0.0f);
    for (int64_t item = b; item < e; ++item) {
      const kernels::DeltaNetSequence& sq = seqs[item / nv];
      const int j = int(item % nv), kh = j % nk;
      float* S = sq.state + conv_floats + int64_t(j) * dv * dk;  // [dv][dk]
      const float a = spec.a[j], dt_bias = spec.dt_bias[j];
      for (int t = 0; t < sq.len; ++t) {
        const int row = sq.start + t;
        const float* xr = x + int64_t(row) * C;
        const float* q = xr + int64_t(kh) * dk;
        const float* k = xr + int64_t(nk + kh) * dk;
        const float* v = xr + int64_t(2 * nk) * dk + int64_t(j) * dv;
        const float* pr = proj + int64_t(row) * width;
        const float* z = pr + C + int64_t(j) * dv;
        const float beta = 1.0f / (1.0f + std::exp(-pr[C + V + j]));
        const float g = a * softplus(pr[C + V + nv + j] + dt_bias);
        const float decay = std::exp(std::min(g, 50.0f));
        isa.delta_rule_step(S, k, q, v, decay, beta, scale, dv, dk, o.data());
        if (sq.save_to && t + 1 == sq.save_after)
          std::memcpy(sq.save_to + conv_floats + int64_t(j) * dv * dk, S, sizeof(float) * std::size_t(dv) * dk);
        // rms_norm(o) * norm * silu(z)
        const float inv = 1.0f / std::sqrt(dot(o.data(), o.data(), dv) / float(dv) + spec.norm_eps);
        float* dst = out + int64_t(row) * V + int64_t(j) * dv;
        for (int r = 0; r < dv; ++r) dst[r] = o[std::size_t(r)] * inv * spec.norm[r] * silu(z[r]);
      }
    }
  });
}

}  // namespace pagedchat::cpu
