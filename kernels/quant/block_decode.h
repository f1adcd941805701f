// The one place that reads the bits of a quantized block (the layouts of dtype.h): a block becomes
// its integer codes, one per value, and the scale fields they share. Everything that computes
// with quantized weights starts here: the float dequantization (dtype.cpp), the integer reference
// (quant_ref.cpp) and the CPU kernels' panel packing (cpu/packed_weights.cpp).
//
// How the formats store their codes (a fact of the GGUF format, described here in our terms):
//  - Low four bits come in "nibble runs": a run of L bytes holds 2L consecutive values, the low
//    nibbles of its bytes first (values 0..L-1), then the high nibbles (values L..2L-1). Q4_0,
//    Q4_1, Q5_0 and Q5_1 are one run of 16 bytes; Q4_K and Q5_K four runs of 32; Q6_K two of 64.
//  - A fifth bit (Q5_0, Q5_1) is "packed": value v's bit is bit v % 8 of byte v / 8.
//  - Q5_K's fifth bit and Q6_K's two high bits are "striped": byte i of a 32-byte run holds the
//    high bits of values i, i + 32, i + 64, ... of that run's span, lowest bits first.
//  - Q8_0's codes are whole signed bytes.
//  - MXFP4 (17 bytes: the E8M0 exponent byte e, then one nibble run of 16 bytes) stores 4-bit
//    FP4 E2M1 codes, which are indices into kMxfp4Values (dtype.h), not integers with a zero point.
//  - Q4_K / Q5_K pack eight 6-bit (scale, min) pairs into 12 bytes (unpack_k_scales below);
//    Q6_K has sixteen signed 8-bit scales, one per 16 values.
//  - IQ4_NL (18 bytes: f16 d, one nibble run of 16) is Q4_0's layout, its codes indices into
//    kIq4nlValues. IQ4_XS (136 bytes: f16 d, u16 scales_h, 4 bytes scales_l, eight nibble runs
//    of 16) has a 6-bit sub-scale per 32 values: the low four bits from scales_l (nibble j % 2 of
//    byte j / 2), the top two from bits 2j, 2j+1 of scales_h; the value is that minus 32.
#pragma once

#include <cstdint>

#include "kernels/quant/dtype.h"

namespace pagedchat::kernels {

/// The integers and scales of one block (32 values, or 256 for the K-quants), decoded.
struct DecodedBlock {
  int groups = 0;       ///< 32-value groups in the block: 1 or 8
  int16_t q[256];       ///< the codes: unsigned, as stored (Q8_0: signed), before any zero point
                        ///< (MXFP4: the FP4 codes 0..15, indices into kMxfp4Values; IQ4_NL,
                        ///< IQ4_XS: indices into kIq4nlValues)
  uint16_t d = 0;       ///< f16 bits: d (every type but MXFP4, which has e instead)
  uint8_t e = 0;        ///< MXFP4: the E8M0 scale exponent byte (scale 2^(e - 127)); 0 otherwise
  uint16_t m = 0;       ///< f16 bits: m (Q4_1, Q5_1) or dmin (Q4_K, Q5_K); 0 otherwise
  uint8_t sc[8] = {};   ///< Q4_K / Q5_K: 6-bit scale of each 32-value group (IQ4_XS: its 6-bit
                        ///< sub-scale, 0..63, before the - 32)
  uint8_t mn[8] = {};   ///< Q4_K / Q5_K: 6-bit min of each 32-value group
  int8_t sc6[16] = {};  ///< Q6_K: scale of each 16 values
};

/// Decodes block `b` (dtype_block_bytes(t) bytes, any alignment) of the block quantization t.
/// Throws std::invalid_argument for F32 / F16 / BF16.
void decode_block(DType t, const uint8_t* b, DecodedBlock& out);

/// The eight 6-bit scales and mins of a Q4_K / Q5_K block from its 12 packed bytes `p`: bytes 0-3
/// hold scales 0-3 in their low six bits, bytes 4-7 mins 0-3; bytes 8-11 hold the low four bits of
/// scale 4+i (low nibble) and of min 4+i (high nibble), whose top two bits are the spare top two
/// bits of byte i (scales) and byte 4+i (mins).
void unpack_k_scales(const uint8_t* p, uint8_t scale[8], uint8_t min[8]);

/// The little-endian uint16 at p (any alignment).
inline uint16_t load_le16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

}  // namespace pagedchat::kernels
