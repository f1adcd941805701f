#include "engine/model/model_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
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

void LoadedModel::release_packed(const void* p, std::size_t n) const {
  for (const auto& f : files) f->release(p, n);
  const auto lo_addr = reinterpret_cast<std::uintptr_t>(p), hi_addr = lo_addr + n;
  for (const auto& b : pack_sources) {
    const auto begin = reinterpret_cast<std::uintptr_t>(b.data()), end = begin + b.size();
    if (lo_addr < begin || hi_addr > end) continue;
    const std::uintptr_t page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
    const std::uintptr_t lo = (lo_addr + page - 1) / page * page, hi = hi_addr / page * page;
    if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  }
}

}  // namespace pagedchat
