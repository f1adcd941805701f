// RopeTable: cos/sin of the rotary-embedding angles per position, computed once per position (not
// per token, head and layer): angle = pos * inv_freq[i] in float64 (kernels/rope_math.h), its cos
// and sin in float64, rounded once to float32. The rotation itself is float32.
#pragma once

#include <vector>

#include "kernels/ops.h"

namespace pagedchat::cpu {

class RopeTable {
 public:
  /// Makes sure every position in positions[0, T) has its row for `rope`'s head_dim and inverse
  /// frequencies (different ones rebuild the table). Not thread-safe; rotate() is.
  void prepare(const int* positions, int T, const kernels::RopeSpec& rope);

  /// dst[h * head_dim + ...] = src rotated by `pos`, for heads h < heads; interleaved pairs
  /// (2i, 2i+1), or the halves (i, i + head_dim/2) when neox. dst may equal src.
  void rotate(float* dst, const float* src, int heads, int pos, bool neox) const;

 private:
  void grow(int rows);

  int head_dim_ = 0;
  std::vector<double> inv_freq_;  // [head_dim / 2]
  int rows_ = 0;
  std::vector<float> cos_, sin_;  // [rows][head_dim / 2]
};

}  // namespace pagedchat::cpu
