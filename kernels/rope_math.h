// Per-element rotary-embedding arithmetic, shared by the CPU kernels and the CUDA ones so
// both compute the same values (ARCHITECTURE.md: per-element math in small host/device helpers).
// Formulas: RoFormer (Su et al. 2021), eq. 34; pair layouts as in kernels/ops.h (RopeSpec).
#pragma once

#include <cmath>

#include "kernels/host_device.h"

namespace pagedchat::kernels {

/// The elements (*i0, *i1) of a head that pair `i` (< rotary_dim / 2) rotates: (2i, 2i+1)
/// interleaved, or (i, i + rotary_dim/2) with neox. rotary_dim: RopeSpec::rotary_dims() (the whole
/// head_dim unless the rotary is partial).
PC_HOST_DEVICE inline void rope_pair(int i, int rotary_dim, bool neox, int* i0, int* i1) {
  *i0 = neox ? i : 2 * i;
  *i1 = neox ? i + rotary_dim / 2 : 2 * i + 1;
}

/// The rotation angle of a pair at `pos` in radians, in float64: a float32 product would lose
/// ~pos * 6e-8 rad (6e-3 at position 100000), which grows with the context.
PC_HOST_DEVICE inline double rope_angle(int pos, double inv_freq) { return double(pos) * inv_freq; }

/// cos and sin of pair `i`'s angle at `pos`, computed in float64 and rounded once to float32 (the
/// CPU's RopeTable keeps the same values).
PC_HOST_DEVICE inline void rope_cos_sin(int pos, double inv_freq, float* c, float* s) {
  const double a = rope_angle(pos, inv_freq);
  *c = float(cos(a));
  *s = float(sin(a));
}

/// (x0, x1) rotated by the angle whose cosine and sine are (c, s), in float32.
PC_HOST_DEVICE inline void rope_rotate(float x0, float x1, float c, float s, float* y0, float* y1) {
  *y0 = x0 * c - x1 * s;
  *y1 = x0 * s + x1 * c;
}

}  // namespace pagedchat::kernels
