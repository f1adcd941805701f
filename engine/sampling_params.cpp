#include "engine/sampling_params.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace pagedchat {

void SamplingParams::validate() const {
  auto fail = [](const std::string& msg) { throw std::invalid_argument("invalid sampling params: " + msg); };
  if (!std::isfinite(temperature) || temperature < 0.0f)
    fail("temperature must be >= 0 (0 = greedy), got " + std::to_string(temperature));
  if (!std::isfinite(top_p) || top_p <= 0.0f || top_p > 1.0f) fail("top_p must be in (0, 1], got " + std::to_string(top_p));
  if (top_k < -1) fail("top_k must be -1 or 0 (off) or >= 1, got " + std::to_string(top_k));
  if (max_tokens < 1) fail("max_tokens must be >= 1, got " + std::to_string(max_tokens));
}

}  // namespace pagedchat
