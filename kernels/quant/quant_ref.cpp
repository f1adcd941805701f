#include "kernels/quant/quant_ref.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace pagedchat::kernels {

void quantize_activation_row(const float* x, int k, int8_t* q, QuantActGroup* g) {
  for (int b = 0; b < k / 32; ++b) {
    const float* xb = x + 32 * b;
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
    const float d = amax / 127.0f;
    int32_t sum = 0, sum_lo = 0;
    for (int i = 0; i < 32; ++i) {
      const int v = d == 0.0f ? 0 : int(std::nearbyint(std::fmin(std::fmax(xb[i] / d, -127.0f), 127.0f)));
      q[32 * b + i] = int8_t(v);
      sum += v;
      if (i < 16) sum_lo += v;
    }
    g[b].d = d;
    g[b].sum = sum;
    g[b].sum_lo = sum_lo;
    g[b].ds = d * float(sum);
  }
}

float quant_dot_reference(DType t, const void* w, const int8_t* xq, const QuantActGroup* xg, int k) {
  const int be = dtype_block_bytes(t), ne = dtype_block_elems(t);
  const bool kquant = t == DType::kQ4_K || t == DType::kQ5_K || t == DType::kQ6_K || t == DType::kIQ4_XS;
  const uint8_t* p = static_cast<const uint8_t*>(w);
  DecodedBlock blk;
  float acc = 0.0f;
  for (int b = 0; b < k / ne; ++b) {
    decode_block(t, p + int64_t(b) * be, blk);
    float sb = 0.0f, mb = 0.0f;  // K-quants: the super-block's sums
    for (int j = 0; j < blk.groups; ++j) {
      const int g = b * blk.groups + j;
      const int8_t* x = xq + 32 * g;
      const QuantActGroup& a = xg[g];
      const int16_t* q = blk.q + 32 * j;
      const bool fp4 = t == DType::kMXFP4;                          // the code indexes the (doubled) FP4 values
      const bool iq4 = t == DType::kIQ4_NL || t == DType::kIQ4_XS;  // ... or IQ4's table
      int64_t dot = 0, dot_lo = 0;
      for (int i = 0; i < 32; ++i) {
        dot += int64_t(fp4 ? kMxfp4Values[q[i]] : iq4 ? kIq4nlValues[q[i]] : q[i]) * x[i];
        if (i == 15) dot_lo = dot;
      }
      int64_t s = 0;
      switch (t) {
        case DType::kQ4_0:
          s = dot - 8 * int64_t(a.sum);
          break;
        case DType::kQ5_0:
          s = dot - 16 * int64_t(a.sum);
          break;
        case DType::kQ4_1:
        case DType::kQ5_1:
        case DType::kQ8_0:
        case DType::kMXFP4:
        case DType::kIQ4_NL:
          s = dot;
          break;
        case DType::kIQ4_XS:
          s = (int64_t(blk.sc[j]) - 32) * dot;
          break;
        case DType::kQ4_K:
        case DType::kQ5_K:
          s = int64_t(blk.sc[j]) * dot;
          break;
        case DType::kQ6_K:
          s = int64_t(blk.sc6[2 * j]) * (dot_lo - 32 * int64_t(a.sum_lo)) +
              int64_t(blk.sc6[2 * j + 1]) * ((dot - dot_lo) - 32 * int64_t(a.sum - a.sum_lo));
          break;
        default:
          break;
      }
      if (std::llabs(s) >= (int64_t(1) << 24)) std::abort();  // see the bounds
      if (kquant) {
        sb = std::fma(float(s), a.d, sb);
        if (t == DType::kQ4_K || t == DType::kQ5_K) mb = std::fma(float(blk.mn[j]), a.ds, mb);
        continue;
      }
      const float dw = fp4 ? e8m0_half_to_fp32(blk.e) : fp16_to_fp32(blk.d);
      acc = std::fma(float(s), dw * a.d, acc);
      if (t == DType::kQ4_1 || t == DType::kQ5_1) acc = std::fma(fp16_to_fp32(blk.m), a.ds, acc);
    }
    if (kquant) {
      acc = std::fma(sb, fp16_to_fp32(blk.d), acc);
      if (t == DType::kQ4_K || t == DType::kQ5_K) acc = std::fma(-mb, fp16_to_fp32(blk.m), acc);
    }
  }
  return acc;
}

}  // namespace pagedchat::kernels
