// Gated DeltaNet's recurrent core on the CPU. Sources: Yang, Kautz, Hatamizadeh, "Gated Delta
// Networks: Improving Mamba2 with Delta Rule" (2024), eq. for S_t; transformers
// modeling_qwen3_next.py (torch_causal_conv1d_update, torch_recurrent_gated_delta_rule, the
// gated RMSNorm) for the order of operations; ik_llama.cpp's delta_net graph for the GGUF
// conventions (value head j reads key head j % num_k_heads unless v_heads_grouped; q/k L2 norm x / max(||x||, eps);
// the state clamped to +-1e6 as its kernel does). Written here, not copied.
#include "kernels/cpu/delta_net.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pagedchat::cpu {

namespace {

inline float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// Subnormal floats flushed to zero (FTZ) and read as zero (DAZ) on this thread while it lives. A
// head whose decay is strong and whose updates are small drives its state into the subnormal
// range, where every multiply takes a microcode assist: a random-weight Qwen3.5-4B prefilled 1.7x
// slower (ik_llama.cpp as much). Such values are below 1.2e-38, nothing next to the state's other
// elements; every ISA level flushes alike, so results stay the same bits across them.
class FlushSubnormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FlushSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }  // FTZ (bit 15) | DAZ (bit 6)
  ~FlushSubnormals() { _mm_setcsr(saved_); }
#else
  FlushSubnormals() = default;
#endif
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  unsigned saved_ = 0;
};

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

  // 1. Causal depthwise conv: x_t[c] = silu(sum_i w[c][i] xx[t + i][c]) over xx = [conv state
  // (K - 1 rows); the sequence's qkv rows], a row of channels at a time (the taps transposed to
  // [K][C] so the inner loop runs along a row), on the pool in pieces of one sequence's tokens.
  std::vector<float> taps(std::size_t(K) * C), ones(std::size_t(C), 1.0f);
  for (int c = 0; c < C; ++c)
    for (int i = 0; i < K; ++i) taps[std::size_t(i) * C + c] = spec.conv1d[int64_t(c) * K + i];
  const int64_t token_chunk = 16;
  std::vector<int64_t> first_item(std::size_t(num_seqs) + 1, 0);
  for (int s = 0; s < num_seqs; ++s)
    first_item[std::size_t(s) + 1] = first_item[std::size_t(s)] + (seqs[s].len + token_chunk - 1) / token_chunk;
  pool.parallel_chunks(first_item.back(), 1, [&](int64_t b, int64_t e, int) {
    for (int64_t item = b; item < e; ++item) {
      const int s = int(std::upper_bound(first_item.begin(), first_item.end(), item) - first_item.begin()) - 1;
      const kernels::DeltaNetSequence& sq = seqs[s];
      const int t0 = int((item - first_item[std::size_t(s)]) * token_chunk),
                t1 = std::min<int>(sq.len, t0 + int(token_chunk));
      for (int t = t0; t < t1; ++t) {
        float* dst = x + int64_t(sq.start + t) * C;
        std::fill(dst, dst + C, 0.0f);
        for (int i = 0; i < K; ++i) {
          const int src_t = t - (K - 1) + i;  // < 0: from the conv state
          const float* src = src_t < 0 ? sq.state + int64_t(src_t + K - 1) * C
                                       : proj + int64_t(sq.start + src_t) * width;
          const float* w = taps.data() + std::size_t(i) * C;
          for (int c = 0; c < C; ++c) dst[c] += w[c] * src[c];
        }
        isa.silu_and_mul(dst, dst, ones.data(), C);
      }
    }
  });
  // The conv state after the step, and a checkpoint's: the K - 1 inputs up to that token.
  for (int s = 0; s < num_seqs; ++s) {
    const kernels::DeltaNetSequence& sq = seqs[s];
    auto inputs_before = [&](int n, float* to) {  // the K - 1 inputs ending at token n - 1
      std::vector<float> rows(std::size_t(K - 1) * C);
      for (int i = 0; i < K - 1; ++i) {
        const int src_t = n - (K - 1) + i;
        const float* src = src_t < 0 ? sq.state + int64_t(src_t + K - 1) * C : proj + int64_t(sq.start + src_t) * width;
        std::copy(src, src + C, rows.begin() + int64_t(i) * C);
      }
      std::copy(rows.begin(), rows.end(), to);
    };
    for (int i = 0; i < sq.num_saves; ++i) inputs_before(sq.save_after[i], sq.save_to[i]);
    if (sq.len > 0) inputs_before(sq.len, sq.state);
  }

  // 2. q and k heads L2-normalised, per token.
  for (int s = 0; s < num_seqs; ++s)
    for (int t = 0; t < seqs[s].len; ++t) {
      float* r = x + int64_t(seqs[s].start + t) * C;
      for (int h = 0; h < 2 * nk; ++h) l2_normalize(r + int64_t(h) * dk, dk, spec.norm_eps);
    }

  // 3. The delta rule per (sequence, value head), then the gated RMSNorm of its output. The +-1e6
  // clamp of the state can only act where a row's norm could reach it: with decay <= 1, beta in
  // (0, 1) and ||k|| <= 1 the update S_r <- decay S_r (I - beta k k^T) + beta v_r k^T grows
  // ||S_r|| by at most beta |v_r| per token, so below a tenth of the clamp (float rounding is far
  // smaller) the clamp is skipped, which changes no bit.
  const float scale = 1.0f / std::sqrt(float(dk));
  pool.parallel_chunks(int64_t(num_seqs) * nv, 1, [&](int64_t b, int64_t e, int) {
    const FlushSubnormals ftz;
    std::vector<float> o(static_cast<std::size_t>(dv), 0.0f), gates;
    for (int64_t item = b; item < e; ++item) {
      const kernels::DeltaNetSequence& sq = seqs[item / nv];
      const int j = int(item % nv), kh = spec.key_head(j);
      float* S = sq.state + conv_floats + int64_t(j) * dv * dk;  // [dv][dk]
      const float a = spec.a[j], dt_bias = spec.dt_bias[j];
      gates.resize(2 * std::size_t(sq.len));  // per token: decay, beta
      double bound = 0.0;
      for (int r = 0; r < dv; ++r)
        bound = std::max(bound, std::sqrt(double(dot(S + int64_t(r) * dk, S + int64_t(r) * dk, dk))));
      bool clamp = false;
      for (int t = 0; t < sq.len; ++t) {
        const float* pr = proj + int64_t(sq.start + t) * width;
        const float beta = 1.0f / (1.0f + std::exp(-pr[C + V + j]));
        const float decay = std::exp(std::min(a * softplus(pr[C + V + nv + j] + dt_bias), 50.0f));
        gates[2 * std::size_t(t)] = decay;
        gates[2 * std::size_t(t) + 1] = beta;
        const float* v = x + int64_t(sq.start + t) * C + int64_t(2 * nk) * dk + int64_t(j) * dv;
        float vmax = 0.0f;
        for (int r = 0; r < dv; ++r) vmax = std::max(vmax, std::fabs(v[r]));
        bound += double(beta) * vmax;
        clamp = clamp || !(decay <= 1.0f);
      }
      clamp = clamp || !(bound < 1e5);
      for (int t = 0; t < sq.len; ++t) {
        const int row = sq.start + t;
        const float* xr = x + int64_t(row) * C;
        const float* q = xr + int64_t(kh) * dk;
        const float* k = xr + int64_t(nk + kh) * dk;
        const float* v = xr + int64_t(2 * nk) * dk + int64_t(j) * dv;
        const float* z = proj + int64_t(row) * width + C + int64_t(j) * dv;
        isa.delta_rule_step(S, k, q, v, gates[2 * std::size_t(t)], gates[2 * std::size_t(t) + 1], scale, dv, dk, clamp,
                            o.data());
        for (int i = 0; i < sq.num_saves; ++i)
          if (t + 1 == sq.save_after[i])
            std::memcpy(sq.save_to[i] + conv_floats + int64_t(j) * dv * dk, S, sizeof(float) * std::size_t(dv) * dk);
        // rms_norm(o) * norm * silu(z)
        const float inv = 1.0f / std::sqrt(dot(o.data(), o.data(), dv) / float(dv) + spec.norm_eps);
        float* dst = out + int64_t(row) * V + int64_t(j) * dv;
        for (int r = 0; r < dv; ++r) o[std::size_t(r)] = o[std::size_t(r)] * inv * spec.norm[r];
        isa.silu_and_mul(dst, z, o.data(), dv);
      }
    }
  });
}

}  // namespace pagedchat::cpu
