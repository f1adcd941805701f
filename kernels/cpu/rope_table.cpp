#include "kernels/cpu/rope_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/rope_math.h"

namespace pagedchat::cpu {

const RopeTable::Rows* RopeTable::prepare(const int* positions, int T, const kernels::RopeSpec& rope) {
  if (!rope.inv_freq) return nullptr;
  const int rd = rope.rotary_dims(), half = rd / 2;
  ++calls_;
  Rows* t = nullptr;
  for (auto& c : tables_)
    if (c->rotary_dim == rd && std::equal(c->inv_freq.begin(), c->inv_freq.end(), rope.inv_freq)) {
      t = c.get();
      break;
    }
  if (!t) {
    if (int(tables_.size()) < kMaxTables) {
      tables_.push_back(std::make_unique<Rows>());
      t = tables_.back().get();
    } else {  // the least recently used
      t = tables_.front().get();
      for (auto& c : tables_)
        if (c->used < t->used) t = c.get();
      *t = Rows();
    }
    t->rotary_dim = rd;
    t->inv_freq.assign(rope.inv_freq, rope.inv_freq + half);
  }
  t->used = calls_;
  int need = t->rows;
  // (M-RoPE: rows for every one of the tokens' three positions.)
  const int* pos = rope.mrope_positions ? rope.mrope_positions : positions;
  const int n = rope.mrope_positions ? 3 * T : T;
  for (int i = 0; i < n; ++i) need = pos[i] + 1 > need ? pos[i] + 1 : need;
  if (need > t->rows) grow(*t, need);
  return t;
}

void RopeTable::grow(Rows& t, int rows) {
  rows = rows < 2 * t.rows ? 2 * t.rows : rows;  // amortised: doubling
  const int half = t.rotary_dim / 2;
  t.cos.resize(std::size_t(rows) * half);
  t.sin.resize(std::size_t(rows) * half);
  for (int pos = t.rows; pos < rows; ++pos)
    for (int i = 0; i < half; ++i) {
      const double a = kernels::rope_angle(pos, t.inv_freq[i]);
      t.cos[std::size_t(pos) * half + i] = float(std::cos(a));
      t.sin[std::size_t(pos) * half + i] = float(std::sin(a));
    }
  t.rows = rows;
}

void RopeTable::rotate(const Rows* table, float* dst, const float* src, int heads, int head_dim, int pos, bool neox) {
  if (!table) {
    if (dst != src) std::memcpy(dst, src, sizeof(float) * std::size_t(heads) * std::size_t(head_dim));
    return;
  }
  const int rd = table->rotary_dim, half = rd / 2;
  const float* c = table->cos.data() + std::size_t(pos) * half;
  const float* s = table->sin.data() + std::size_t(pos) * half;
  for (int h = 0; h < heads; ++h) {
    const float* x = src + int64_t(h) * head_dim;
    float* y = dst + int64_t(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      int i0, i1;
      kernels::rope_pair(i, rd, neox, &i0, &i1);
      kernels::rope_rotate(x[i0], x[i1], c[i], s[i], &y[i0], &y[i1]);
    }
    if (rd < head_dim && dst != src) std::memcpy(y + rd, x + rd, sizeof(float) * std::size_t(head_dim - rd));
  }
}

void RopeTable::rotate_mrope(const Rows* table, float* dst, const float* src, int heads, int head_dim, const int* pos3,
                             const std::array<int, 3>& sections, bool neox) {
  if (!table) {
    if (dst != src) std::memcpy(dst, src, sizeof(float) * std::size_t(heads) * std::size_t(head_dim));
    return;
  }
  const int rd = table->rotary_dim, half = rd / 2;
  const float* row[3];
  const float* srow[3];
  for (int c = 0; c < 3; ++c) {
    row[c] = table->cos.data() + std::size_t(pos3[c]) * half;
    srow[c] = table->sin.data() + std::size_t(pos3[c]) * half;
  }
  for (int h = 0; h < heads; ++h) {
    const float* x = src + int64_t(h) * head_dim;
    float* y = dst + int64_t(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      const int c = (i % 3 == 1 && i < 3 * sections[1]) ? 1 : (i % 3 == 2 && i < 3 * sections[2]) ? 2 : 0;
      int i0, i1;
      kernels::rope_pair(i, rd, neox, &i0, &i1);
      kernels::rope_rotate(x[i0], x[i1], row[c][i], srow[c][i], &y[i0], &y[i1]);
    }
    if (rd < head_dim && dst != src) std::memcpy(y + rd, x + rd, sizeof(float) * std::size_t(head_dim - rd));
  }
}

}  // namespace pagedchat::cpu
