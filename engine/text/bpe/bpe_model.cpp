#include "engine/text/bpe/bpe_model.h"

#include <cstdio>
#include <mutex>
#include <queue>
#include <stdexcept>

#include "engine/text/utf8.h"

namespace pagedchat::bpe {

namespace {
constexpr std::size_t kCacheMaxWordBytes = 256;  // longer words are rarely repeated
constexpr std::size_t kCacheMaxEntries = 200000;

uint64_t pair_key(int left, int right) { return (uint64_t(uint32_t(left)) << 32) | uint32_t(right); }

std::string byte_token(unsigned b) {  // HF: format!("<{:#04X}>", b)
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}
}  // namespace

BpeModel::BpeModel(std::vector<std::string> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeModelOptions options, const std::string& where)
    : vocab_(std::move(vocab)), opts_(std::move(options)) {
  ids_.reserve(vocab_.size());
  for (std::size_t i = 0; i < vocab_.size(); ++i)
    if (!vocab_[i].empty()) ids_.emplace(vocab_[i], int(i));
  merges_.reserve(merges.size());
  const std::string& prefix = opts_.continuing_subword_prefix;
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const std::string& a = merges[r].first;
    const std::string& b = merges[r].second;
    auto name = [&] { return "merge " + std::to_string(r) + " (\"" + a + "\" \"" + b + "\")"; };
    const auto left = token_id(a), right = token_id(b);
    if (!left) throw std::runtime_error(where + ": " + name() + " names \"" + a + "\", which is not in the vocabulary");
    if (!right)
      throw std::runtime_error(where + ": " + name() + " names \"" + b + "\", which is not in the vocabulary");
    const std::string joined =
        a + (!prefix.empty() && b.compare(0, prefix.size(), prefix) == 0 ? b.substr(prefix.size()) : b);
    const auto merged = token_id(joined);
    if (!merged)
      throw std::runtime_error(where + ": " + name() + " makes \"" + joined + "\", which is not in the vocabulary");
    merges_.emplace(pair_key(*left, *right), (uint64_t(r) << 32) | uint32_t(*merged));  // the first rank wins
  }
  if (opts_.byte_fallback) {
    byte_ids_.assign(256, -1);
    for (unsigned b = 0; b < 256; ++b)
      if (const auto id = token_id(byte_token(b))) byte_ids_[b] = *id;
  }
}

std::optional<int> BpeModel::token_id(std::string_view token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string& BpeModel::token(int id) const {
  static const std::string empty;
  return id >= 0 && std::size_t(id) < vocab_.size() ? vocab_[id] : empty;
}

void BpeModel::encode_word(std::string_view word, std::vector<int>& out) const {
  const bool cacheable = word.size() <= kCacheMaxWordBytes;
  if (cacheable) {
    std::shared_lock lock(cache_mutex_);
    const auto it = cache_.find(word);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const std::size_t first = out.size();
  if (opts_.ignore_merges ||
      (opts_.whole_newline_runs && !word.empty() && word.find_first_not_of('\n') == std::string_view::npos)) {
    if (const auto id = token_id(word)) out.push_back(*id);
  }
  if (out.size() == first) merge_word(word, out);
  if (cacheable) {
    std::unique_lock lock(cache_mutex_);
    if (cache_.size() >= kCacheMaxEntries) cache_.clear();
    cache_.emplace(std::string(word), std::vector<int>(out.begin() + std::ptrdiff_t(first), out.end()));
  }
}

void BpeModel::merge_word(std::string_view word, std::vector<int>& out) const {
  struct Symbol {
    int id;
    int prev;
    int next;
    bool alive;
  };
  thread_local std::vector<Symbol> syms;
  syms.clear();
  const std::string& prefix = opts_.continuing_subword_prefix;
  const std::string& suffix = opts_.end_of_word_suffix;
  std::string key;
  bool last_unk = false;
  auto push = [&](int id) { syms.push_back({id, int(syms.size()) - 1, int(syms.size()) + 1, true}); };
  for (std::size_t i = 0; i < word.size();) {
    std::size_t n = utf8::char_len(word, i);
    if (n == 0) n = 1;
    const bool is_last = i + n >= word.size();
    std::optional<int> id;
    if (prefix.empty() && suffix.empty()) {
      id = token_id(word.substr(i, n));
    } else {
      key.clear();
      if (i > 0) key += prefix;
      key.append(word.substr(i, n));
      if (is_last) key += suffix;
      id = token_id(key);
    }
    if (id) {
      push(*id);
      last_unk = false;
    } else {
      bool done = false;
      if (opts_.byte_fallback) {
        bool all = true;
        for (std::size_t k = 0; k < n; ++k) all = all && byte_ids_[static_cast<unsigned char>(word[i + k])] >= 0;
        if (all) {
          for (std::size_t k = 0; k < n; ++k) push(byte_ids_[static_cast<unsigned char>(word[i + k])]);
          done = true;
          last_unk = false;
        }
      }
      if (!done && opts_.unk_id >= 0) {
        if (!(opts_.fuse_unk && last_unk)) push(opts_.unk_id);
        last_unk = true;
      }
    }
    i += n;
  }
  if (syms.empty()) return;
  syms.back().next = -1;

  struct Candidate {
    uint32_t rank;
    int pos;
    int left;
    int right;
    int merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  thread_local std::vector<Candidate> heap_storage;
  heap_storage.clear();
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue(std::greater<>(),
                                                                               std::move(heap_storage));
  auto consider = [&](int pos) {
    if (pos < 0) return;
    const int nx = syms[pos].next;
    if (nx < 0) return;
    const auto it = merges_.find(pair_key(syms[pos].id, syms[nx].id));
    if (it == merges_.end()) return;
    queue.push({uint32_t(it->second >> 32), pos, syms[pos].id, syms[nx].id, int(uint32_t(it->second))});
  };
  for (int i = 0; i + 1 < int(syms.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = syms[c.pos];
    if (!l.alive || l.id != c.left || l.next < 0) continue;
    Symbol& r = syms[l.next];
    if (r.id != c.right) continue;
    l.id = c.merged;
    r.alive = false;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = c.pos;
    consider(l.prev);
    consider(c.pos);
  }
  for (const Symbol& s : syms)
    if (s.alive) out.push_back(s.id);
}

}  // namespace pagedchat::bpe
