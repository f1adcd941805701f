#include "engine/loader/gguf/quantize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "engine/loader/gguf/dequant.h"

namespace pagedchat {
namespace {

constexpr uint64_t kQK_K = 256;

void store_f16(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  p[0] = uint8_t(h & 0xFF);
  p[1] = uint8_t(h >> 8);
}
float f16_value(float v) { return fp16_to_fp32(fp32_to_fp16(v)); }

void check_finite(const float* x, uint64_t n, const char* type) {
  for (uint64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]))
      throw std::invalid_argument(std::string(type) + ": value " + std::to_string(i) + " is not finite");
}

int clamp_round(float v, int lo, int hi) { return std::clamp(int(std::lround(v)), lo, hi); }

// x[0..n) ≈ scale·L − min with L in [0, nmax] and min >= 0: the least-squares scale and offset
// for each of a few grid spacings around (max − min) / nmax, the best kept. Returns scale, min.
std::pair<float, float> fit_scale_min(const float* x, int n, int nmax) {
  float lo = 0.0f, hi = x[0];
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (hi <= lo) return {0.0f, -lo};
  float best_scale = (hi - lo) / float(nmax), best_min = -lo, best_err = INFINITY;
  for (int step = -10; step <= 10; ++step) {
    const float iscale = (float(nmax) + 0.1f * float(step)) / (hi - lo);
    double sl = 0, sl2 = 0, sx = 0, slx = 0;
    std::array<int, 32> l{};
    for (int i = 0; i < n; ++i) {
      l[i] = clamp_round(iscale * (x[i] - lo), 0, nmax);
      sl += l[i];
      sl2 += double(l[i]) * l[i];
      sx += x[i];
      slx += double(l[i]) * x[i];
    }
    // x ≈ a·L + b with b <= 0 (b = −min).
    const double det = n * sl2 - sl * sl;
    double a = det > 0 ? (n * slx - sl * sx) / det : 0, b = det > 0 ? (sl2 * sx - sl * slx) / det : sx / n;
    if (b > 0) {
      b = 0;
      a = sl2 > 0 ? slx / sl2 : 0;
    }
    if (a <= 0) continue;
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double e = a * l[i] + b - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = float(err);
      best_scale = float(a);
      best_min = float(-b);
    }
  }
  return {best_scale, best_min};
}

// x[0..n) ≈ scale·L with L in [−nmax, nmax − 1]: the least-squares scale for a few grid
// spacings around the one that maps the largest magnitude to −nmax.
float fit_scale_symmetric(const float* x, int n, int nmax) {
  float big = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(big)) big = x[i];
  if (big == 0.0f) return 0.0f;
  float best = big / -float(nmax), best_err = INFINITY;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(float(nmax) + 0.1f * float(step)) / big;
    double slx = 0, sl2 = 0;
    std::array<int, 32> l{};
    for (int i = 0; i < n; ++i) {
      l[i] = clamp_round(iscale * x[i], -nmax, nmax - 1);
      slx += double(l[i]) * x[i];
      sl2 += double(l[i]) * l[i];
    }
    if (sl2 == 0) continue;
    const double a = slx / sl2;
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double e = a * l[i] - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = float(err);
      best = float(a);
    }
  }
  return best;
}

}  // namespace

void quantize_q4_k(const float* src, void* dst, uint64_t n) {
  if (n % kQK_K != 0) throw std::invalid_argument("Q4_K needs a multiple of 256 values, got " + std::to_string(n));
  check_finite(src, n, "Q4_K");
  uint8_t* p = static_cast<uint8_t*>(dst);
  for (uint64_t b = 0; b < n / kQK_K; ++b, src += kQK_K, p += 144) {
    std::array<float, 8> scale{}, min{};
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      std::tie(scale[j], min[j]) = fit_scale_min(src + 32 * j, 32, 15);
      max_scale = std::max(max_scale, scale[j]);
      max_min = std::max(max_min, min[j]);
    }
    // 6-bit sub-block scales and mins under the F16 block scale d and min dmin.
    const float d = f16_value(max_scale / 63.0f), dmin = f16_value(max_min / 63.0f);
    std::array<int, 8> ls{}, lm{};
    for (int j = 0; j < 8; ++j) {
      ls[j] = d > 0 ? clamp_round(scale[j] / d, 0, 63) : 0;
      lm[j] = dmin > 0 ? clamp_round(min[j] / dmin, 0, 63) : 0;
    }
    store_f16(p, max_scale / 63.0f);
    store_f16(p + 2, max_min / 63.0f);
    uint8_t* sc = p + 4;
    for (int j = 0; j < 4; ++j) {
      sc[j] = uint8_t((ls[j] & 63) | ((ls[j + 4] >> 4) << 6));
      sc[j + 4] = uint8_t((lm[j] & 63) | ((lm[j + 4] >> 4) << 6));
      sc[j + 8] = uint8_t((ls[j + 4] & 0xF) | ((lm[j + 4] & 0xF) << 4));
    }
    std::array<uint8_t, 256> q{};
    for (int j = 0; j < 8; ++j) {
      const float ed = d * float(ls[j]), em = dmin * float(lm[j]);
      for (int i = 0; i < 32; ++i)
        q[32 * j + i] = ed > 0 ? uint8_t(clamp_round((src[32 * j + i] + em) / ed, 0, 15)) : 0;
    }
    uint8_t* qs = p + 16;
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) qs[32 * k + l] = uint8_t(q[64 * k + l] | (q[64 * k + 32 + l] << 4));
  }
}

void quantize_q6_k(const float* src, void* dst, uint64_t n) {
  if (n % kQK_K != 0) throw std::invalid_argument("Q6_K needs a multiple of 256 values, got " + std::to_string(n));
  check_finite(src, n, "Q6_K");
  uint8_t* p = static_cast<uint8_t*>(dst);
  for (uint64_t b = 0; b < n / kQK_K; ++b, src += kQK_K, p += 210) {
    std::array<float, 16> scale{};
    float big = 0;
    for (int j = 0; j < 16; ++j) {
      scale[j] = fit_scale_symmetric(src + 16 * j, 16, 32);
      if (std::fabs(scale[j]) > std::fabs(big)) big = scale[j];
    }
    uint8_t* ql = p;
    uint8_t* qh = p + 128;
    auto* sc = reinterpret_cast<int8_t*>(p + 192);
    // int8 sub-block scales under the F16 block scale d (the largest maps to −128).
    const float d = big != 0 ? f16_value(big / -128.0f) : 0.0f;
    store_f16(p + 208, big != 0 ? big / -128.0f : 0.0f);
    std::array<int, 256> q{};
    for (int j = 0; j < 16; ++j) {
      sc[j] = int8_t(d != 0 ? clamp_round(scale[j] / d, -128, 127) : 0);
      const float e = d * float(sc[j]);
      for (int i = 0; i < 16; ++i) q[16 * j + i] = (e != 0 ? clamp_round(src[16 * j + i] / e, -32, 31) : 0) + 32;
    }
    for (int half = 0; half < 2; ++half) {
      const int* v = q.data() + 128 * half;
      uint8_t* l_out = ql + 64 * half;
      uint8_t* h_out = qh + 32 * half;
      for (int l = 0; l < 32; ++l) {
        const int q1 = v[l], q2 = v[l + 32], q3 = v[l + 64], q4 = v[l + 96];
        l_out[l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
        l_out[l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
        h_out[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

void quantize_q5_0(const float* src, void* dst, uint64_t n) {
  if (n % 32 != 0) throw std::invalid_argument("Q5_0 needs a multiple of 32 values, got " + std::to_string(n));
  check_finite(src, n, "Q5_0");
  uint8_t* p = static_cast<uint8_t*>(dst);
  for (uint64_t b = 0; b < n / 32; ++b, src += 32, p += 22) {
    const float a = fit_scale_symmetric(src, 32, 16);
    const float d = f16_value(a);
    store_f16(p, a);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      const int x0 = d != 0 ? clamp_round(src[j] / d, -16, 15) + 16 : 16;
      const int x1 = d != 0 ? clamp_round(src[j + 16] / d, -16, 15) + 16 : 16;
      p[6 + j] = uint8_t((x0 & 0xF) | ((x1 & 0xF) << 4));
      qh |= uint32_t((x0 >> 4) & 1) << j;
      qh |= uint32_t((x1 >> 4) & 1) << (j + 16);
    }
    for (int k = 0; k < 4; ++k) p[2 + k] = uint8_t(qh >> (8 * k));
  }
}

std::string q4_k_m_tensor_type(const std::string& name, uint64_t cols, int n_layers, bool tied_output) {
  auto ends = [&](const char* s) {
    const std::string t(s);
    return name.size() >= t.size() && name.compare(name.size() - t.size(), t.size(), t) == 0;
  };
  int layer = -1;
  if (name.rfind("blk.", 0) == 0) layer = std::atoi(name.c_str() + 4);
  // llama.cpp's use_more_bits(i, n): the first and last eighth of the layers, every third between.
  const bool more_bits = layer >= 0 && n_layers > 0 &&
                         (layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2);
  std::string type = "q4_K";
  if (name == "output.weight" || (tied_output && name == "token_embd.weight"))
    type = "q6_K";
  else if ((ends(".attn_v.weight") || ends(".ffn_down.weight") || ends(".ffn_down_exps.weight")) && more_bits)
    type = "q6_K";
  else if (ends(".attn_qkv.weight"))
    type = "q6_K";
  if (cols % kQK_K == 0) return type;
  if (cols % 32 != 0) return "f16";
  return type == "q6_K" ? "q8_0" : "q5_0";
}

}  // namespace pagedchat
