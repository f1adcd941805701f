#include "kernels/quant/block_decode.h"

#include <stdexcept>
#include <string>

namespace pagedchat::kernels {
namespace {

// Where each format's fields start inside its block (byte offsets; the sizes are dtype.h's).
struct Layout {
  int d;       // f16 d, or -1 (MXFP4)
  int m;       // f16 m / dmin, or -1
  int scales;  // packed scales (K-quants), or -1
  int high;    // high bits (Q5_*: packed, Q5_K / Q6_K: striped), or -1
  int low;     // nibble runs, or Q8_0's bytes
  int run;     // bytes per nibble run
};

Layout layout_of(DType t) {
  switch (t) {
    case DType::kQ4_0:
      return {0, -1, -1, -1, 2, 16};
    case DType::kQ4_1:
      return {0, 2, -1, -1, 4, 16};
    case DType::kQ5_0:
      return {0, -1, -1, 2, 6, 16};
    case DType::kQ5_1:
      return {0, 2, -1, 4, 8, 16};
    case DType::kQ8_0:
      return {0, -1, -1, -1, 2, 0};
    case DType::kQ4_K:
      return {0, 2, 4, -1, 16, 32};
    case DType::kQ5_K:
      return {0, 2, 4, 16, 48, 32};
    case DType::kQ6_K:
      return {208, -1, 192, 128, 0, 64};
    case DType::kMXFP4:  // no f16 d: decode_block reads the exponent byte 0 instead
      return {-1, -1, -1, -1, 1, 16};
    case DType::kIQ4_NL:
      return {0, -1, -1, -1, 2, 16};
    case DType::kIQ4_XS:  // scales: scales_h (u16) at 2, scales_l at 4
      return {0, -1, 2, -1, 8, 16};
    default:
      break;
  }
  throw std::invalid_argument(std::string("decode_block: ") + dtype_name(t) + " is not a block quantization");
}

// Low nibbles of `n` values from nibble runs of `run` bytes (see the header).
void read_nibble_runs(const uint8_t* src, int n, int run, int16_t* codes) {
  for (int start = 0; start < n; start += 2 * run) {
    const uint8_t* bytes = src + start / 2;
    for (int i = 0; i < run; ++i) {
      codes[start + i] = int16_t(bytes[i] & 0x0F);
      codes[start + run + i] = int16_t(bytes[i] >> 4);
    }
  }
}

// Adds bit 4 of `n` values from packed bits (value v: bit v % 8 of byte v / 8).
void add_packed_bit(const uint8_t* bits, int n, int16_t* codes) {
  for (int v = 0; v < n; ++v) codes[v] = int16_t(codes[v] | ((bits[v / 8] >> (v % 8)) & 1) << 4);
}

// Adds `width` high bits (above bit 3) to `n` values from striped 32-byte runs: a run covers
// 32 * (8 / width) values, and value i + 32 * f of it takes field f (width bits, lowest first) of
// the run's byte i.
void add_striped_bits(const uint8_t* bits, int n, int width, int16_t* codes) {
  const int span = 32 * (8 / width), mask = (1 << width) - 1;
  for (int v = 0; v < n; ++v) {
    const int run = v / span, within = v % span;
    const int field = (bits[32 * run + within % 32] >> (width * (within / 32))) & mask;
    codes[v] = int16_t(codes[v] | field << 4);
  }
}

}  // namespace

void unpack_k_scales(const uint8_t* p, uint8_t scale[8], uint8_t min[8]) {
  for (int i = 0; i < 4; ++i) {
    scale[i] = uint8_t(p[i] & 0x3F);
    min[i] = uint8_t(p[4 + i] & 0x3F);
    scale[4 + i] = uint8_t((p[8 + i] & 0x0F) | (p[i] >> 6) << 4);
    min[4 + i] = uint8_t((p[8 + i] >> 4) | (p[4 + i] >> 6) << 4);
  }
}

void decode_block(DType t, const uint8_t* b, DecodedBlock& o) {
  const Layout at = layout_of(t);
  const int n = dtype_block_elems(t);
  o.groups = n / 32;
  o.d = at.d >= 0 ? load_le16(b + at.d) : 0;
  o.m = at.m >= 0 ? load_le16(b + at.m) : 0;
  o.e = t == DType::kMXFP4 ? b[0] : 0;
  if (t == DType::kQ8_0) {
    for (int v = 0; v < n; ++v) o.q[v] = int8_t(b[at.low + v]);
    return;
  }
  read_nibble_runs(b + at.low, n, at.run, o.q);
  if (t == DType::kQ5_0 || t == DType::kQ5_1) add_packed_bit(b + at.high, n, o.q);
  if (t == DType::kQ5_K) add_striped_bits(b + at.high, n, 1, o.q);
  if (t == DType::kQ6_K) add_striped_bits(b + at.high, n, 2, o.q);
  if (t == DType::kQ4_K || t == DType::kQ5_K) unpack_k_scales(b + at.scales, o.sc, o.mn);
  if (t == DType::kQ6_K)
    for (int s = 0; s < 16; ++s) o.sc6[s] = int8_t(b[at.scales + s]);
  if (t == DType::kIQ4_XS) {
    const unsigned high = load_le16(b + at.scales);
    for (int j = 0; j < 8; ++j)
      o.sc[j] = uint8_t(((b[at.scales + 2 + j / 2] >> (4 * (j % 2))) & 0x0F) | ((high >> (2 * j)) & 3) << 4);
  }
}

}  // namespace pagedchat::kernels
