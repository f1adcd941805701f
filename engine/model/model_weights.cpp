#include "engine/model/model_weights.h"

#include <stdexcept>
#include <string>

namespace pagedchat {

const float* WeightTensor::f32() const {
  if (dtype != kernels::DType::kF32)
    throw std::logic_error(std::string("weight tensor is ") + kernels::dtype_name(dtype) + ", not f32");
  return static_cast<const float*>(data);
}

std::vector<float> to_float(const WeightTensor& t, std::size_t n) {
  std::vector<float> v(n);
  kernels::dequantize_row(t.dtype, t.data, v.data(), int64_t(n));
  return v;
}

}  // namespace pagedchat
