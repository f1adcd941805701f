#include "engine/model/rope_frequencies.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace pagedchat {

std::vector<double> llama3_rope_divisors(int head_dim, double theta, const RopeScaling& s) {
  const double low_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
  const double high_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
  std::vector<double> d(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i) {
    const double inv = std::pow(theta, -double(2 * i) / double(head_dim));
    const double wavelen = 2 * std::numbers::pi / inv;
    if (wavelen < high_wavelen) {
      d[i] = 1.0;
    } else if (wavelen > low_wavelen) {
      d[i] = s.factor;
    } else {
      const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      d[i] = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
  }
  return d;
}

std::vector<double> yarn_inv_freq_factors(int dims, double theta, const RopeScaling& s) {
  // The pair index at which a pair turns `rotations` times over the original context.
  auto corr_dim = [&](double rotations) {
    return dims * std::log(s.original_max_position_embeddings / (rotations * 2 * std::numbers::pi)) /
           (2 * std::log(theta));
  };
  double low = corr_dim(s.beta_fast), high = corr_dim(s.beta_slow);
  if (s.yarn_truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(0.0, low);
  high = std::min(double(dims - 1), high);
  std::vector<double> m(std::size_t(dims / 2));
  for (int i = 0; i < dims / 2; ++i) {
    const double y = (i - low) / std::max(0.001, high - low);
    const double extrapolate = 1.0 - std::min(1.0, std::max(0.0, y));  // 1: the original frequency
    m[std::size_t(i)] = (1.0 - extrapolate) / s.factor + extrapolate;
  }
  return m;
}

double yarn_mscale(double factor) { return factor <= 1.0 ? 1.0 : 1.0 + 0.1 * std::log(factor); }

std::vector<double> rope_inv_freq(const ModelConfig& c) { return rope_inv_freq(c, c.rope_theta, true); }

std::vector<double> rope_inv_freq(const ModelConfig& c, double theta, bool scaled, int dims, int head_dim) {
  if (dims == 0) dims = c.rotary_dims();
  if (head_dim == 0) head_dim = c.head_dim;
  if (dims <= 0 || dims % 2 != 0 || dims > head_dim)
    throw std::invalid_argument("RoPE needs a positive, even number of rotated dims up to head_dim " +
                                std::to_string(head_dim) + ", not " + std::to_string(dims));
  if (!(theta > 0) || !std::isfinite(theta))
    throw std::invalid_argument("RoPE base " + std::to_string(theta) + " is not a positive number");
  const int half = dims / 2;
  std::vector<double> f(half);
  for (int i = 0; i < half; ++i) f[i] = std::pow(theta, -double(2 * i) / double(dims));
  if (!scaled) return f;
  switch (c.rope_scaling.type) {
    case RopeScalingType::kNone:
      break;
    case RopeScalingType::kLinear:
      for (double& x : f) x /= c.rope_scaling.factor;
      break;
    case RopeScalingType::kYarn: {
      const std::vector<double> m = yarn_inv_freq_factors(dims, theta, c.rope_scaling);
      for (int i = 0; i < half; ++i) f[i] *= m[i];
      break;
    }
    case RopeScalingType::kLlama3: {
      const std::vector<double> d = llama3_rope_divisors(dims, theta, c.rope_scaling);
      for (int i = 0; i < half; ++i) f[i] /= d[i];
      break;
    }
  }
  if (!c.rope_freq_factors.empty()) {
    if (int(c.rope_freq_factors.size()) != half)
      throw std::invalid_argument("rope_freq_factors has " + std::to_string(c.rope_freq_factors.size()) +
                                  " entries, expected rotated dims / 2 = " + std::to_string(half));
    for (int i = 0; i < half; ++i) {
      const double d = c.rope_freq_factors[i];
      if (!(d > 0) || !std::isfinite(d))
        throw std::invalid_argument("rope_freq_factors[" + std::to_string(i) + "] is " + std::to_string(d) +
                                    ", not a positive number");
      f[i] /= d;
    }
  }
  return f;
}

}  // namespace pagedchat
