// Online softmax (Milakov & Gimelshein 2018; the running rescaling of FlashAttention, Dao et al.
// 2022, and of vLLM's paged attention v2 reduce): a softmax-weighted sum over scores seen one at
// a time, or in pieces merged afterwards, without a second pass. Shared by the CUDA attention
// kernels and the CPU tests (kernels/host_device.h).
#pragma once

#include <cmath>

#include "kernels/host_device.h"

namespace pagedchat::kernels {

/// The running state of one softmax: the largest score so far `max` and the sum of
/// exp(score - max) so far `sum`. The weighted sum itself (acc) is kept by the caller, scaled by
/// the same exp(- max). An empty state has max = -inf and sum = 0.
struct SoftmaxState {
  float max;
  float sum;
};

PC_HOST_DEVICE inline SoftmaxState softmax_empty() { return {-INFINITY, 0.0f}; }

/// Adds `score` to *s. Returns the factor the caller's accumulator must be multiplied by before
/// it adds exp(score - new max) * value, and that weight in *p.
PC_HOST_DEVICE inline float softmax_add(SoftmaxState* s, float score, float* p) {
  const float m = fmaxf(s->max, score);
  const float rescale = s->max == -INFINITY ? 0.0f : expf(s->max - m);
  *p = expf(score - m);
  s->sum = s->sum * rescale + *p;
  s->max = m;
  return rescale;
}

/// Merges state b into a (pieces of one softmax over disjoint scores). Returns in *ra and *rb
/// the factors by which a's and b's accumulators are multiplied before they are added.
PC_HOST_DEVICE inline void softmax_merge(SoftmaxState* a, SoftmaxState b, float* ra, float* rb) {
  const float m = fmaxf(a->max, b.max);
  *ra = a->max == -INFINITY ? 0.0f : expf(a->max - m);
  *rb = b.max == -INFINITY ? 0.0f : expf(b.max - m);
  a->sum = a->sum * *ra + b.sum * *rb;
  a->max = m;
}

/// The softmax-weighted value once every score is in: acc / sum (0 for an empty state).
PC_HOST_DEVICE inline float softmax_finish(const SoftmaxState& s, float acc) {
  return s.sum > 0.0f ? acc / s.sum : 0.0f;
}

}  // namespace pagedchat::kernels
