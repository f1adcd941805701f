// CpuPackedWeights: weight matrices in the panel layouts the CPU GEMM kernels (gemm_impl.inc,
// quant_impl.inc) stream. A stack of WeightParts is cut into segments: consecutive parts with the
// same packed type form one segment, with its own panels, layout and kernel (a Q4_K_M stack
// mixes Q4_K and Q6_K); linear() runs every segment into its column range of out. Output
// features are grouped in panels of kPanel (16); a kernel reads each panel front to back.
//
//   float32:  panel p, input kk, lane c  -> w[16p + c][kk]                at  p*k*16 + kk*16 + c
//   float16:  the same, as IEEE binary16 (uint16)
//   bfloat16: panel p, pair j, lane c    -> w[16p + c][2j], w[16p + c][2j+1]
//                                           at  p*kp*16 + (j*16 + c)*2 + {0, 1}   (kp = k rounded up to even)
//   quantized (Q4_0 ... Q6_K): the file's quants and scales, interleaved per panel as
//             quant_layout.h describes (about the file's bits per weight).
//
// The last panel of a segment is zero padded to 16 outputs, and bfloat16 rows to an even length.
// Memory: 4 (float32) or 2 (float16, bfloat16) bytes per weight, quantized types within 3% of the
// file's bytes, plus the padding; each segment 64-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/ops.h"

namespace pagedchat::cpu {

class CpuPackedWeights final : public kernels::PackedWeights {
 public:
  struct Segment {
    kernels::DType type = kernels::DType::kF32;  ///< the packed type of all its parts
    int row0 = 0, rows = 0;                      ///< rows [row0, row0 + rows) of the stack
    int first_part = 0, num_parts = 0;           ///< its parts (all with rows > 0)
    int first_panel = 0, num_panels = 0;         ///< its panels in fill()'s numbering
    int padded_k = 0;                            ///< reduction length: k (bfloat16: k rounded up to even)
    int64_t panel_bytes = 0;                     ///< bytes from one panel to the next
    std::size_t offset = 0;                      ///< of its first panel in the allocation
  };

  /// Allocates room for `parts` stacked along the output dimension (zeroed); fill() packs them.
  /// The parts must stay alive until every panel is filled. Each part is held as its packed type.
  CpuPackedWeights(std::span<const kernels::WeightPart> parts, int k);

  /// Packs panels [p0, p1) of the numbering over all segments (first_panel .. + num_panels).
  /// Disjoint ranges may be filled from different threads.
  void fill(int p0, int p1);

  /// Calls fn(data, bytes) for each contiguous range of the parts' source rows that panels
  /// [p0, p1) are packed from (whole rows; a part split over two panel ranges is reported in
  /// pieces).
  void for_each_source(int p0, int p1, const kernels::Backend::SourceDone& fn) const;

  /// Panels of all segments together.
  int num_panels() const { return num_panels_; }
  const std::vector<Segment>& segments() const { return segments_; }
  const uint8_t* segment_data(const Segment& s) const { return static_cast<const uint8_t*>(data_.get()) + s.offset; }
  bool has_type(kernels::DType t) const;
  bool has_quantized() const;

  // The first segment's (the only one's, for a matrix of one packed type):
  /// True when every part is packed as BF16.
  bool bf16() const { return segments_.size() == 1 && segments_[0].type == kernels::DType::kBF16; }
  int padded_k() const { return segments_.empty() ? cols : segments_[0].padded_k; }
  /// Elements (float or uint16) between consecutive panels of a float segment.
  int64_t panel_stride() const { return int64_t(padded_k()) * kPanel; }
  const void* data() const { return data_.get(); }

  /// The weight at (row, col) as float, for F32 / F16 / BF16 segments (tests); NaN for quantized
  /// ones and for the padding beyond a segment's rows. Padding rows of the last segment read 0.
  float at(int row, int col) const;

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  void fill_float_panel(const Segment& s, int p);
  void fill_quant_panel(const Segment& s, int p);
  // The source row `r` (segment-local) of segment s, or null past its rows.
  const uint8_t* source_row(const Segment& s, int r, kernels::DType& dtype) const;

  std::unique_ptr<void, FreeDeleter> data_;
  std::vector<kernels::WeightPart> parts_;
  std::vector<Segment> segments_;
  int num_panels_ = 0;
};

}  // namespace pagedchat::cpu
