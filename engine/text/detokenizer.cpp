// IncrementalDetokenizer (see tokenizer.h). Each step decodes the last few ids with and without
// the new one; the difference is the new token's bytes in context (position-dependent decoders —
// sentencepiece's and Metaspace's leading space, a Strip decoder — then agree with the whole
// decode). Bytes wait in `pending_` until utf8::stable_prefix says they can be shown; the repair
// rule (one U+FFFD per maximal ill-formed subpart) is streaming-safe, so the deltas add up to the
// repaired whole.
#include <algorithm>

#include "engine/text/tokenizer.h"
#include "engine/text/utf8.h"

namespace pagedchat {

namespace {
constexpr std::size_t kContext = 4;            // ids of left context kept
constexpr std::size_t kMaxContextTokens = 64;  // kept longer only while the context decodes to nothing
}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, const std::vector<int>& prompt_ids)
    : tokenizer_(tokenizer) {
  const std::size_t keep = std::min(prompt_ids.size(), kContext + 1);
  context_.assign(prompt_ids.end() - std::ptrdiff_t(keep), prompt_ids.end());
}

std::string IncrementalDetokenizer::add_token(int id) {
  const std::string before = tokenizer_.decode_bytes(context_);
  context_.push_back(id);
  const std::string after = tokenizer_.decode_bytes(context_);
  // `after` extends `before` for every decoder we have; if one did not, the common prefix is
  // what was already shown.
  std::size_t common = 0;
  const std::size_t limit = std::min(before.size(), after.size());
  while (common < limit && before[common] == after[common]) ++common;
  pending_.append(after, common == before.size() ? before.size() : common, std::string::npos);
  // Trim the context, but never to ids that decode to nothing (control tokens only): the first
  // visible piece would lose its leading space as if it began the text.
  if (context_.size() > kContext) {
    const std::vector<int> tail(context_.end() - std::ptrdiff_t(kContext), context_.end());
    if (context_.size() > kMaxContextTokens || !tokenizer_.decode_bytes(tail).empty()) context_ = tail;
  }
  const std::size_t n = utf8::stable_prefix(pending_);
  if (n == 0) return {};
  std::string delta = utf8::repair(std::string_view(pending_).substr(0, n));
  pending_.erase(0, n);
  text_ += delta;
  return delta;
}

std::string IncrementalDetokenizer::flush() {
  std::string delta = utf8::repair(pending_);
  pending_.clear();
  text_ += delta;
  return delta;
}

}  // namespace pagedchat
