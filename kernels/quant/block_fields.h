// Field readers of ggml's block layouts (ggml-common.h), shared by the reference dequantization
// (dtype.cpp) and the integer reference (quant_ref.cpp): little-endian u16 / u32 at any alignment,
// and the 6-bit scales and mins of Q4_K / Q5_K.
#pragma once

#include <cstdint>

namespace pagedchat::kernels::block_fields {

/// The little-endian uint16 at p (any alignment).
inline uint16_t u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

/// The little-endian uint32 at p (any alignment).
inline uint32_t u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/// get_scale_min_k4 (ggml-quants.c): sub-block j's (0..7) 6-bit scale `sc` and min `m` from the 12
/// packed scale bytes `q` of a block_q4_K / block_q5_K.
inline void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

}  // namespace pagedchat::kernels::block_fields
