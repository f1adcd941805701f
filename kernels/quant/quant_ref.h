// Integer dot products of quantized weights with quantized activations: the definition every CPU
// kernel (kernels/cpu/quant_impl.inc, all instruction sets) reproduces bit for bit, written here
// as a scalar reference that reads ggml's original row format (kernels/quant/dtype.h).
//
// ACTIVATIONS. Each row of x (k floats, k a multiple of 32) is quantized once per linear() in
// groups of 32 (quantize_activation_row):
//   amax = max |x_i|;  d = amax / 127 (float division);
//   q_i = d == 0 ? 0 : nearbyint(min(max(x_i / d, -127), 127))
// (float division, round half to even), so |q_i| <= 127. The clamp changes nothing for normal d;
// a subnormal d keeps few bits, and x_i / d can then exceed 127 (it wrapped around in int8 before
// the clamp was added). Plus sum = sum_i q_i, sum_lo = sum of
// the first 16 q_i (Q6_K's first sub-block) and ds = d * float(sum) (Q4_1 / Q5_1). Rows are
// quantized independently: batch invariance.
//
// WEIGHTS, per 32-group of a row (ggml's block formats, decoded to integers q and f16 scales):
//   Q4_0 q in [0,15], w = d(q-8)     Q4_1 q in [0,15], w = d q + m     Q8_0 q in [-128,127], w = d q
//   Q5_0 q in [0,31], w = d(q-16)    Q5_1 q in [0,31], w = d q + m
//   Q4_K q in [0,15], Q5_K q in [0,31]: w = d sc_j q - dmin m_j (sc_j, m_j 6-bit, per 32-group j)
//   Q6_K q in [0,63]: w = d sc (q - 32), sc int8 per 16 values (a 32-group = sub-blocks a, b)
//   MXFP4 q in [0,15]: w = kv[q] dw, kv = kMxfp4Values (the FP4 values doubled, -12..12) and
//        dw = E8M0_HALF(e) = 2^(e-128) (e8m0_half_to_fp32: ggml-common.h kvalues_mxfp4, OCP MX v1.0)
//   IQ4_NL q in [0,15]: w = d kv[q], kv = kIq4nlValues (-127..113)
//   IQ4_XS q in [0,15]: w = d (ls_j - 32) kv[q] (ls_j 6-bit, per 32-group j; d per 256)
//
// ARITHMETIC (the order every kernel follows). out = 0.0f; for every 32-group g in increasing
// order, with the activation group (dx, sum, sum_lo, ds) and x = its q:
//   an exact integer s:
//     Q4_0  s = sum_i (q_i - 8) x_i            Q5_0  s = sum_i (q_i - 16) x_i
//     Q4_1, Q5_1, Q8_0  s = sum_i q_i x_i      MXFP4, IQ4_NL  s = sum_i kv[q_i] x_i
//     IQ4_XS  s = (ls_j - 32) * sum_i kv[q_i] x_i
//     Q4_K, Q5_K  s = sc_j * sum_i q_i x_i
//     Q6_K  s = sc_a * sum_{i<16} (q_i - 32) x_i + sc_b * sum_{i>=16} (q_i - 32) x_i
//   then in float32, each step one IEEE operation (fma: one rounding):
//     Q4_0, Q4_1, Q5_0, Q5_1, Q8_0:  out = fma(float(s), dw * dx, out)   (dw: the group's d)
//     MXFP4:                         out = fma(float(s), dw * dx, out)   (dw = E8M0_HALF(e))
//     IQ4_NL:                        out = fma(float(s), dw * dx, out)   (dw: the block's d)
//     Q4_1, Q5_1:                    out = fma(m_w, ds, out)             (m_w: the group's f16 min)
//   K-quants and IQ4_XS: two sums per 256-value super-block, sb = mb = 0, over its 8 groups in order
//     sb = fma(float(s), dx, sb);  Q4_K, Q5_K also  mb = fma(float(m_j), ds, mb)
//   then, after the super-block's last group (d, dmin: its f16 scales)
//     out = fma(sb, d, out);  Q4_K, Q5_K also  out = fma(-mb, dmin, out)
//   (the super-block's d and dmin multiply once, not per group: the kernels' float work per
//   group is two fmas, llama.cpp's ggml_vec_dot_q4_K_q8_K factors them likewise).
// float(s) is exact: |s| < 2^24 for every type (and so is float(m_j), m_j < 64). Bounds (|x_i| <= 127):
//   Q4_0 32*8*127 = 32512; MXFP4 32*12*127 = 48768; Q5_0 32*16*127 = 65024; Q4_1 32*15*127 = 60960;
//   Q5_1 125984;
//   Q8_0 32*128*127 = 520192; Q4_K 63*32*15*127 = 3840480; Q5_K 63*32*31*127 = 7936992;
//   IQ4_NL 32*127*127 = 516128; IQ4_XS 32 * 516128 = 16516096 < 2^24;
//   Q6_K 2 * 128 * (16*32*127) = 16646144 < 16777216 = 2^24 — tight: only 131072 to spare, and
//   only because |x_i| <= 127 (x = -128 could overflow the bound) and the offset 32 is applied
//   before the scale (the unsigned dot sc * sum q_i x_i alone can reach 2 * 128 * 16*63*127 =
//   32.8M, which is exact in int32 but not in float).
// Because every intermediate integer is exact, kernels may compute s any way they like (MXFP4's
// as sum_i (kv[q_i] + 12) x_i - 12 * sum with unsigned weights 0..24; vpdpbusd with weights
// offset by 128, vpmaddubsw with the sign trick, float products of exact integers below 2^24
// such as float(sc) * float(dot)): the float steps, and so the bits, are the same.
#pragma once

#include <cstdint>

#include "kernels/quant/block_decode.h"
#include "kernels/quant/dtype.h"

namespace pagedchat::kernels {

/// Per 32-group of a quantized activation row.
struct QuantActGroup {
  float d = 0.0f;      ///< amax / 127
  float ds = 0.0f;     ///< d * float(sum)
  int32_t sum = 0;     ///< sum of the group's 32 q
  int32_t sum_lo = 0;  ///< sum of its first 16 q
};

/// Quantizes x[k] (k a multiple of 32) into q[k] and g[k / 32] as described above.
void quantize_activation_row(const float* x, int k, int8_t* q, QuantActGroup* g);

/// One output of the definition above: the row `w` (k values of quantized type t, ggml format)
/// against the quantized activation row (q, g).
float quant_dot_reference(DType t, const void* w, const int8_t* q, const QuantActGroup* g, int k);

}  // namespace pagedchat::kernels
