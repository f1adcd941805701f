// The Tokenizer base class: added-token splitting and the encode/decode entry points.
//
// Matching: at each position the longest added token that is allowed there wins (HF tokenizers'
// AddedVocabulary matches leftmost-longest with aho-corasick; llama.cpp's tokenizer_st_partition
// tries tokens longest first — the two agree unless tokens overlap in the text). lstrip / rstrip
// swallow the Unicode whitespace next to the token (HF: the match is extended over it;
// transformers.js trims the neighbouring sections). single_word: no word character (alphanumeric
// or '_') right before or after. Tokens marked `normalized` are matched in each segment's
// normalized text, the others in the raw text (HF: non-normalized tokens are split off first,
// then the rest is normalized and split on the normalized ones).
#include "engine/text/tokenizer.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "engine/text/utf8.h"

namespace pagedchat {

// A byte trie over added-token contents.
struct detail::AddedTokenTrie {
  struct Node {
    std::vector<std::pair<unsigned char, int>> next;  // sorted by byte
    int token = -1;                                   // index into added_, when a content ends here
  };
  std::vector<Node> nodes{1};
  std::array<bool, 256> first{};

  void add(const std::string& s, int index) {
    int n = 0;
    for (unsigned char c : s) {
      auto& nx = nodes[n].next;
      auto it = std::lower_bound(nx.begin(), nx.end(), c, [](const auto& p, unsigned char b) { return p.first < b; });
      if (it != nx.end() && it->first == c) {
        n = it->second;
      } else {
        const int child = int(nodes.size());
        nx.insert(it, {c, child});
        nodes.emplace_back();
        n = child;
      }
    }
    if (nodes[n].token < 0) nodes[n].token = index;  // the first token with this content wins
    first[static_cast<unsigned char>(s[0])] = true;
  }
  int child(int n, unsigned char c) const {
    const auto& nx = nodes[n].next;
    auto it = std::lower_bound(nx.begin(), nx.end(), c, [](const auto& p, unsigned char b) { return p.first < b; });
    return it != nx.end() && it->first == c ? it->second : -1;
  }
};

namespace {

char32_t char_before(std::string_view s, std::size_t pos, std::size_t* start = nullptr) {
  std::size_t i = pos;
  while (i > 0) {
    --i;
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) break;
  }
  if (start) *start = i;
  const std::size_t n = utf8::char_len(s, i);
  return n ? utf8::decode(s, i, n) : 0xFFFD;
}
char32_t char_at(std::string_view s, std::size_t pos, std::size_t* len = nullptr) {
  const std::size_t n = utf8::char_len(s, pos);
  if (len) *len = n ? n : 1;
  return n ? utf8::decode(s, pos, n) : 0xFFFD;
}
bool is_space(char32_t c) { return u_isUWhiteSpace(UChar32(c)); }
bool is_word(char32_t c) { return c == '_' || u_isalnum(UChar32(c)); }

}  // namespace

template <typename Allowed, typename OnSegment, typename OnToken>
// Splits `text` on the tokens of `m`: seg(begin, end) for the text between matches, tok(index)
// for each match; a match [b, e) of token t counts when allowed(t, b, e).
void split_on_impl(const detail::AddedTokenTrie& m, const std::vector<AddedToken>& added, std::string_view text,
                   Allowed allowed, OnSegment seg, OnToken tok) {
  std::size_t pos = 0, seg_start = 0;
  const std::size_t n = text.size();
  while (pos < n) {
    if (!m.first[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    int best = -1;
    std::size_t best_end = 0;
    int node = 0;
    for (std::size_t j = pos; j < n; ++j) {
      node = m.child(node, static_cast<unsigned char>(text[j]));
      if (node < 0) break;
      const int t = m.nodes[node].token;
      if (t < 0) continue;
      const AddedToken& a = added[t];
      if (!allowed(a, pos, j + 1)) continue;
      if (a.single_word &&
          ((pos > 0 && is_word(char_before(text, pos))) || (j + 1 < n && is_word(char_at(text, j + 1)))))
        continue;
      best = t;
      best_end = j + 1;
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    std::size_t seg_end = pos;
    if (added[best].lstrip)
      while (seg_end > seg_start) {
        std::size_t start = 0;
        if (!is_space(char_before(text, seg_end, &start))) break;
        seg_end = start;
      }
    if (seg_end > seg_start) seg(seg_start, seg_end);
    tok(best);
    pos = best_end;
    if (added[best].rstrip)
      while (pos < n) {
        std::size_t len = 1;
        if (!is_space(char_at(text, pos, &len))) break;
        pos += len;
      }
    seg_start = pos;
  }
  if (n > seg_start) seg(seg_start, n);
}

Tokenizer::Tokenizer(std::string path) : path_(std::move(path)) {}
Tokenizer::~Tokenizer() = default;

void Tokenizer::set_added_tokens(std::vector<AddedToken> tokens) {
  added_.clear();
  for (auto& t : tokens)
    if (!t.content.empty() && t.id >= 0) added_.push_back(std::move(t));
  // In id order: of two tokens with the same content the lower id wins.
  std::stable_sort(added_.begin(), added_.end(), [](const AddedToken& a, const AddedToken& b) { return a.id < b.id; });
  auto raw = std::make_shared<detail::AddedTokenTrie>(), norm = std::make_shared<detail::AddedTokenTrie>();
  bool any_raw = false, any_norm = false;
  int max_id = -1;
  for (std::size_t i = 0; i < added_.size(); ++i) {
    (added_[i].normalized ? norm : raw)->add(added_[i].content, int(i));
    (added_[i].normalized ? any_norm : any_raw) = true;
    max_id = std::max(max_id, added_[i].id);
  }
  raw_matcher_ = any_raw ? raw : nullptr;
  normalized_matcher_ = any_norm ? norm : nullptr;
  added_index_.assign(std::size_t(max_id + 1), -1);
  for (std::size_t i = 0; i < added_.size(); ++i)
    if (added_index_[added_[i].id] < 0) added_index_[added_[i].id] = int(i);
}

const AddedToken* Tokenizer::added_token(int id) const {
  if (id < 0 || std::size_t(id) >= added_index_.size() || added_index_[id] < 0) return nullptr;
  return &added_[added_index_[id]];
}

void Tokenizer::encode_segment(std::string_view raw, bool at_start, bool allow_special, std::vector<int>& out) const {
  const std::string norm = normalize(raw);
  if (norm.empty()) return;
  if (!normalized_matcher_) {
    encode_normalized(norm, Segment{at_start}, out);
    return;
  }
  split_on_impl(
      *normalized_matcher_, added_, norm,
      [&](const AddedToken& a, std::size_t, std::size_t) { return !a.special || allow_special; },
      [&](std::size_t b, std::size_t e) {
        encode_normalized(std::string_view(norm).substr(b, e - b), Segment{at_start && b == 0}, out);
      },
      [&](int t) { out.push_back(added_[t].id); });
}

template <typename Allow>
void Tokenizer::encode_split(std::string_view text, Allow allow, std::vector<int>& out) const {
  if (!raw_matcher_) {
    if (!text.empty()) encode_segment(text, true, allow(std::size_t(0), text.size()), out);
    return;
  }
  split_on_impl(
      *raw_matcher_, added_, text,
      [&](const AddedToken& a, std::size_t b, std::size_t e) { return !a.special || allow(b, e); },
      [&](std::size_t b, std::size_t e) { encode_segment(text.substr(b, e - b), b == 0, allow(b, e), out); },
      [&](int t) { out.push_back(added_[t].id); });
}

std::vector<int> Tokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int> ids;
  if (add_bos && bos_id_ >= 0) ids.push_back(bos_id_);
  const auto never = [](std::size_t, std::size_t) { return false; };
  if (utf8::is_valid(text))
    encode_split(text, never, ids);
  else
    encode_split(utf8::repair(text), never, ids);
  return ids;
}

std::vector<int> Tokenizer::encode_with_special_tokens(std::string_view text, bool add_bos) const {
  std::vector<int> ids;
  if (add_bos && bos_id_ >= 0) ids.push_back(bos_id_);
  const auto always = [](std::size_t, std::size_t) { return true; };
  if (utf8::is_valid(text))
    encode_split(text, always, ids);
  else
    encode_split(utf8::repair(text), always, ids);
  return ids;
}

std::vector<int> Tokenizer::encode_templated(const TemplatedText& t) const {
  // Invalid UTF-8 is repaired range by range so that the data ranges still line up.
  TemplatedText fixed;
  const TemplatedText* use = &t;
  if (!utf8::is_valid(t.text)) {
    std::size_t pos = 0;
    for (const ByteRange& r : t.data) {
      const std::size_t b = std::min(r.begin, t.text.size()), e = std::min(r.end, t.text.size());
      if (b > pos) fixed.append(utf8::repair(std::string_view(t.text).substr(pos, b - pos)), false);
      if (e > b) fixed.append(utf8::repair(std::string_view(t.text).substr(b, e - b)), true);
      pos = std::max(pos, e);
    }
    if (pos < t.text.size()) fixed.append(utf8::repair(std::string_view(t.text).substr(pos)), false);
    use = &fixed;
  }
  std::vector<int> ids;
  encode_split(
      use->text, [&](std::size_t b, std::size_t e) { return use->is_template_text(b, e); }, ids);
  return ids;
}

std::string Tokenizer::decode_bytes(const std::vector<int>& ids, bool with_special) const {
  const int n = vocab_size();
  for (int id : ids)
    if (id < 0 || id >= n)
      throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(n) +
                              " tokens of '" + path_ + "'");
  return decode_bytes_impl(ids, with_special);
}

std::string Tokenizer::decode(const std::vector<int>& ids, bool with_special) const {
  return utf8::repair(decode_bytes(ids, with_special));
}

}  // namespace pagedchat
