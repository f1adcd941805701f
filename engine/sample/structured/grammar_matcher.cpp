#include "engine/sample/structured/grammar_matcher.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "engine/text/tokenizer.h"

namespace pagedchat::structured {

namespace {
constexpr std::size_t kMaxCachedMaskBytes = std::size_t(16) << 20;
constexpr std::size_t kMaxTransitions = std::size_t(1) << 21;
}  // namespace

TokenTrie::TokenTrie(const Tokenizer& tokenizer, int vocab, std::vector<int> eos_ids)
    : eos_ids_(std::move(eos_ids)), vocab_(vocab) {
  const int n = std::min(vocab, tokenizer.vocab_size());
  bytes_.resize(std::size_t(vocab));
  std::vector<int32_t> ids;
  for (int id = 0; id < n; ++id) {
    if (tokenizer.is_control(id)) continue;
    std::string b = tokenizer.token_text(id);
    if (b.empty()) continue;
    bytes_[std::size_t(id)] = std::move(b);
    ids.push_back(id);
  }
  // Sorted by bytes, a node's tokens and subtrees are contiguous: the trie is laid out level by
  // level from that order (breadth first), children of a node adjacent.
  std::sort(ids.begin(), ids.end(), [this](int32_t a, int32_t b) {
    return bytes_[std::size_t(a)] != bytes_[std::size_t(b)] ? bytes_[std::size_t(a)] < bytes_[std::size_t(b)] : a < b;
  });
  struct Pending {
    uint32_t node;
    std::size_t begin, end;  // ids[begin, end) share the node's prefix
    std::size_t depth;
  };
  nodes_.push_back({});
  std::vector<Pending> queue{{0, 0, ids.size(), 0}};
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const Pending p = queue[q];
    std::size_t i = p.begin;
    // Tokens that end at this node come first in the sorted order.
    const uint32_t first_token = uint32_t(token_ids_.size());
    while (i < p.end && bytes_[std::size_t(ids[i])].size() == p.depth) token_ids_.push_back(ids[i++]);
    nodes_[p.node].first_token = first_token;
    nodes_[p.node].num_tokens = uint32_t(token_ids_.size()) - first_token;
    nodes_[p.node].first_child = uint32_t(nodes_.size());
    while (i < p.end) {
      const uint8_t byte = uint8_t(bytes_[std::size_t(ids[i])][p.depth]);
      std::size_t j = i;
      while (j < p.end && uint8_t(bytes_[std::size_t(ids[j])][p.depth]) == byte) ++j;
      Node child;
      child.byte = byte;
      nodes_.push_back(child);
      queue.push_back({uint32_t(nodes_.size() - 1), i, j, p.depth + 1});
      i = j;
    }
    nodes_[p.node].num_children = uint32_t(nodes_.size()) - nodes_[p.node].first_child;
  }
}

bool TokenTrie::is_eos(int id) const { return std::find(eos_ids_.begin(), eos_ids_.end(), id) != eos_ids_.end(); }

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                               int max_depth)
    : grammar_(std::move(grammar)), trie_(std::move(trie)), max_depth_(max_depth) {
  std::vector<Config> start{{grammar_->rule_start.at(std::size_t(grammar_->root)), -1}};
  current_ = close_and_intern(start);
  if (current_ == kDead) throw std::invalid_argument("structured output: the grammar matches nothing");
}

int32_t GrammarMatcher::push_frame(int32_t ret, int32_t parent) {
  const uint64_t key = (uint64_t(uint32_t(ret)) << 32) | uint32_t(parent);
  const auto it = frame_ids_.find(key);
  if (it != frame_ids_.end()) return it->second;
  const int32_t depth = parent < 0 ? 1 : frames_[std::size_t(parent)].depth + 1;
  frames_.push_back({ret, parent, depth});
  const int32_t id = int32_t(frames_.size() - 1);
  frame_ids_.emplace(key, id);
  return id;
}

int32_t GrammarMatcher::close_and_intern(std::vector<Config>& configs) {
  const Grammar& g = *grammar_;
  work_.assign(configs.begin(), configs.end());
  kept_.clear();
  std::vector<Config>& seen = configs;  // reused as the visited list
  seen.clear();
  auto visit = [&seen, this](Config c) {
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) return;
    seen.push_back(c);
    work_.push_back(c);
  };
  std::vector<Config> start;
  start.swap(work_);
  for (const Config& c : start) visit(c);
  while (!work_.empty()) {
    const Config c = work_.back();
    work_.pop_back();
    const Grammar::State& st = g.states[std::size_t(c.state)];
    bool reads = false;
    for (int32_t t : st.eps) visit({t, c.frame});
    for (const Grammar::Edge& e : st.edges) {
      if (e.call < 0) {
        reads = true;
        continue;
      }
      if (c.frame >= 0 && frames_[std::size_t(c.frame)].depth >= max_depth_) continue;
      visit({g.rule_start[std::size_t(e.call)], push_frame(e.to, c.frame)});
    }
    if (st.final) {
      if (c.frame >= 0) {
        const Frame f = frames_[std::size_t(c.frame)];
        visit({f.ret, f.parent});
      } else {
        reads = true;  // kept: the grammar may end here
      }
    }
    if (reads) kept_.push_back(c);
  }
  if (kept_.empty()) return kDead;
  std::sort(kept_.begin(), kept_.end(), [](const Config& a, const Config& b) {
    return a.state != b.state ? a.state < b.state : a.frame < b.frame;
  });
  std::string key(kept_.size() * sizeof(Config), '\0');
  std::memcpy(key.data(), kept_.data(), key.size());
  const auto it = set_ids_.find(key);
  if (it != set_ids_.end()) return it->second;
  sets_.push_back(kept_);
  const int32_t id = int32_t(sets_.size() - 1);
  set_ids_.emplace(std::move(key), id);
  return id;
}

int32_t GrammarMatcher::step(int32_t set, uint8_t b) {
  const uint64_t key = (uint64_t(uint32_t(set)) << 8) | b;
  const auto it = transitions_.find(key);
  if (it != transitions_.end()) return it->second;
  std::vector<Config> next;
  for (const Config& c : sets_[std::size_t(set)])
    for (const Grammar::Edge& e : grammar_->states[std::size_t(c.state)].edges)
      if (e.call < 0 && e.lo <= b && b <= e.hi) next.push_back({e.to, c.frame});
  const int32_t result = next.empty() ? kDead : close_and_intern(next);
  transitions_.emplace(key, result);
  return result;
}

bool GrammarMatcher::set_accepts(int32_t set) const {
  for (const Config& c : sets_[std::size_t(set)])
    if (c.frame < 0 && grammar_->states[std::size_t(c.state)].final) return true;
  return false;
}

bool GrammarMatcher::can_terminate() const { return !ended_ && set_accepts(current_); }

bool GrammarMatcher::is_terminated() const {
  if (ended_) return true;
  if (!set_accepts(current_)) return false;
  for (const Config& c : sets_[std::size_t(current_)])
    for (const Grammar::Edge& e : grammar_->states[std::size_t(c.state)].edges)
      if (e.call < 0) return false;
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  if (ended_) return bytes.empty();
  int32_t s = current_;
  for (unsigned char b : bytes) {
    s = step(s, b);
    if (s == kDead) return false;
  }
  current_ = s;
  return true;
}

bool GrammarMatcher::accept_token(int id) {
  if (id < 0 || id >= trie_->vocab()) return false;
  if (trie_->is_eos(id)) {
    if (!can_terminate()) return false;
    ended_ = true;
    return true;
  }
  const std::string& b = trie_->bytes_of(id);
  return !b.empty() && accept_bytes(b);
}

void GrammarMatcher::clear_caches_if_large() {
  const std::size_t mask_bytes = std::size_t(trie_->mask_words()) * sizeof(uint64_t);
  if (mask_cache_.size() * mask_bytes > kMaxCachedMaskBytes) mask_cache_.clear();
  if (transitions_.size() > kMaxTransitions) transitions_.clear();
}

void GrammarMatcher::fill_next_token_bitmask(uint64_t* mask) {
  const int words = trie_->mask_words();
  if (ended_) {
    std::fill(mask, mask + words, 0);
    return;
  }
  if (const auto it = mask_cache_.find(current_); it != mask_cache_.end()) {
    std::copy(it->second.begin(), it->second.end(), mask);
    return;
  }
  clear_caches_if_large();
  std::vector<uint64_t> bits(std::size_t(words), 0);
  const auto& nodes = trie_->nodes();
  const auto& ids = trie_->token_ids();
  // Depth first over the trie, carrying the set each node's bytes lead to; a dead set prunes
  // the subtree.
  struct Item {
    uint32_t node;
    int32_t set;
  };
  std::vector<Item> stack{{0, current_}};
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const TokenTrie::Node& n = nodes[it.node];
    for (uint32_t c = n.first_child; c < n.first_child + n.num_children; ++c) {
      const int32_t s = step(it.set, nodes[c].byte);
      if (s == kDead) continue;
      const TokenTrie::Node& child = nodes[c];
      for (uint32_t t = child.first_token; t < child.first_token + child.num_tokens; ++t)
        bits[std::size_t(ids[t]) >> 6] |= uint64_t(1) << (ids[t] & 63);
      if (child.num_children > 0) stack.push_back({c, s});
    }
  }
  if (set_accepts(current_))
    for (int id : trie_->eos_ids())
      if (id >= 0 && id < trie_->vocab()) bits[std::size_t(id) >> 6] |= uint64_t(1) << (id & 63);
  std::copy(bits.begin(), bits.end(), mask);
  mask_cache_.emplace(current_, std::move(bits));
}

}  // namespace pagedchat::structured
