#include "kernels/cpu/packed_weights.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace pagedchat::cpu {

void CpuPackedWeights::FreeDeleter::operator()(void* p) const { std::free(p); }

CpuPackedWeights::CpuPackedWeights(std::span<const kernels::WeightPart> parts, int k, kernels::WeightType t) {
  type = t;
  cols = k;
  rows = 0;
  for (const auto& part : parts) rows += part.rows;
  const bool bf16 = t == kernels::WeightType::kBFloat16;
  num_panels_ = (rows + kPanel - 1) / kPanel;
  padded_k_ = bf16 ? (k + 1) / 2 * 2 : k;
  const std::size_t elem = bf16 ? sizeof(uint16_t) : sizeof(float);
  const std::size_t n = std::size_t(num_panels_) * std::size_t(padded_k_) * kPanel;
  bytes = (n * elem + 63) / 64 * 64;
  void* mem = std::aligned_alloc(64, bytes > 0 ? bytes : 64);
  if (!mem) throw std::bad_alloc();
  data_.reset(mem);
  std::memset(mem, 0, bytes);

  parts_ = parts;
}

void CpuPackedWeights::fill(int p0, int p1) {
  const bool bf16 = type == kernels::WeightType::kBFloat16;
  const int k = cols;
  for (int p = p0; p < p1; ++p) {
    const float* src[kPanel] = {};  // the panel's rows (nullptr past the last: stays zero)
    for (int j = 0; j < kPanel; ++j) {
      int row = p * kPanel + j;
      for (const auto& part : parts_) {
        if (row < part.rows) {
          src[j] = part.data + int64_t(row) * k;
          break;
        }
        row -= part.rows;
      }
    }
    if (bf16) {
      uint16_t* panel = static_cast<uint16_t*>(data_.get()) + p * panel_stride();
      for (int kk = 0; kk < k; ++kk)
        for (int j = 0; j < kPanel; ++j)
          if (src[j]) panel[(int64_t(kk / 2) * kPanel + j) * 2 + kk % 2] = kernels::float_to_bf16(src[j][kk]);
    } else {
      float* panel = static_cast<float*>(data_.get()) + p * panel_stride();
      for (int kk = 0; kk < k; ++kk)
        for (int j = 0; j < kPanel; ++j) panel[int64_t(kk) * kPanel + j] = src[j] ? src[j][kk] : 0.0f;
    }
  }
}

float CpuPackedWeights::at(int row, int col) const {
  const int64_t p = row / kPanel, c = row % kPanel;
  if (type == kernels::WeightType::kBFloat16) {
    const uint16_t* panel = static_cast<const uint16_t*>(data()) + p * panel_stride();
    return kernels::bf16_to_float(panel[(int64_t(col / 2) * kPanel + c) * 2 + col % 2]);
  }
  return static_cast<const float*>(data())[p * panel_stride() + int64_t(col) * kPanel + c];
}

}  // namespace pagedchat::cpu
