#include "engine/sample/structured/regex_grammar.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace pagedchat::structured {

using Expr = GrammarBuilder::Expr;

namespace {
constexpr uint32_t kMaxCodepoint = 0x10FFFF;

CodepointSet normalized(CodepointSet s) {
  std::sort(s.begin(), s.end());
  CodepointSet out;
  for (const auto& r : s) {
    if (!out.empty() && r.first <= out.back().second + 1)
      out.back().second = std::max(out.back().second, r.second);
    else
      out.push_back(r);
  }
  return out;
}

CodepointSet complement(const CodepointSet& s) {
  CodepointSet out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : normalized(s)) {
    if (lo > next) out.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= kMaxCodepoint) out.push_back({next, kMaxCodepoint});
  return out;
}

const CodepointSet& digits() {
  static const CodepointSet s{{'0', '9'}};
  return s;
}
const CodepointSet& word() {
  static const CodepointSet s{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
  return s;
}
// ECMAScript's WhiteSpace and LineTerminator.
const CodepointSet& space() {
  static const CodepointSet s{{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
                              {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
  return s;
}

std::string hex4(uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xF];
  return s;
}

class RegexParser {
 public:
  RegexParser(GrammarBuilder& b, std::string_view p, CharContext ctx) : b_(b), p_(p), ctx_(ctx) {}

  Expr parse(bool full_match) {
    bool anchored_start = full_match, anchored_end = full_match;
    if (!p_.empty() && p_.front() == '^') {
      anchored_start = true;
      ++i_;
    }
    if (p_.size() > i_ && p_.back() == '$' && !escaped_at(p_.size() - 1)) {
      anchored_end = true;
      end_ = p_.size() - 1;
    } else {
      end_ = p_.size();
    }
    Expr body = parse_alt();
    if (i_ != end_) fail(p_[i_] == ')' ? "unmatched ')'" : "unexpected character");
    const Expr any = b_.star(char_set_expr(b_, {{0, kMaxCodepoint}}, ctx_));
    std::vector<Expr> parts;
    if (!anchored_start) parts.push_back(any);
    parts.push_back(body);
    if (!anchored_end) parts.push_back(b_.star(char_set_expr(b_, {{0, kMaxCodepoint}}, ctx_)));
    return b_.seq(std::move(parts));
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("regular expression '" + std::string(p_) + "': " + what + " at position " +
                                std::to_string(i_));
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw std::invalid_argument("regular expression '" + std::string(p_) + "': " + what +
                                " is not supported (at position " + std::to_string(i_) + ")");
  }
  bool escaped_at(std::size_t pos) const {
    std::size_t n = 0;
    while (pos > n && p_[pos - n - 1] == '\\') ++n;
    return n % 2 == 1;
  }
  bool more() const { return i_ < end_; }
  char peek() const { return p_[i_]; }

  Expr parse_alt() {
    std::vector<Expr> options{parse_seq()};
    while (more() && peek() == '|') {
      ++i_;
      options.push_back(parse_seq());
    }
    return b_.alt(std::move(options));
  }

  Expr parse_seq() {
    std::vector<Expr> parts;
    while (more() && peek() != '|' && peek() != ')') parts.push_back(parse_quantified());
    return parts.empty() ? b_.empty() : b_.seq(std::move(parts));
  }

  int parse_int() {
    if (!more() || peek() < '0' || peek() > '9') fail("a number expected");
    long v = 0;
    while (more() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + (peek() - '0');
      if (v > 100000) unsupported("a repetition count above 100000");
      ++i_;
    }
    return int(v);
  }

  Expr parse_quantified() {
    Expr e = parse_atom();
    while (more()) {
      const char c = peek();
      int min = 0, max = 0;
      if (c == '*') {
        min = 0, max = -1, ++i_;
      } else if (c == '+') {
        min = 1, max = -1, ++i_;
      } else if (c == '?') {
        min = 0, max = 1, ++i_;
      } else if (c == '{') {
        ++i_;
        min = parse_int();
        max = min;
        if (more() && peek() == ',') {
          ++i_;
          max = more() && peek() == '}' ? -1 : parse_int();
        }
        if (!more() || peek() != '}') fail("'}' expected");
        ++i_;
        if (max >= 0 && max < min) fail("{m,n} with n < m");
      } else {
        break;
      }
      if (more() && peek() == '?') ++i_;  // lazy: the same language
      e = b_.repeat(e, min, max);
    }
    return e;
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int k = 0; k < digits; ++k) {
      if (!more() || !std::isxdigit(static_cast<unsigned char>(peek()))) fail("hex digit expected");
      const char c = peek();
      v = v * 16 + uint32_t(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
      ++i_;
    }
    return v;
  }

  // One UTF-8 code point of the pattern.
  uint32_t parse_literal() {
    const unsigned char c = static_cast<unsigned char>(p_[i_++]);
    if (c < 0x80) return c;
    const int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (len == 0 || i_ + std::size_t(len - 1) > p_.size()) fail("invalid UTF-8");
    uint32_t cp = c & (0xFF >> (len + 1));
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(p_[i_++]) & 0x3F);
    return cp;
  }

  // After a backslash: a class escape fills `set` and returns true; a character escape sets `cp`.
  bool parse_escape(CodepointSet& set, uint32_t& cp, bool in_class) {
    if (!more()) fail("a trailing backslash");
    const char c = p_[i_++];
    switch (c) {
      case 'd':
        set = digits();
        return true;
      case 'D':
        set = complement(digits());
        return true;
      case 'w':
        set = word();
        return true;
      case 'W':
        set = complement(word());
        return true;
      case 's':
        set = space();
        return true;
      case 'S':
        set = complement(space());
        return true;
      case 't':
        cp = '\t';
        return false;
      case 'n':
        cp = '\n';
        return false;
      case 'r':
        cp = '\r';
        return false;
      case 'f':
        cp = '\f';
        return false;
      case 'v':
        cp = '\v';
        return false;
      case '0':
        cp = 0;
        return false;
      case 'x':
        cp = parse_hex(2);
        return false;
      case 'u':
        if (more() && peek() == '{') {
          ++i_;
          cp = 0;
          while (more() && peek() != '}') cp = cp * 16 + parse_hex(1);
          if (!more()) fail("'}' expected");
          ++i_;
          if (cp > kMaxCodepoint) fail("code point out of range");
        } else {
          cp = parse_hex(4);
        }
        return false;
      case 'b':
        if (in_class) {
          cp = '\b';
          return false;
        }
        unsupported("the word boundary \\b");
      case 'B':
        unsupported("\\B");
      default:
        if (c >= '1' && c <= '9') unsupported("a back-reference");
        if (std::isalnum(static_cast<unsigned char>(c))) unsupported(std::string("the escape \\") + c);
        --i_;
        cp = parse_literal();
        return false;
    }
  }

  Expr parse_class() {
    ++i_;  // '['
    bool negated = false;
    if (more() && peek() == '^') {
      negated = true;
      ++i_;
    }
    CodepointSet set;
    bool first = true;
    while (more() && (peek() != ']' || first)) {
      first = false;
      CodepointSet escaped;
      uint32_t lo = 0;
      if (peek() == '\\') {
        ++i_;
        if (parse_escape(escaped, lo, true)) {
          set.insert(set.end(), escaped.begin(), escaped.end());
          continue;
        }
      } else {
        lo = parse_literal();
      }
      uint32_t hi = lo;
      if (i_ + 1 < end_ && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        if (peek() == '\\') {
          ++i_;
          if (parse_escape(escaped, hi, true)) fail("a class escape cannot end a range");
        } else {
          hi = parse_literal();
        }
        if (hi < lo) fail("a range out of order");
      }
      set.push_back({lo, hi});
    }
    if (!more()) fail("']' expected");
    ++i_;
    set = normalized(set);
    if (negated) set = complement(set);
    if (set.empty()) fail("an empty class");
    return char_set_expr(b_, set, ctx_);
  }

  Expr parse_atom() {
    const char c = peek();
    switch (c) {
      case '(': {
        // Each group is a level of recursion here and in the grammar's construction.
        if (++depth_ > kMaxGroupDepth)
          unsupported("groups nested more than " + std::to_string(kMaxGroupDepth) + " deep");
        ++i_;
        if (more() && peek() == '?') {
          ++i_;
          if (more() && peek() == ':') {
            ++i_;
          } else if (more() && peek() == '<' && i_ + 1 < end_ && p_[i_ + 1] != '=' && p_[i_ + 1] != '!') {
            while (more() && peek() != '>') ++i_;  // a named group: the name does not matter here
            if (!more()) fail("'>' expected");
            ++i_;
          } else {
            unsupported("look-around");
          }
        }
        Expr e = parse_alt();
        if (!more() || peek() != ')') fail("')' expected");
        ++i_;
        --depth_;
        return e;
      }
      case '[':
        return parse_class();
      case '.':
        ++i_;
        return char_set_expr(b_, complement({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}), ctx_);
      case '\\': {
        ++i_;
        CodepointSet set;
        uint32_t cp = 0;
        if (parse_escape(set, cp, false)) return char_set_expr(b_, set, ctx_);
        return char_set_expr(b_, {{cp, cp}}, ctx_);
      }
      case '^':
      case '$':
        unsupported(std::string("the anchor ") + c + " inside the pattern");
      case '*':
      case '+':
      case '?':
      case '{':
        fail(std::string("nothing to repeat before '") + c + "'");
      default: {
        const uint32_t cp = parse_literal();
        return char_set_expr(b_, {{cp, cp}}, ctx_);
      }
    }
  }

  static constexpr int kMaxGroupDepth = 100;

  GrammarBuilder& b_;
  std::string_view p_;
  CharContext ctx_;
  std::size_t i_ = 0, end_ = 0;
  int depth_ = 0;
};
}  // namespace

Expr char_set_expr(GrammarBuilder& b, const CodepointSet& set, CharContext context) {
  std::vector<Expr> options;
  for (const auto& [lo0, hi0] : normalized(set)) {
    if (context == CharContext::kRaw) {
      options.push_back(utf8_range(b, lo0, hi0));
      continue;
    }
    // JSON string content: the characters that must be escaped, escaped; the others as UTF-8.
    const uint32_t hi = hi0;
    for (uint32_t cp = lo0; cp <= std::min(hi, 0x1Fu); ++cp) {
      switch (cp) {
        case '\b':
          options.push_back(b.literal("\\b"));
          break;
        case '\t':
          options.push_back(b.literal("\\t"));
          break;
        case '\n':
          options.push_back(b.literal("\\n"));
          break;
        case '\f':
          options.push_back(b.literal("\\f"));
          break;
        case '\r':
          options.push_back(b.literal("\\r"));
          break;
        default:
          options.push_back(b.literal(hex4(cp)));
      }
    }
    uint32_t lo = std::max(lo0, 0x20u);
    for (uint32_t special : {0x22u, 0x5Cu}) {
      if (lo <= special && special <= hi) {
        if (lo < special) options.push_back(utf8_range(b, lo, special - 1));
        options.push_back(b.literal(special == 0x22 ? "\\\"" : "\\\\"));
        lo = special + 1;
      }
    }
    if (lo <= hi) options.push_back(utf8_range(b, lo, hi));
  }
  if (options.empty()) throw std::invalid_argument("grammar: an empty character set");
  return b.alt(std::move(options));
}

Expr regex_expr(GrammarBuilder& b, std::string_view pattern, CharContext context, bool full_match) {
  return RegexParser(b, pattern, context).parse(full_match);
}

}  // namespace pagedchat::structured
