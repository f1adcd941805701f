// CpuPackedWeights: weight matrices in the panel layout the CPU GEMM kernels (gemm_impl.inc)
// stream. Output features are grouped in panels of kPanel (16); within a panel the 16 weights of
// one input feature are contiguous, so a kernel reads each panel front to back.
//
//   float32:  panel p, input kk, lane c  -> w[16p + c][kk]                at  p*k*16 + kk*16 + c
//   bfloat16: panel p, pair j, lane c    -> w[16p + c][2j], w[16p + c][2j+1]
//                                           at  p*kp*16 + (j*16 + c)*2 + {0, 1}   (kp = k rounded up to even)
//
// The last panel is zero padded to 16 outputs, and bfloat16 rows to an even length. Memory:
// 4 (float32) or 2 (bfloat16) bytes per weight, plus the padding; 64-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/ops.h"

namespace pagedchat::cpu {

class CpuPackedWeights final : public kernels::PackedWeights {
 public:
  /// Allocates room for `parts` stacked along the output dimension (zeroed); fill() packs them.
  /// The parts must stay alive until every panel is filled. Bfloat16 panels when every part is
  /// packed as BF16, else float32 panels holding the values dequantize_row_as gives.
  CpuPackedWeights(std::span<const kernels::WeightPart> parts, int k);

  /// Packs panels [p0, p1) (bfloat16: round to nearest even). Disjoint ranges may be filled from
  /// different threads.
  void fill(int p0, int p1);

  int num_panels() const { return num_panels_; }
  bool bf16() const { return bf16_; }
  /// k for float32, k rounded up to even for bfloat16: the reduction length the kernels run.
  int padded_k() const { return padded_k_; }
  /// Elements (float or uint16) between consecutive panels.
  int64_t panel_stride() const { return int64_t(padded_k_) * kPanel; }
  const void* data() const { return data_.get(); }

  /// The weight at (row, col), as float (for tests).
  float at(int row, int col) const;

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, FreeDeleter> data_;
  std::span<const kernels::WeightPart> parts_;
  int num_panels_ = 0;
  bool bf16_ = false;
  int padded_k_ = 0;
};

}  // namespace pagedchat::cpu
