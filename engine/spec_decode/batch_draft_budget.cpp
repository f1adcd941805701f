#include "engine/spec_decode/batch_draft_budget.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace pagedchat {

void StepCostModel::observe(int num_tokens, double seconds) {
  if (num_tokens <= 0 || !(seconds >= 0) || !std::isfinite(seconds)) return;
  w_ = w_ * decay_ + 1;
  sx_ = sx_ * decay_ + num_tokens;
  sy_ = sy_ * decay_ + seconds;
  sxx_ = sxx_ * decay_ + double(num_tokens) * num_tokens;
  sxy_ = sxy_ * decay_ + double(num_tokens) * seconds;
  ++n_;
}

double StepCostModel::variance() const {
  if (w_ <= 0) return 0;
  const double mx = sx_ / w_;
  return std::max(0.0, sxx_ / w_ - mx * mx);
}

double StepCostModel::slope() const {
  const double var = variance();
  if (var < 1.0) return 0;
  const double mx = sx_ / w_, my = sy_ / w_;
  return (sxy_ / w_ - mx * my) / var;
}

double StepCostModel::intercept() const {
  if (w_ <= 0) return 0;
  return std::max(0.0, sy_ / w_ - slope() * (sx_ / w_));
}

bool StepCostModel::ready() const { return n_ >= kMinSteps && variance() >= 1.0 && slope() > 0; }

std::vector<int> batch_draft_budget(const std::vector<DraftCandidate>& candidates, int num_known_tokens,
                                    int num_sampling, double a, double b) {
  std::vector<int> keep(candidates.size(), 0);
  if (!(b > 0)) {
    for (std::size_t i = 0; i < candidates.size(); ++i) keep[i] = std::max(0, candidates[i].num_drafts);
    return keep;
  }
  // Every draft as (chance, position, candidate), best chance first; a request's later drafts
  // have no better chance than its earlier ones, so each request keeps a prefix of its drafts.
  std::vector<std::tuple<double, int, std::size_t>> drafts;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const double q = std::clamp(candidates[c].acceptance, 0.0, 1.0);
    double p = 1;
    for (int i = 1; i <= candidates[c].num_drafts; ++i) {
      p *= q;
      drafts.emplace_back(p, i, c);
    }
  }
  std::sort(drafts.begin(), drafts.end(), [](const auto& x, const auto& y) {
    if (std::get<0>(x) != std::get<0>(y)) return std::get<0>(x) > std::get<0>(y);
    return std::get<1>(x) < std::get<1>(y);
  });
  double tokens = std::max(0, num_known_tokens), expected = std::max(0, num_sampling);
  for (const auto& [p, i, c] : drafts) {
    if (p * (a + b * tokens) < b * expected) break;
    if (keep[c] != i - 1) continue;  // (equal chances: an earlier draft of c was not kept)
    keep[c] = i;
    tokens += 1;
    expected += p;
  }
  return keep;
}

}  // namespace pagedchat
