// Storage types of weight matrices, as model files hold them, and their scalar (reference)
// conversion to float32. The block formats are GGUF's, named as ggml names them (block_q4_0,
// block_q4_1, block_q5_0, block_q5_1, block_q8_0, block_mxfp4 of 32 values; block_q4_K, block_q5_K,
// block_q6_K of 256); their bit layouts are described and read in block_decode.h. A row of n values of a
// block type is n / block_elems blocks stored back to back; multi-byte fields are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pagedchat::kernels {

/// Element type of a weight matrix. F32/F16/BF16 hold one value per element; the others are
/// ggml's block quantizations.
/// kMXFP4 (ggml type 39, gpt-oss's expert matrices): OCP MX v1.0 FP4 (E2M1) values with one E8M0
/// scale per 32 (ggml-common.h block_mxfp4, kvalues_mxfp4).
/// kIQ4_NL (ggml type 20) and kIQ4_XS (23): 4-bit codes that index a fixed non-uniform table
/// (kIq4nlValues) under an f16 scale per 32 values (IQ4_NL), or per 256 values with a 6-bit
/// signed sub-scale per 32 (IQ4_XS) (ggml-common.h block_iq4_nl, block_iq4_xs, kvalues_iq4nl).
enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ4_K,
  kQ5_K,
  kQ6_K,
  kMXFP4,
  kIQ4_NL,
  kIQ4_XS
};

/// Every DType, in enum order.
inline constexpr DType kAllDTypes[] = {DType::kF32,  DType::kF16,   DType::kBF16,   DType::kQ4_0,  DType::kQ4_1,
                                       DType::kQ5_0, DType::kQ5_1,  DType::kQ8_0,   DType::kQ4_K,  DType::kQ5_K,
                                       DType::kQ6_K, DType::kMXFP4, DType::kIQ4_NL, DType::kIQ4_XS};

/// ggml's name: "f32", "f16", "bf16", "q4_0", ..., "q4_K", "q5_K", "q6_K", "mxfp4".
const char* dtype_name(DType t);
/// Values per block: 1 (F32/F16/BF16), 32 (Q*_0, Q*_1, MXFP4, IQ4_NL), 256 (K-quants, IQ4_XS).
int dtype_block_elems(DType t);
/// Bytes per block: 4, 2, 2, 18, 20, 22, 24, 34, 144, 176, 210, 17, 18, 136.
int dtype_block_bytes(DType t);
/// True for the block quantizations (not F32/F16/BF16).
bool dtype_is_quantized(DType t);
/// Bytes of a row of n values; n must be a multiple of dtype_block_elems (std::invalid_argument).
std::size_t dtype_row_bytes(DType t, int64_t n);

/// IEEE binary16 bits -> float32, exact (subnormals, inf; a signalling NaN comes back quiet, as
/// F16C's vcvtph2ps does).
float fp16_to_fp32(uint16_t h);
/// float32 -> binary16 bits, round to nearest even; overflow -> inf, NaN stays NaN.
uint16_t fp32_to_fp16(float f);
/// Rounds a float to the nearest bfloat16 (ties to even; NaN stays NaN) and returns its bits.
uint16_t float_to_bf16(float x);
/// The float a bfloat16 holds (exact).
float bf16_to_float(uint16_t b);

/// MXFP4's values, doubled: FP4 E2M1 code c (sign bit 3, exponent bits 2..1, mantissa bit 0)
/// holds kMxfp4Values[c] / 2 (ggml-common.h kvalues_mxfp4, OCP MX v1.0's E2M1 table).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/// IQ4_NL's and IQ4_XS's values: code c holds kIq4nlValues[c] times the scale (ggml-common.h
/// kvalues_iq4nl: a non-uniform grid fitted to the weights' bell-shaped distribution).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/// Half the E8M0 scale of exponent byte e, 2^(e - 128), as float32 bits: (e - 1) << 23 for e >= 2,
/// the subnormals 0x00200000 (e = 0) and 0x00400000 (e = 1). It multiplies the doubled values of
/// kMxfp4Values (ggml-impl.h ggml_e8m0_to_fp32_half). e = 0xFF (NaN in OCP MX) gives 2^127 here:
/// loaders refuse such blocks first (mxfp4_row_valid).
constexpr uint32_t e8m0_half_bits(uint8_t e) { return e >= 2 ? uint32_t(e - 1) << 23 : 0x00200000u << e; }
/// e8m0_half_bits(e) as a float.
float e8m0_half_to_fp32(uint8_t e);

/// Whether no block of the MXFP4 row at `row` (n values, n a multiple of 32: n / 32 blocks of 17
/// bytes, any alignment) has the scale byte e = 0xFF, NaN in E8M0 (OCP MX v1.0), which
/// e8m0_half_bits would read as 2^127 (ggml does likewise). False for such a row; `bad_block`,
/// if not null, then receives the index of its first such block (0-based, within the row; left
/// alone when true is returned). Throws std::invalid_argument when n is not a multiple of 32.
/// For a loader: call it on each MXFP4 tensor's data as one row of rows * cols values and refuse
/// the model naming the tensor and the block ("MXFP4 block N has scale exponent 0xFF").
/// (Valid scales can still give inf: 12 * 2^126 for e = 254 exceeds float32, as in ggml.)
bool mxfp4_row_valid(const void* row, int64_t n, int64_t* bad_block = nullptr);

/// Converts n values of type t at src (dtype_row_bytes(t, n) bytes, any alignment) to float32 at
/// dst: the values llama.cpp's reader gives, bit for bit (tests/kernels/test_dequant_llamacpp.cpp
/// checks every type but MXFP4 against llama.cpp's own output; test_gguf_dequant checks MXFP4
/// against the OCP MX formula). n must be a multiple of the block size
/// (std::invalid_argument).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

/// The values a row of n elements of `from` holds once stored as `to` (F32, F16 or BF16: the
/// dequantized value rounded to nearest even; `to` == `from`: the dequantized value), as float32.
void dequantize_row_as(DType from, DType to, const void* src, float* dst, int64_t n);

}  // namespace pagedchat::kernels
