#include "engine/model/weight_dtype.h"

#include <stdexcept>

namespace pagedchat {

WeightDType parse_weight_dtype(const std::string& s) {
  if (s == "auto") return WeightDType::kAuto;
  if (s == "float32") return WeightDType::kFloat32;
  if (s == "bfloat16") return WeightDType::kBFloat16;
  if (s == "float16") return WeightDType::kFloat16;
  throw std::invalid_argument("dtype must be \"auto\", \"float32\", \"float16\" or \"bfloat16\", got \"" + s + "\"");
}

const char* weight_dtype_name(WeightDType dtype) {
  switch (dtype) {
    case WeightDType::kAuto:
      return "auto";
    case WeightDType::kFloat32:
      return "float32";
    case WeightDType::kBFloat16:
      return "bfloat16";
    case WeightDType::kFloat16:
      return "float16";
  }
  return "invalid";
}

kernels::DType packed_dtype(kernels::DType file, WeightDType policy) {
  using kernels::DType;
  switch (policy) {
    case WeightDType::kAuto:
      return file;
    case WeightDType::kFloat32:
      return DType::kF32;
    case WeightDType::kBFloat16:
      return kernels::dtype_is_quantized(file) ? file : DType::kBF16;
    case WeightDType::kFloat16:
      return kernels::dtype_is_quantized(file) ? file : DType::kF16;
  }
  return file;
}

}  // namespace pagedchat
