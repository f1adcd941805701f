// RopeTable: cos/sin of the rotary-embedding angles per position, computed once per position (not
// per token, head and layer): angle = pos * inv_freq[i] in float64 (kernels/rope_math.h), its cos
// and sin in float64, rounded once to float32. The rotation itself is float32. Models whose layers
// use different ropes (Gemma 3: local layers theta 10000, global ones 1e6; partial rotary) keep one
// table per distinct set of inverse frequencies, found by value (a few dozen compares per call),
// so alternating layers reuse their tables instead of rebuilding them.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "kernels/ops.h"

namespace pagedchat::cpu {

class RopeTable {
 public:
  /// The rows of one rope: cos/sin [rows][rotary_dim / 2].
  struct Rows {
    int rotary_dim = 0;
    std::vector<double> inv_freq;  // [rotary_dim / 2]
    int rows = 0;
    std::vector<float> cos, sin;
    unsigned long long used = 0;  // prepare() call that last returned it
  };

  /// The table of `rope`'s inverse frequencies with a row for every position in positions[0, T)
  /// (built or grown as needed), or null when rope.inv_freq is null (no rotation). The pointer
  /// stays valid until the next prepare(). Not thread-safe; rotate() is.
  const Rows* prepare(const int* positions, int T, const kernels::RopeSpec& rope);

  /// dst[h * head_dim + ...] = src rotated by `pos` with `table`, for heads h < heads: the first
  /// table->rotary_dim elements of each head in interleaved pairs (2i, 2i+1), or the halves
  /// (i, i + rotary_dim/2) when neox; the rest copied. A null table copies. dst may equal src.
  static void rotate(const Rows* table, float* dst, const float* src, int heads, int head_dim, int pos, bool neox);
  /// As rotate(), with interleaved M-RoPE positions: pair i is rotated by the row of pos3[1] (h)
  /// when i % 3 == 1 and i < 3 * sections[1], of pos3[2] (w) when i % 3 == 2 and i < 3 *
  /// sections[2], else of pos3[0] (t) (kernels::RopeSpec::mrope_positions).
  static void rotate_mrope(const Rows* table, float* dst, const float* src, int heads, int head_dim, const int* pos3,
                           const std::array<int, 3>& sections, bool neox);
  /// rotate() or rotate_mrope() for token t of an op's `positions` / `rope`.
  static void rotate_token(const Rows* table, float* dst, const float* src, int heads, int head_dim,
                           const int* positions, int t, const kernels::RopeSpec& rope) {
    if (rope.mrope_positions)
      rotate_mrope(table, dst, src, heads, head_dim, rope.mrope_positions + 3 * t, rope.mrope_sections, rope.neox);
    else
      rotate(table, dst, src, heads, head_dim, positions[t], rope.neox);
  }

 private:
  static constexpr int kMaxTables = 8;
  static void grow(Rows& t, int rows);

  std::vector<std::unique_ptr<Rows>> tables_;
  unsigned long long calls_ = 0;
};

}  // namespace pagedchat::cpu
