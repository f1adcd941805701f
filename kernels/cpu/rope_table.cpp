#include "kernels/cpu/rope_table.h"

#include <cmath>
#include <cstdint>

namespace pagedchat::cpu {

void RopeTable::prepare(const int* positions, int T, int head_dim, float theta) {
  if (head_dim != head_dim_ || theta != theta_) {
    head_dim_ = head_dim;
    theta_ = theta;
    rows_ = 0;
    cos_.clear();
    sin_.clear();
  }
  int need = rows_;
  for (int t = 0; t < T; ++t) need = positions[t] + 1 > need ? positions[t] + 1 : need;
  if (need > rows_) grow(need);
}

void RopeTable::grow(int rows) {
  rows = rows < 2 * rows_ ? 2 * rows_ : rows;  // amortised: doubling
  const int half = head_dim_ / 2;
  cos_.resize(std::size_t(rows) * half);
  sin_.resize(std::size_t(rows) * half);
  for (int pos = rows_; pos < rows; ++pos)
    for (int i = 0; i < half; ++i) {
      const float freq = 1.0f / std::pow(theta_, float(2 * i) / float(head_dim_));
      const float val = float(pos) * freq;
      cos_[std::size_t(pos) * half + i] = std::cos(val);
      sin_[std::size_t(pos) * half + i] = std::sin(val);
    }
  rows_ = rows;
}

void RopeTable::rotate(float* dst, const float* src, int heads, int pos, bool neox) const {
  const int half = head_dim_ / 2;
  const float* c = cos_.data() + std::size_t(pos) * half;
  const float* s = sin_.data() + std::size_t(pos) * half;
  for (int h = 0; h < heads; ++h) {
    const float* x = src + int64_t(h) * head_dim_;
    float* y = dst + int64_t(h) * head_dim_;
    for (int i = 0; i < half; ++i) {
      const int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
      const float v0 = x[i0], v1 = x[i1];
      y[i0] = v0 * c[i] - v1 * s[i];
      y[i1] = v0 * s[i] + v1 * c[i];
    }
  }
}

}  // namespace pagedchat::cpu
