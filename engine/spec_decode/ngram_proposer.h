// N-gram prompt lookup: the draft proposer of "prompt lookup decoding" (A. Saxena, 2023) and of
// vLLM's NgramProposer (method "ngram"). Chat answers often repeat text of the conversation
// (code being edited, quoted passages, names, lists): the tokens that followed the context's last
// n tokens where they occurred before are a cheap guess of what comes next.
#pragma once

#include <span>
#include <vector>

namespace pagedchat {

/// Proposes up to k tokens for `context` (a request's prompt and output ids so far): for n from
/// max_n down to min_n, the latest earlier occurrence of the context's last n tokens whose
/// continuation holds k tokens (else the occurrence with the longest continuation, latest first),
/// and the tokens that followed it. The first n with a match wins (a longer match predicts better).
/// Writes the draft to `out` (cleared first; empty when nothing matches) and returns its length.
/// O(len(context) * max_n) per call; allocates only when `out` grows. Requires 1 <= min_n <= max_n.
int propose_ngram(std::span<const int> context, int k, int min_n, int max_n, std::vector<int>& out);

}  // namespace pagedchat
