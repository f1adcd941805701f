// The weight-type policy of a model (vLLM's `dtype`): which type each matrix is packed as.
#pragma once

#include <string>

#include "kernels/quant/dtype.h"

namespace pagedchat {

/// vLLM's `dtype` for the weight matrices (EngineConfig::dtype). kAuto: every matrix in its
/// file's type (F32, F16, BF16, or its ggml quantization). kFloat32: every matrix dequantized to
/// float32 (4 bytes per weight: the exact reference path). kBFloat16 / kFloat16: unquantized
/// matrices (F32, F16, BF16) in that 16-bit type (rounded to nearest even), quantized ones stay.
enum class WeightDType { kAuto, kFloat32, kBFloat16, kFloat16 };

/// "auto", "float32", "bfloat16", "float16" -> WeightDType; std::invalid_argument naming the
/// allowed values otherwise.
WeightDType parse_weight_dtype(const std::string& s);

/// The name parse_weight_dtype() reads ("auto", "float32", "bfloat16", "float16"); "invalid" for
/// a value outside the enum.
const char* weight_dtype_name(WeightDType dtype);

/// The type a matrix stored as `file` is packed as under `policy`.
kernels::DType packed_dtype(kernels::DType file, WeightDType policy);

}  // namespace pagedchat
