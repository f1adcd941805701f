// The RoPE inverse frequencies of a model, with its frequency scaling folded in, in float64.
// Formulas: transformers' modeling_rope_utils.py (_compute_default_rope_parameters,
// _compute_linear_scaling_rope_parameters, _compute_llama3_parameters, _compute_yarn_parameters)
// and llama.cpp's ggml_rope_yarn_corr_dims / rope_yarn, and
// ggml_rope_ext freq_factors (GGUF rope_freqs.weight divides each frequency); the divisors
// llama.cpp's convert_hf_to_gguf.py writes for llama3 scaling (LlamaModel.generate_extra_tensors).
#pragma once

#include <vector>

#include "engine/config.h"

namespace pagedchat {

/// inv_freq[i] for i < d / 2 (d = c.rotary_dims(): head_dim, or the partial rotary width), in
/// radians per position, for the RoPE base `theta` (c.rope_theta in the first overload; a layer's
/// LayerSpec::rope_theta where families differ per layer):
///   theta^(-2i / d)                            (RoFormer; transformers' default rope)
///   / factor                                   (rope_scaling linear)
///   llama3 rule of _compute_llama3_parameters  (rope_scaling llama3: wavelength 2*pi/inv_freq
///       below original_max_position_embeddings / high_freq_factor: unchanged; above
///       original_max_position_embeddings / low_freq_factor: / factor; between: interpolated,
///       smooth = (original / wavelength - low) / (high - low), inv_freq * ((1 - smooth) / factor + smooth))
///   * ((1 - e_i) / factor + e_i)               (rope_scaling yarn: e_i = yarn_inv_freq_factors' ramp)
///   / rope_freq_factors[i]                     (GGUF rope_freqs.weight, when present)
/// Computed in float64 (transformers and llama.cpp use float32; the difference is below 1e-7
/// relative). Throws std::invalid_argument for rotated dims that are not positive, even and at
/// most head_dim, a base that is not positive, or rope_freq_factors of the wrong size or with a
/// non-positive / non-finite entry.
std::vector<double> rope_inv_freq(const ModelConfig& c);
/// `scaled` false: the plain frequencies of `theta` (a layer with LayerSpec::rope_scaled off).
/// `dims` / `head_dim` != 0: a layer's own rotated dims and head size (LayerSpec::rotary_dim,
/// head_dim: Gemma 4's local layers) instead of the model's; rope_freq_factors must then have
/// dims / 2 entries when `scaled`.
std::vector<double> rope_inv_freq(const ModelConfig& c, double theta, bool scaled, int dims = 0, int head_dim = 0);

/// The llama3 scaling as per-pair divisors of theta^(-2i / head_dim) (1, factor, or
/// 1 / ((1 - smooth) / factor + smooth)): what convert_hf_to_gguf.py stores as rope_freqs.weight.
std::vector<double> llama3_rope_divisors(int head_dim, double theta, const RopeScaling& s);

/// YaRN's per-pair multipliers of theta^(-2i / dims) (ggml's rope_yarn with ext_factor 1, which
/// transformers' _compute_yarn_parameters matches): the pair index where a pair turns r times over
/// original_max_position_embeddings is corr(r) = dims * ln(orig / (2 pi r)) / (2 ln theta); low =
/// max(0, floor(corr(beta_fast))), high = min(dims - 1, ceil(corr(beta_slow))) (no rounding when
/// yarn_truncate is off); e_i = 1 - clamp((i - low) / max(0.001, high - low), 0, 1); the multiplier
/// is (1 - e_i) / factor + e_i: 1 for fast pairs, 1 / factor for slow ones.
std::vector<double> yarn_inv_freq_factors(int dims, double theta, const RopeScaling& s);
/// YaRN's magnitude correction of cos and sin: 1 + 0.1 ln(factor) (1 for factor <= 1); q·k
/// scales by its square (Peng et al. 2023, eq. 22; ggml's rope_yarn mscale).
double yarn_mscale(double factor);

}  // namespace pagedchat
