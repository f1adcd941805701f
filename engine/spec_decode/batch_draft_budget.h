// The batch-aware side of the draft budget: how many of the proposed drafts a step verifies when
// the batch, not the weights' memory traffic, sets its cost.
//
// A decode step of a few sequences reads every weight once; verifying a few more tokens in it is
// nearly free, which is what speculative decoding lives on. A batch of many sequences is
// compute-bound: every verified token costs about as much as a decoded one, and a draft that is
// rejected is time taken from every request of the batch. The engine fits the step time as
// a + b * tokens over recent steps (StepCostModel) and keeps, over the whole batch, the drafts
// whose chance of being accepted pays for the time they add (batch_draft_budget): the expected
// tokens per second of the step, (E + p) / (a + b (T + 1)) against E / (a + b T), grows with a
// draft accepted with probability p exactly when p (a + b T) >= b E.
#pragma once

#include <vector>

namespace pagedchat {

/// Step time as intercept + slope * scheduled tokens, fitted by exponentially weighted least
/// squares over the steps observed (each step's weight decays by `decay` per later step).
class StepCostModel {
 public:
  explicit StepCostModel(double decay = 0.95) : decay_(decay) {}

  /// One step that computed num_tokens tokens in `seconds` (wall time of the whole step).
  void observe(int num_tokens, double seconds);
  /// The fit can be trusted: at least kMinSteps steps, whose token counts spread (weighted
  /// variance >= 1 token^2), and a positive slope.
  bool ready() const;
  double intercept() const;  ///< seconds (a), >= 0 (a fit below 0 is noise); 0 before any step
  double slope() const;      ///< seconds per token (b); 0 before the counts spread
  int num_steps() const { return n_; }

  static constexpr int kMinSteps = 8;

 private:
  double variance() const;
  double decay_;
  double w_ = 0, sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0;  // weighted sums of 1, T, t, T^2, T t
  int n_ = 0;
};

/// One request's proposed drafts: `acceptance` is the estimated chance that a draft is accepted
/// given the one before it was (so the i-th draft, from 1, is accepted with acceptance^i).
struct DraftCandidate {
  double acceptance = 0;
  int num_drafts = 0;
};

/// The drafts to keep per candidate (same order) for a step of `num_known_tokens` other tokens
/// (decode tokens and prefill chunks) of which `num_sampling` requests each emit one, under step
/// cost `a` + `b` * tokens (seconds, seconds per token): drafts are taken in order of their chance
/// of acceptance while that chance p satisfies p (a + b T) >= b E (T: the step's tokens, E: its
/// expected emitted tokens so far). b <= 0 keeps every draft.
std::vector<int> batch_draft_budget(const std::vector<DraftCandidate>& candidates, int num_known_tokens,
                                    int num_sampling, double a, double b);

}  // namespace pagedchat
