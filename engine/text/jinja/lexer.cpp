// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
#include "engine/text/jinja/lexer.h"

#include <optional>
#include <string_view>

#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

const char* token_name(Tok t) {
  switch (t) {
    case Tok::kText:
      return "Text";
    case Tok::kNumber:
      return "NumericLiteral";
    case Tok::kString:
      return "StringLiteral";
    case Tok::kIdent:
      return "Identifier";
    case Tok::kEquals:
      return "Equals";
    case Tok::kLParen:
      return "OpenParen";
    case Tok::kRParen:
      return "CloseParen";
    case Tok::kOpenStmt:
      return "OpenStatement";
    case Tok::kCloseStmt:
      return "CloseStatement";
    case Tok::kOpenExpr:
      return "OpenExpression";
    case Tok::kCloseExpr:
      return "CloseExpression";
    case Tok::kLBracket:
      return "OpenSquareBracket";
    case Tok::kRBracket:
      return "CloseSquareBracket";
    case Tok::kLBrace:
      return "OpenCurlyBracket";
    case Tok::kRBrace:
      return "CloseCurlyBracket";
    case Tok::kComma:
      return "Comma";
    case Tok::kDot:
      return "Dot";
    case Tok::kColon:
      return "Colon";
    case Tok::kPipe:
      return "Pipe";
    case Tok::kAdditive:
      return "AdditiveBinaryOperator";
    case Tok::kMultiplicative:
      return "MultiplicativeBinaryOperator";
    case Tok::kPower:
      return "ExponentiationBinaryOperator";
    case Tok::kComparison:
      return "ComparisonBinaryOperator";
    case Tok::kUnary:
      return "UnaryOperator";
    case Tok::kComment:
      return "Comment";
  }
  return "?";
}

namespace {

// The reference's ORDERED_MAPPING_TABLE, in its order (longer sequences before their prefixes).
struct Seq {
  std::string_view text;
  Tok type;
};
constexpr Seq kTable[] = {
    {"{%", Tok::kOpenStmt},      {"%}", Tok::kCloseStmt},
    {"{{", Tok::kOpenExpr},      {"}}", Tok::kCloseExpr},
    {"(", Tok::kLParen},         {")", Tok::kRParen},
    {"{", Tok::kLBrace},         {"}", Tok::kRBrace},
    {"[", Tok::kLBracket},       {"]", Tok::kRBracket},
    {",", Tok::kComma},          {".", Tok::kDot},
    {":", Tok::kColon},          {"|", Tok::kPipe},
    {"<=", Tok::kComparison},    {">=", Tok::kComparison},
    {"==", Tok::kComparison},    {"!=", Tok::kComparison},
    {"<", Tok::kComparison},     {">", Tok::kComparison},
    {"+", Tok::kAdditive},       {"-", Tok::kAdditive},
    {"~", Tok::kAdditive},       {"**", Tok::kPower},
    {"*", Tok::kMultiplicative}, {"//", Tok::kMultiplicative},
    {"/", Tok::kMultiplicative}, {"%", Tok::kMultiplicative},
    {"=", Tok::kEquals},
};

class Lexer {
 public:
  explicit Lexer(const Source& src) : s_(src.text) {}

  std::vector<Token> run() {
    while (i_ < s_.size()) {
      const std::optional<Tok> last = last_type();
      if (!last || *last == Tok::kCloseStmt || *last == Tok::kCloseExpr || *last == Tok::kComment) {
        const std::size_t start = i_;
        while (i_ < s_.size() && !(s_[i_] == '{' && i_ + 1 < s_.size() &&
                                   (s_[i_ + 1] == '%' || s_[i_ + 1] == '{' || s_[i_ + 1] == '#'))) {
          ++i_;
        }
        if (i_ > start) {
          push(Tok::kText, std::string(s_.substr(start, i_ - start)), start);
          continue;
        }
      }
      if (at("{#")) {
        comment();
        continue;
      }
      if (at("{%-")) {
        strip_trailing_whitespace();
        push(Tok::kOpenStmt, "{%", i_);
        i_ += 3;
        continue;
      }
      if (at("{{-")) {
        strip_trailing_whitespace();
        push(Tok::kOpenExpr, "{{", i_);
        curly_depth_ = 0;
        i_ += 3;
        continue;
      }
      // consumeWhile(isWhitespace): reaching the end inside a tag is an error.
      while (std::size_t w = unicode::js_space_at(s_, i_)) {
        i_ += w;
        if (i_ >= s_.size()) fail(i_, "Unexpected end of input");
      }
      if (at("-%}")) {
        push(Tok::kCloseStmt, "%}", i_);
        i_ += 3;
        skip_whitespace();
        continue;
      }
      if (at("-}}")) {
        push(Tok::kCloseExpr, "}}", i_);
        i_ += 3;
        skip_whitespace();
        continue;
      }
      const char c = s_[i_];
      if (c == '-' || c == '+') {
        const std::optional<Tok> prev = last_type();
        if (!prev || *prev == Tok::kText) fail(i_, std::string("Unexpected character: ") + c);
        const bool operand = *prev == Tok::kIdent || *prev == Tok::kNumber || *prev == Tok::kString ||
                             *prev == Tok::kRParen || *prev == Tok::kRBracket;
        if (!operand) {
          const std::size_t start = i_++;
          std::string num = consume_digits();
          if (!num.empty() && i_ < s_.size() && s_[i_] == '.' && i_ + 1 < s_.size() &&
              unicode::is_digit_byte(static_cast<unsigned char>(s_[i_ + 1]))) {
            ++i_;
            num += '.';
            num += consume_digits();
          }
          const bool is_number = !num.empty();
          push(is_number ? Tok::kNumber : Tok::kUnary, std::string(1, c) + num, start);
          continue;
        }
      }
      if (table_token()) continue;
      if (c == '\'' || c == '"') {
        const std::size_t start = i_++;
        std::string str = consume_string(c);
        push(Tok::kString, std::move(str), start);
        ++i_;  // the closing quote
        continue;
      }
      if (unicode::is_digit_byte(static_cast<unsigned char>(c))) {
        const std::size_t start = i_;
        std::string num = consume_digits();
        const std::optional<Tok> prev = last_type();
        if (prev != Tok::kDot && i_ < s_.size() && s_[i_] == '.' && i_ + 1 < s_.size() &&
            unicode::is_digit_byte(static_cast<unsigned char>(s_[i_ + 1]))) {
          ++i_;
          num += '.';
          num += consume_digits();
        }
        push(Tok::kNumber, std::move(num), start);
        continue;
      }
      if (unicode::is_word_byte(static_cast<unsigned char>(c))) {
        const std::size_t start = i_;
        std::string word;
        while (i_ < s_.size() && unicode::is_word_byte(static_cast<unsigned char>(s_[i_]))) {
          word += s_[i_++];
          if (i_ >= s_.size()) fail(i_, "Unexpected end of input");
        }
        push(Tok::kIdent, std::move(word), start);
        continue;
      }
      const unicode::Decoded d = unicode::decode(s_, i_);
      fail(i_, "Unexpected character: " + std::string(s_.substr(i_, d.len)));
    }
    return std::move(tokens_);
  }

 private:
  [[noreturn]] static void fail(std::size_t pos, std::string message) { throw SyntaxFailure{pos, std::move(message)}; }

  bool at(std::string_view what) const { return s_.substr(i_, what.size()) == what; }

  std::optional<Tok> last_type() const {
    if (tokens_.empty()) return std::nullopt;
    return tokens_.back().type;
  }

  void push(Tok type, std::string value, std::size_t pos) {
    tokens_.push_back(Token{type, std::move(value), static_cast<std::uint32_t>(pos)});
  }

  void strip_trailing_whitespace() {
    if (tokens_.empty() || tokens_.back().type != Tok::kText) return;
    std::string& text = tokens_.back().value;
    text.resize(unicode::js_trim_end(text));
    if (text.empty()) tokens_.pop_back();
  }

  void skip_whitespace() {
    while (std::size_t w = unicode::js_space_at(s_, i_)) i_ += w;
  }

  void comment() {
    i_ += 2;
    const bool strip_before = i_ < s_.size() && s_[i_] == '-';
    if (strip_before) ++i_;
    const std::size_t start = i_;
    while (!(i_ + 1 < s_.size() && s_[i_] == '#' && s_[i_ + 1] == '}')) {
      if (i_ + 2 >= s_.size()) fail(i_, "Missing end of comment tag");
      ++i_;
    }
    std::string text(s_.substr(start, i_ - start));
    const bool strip_after = !text.empty() && text.back() == '-';
    if (strip_after) text.pop_back();
    if (strip_before) strip_trailing_whitespace();
    push(Tok::kComment, std::move(text), start);
    i_ += 2;
    if (strip_after) skip_whitespace();
  }

  // consumeWhile(isInteger): as in the reference, the last character of the template can never
  // be consumed inside a tag.
  std::string consume_digits() {
    std::string out;
    while (i_ < s_.size() && unicode::is_digit_byte(static_cast<unsigned char>(s_[i_]))) {
      out += s_[i_++];
      if (i_ >= s_.size()) fail(i_, "Unexpected end of input");
    }
    return out;
  }

  // The body of a string literal up to (not including) the closing `quote`, unescaped.
  std::string consume_string(char quote) {
    std::string out;
    char32_t high = 0;  // a \uD800..\uDBFF escape waiting for its low half
    auto flush_high = [&] {
      if (high) unicode::encode(0xFFFD, out);  // a lone surrogate: JavaScript would print U+FFFD
      high = 0;
    };
    while (true) {
      if (i_ < s_.size() && s_[i_] == quote) break;
      if (i_ < s_.size() && s_[i_] == '\\') {
        ++i_;
        if (i_ >= s_.size()) fail(i_, "Unexpected end of input");
        const char e = s_[i_++];
        if (e == 'x' || e == 'u') {
          const std::size_t len = e == 'x' ? 2 : 4;
          const std::string_view hex = s_.substr(i_, len);
          bool ok = hex.size() == len;
          char32_t unit = 0;
          for (const char h : hex) {
            int v = -1;
            if (h >= '0' && h <= '9') v = h - '0';
            if (h >= 'a' && h <= 'f') v = h - 'a' + 10;
            if (h >= 'A' && h <= 'F') v = h - 'A' + 10;
            if (v < 0) ok = false;
            unit = unit * 16 + static_cast<char32_t>(v < 0 ? 0 : v);
          }
          if (!ok) fail(i_, std::string("Invalid hexadecimal escape sequence: \\") + e + std::string(hex));
          i_ += len;
          if (unit >= 0xDC00 && unit <= 0xDFFF && high) {
            unicode::encode(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00), out);
            high = 0;
          } else {
            flush_high();
            if (unit >= 0xD800 && unit <= 0xDBFF) {
              high = unit;
            } else {
              unicode::encode(unit >= 0xDC00 && unit <= 0xDFFF ? 0xFFFD : unit, out);
            }
          }
          continue;
        }
        char unescaped = 0;
        switch (e) {
          case 'n':
            unescaped = '\n';
            break;
          case 't':
            unescaped = '\t';
            break;
          case 'r':
            unescaped = '\r';
            break;
          case 'b':
            unescaped = '\b';
            break;
          case 'f':
            unescaped = '\f';
            break;
          case 'v':
            unescaped = '\v';
            break;
          case '\'':
            unescaped = '\'';
            break;
          case '"':
            unescaped = '"';
            break;
          case '\\':
            unescaped = '\\';
            break;
          default: {
            const unicode::Decoded d = unicode::decode(s_, i_ - 1);
            fail(i_ - 1, "Unexpected escaped character: " + std::string(s_.substr(i_ - 1, d.len)));
          }
        }
        flush_high();
        out += unescaped;
        continue;
      }
      if (i_ >= s_.size()) fail(i_, "Unexpected end of input");
      flush_high();
      out += s_[i_++];
      if (i_ >= s_.size()) fail(i_, "Unexpected end of input");
    }
    flush_high();
    return out;
  }

  bool table_token() {
    for (const Seq& seq : kTable) {
      if (seq.type == Tok::kCloseExpr && curly_depth_ > 0) continue;
      if (!at(seq.text)) continue;
      push(seq.type, std::string(seq.text), i_);
      if (seq.type == Tok::kOpenExpr) {
        curly_depth_ = 0;
      } else if (seq.type == Tok::kLBrace) {
        ++curly_depth_;
      } else if (seq.type == Tok::kRBrace) {
        --curly_depth_;
      }
      i_ += seq.text.size();
      return true;
    }
    return false;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  long curly_depth_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const Source& src) { return Lexer(src).run(); }

}  // namespace pagedchat::jinja::detail
