// Per-element arithmetic of the normalisation and activation kernels, shared by the CPU tests and
// the CUDA kernels (kernels/host_device.h). Formulas: RMSNorm (Zhang & Sennrich 2019) as llama2.c's
// run.c computes it; SiLU (Elfwing et al. 2018) as vLLM's csrc/activation_kernels.cu.
#pragma once

#include <cmath>

#include "kernels/host_device.h"

namespace pagedchat::kernels {

/// The RMSNorm factor 1 / sqrt(sum_sq / dim + eps) of a row whose squares sum to `sum_sq`; the
/// output is weight[i] * (factor * x[i]) (rms_norm_value).
PC_HOST_DEVICE inline float rms_inv_scale(float sum_sq, int dim, float eps) {
  return 1.0f / sqrtf(sum_sq / float(dim) + eps);
}

/// One output element of RMSNorm: weight * (scale * x), in that order (the CPU kernels' order).
PC_HOST_DEVICE inline float rms_norm_value(float x, float scale, float weight) { return weight * (scale * x); }

/// SwiGLU of one element: silu(gate) * up with silu(g) = g * (1 / (1 + exp(-g))).
PC_HOST_DEVICE inline float silu_and_mul_value(float gate, float up) {
  return gate * (1.0f / (1.0f + expf(-gate))) * up;
}

}  // namespace pagedchat::kernels
