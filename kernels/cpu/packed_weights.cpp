#include "kernels/cpu/packed_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <vector>

#include "kernels/cpu/quant_layout.h"
#include "kernels/quant/quant_ref.h"

namespace pagedchat::cpu {

using kernels::DType;

void CpuPackedWeights::FreeDeleter::operator()(void* p) const { std::free(p); }

CpuPackedWeights::CpuPackedWeights(std::span<const kernels::WeightPart> parts, int k) {
  cols = k;
  rows = 0;
  parts_.assign(parts.begin(), parts.end());
  std::size_t total = 0;
  for (int i = 0; i < int(parts_.size()); ++i) {
    const auto& part = parts_[i];
    kernels::check_weight_part(part, k);
    if (part.rows == 0) continue;
    if (segments_.empty() || segments_.back().type != part.packed ||
        segments_.back().first_part + segments_.back().num_parts != i) {
      Segment s;
      s.type = part.packed;
      s.row0 = rows;
      s.first_part = i;
      segments_.push_back(s);
    }
    Segment& s = segments_.back();
    s.num_parts += 1;
    s.rows += part.rows;
    rows += part.rows;
  }
  for (Segment& s : segments_) {
    s.num_panels = (s.rows + kPanel - 1) / kPanel;
    s.first_panel = num_panels_;
    num_panels_ += s.num_panels;
    s.padded_k = s.type == DType::kBF16 ? (k + 1) / 2 * 2 : k;
    if (kernels::dtype_is_quantized(s.type))
      s.panel_bytes = quant_panel_bytes(s.type, k);
    else
      s.panel_bytes = int64_t(s.padded_k) * kPanel * (s.type == DType::kF32 ? 4 : 2);
    s.offset = total;
    total += (std::size_t(s.num_panels) * std::size_t(s.panel_bytes) + 63) / 64 * 64;
  }
  bytes = total;
  // Matrices of 2 MiB or more on 2 MiB boundaries, with transparent huge pages asked for (Linux's
  // default THP mode is madvise): single-stream decode streams every weight once per token, and
  // with 4 KiB pages each 4 KiB of it costs a TLB miss.
  const std::size_t huge = std::size_t(2) << 20;
  const std::size_t align = total >= huge ? huge : 64;
  const std::size_t size = std::max<std::size_t>(64, (total + align - 1) / align * align);
  void* mem = std::aligned_alloc(align, size);
  if (!mem) throw std::bad_alloc();
#if defined(__linux__)
  if (align == huge) ::madvise(mem, size, MADV_HUGEPAGE);
#endif
  data_.reset(mem);
  std::memset(mem, 0, total);
}

bool CpuPackedWeights::has_type(DType t) const {
  for (const auto& s : segments_)
    if (s.type == t) return true;
  return false;
}

bool CpuPackedWeights::has_quantized() const {
  for (const auto& s : segments_)
    if (kernels::dtype_is_quantized(s.type)) return true;
  return false;
}

const uint8_t* CpuPackedWeights::source_row(const Segment& s, int r, DType& dtype) const {
  for (int i = s.first_part; i < s.first_part + s.num_parts; ++i) {
    const auto& part = parts_[i];
    if (part.rows == 0) continue;
    if (r < part.rows) {
      dtype = part.dtype;
      return static_cast<const uint8_t*>(part.data) + std::size_t(r) * kernels::dtype_row_bytes(part.dtype, cols);
    }
    r -= part.rows;
  }
  return nullptr;
}

void CpuPackedWeights::fill(int p0, int p1) {
  for (const Segment& s : segments_) {
    const int b = std::max(p0, s.first_panel), e = std::min(p1, s.first_panel + s.num_panels);
    for (int p = b; p < e; ++p) {
      if (kernels::dtype_is_quantized(s.type))
        fill_quant_panel(s, p - s.first_panel);
      else
        fill_float_panel(s, p - s.first_panel);
    }
  }
}

void CpuPackedWeights::for_each_source(int p0, int p1, const kernels::Backend::SourceDone& fn) const {
  for (const Segment& s : segments_) {
    const int b = std::max(p0, s.first_panel), e = std::min(p1, s.first_panel + s.num_panels);
    if (b >= e) continue;
    const int r0 = (b - s.first_panel) * kPanel, r1 = std::min(s.rows, (e - s.first_panel) * kPanel);
    int at = 0;  // the segment's row where part i starts
    for (int i = s.first_part; i < s.first_part + s.num_parts; at += parts_[i].rows, ++i) {
      const auto& part = parts_[i];
      const int lo = std::max(r0, at), hi = std::min(r1, at + part.rows);
      if (lo >= hi) continue;
      const std::size_t row_bytes = kernels::dtype_row_bytes(part.dtype, cols);
      fn(static_cast<const uint8_t*>(part.data) + std::size_t(lo - at) * row_bytes, std::size_t(hi - lo) * row_bytes);
    }
  }
}

void CpuPackedWeights::fill_float_panel(const Segment& s, int p) {
  const int k = cols;
  std::vector<float> rowbuf(std::size_t(kPanel) * k);
  bool present[kPanel] = {};  // rows past the last stay zero
  for (int j = 0; j < kPanel; ++j) {
    DType dtype;
    if (const uint8_t* src = source_row(s, p * kPanel + j, dtype)) {
      kernels::dequantize_row_as(dtype, s.type, src, rowbuf.data() + std::size_t(j) * k, k);
      present[j] = true;
    }
  }
  uint8_t* base = static_cast<uint8_t*>(data_.get()) + s.offset + std::size_t(p) * s.panel_bytes;
  if (s.type == DType::kBF16) {
    uint16_t* panel = reinterpret_cast<uint16_t*>(base);
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < kPanel; ++j)
        if (present[j])
          panel[(int64_t(kk / 2) * kPanel + j) * 2 + kk % 2] = kernels::float_to_bf16(rowbuf[std::size_t(j) * k + kk]);
  } else if (s.type == DType::kF16) {
    uint16_t* panel = reinterpret_cast<uint16_t*>(base);
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < kPanel; ++j)
        if (present[j]) panel[int64_t(kk) * kPanel + j] = kernels::fp32_to_fp16(rowbuf[std::size_t(j) * k + kk]);
  } else {
    float* panel = reinterpret_cast<float*>(base);
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < kPanel; ++j)
        panel[int64_t(kk) * kPanel + j] = present[j] ? rowbuf[std::size_t(j) * k + kk] : 0.0f;
  }
}

namespace {

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

// Row `lane` of a panel from its ggml row (quant_layout.h).
void pack_quant_row(DType t, int k, const uint8_t* src, int lane, uint8_t* panel) {
  const int G = k / 32, QG = quant_group_bytes(t), SB = quant_scale_bytes(t);
  const int be = kernels::dtype_block_bytes(t), ne = kernels::dtype_block_elems(t);
  uint8_t* qs = panel;
  uint8_t* sc = panel + int64_t(G) * QG;
  kernels::DecodedBlock blk;
  for (int b = 0; b < k / ne; ++b) {
    kernels::decode_block(t, src + int64_t(b) * be, blk);
    for (int jj = 0; jj < blk.groups; ++jj) {
      const int g = b * blk.groups + jj;
      const int16_t* q = blk.q + 32 * jj;
      uint8_t* gq = qs + int64_t(g) * QG + 4 * lane;
      if (t == DType::kQ8_0) {
        for (int j = 0; j < 8; ++j)
          for (int bb = 0; bb < 4; ++bb) gq[64 * j + bb] = uint8_t(int8_t(q[4 * j + bb]));
      } else {
        for (int j = 0; j < 4; ++j)
          for (int bb = 0; bb < 4; ++bb)
            gq[64 * j + bb] = uint8_t((q[4 * j + bb] & 15) | (q[16 + 4 * j + bb] & 15) << 4);
        if (t == DType::kQ5_0 || t == DType::kQ5_1 || t == DType::kQ5_K)
          for (int bb = 0; bb < 4; ++bb) {
            uint8_t h = 0;
            for (int i = 0; i < 8; ++i) h |= uint8_t(((q[i < 4 ? 4 * i + bb : 16 + 4 * (i - 4) + bb] >> 4) & 1) << i);
            gq[256 + bb] = h;
          }
        if (t == DType::kQ6_K)
          for (int bb = 0; bb < 4; ++bb) {
            uint8_t ha = 0, hb = 0;
            for (int j = 0; j < 4; ++j) {
              ha |= uint8_t(((q[4 * j + bb] >> 4) & 3) << (2 * j));
              hb |= uint8_t(((q[16 + 4 * j + bb] >> 4) & 3) << (2 * j));
            }
            gq[256 + bb] = ha;
            gq[320 + bb] = hb;
          }
      }
      if (is_k_quant(t)) {
        uint8_t* s = sc + int64_t(b) * SB;
        put_u16(s + 2 * lane, blk.d);
        if (t == DType::kIQ4_XS) {
          s[32 + 16 * jj + lane] = uint8_t(int8_t(int(blk.sc[jj]) - 32));
        } else if (t == DType::kQ6_K) {
          s[32 + 32 * jj + lane] = uint8_t(blk.sc6[2 * jj]);
          s[48 + 32 * jj + lane] = uint8_t(blk.sc6[2 * jj + 1]);
        } else {
          put_u16(s + 32 + 2 * lane, blk.m);
          s[64 + 32 * jj + lane] = blk.sc[jj];
          s[80 + 32 * jj + lane] = blk.mn[jj];
        }
      } else if (t == DType::kMXFP4) {
        sc[int64_t(g) * SB + lane] = blk.e;
      } else {
        uint8_t* s = sc + int64_t(g) * SB;
        put_u16(s + 2 * lane, blk.d);
        if (t == DType::kQ4_1 || t == DType::kQ5_1) put_u16(s + 32 + 2 * lane, blk.m);
      }
    }
  }
}

}  // namespace

void CpuPackedWeights::fill_quant_panel(const Segment& s, int p) {
  uint8_t* panel = static_cast<uint8_t*>(data_.get()) + s.offset + std::size_t(p) * s.panel_bytes;
  for (int j = 0; j < kPanel; ++j) {
    DType dtype;
    if (const uint8_t* src = source_row(s, p * kPanel + j, dtype)) pack_quant_row(s.type, cols, src, j, panel);
  }
}

float CpuPackedWeights::at(int row, int col) const {
  for (const Segment& s : segments_) {
    const bool last = &s == &segments_.back();
    if (row >= s.row0 + s.num_panels * kPanel || (!last && row >= s.row0 + s.rows)) continue;
    if (kernels::dtype_is_quantized(s.type)) return NAN;
    const int r = row - s.row0;
    const int64_t p = r / kPanel, c = r % kPanel;
    const uint8_t* base = segment_data(s) + p * s.panel_bytes;
    if (s.type == DType::kBF16)
      return kernels::bf16_to_float(
          reinterpret_cast<const uint16_t*>(base)[(int64_t(col / 2) * kPanel + c) * 2 + col % 2]);
    if (s.type == DType::kF16)
      return kernels::fp16_to_fp32(reinterpret_cast<const uint16_t*>(base)[int64_t(col) * kPanel + c]);
    return reinterpret_cast<const float*>(base)[int64_t(col) * kPanel + c];
  }
  return NAN;
}

}  // namespace pagedchat::cpu
