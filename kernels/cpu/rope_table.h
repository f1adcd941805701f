// RopeTable: cos/sin of the rotary-embedding angles per position, computed once per position (not
// per token, head and layer) with the same float formula as llama2.c's run.c:
// angle = pos * (1 / theta^(2i / head_dim)), i < head_dim / 2.
#pragma once

#include <vector>

namespace pagedchat::cpu {

class RopeTable {
 public:
  /// Makes sure every position in positions[0, T) has its row, for this head_dim and theta (a
  /// different head_dim or theta rebuilds the table).
  void prepare(const int* positions, int T, int head_dim, float theta);

  /// dst[h * head_dim + ...] = src rotated by `pos`, for heads h < heads; interleaved pairs
  /// (2i, 2i+1), or the halves (i, i + head_dim/2) when neox. dst may equal src.
  void rotate(float* dst, const float* src, int heads, int pos, bool neox) const;

 private:
  void grow(int rows);

  int head_dim_ = 0;
  float theta_ = 0.0f;
  int rows_ = 0;
  std::vector<float> cos_, sin_;  // [rows][head_dim / 2]
};

}  // namespace pagedchat::cpu
