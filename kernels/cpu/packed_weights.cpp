#include "kernels/cpu/packed_weights.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace pagedchat::cpu {

void CpuPackedWeights::FreeDeleter::operator()(void* p) const { std::free(p); }

CpuPackedWeights::CpuPackedWeights(std::span<const kernels::WeightPart> parts, int k) {
  cols = k;
  rows = 0;
  bf16_ = !parts.empty();
  for (const auto& part : parts) {
    kernels::check_weight_part(part, k);
    rows += part.rows;
    bf16_ = bf16_ && part.packed == kernels::DType::kBF16;
  }
  num_panels_ = (rows + kPanel - 1) / kPanel;
  padded_k_ = bf16_ ? (k + 1) / 2 * 2 : k;
  const std::size_t elem = bf16_ ? sizeof(uint16_t) : sizeof(float);
  const std::size_t n = std::size_t(num_panels_) * std::size_t(padded_k_) * kPanel;
  bytes = (n * elem + 63) / 64 * 64;
  void* mem = std::aligned_alloc(64, bytes > 0 ? bytes : 64);
  if (!mem) throw std::bad_alloc();
  data_.reset(mem);
  std::memset(mem, 0, bytes);
  parts_ = parts;
}

void CpuPackedWeights::fill(int p0, int p1) {
  const int k = cols;
  std::vector<float> rowbuf(std::size_t(kPanel) * k);
  for (int p = p0; p < p1; ++p) {
    bool present[kPanel] = {};  // rows past the last stay zero
    for (int j = 0; j < kPanel; ++j) {
      int row = p * kPanel + j;
      for (const auto& part : parts_) {
        if (row < part.rows) {
          const auto* src = static_cast<const uint8_t*>(part.data) + std::size_t(row) * kernels::dtype_row_bytes(part.dtype, k);
          kernels::dequantize_row_as(part.dtype, part.packed, src, rowbuf.data() + std::size_t(j) * k, k);
          present[j] = true;
          break;
        }
        row -= part.rows;
      }
    }
    if (bf16_) {
      uint16_t* panel = static_cast<uint16_t*>(data_.get()) + p * panel_stride();
      for (int kk = 0; kk < k; ++kk)
        for (int j = 0; j < kPanel; ++j)
          if (present[j]) panel[(int64_t(kk / 2) * kPanel + j) * 2 + kk % 2] = kernels::float_to_bf16(rowbuf[std::size_t(j) * k + kk]);
    } else {
      float* panel = static_cast<float*>(data_.get()) + p * panel_stride();
      for (int kk = 0; kk < k; ++kk)
        for (int j = 0; j < kPanel; ++j) panel[int64_t(kk) * kPanel + j] = present[j] ? rowbuf[std::size_t(j) * k + kk] : 0.0f;
    }
  }
}

float CpuPackedWeights::at(int row, int col) const {
  const int64_t p = row / kPanel, c = row % kPanel;
  if (bf16_) {
    const uint16_t* panel = static_cast<const uint16_t*>(data()) + p * panel_stride();
    return kernels::bf16_to_float(panel[(int64_t(col / 2) * kPanel + c) * 2 + col % 2]);
  }
  return static_cast<const float*>(data())[p * panel_stride() + int64_t(col) * kPanel + c];
}

}  // namespace pagedchat::cpu
