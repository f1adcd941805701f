#include "kernels/cpu/rope_table.h"

#include <cmath>
#include <cstdint>

#include "kernels/rope_math.h"

namespace pagedchat::cpu {

void RopeTable::prepare(const int* positions, int T, const kernels::RopeSpec& rope) {
  const int half = rope.head_dim / 2;
  bool same = rope.head_dim == head_dim_;
  for (int i = 0; same && i < half; ++i) same = rope.inv_freq[i] == inv_freq_[i];
  if (!same) {
    head_dim_ = rope.head_dim;
    inv_freq_.assign(rope.inv_freq, rope.inv_freq + half);
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
      const double a = kernels::rope_angle(pos, inv_freq_[i]);
      cos_[std::size_t(pos) * half + i] = float(std::cos(a));
      sin_[std::size_t(pos) * half + i] = float(std::sin(a));
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
      int i0, i1;
      kernels::rope_pair(i, head_dim_, neox, &i0, &i1);
      kernels::rope_rotate(x[i0], x[i1], c[i], s[i], &y[i0], &y[i1]);
    }
  }
}

}  // namespace pagedchat::cpu
