// ggml tensor types: their block sizes, and conversions to float32 (dequantization) and from
// float32 (F16, Q8_0 quantization for the GGUF writer).
//
// Format source: ggml's ggml-common.h (block_q4_0, block_q8_0, block_q4_K, block_q6_K layouts,
// QK4_0 = QK8_0 = QK_MXFP4 = 32, QK_K = 256; block_mxfp4, kvalues_mxfp4) and ggml-quants.c (dequantize_row_q4_0 / _q8_0
// / _q4_K / _q6_K, quantize_row_q8_0_ref), ggml.h (enum ggml_type ids). All multi-byte fields are little-endian. The
// block formats themselves live in kernels/quant/dtype.h (the kernels compute on them); this header maps the file's
// type ids to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/quant/dtype.h"

namespace pagedchat {

/// ggml_type ids as stored in GGUF tensor infos (ggml.h). Ids 4, 5 and 31-33 were removed from ggml.
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,  ///< gpt-oss's experts: FP4 E2M1 values, one E8M0 scale per 32 (kernels::DType::kMXFP4)
};

/// Layout of one type: `block_elems` values are stored in `block_bytes` bytes.
struct GgmlTypeInfo {
  const char* name = nullptr;  ///< ggml's name ("f32", "q8_0", "q4_K", ...); null for unknown ids
  uint32_t block_elems = 0;
  uint32_t block_bytes = 0;
};

/// Layout of type id `type` (any uint32 from a file); name == nullptr when ggml has no such type.
GgmlTypeInfo ggml_type_info(uint32_t type);
/// "q8_0", or "type 99" for an unknown id.
std::string ggml_type_name(uint32_t type);
/// The kernels' type for a ggml type id, or nullopt for the ones this engine cannot compute with
/// (Q2_K, Q3_K, the IQ types but IQ4_NL and IQ4_XS, ...).
std::optional<kernels::DType> dtype_of(GgmlType type);
/// True for the types dequantize() accepts (those dtype_of() knows): F32, F16, BF16, Q4_0, Q4_1,
/// Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4, IQ4_NL, IQ4_XS.
bool can_dequantize(GgmlType type);

/// IEEE half (binary16) bits -> float32, exact (subnormals, inf, NaN included).
float fp16_to_fp32(uint16_t h);
/// float32 -> IEEE half bits, rounding to nearest even; overflow gives inf, NaN stays NaN.
uint16_t fp32_to_fp16(float f);
/// bfloat16 bits (the upper half of a float32) -> float32, exact.
float bf16_to_fp32(uint16_t h);

/// Bytes of `n` values of `type`. Throws std::invalid_argument when `type` is unknown or `n` is not
/// a multiple of its block size.
std::size_t ggml_row_bytes(GgmlType type, uint64_t n);

/// Converts `n` values of `type` at `src` (ggml_row_bytes(type, n) bytes, no alignment required)
/// to float32 in `dst`. Throws std::invalid_argument for types can_dequantize() rejects or an `n`
/// that is not a whole number of blocks.
void dequantize(GgmlType type, const void* src, float* dst, uint64_t n);

/// float32 -> F16, `n` values into 2n bytes at `dst` (round to nearest even).
void quantize_f16(const float* src, void* dst, uint64_t n);
/// float32 -> Q8_0 as ggml's quantize_row_q8_0_ref: per 32 values d = max|x| / 127 (stored as
/// F16), q = round(x / d). `n` must be a multiple of 32 and every value finite
/// (std::invalid_argument otherwise);
/// writes n / 32 * 34 bytes at `dst`.
void quantize_q8_0(const float* src, void* dst, uint64_t n);

}  // namespace pagedchat
