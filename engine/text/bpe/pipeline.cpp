// split_by folds matches per behaviour as Hugging Face tokenizers' NormalizedString::split does
// (Apache-2.0; THIRD_PARTY_NOTICES).
#include "engine/text/bpe/pipeline.h"

#include <algorithm>

#include "engine/text/bpe/byte_level.h"
#include "engine/text/utf8.h"

namespace pagedchat::bpe {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

char32_t char_at(std::string_view s, std::size_t i, std::size_t& len) {
  len = utf8::char_len(s, i);
  if (len == 0) {
    len = 1;
    return 0xFFFD;
  }
  return utf8::decode(s, i, len);
}

// Each character for which pred() holds is one match (HF: a `Fn(char) -> bool` Pattern).
template <typename Pred>
Ranges char_matches(std::string_view s, Pred pred) {
  Ranges r;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = 0;
    const char32_t c = char_at(s, i, n);
    if (pred(c)) r.emplace_back(i, i + n);
    i += n;
  }
  return r;
}

std::string replace_all(std::string_view s, const Pattern& p, std::string_view content) {
  const Ranges m = p.find_all(s);
  if (m.empty()) return std::string(s);
  std::string out;
  std::size_t prev = 0;
  for (const auto& [b, e] : m) {
    out.append(s.substr(prev, b - prev));
    out.append(content);
    prev = e;
  }
  out.append(s.substr(prev));
  return out;
}

std::string_view trim(std::string_view s, bool left, bool right) {
  if (left)
    while (!s.empty()) {
      std::size_t n = 0;
      if (!is_whitespace(char_at(s, 0, n))) break;
      s.remove_prefix(n);
    }
  if (right)
    while (!s.empty()) {
      std::size_t i = s.size() - 1;
      while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
      std::size_t n = 0;
      if (!is_whitespace(char_at(s, i, n)) || i + n != s.size()) break;
      s.remove_suffix(n);
    }
  return s;
}

const Regex& gpt2_regex() {
  static const Regex r(kGpt2Pattern, "the GPT-2 pre-tokenizer expression");
  return r;
}

}  // namespace

Ranges Pattern::find_all(std::string_view s) const {
  Ranges r;
  if (regex) {
    regex->for_each_match(s, [&](std::size_t b, std::size_t e) { r.emplace_back(b, e); });
  } else if (!literal.empty()) {
    for (std::size_t at = s.find(literal); at != std::string_view::npos; at = s.find(literal, at + literal.size()))
      r.emplace_back(at, at + literal.size());
  }
  return r;
}

void split_by(std::string_view s, const Ranges& matches, SplitBehavior behavior, bool invert,
              std::vector<std::string>& out) {
  struct Part {
    std::size_t b, e;
    bool match;
  };
  std::vector<Part> parts;
  std::size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (prev != b) parts.push_back({prev, b, false});
    parts.push_back({b, e, true});
    prev = e;
  }
  if (prev != s.size()) parts.push_back({prev, s.size(), false});
  if (invert)
    for (Part& p : parts) p.match = !p.match;

  std::vector<Part> pieces;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      pieces = std::move(parts);
      break;
    case SplitBehavior::kRemoved:
      for (const Part& p : parts)
        if (!p.match) pieces.push_back(p);
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const Part& p : parts) {
        if (p.match && !previous_match && !pieces.empty())
          pieces.back().e = p.e;
        else
          pieces.push_back(p);
        previous_match = p.match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous_match = false;  // the part after, in text order
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->match && !previous_match && !pieces.empty())
          pieces.back().b = it->b;
        else
          pieces.push_back(*it);
        previous_match = it->match;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
    }
    case SplitBehavior::kContiguous: {
      bool previous_match = false, first = true;
      for (const Part& p : parts) {
        if (!first && p.match == previous_match)
          pieces.back().e = p.e;
        else
          pieces.push_back(p);
        previous_match = p.match;
        first = false;
      }
      break;
    }
  }
  for (const Part& p : pieces)
    if (p.e > p.b) out.emplace_back(s.substr(p.b, p.e - p.b));
}

std::string Normalizer::apply(std::string text) const {
  switch (type) {
    case Type::kNFC:
      return normalize(text, NormalForm::kNFC);
    case Type::kNFD:
      return normalize(text, NormalForm::kNFD);
    case Type::kNFKC:
      return normalize(text, NormalForm::kNFKC);
    case Type::kNFKD:
      return normalize(text, NormalForm::kNFKD);
    case Type::kLowercase:
      return lowercase(text);
    case Type::kStripAccents:
      return strip_accents(text);
    case Type::kReplace:
      return replace_all(text, pattern, content);
    case Type::kPrepend:
      return text.empty() ? text : content + text;
    case Type::kStrip:
      return std::string(trim(text, left, right));
    case Type::kSequence:
      for (const Normalizer& n : children) text = n.apply(std::move(text));
      return text;
  }
  return text;
}

void PreTokenizer::apply(std::vector<std::string>& pieces, bool at_start) const {
  if (type == Type::kSequence) {
    for (const PreTokenizer& p : children) p.apply(pieces, at_start);
    return;
  }
  std::vector<std::string> out;
  out.reserve(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::string& s = pieces[i];
    switch (type) {
      case Type::kSplit:
        split_by(s, pattern.find_all(s), behavior, invert, out);
        break;
      case Type::kByteLevel: {
        if (add_prefix_space && s.compare(0, 1, " ") != 0) s.insert(0, 1, ' ');
        const std::size_t from = out.size();
        if (use_regex) {
          Ranges r;
          gpt2_regex().for_each_match(s, [&](std::size_t b, std::size_t e) { r.emplace_back(b, e); });
          split_by(s, r, SplitBehavior::kIsolated, false, out);
        } else
          out.push_back(std::move(s));
        for (std::size_t k = from; k < out.size(); ++k) {
          std::string mapped;
          mapped.reserve(out[k].size() * 2);
          append_byte_level(mapped, out[k]);
          out[k] = std::move(mapped);
        }
        break;
      }
      case Type::kMetaspace: {
        std::string t;
        t.reserve(s.size() + replacement.size());
        for (char c : s) {
          if (c == ' ')
            t += replacement;
          else
            t += c;
        }
        const bool starts = t.compare(0, replacement.size(), replacement) == 0;
        if (!starts && (prepend == Prepend::kAlways || (prepend == Prepend::kFirst && at_start && i == 0)))
          t.insert(0, replacement);
        if (split) {
          Pattern p;
          p.literal = replacement;
          split_by(t, p.find_all(t), SplitBehavior::kMergedWithNext, false, out);
        } else {
          out.push_back(std::move(t));
        }
        break;
      }
      case Type::kDigits:
        split_by(s, char_matches(s, is_numeric),
                 individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false, out);
        break;
      case Type::kPunctuation:
        split_by(s, char_matches(s, is_punctuation), behavior, false, out);
        break;
      case Type::kWhitespace:
        split_by(s, pattern.find_all(s), SplitBehavior::kRemoved, true, out);
        break;
      case Type::kWhitespaceSplit:
        split_by(s, char_matches(s, is_whitespace), SplitBehavior::kRemoved, false, out);
        break;
      case Type::kSequence:
        break;
    }
  }
  pieces = std::move(out);
}

void Decoder::apply(std::vector<Token>& tokens, bool alone) const {
  switch (type) {
    case Type::kSequence:
      for (const Decoder& d : children) d.apply(tokens, alone);
      return;
    case Type::kByteLevel:
      for (Token& t : tokens)
        if (!t.added)
          if (auto bytes = from_byte_level(t.text)) t.text = std::move(*bytes);
      return;
    case Type::kByteFallback:
      for (Token& t : tokens) {
        const std::string& s = t.text;
        if (s.size() != 6 || s.compare(0, 3, "<0x") != 0 || s[5] != '>') continue;
        auto hex = [](char c) {
          return c >= '0' && c <= '9'   ? c - '0'
                 : c >= 'A' && c <= 'F' ? c - 'A' + 10
                 : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : -1;
        };
        const int hi = hex(s[3]), lo = hex(s[4]);
        if (hi < 0 || lo < 0) continue;
        t.text = std::string(1, char(hi * 16 + lo));
      }
      return;
    case Type::kFuse: {
      if (tokens.empty()) return;
      Token fused;
      for (const Token& t : tokens) fused.text += t.text;
      tokens.assign(1, std::move(fused));
      return;
    }
    case Type::kStrip: {
      if (alone || content.empty()) return;
      for (Token& t : tokens) {
        std::string_view s = t.text;
        for (int k = 0; k < start && s.compare(0, content.size(), content) == 0; ++k) s.remove_prefix(content.size());
        for (int k = 0; k < stop && s.size() >= content.size() &&
                        s.compare(s.size() - content.size(), content.size(), content) == 0;
             ++k)
          s.remove_suffix(content.size());
        t.text = std::string(s);
      }
      return;
    }
    case Type::kReplace:
      for (Token& t : tokens) t.text = replace_all(t.text, pattern, content);
      return;
    case Type::kMetaspace:
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        Pattern p;
        p.literal = replacement;
        std::string s = replace_all(tokens[i].text, p, " ");
        if (!alone && i == 0 && strip_first_space && !s.empty() && s[0] == ' ') s.erase(0, 1);
        tokens[i].text = std::move(s);
      }
      return;
  }
}

}  // namespace pagedchat::bpe
