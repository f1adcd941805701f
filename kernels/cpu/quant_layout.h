// The in-memory layout of quantized weight panels (CpuPackedWeights, read by quant_impl.inc).
// A panel holds 16 output rows (lane r = row 16p + r) and the whole k; it is a quant region, then
// a scale region, the panel padded to 64 bytes. Weights keep their file's bits per weight: the
// same quants and scales (f16, or MXFP4's E8M0 bytes), only interleaved so that one 64-byte vector holds 4 consecutive
// k-values of all 16 rows (lane r = bytes 4r..4r+3), the operand of one vpdpbusd (or
// vpmaddubsw + vpmaddwd) with a broadcast 4-byte activation word.
//
// QUANT REGION: per 32-group g of k, at g * quant_group_bytes(t). Word j (0..7) of a group means
// its values 4j..4j+3; "N4[j]" (j < 4) is a vector whose byte b of lane r holds value 4j+b in the
// low nibble and value 16+4j+b in the high nibble (the low 4 bits of q):
//   Q4_0, Q4_1, Q4_K  N4[0..3]                                  256 bytes
//   MXFP4             N4[0..3] (FP4 codes, indices into kMxfp4Values) 256
//   IQ4_NL, IQ4_XS    N4[0..3] (codes, indices into kIq4nlValues)  256
//   Q5_0, Q5_1, Q5_K  N4[0..3], H5                              320
//   Q6_K              N4[0..3], H6A, H6B                        384
//   Q8_0              S8[0..7] (byte b of lane r: int8 value 4j+b) 512
// H5: byte b of lane r, bit i: bit 4 of value 4i+b (i < 4) or of value 16+4(i-4)+b (i >= 4).
// H6A / H6B: byte b of lane r, bits 2j, 2j+1: bits 4, 5 of value 4j+b / 16+4j+b.
// So word j's quants are (N4 & 15 or N4 >> 4 & 15) | (H5 shifted so bit j lands on bit 4) & 16
// and similarly for H6 (bits 2j..2j+1 onto 4..5): shifts of 32-bit lanes, masked per byte.
//
// SCALE REGION (after G = k/32 quant groups), per group or per 256-value super-block:
//   Q4_0, Q5_0, Q8_0, IQ4_NL  per group: d[16] f16               32 bytes
//   MXFP4             per group: e[16] u8 (E8M0 exponent bytes)  16
//   Q4_1, Q5_1        per group: d[16] f16, m[16] f16            64
//   Q4_K, Q5_K        per super-block: d[16] f16, dmin[16] f16, then per group sc[16] u8,
//                     m[16] u8                                   64 + 8 * 32 = 320
//   Q6_K              per super-block: d[16] f16, then per group sc_a[16] i8 (values 0..15),
//                     sc_b[16] i8 (16..31)                       32 + 8 * 32 = 288
//   IQ4_XS            per super-block: d[16] f16, then per group sc[16] i8 (ls - 32)
//                                                                32 + 8 * 16 = 160
// Bytes per 16 x 256 weights against the file's: Q4_0 2304 (=), Q4_1 2560 (=), Q5_0 2816 (=),
// Q5_1 3072 (=), Q8_0 4352 (=), Q4_K 2368 (+2.8%: scales unpacked from 6 to 8 bits), Q5_K 2880
// (+2.3%), Q6_K 3360 (=), MXFP4 2176 (=: 8 groups x (256 + 16)), IQ4_NL 2304 (=), IQ4_XS 2208
// (+1.5%: sub-scales unpacked from 6 to 8 bits).
#pragma once

#include <cstdint>

#include "kernels/quant/dtype.h"

namespace pagedchat::cpu {

/// The types with 256-value super-blocks (a d per super-block, sub-scales per 32-group).
constexpr bool is_k_quant(kernels::DType t) {
  return t == kernels::DType::kQ4_K || t == kernels::DType::kQ5_K || t == kernels::DType::kQ6_K ||
         t == kernels::DType::kIQ4_XS;
}

/// The types whose codes index kIq4nlValues (signed weights up to 127 in magnitude).
constexpr bool is_iq4(kernels::DType t) { return t == kernels::DType::kIQ4_NL || t == kernels::DType::kIQ4_XS; }

/// The 5-bit types (N4 plus H5 in a panel).
constexpr bool is_5bit(kernels::DType t) {
  return t == kernels::DType::kQ5_0 || t == kernels::DType::kQ5_1 || t == kernels::DType::kQ5_K;
}

/// Quant bytes of one 32-group of a panel.
constexpr int quant_group_bytes(kernels::DType t) {
  using kernels::DType;
  switch (t) {
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ4_K:
    case DType::kMXFP4:
    case DType::kIQ4_NL:
    case DType::kIQ4_XS:
      return 256;
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ5_K:
      return 320;
    case DType::kQ6_K:
      return 384;
    case DType::kQ8_0:
      return 512;
    default:
      return 0;
  }
}

/// Scale bytes per 32-group (Q*_0, Q*_1) or per super-block (K-quants).
constexpr int quant_scale_bytes(kernels::DType t) {
  using kernels::DType;
  switch (t) {
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ8_0:
    case DType::kIQ4_NL:
      return 32;
    case DType::kQ4_1:
    case DType::kQ5_1:
      return 64;
    case DType::kQ4_K:
    case DType::kQ5_K:
      return 320;
    case DType::kQ6_K:
      return 288;
    case DType::kIQ4_XS:
      return 160;
    case DType::kMXFP4:
      return 16;
    default:
      return 0;
  }
}

/// Bytes from one panel to the next for k values.
constexpr int64_t quant_panel_bytes(kernels::DType t, int k) {
  const int64_t groups = k / 32;
  const int64_t scales = is_k_quant(t) ? int64_t(k / 256) * quant_scale_bytes(t) : groups * quant_scale_bytes(t);
  return (groups * quant_group_bytes(t) + scales + 63) / 64 * 64;
}

}  // namespace pagedchat::cpu
