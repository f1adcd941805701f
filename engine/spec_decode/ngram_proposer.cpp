#include "engine/spec_decode/ngram_proposer.h"

#include <algorithm>

namespace pagedchat {

int propose_ngram(std::span<const int> context, int k, int min_n, int max_n, std::vector<int>& out) {
  out.clear();
  const int len = int(context.size());
  if (k <= 0 || min_n < 1 || len < min_n + 1) return 0;
  for (int n = std::min(max_n, len - 1); n >= min_n; --n) {
    const int* suffix = context.data() + (len - n);
    int best_start = -1, best_count = 0;
    // A match at p covers [p, p + n) with p + n < len (at least one token follows it), latest first.
    for (int p = len - n - 1; p >= 0; --p) {
      if (context[std::size_t(p) + std::size_t(n) - 1] != suffix[n - 1] || context[std::size_t(p)] != suffix[0])
        continue;
      if (!std::equal(suffix, suffix + n, context.data() + p)) continue;
      const int count = std::min(k, len - (p + n));
      if (count > best_count) {
        best_start = p + n;
        best_count = count;
        if (count == k) break;
      }
    }
    if (best_count > 0) {
      out.assign(context.begin() + best_start, context.begin() + best_start + best_count);
      return best_count;
    }
  }
  return 0;
}

}  // namespace pagedchat
