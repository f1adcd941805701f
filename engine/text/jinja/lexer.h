// Internal: the Jinja lexer, token for token as @huggingface/jinja 0.5.11's `tokenize` (applied to
// the preprocessed text, see source.h):
//  - text runs until "{{", "{%" or "{#"; "{{-", "{%-", "{#-" strip the whitespace (JavaScript's
//    \s, Unicode) at the end of the text before them, "-}}", "-%}", "-#}" the whitespace after;
//  - "{%+" is not special (its "+" is then an operator and the statement fails to parse);
//  - inside tags: numbers ("1", "1.5"; a "-" or "+" after anything but an operand, e.g. after "("
//    or "=", joins the number: "-1"), strings in '…' or "…" with the escapes \n \t \r \b \f \v
//    \' \" \\ \xHH \uHHHH, identifiers [A-Za-z0-9_]+, and the operators below; "}}" inside a
//    {...} literal closes the brace, not the expression;
//  - a tag left open at the end of the template is an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/text/jinja/source.h"

namespace pagedchat::jinja::detail {

enum class Tok : std::uint8_t {
  kText,
  kNumber,
  kString,
  kIdent,
  kEquals,          // =
  kLParen,          // (
  kRParen,          // )
  kOpenStmt,        // {%
  kCloseStmt,       // %}
  kOpenExpr,        // {{
  kCloseExpr,       // }}
  kLBracket,        // [
  kRBracket,        // ]
  kLBrace,          // {
  kRBrace,          // }
  kComma,           // ,
  kDot,             // .
  kColon,           // :
  kPipe,            // |
  kAdditive,        // + - ~
  kMultiplicative,  // * / // %
  kPower,           // **
  kComparison,      // < > <= >= == !=
  kUnary,           // a lone + or - before an operand
  kComment,         // {# ... #}
};

/// The reference's name of a token type, for messages ("CloseStatement", ...).
const char* token_name(Tok t);

struct Token {
  Tok type;
  std::string value;  ///< text, unescaped string, identifier, number or operator
  std::uint32_t pos;  ///< offset in the preprocessed text
};

/// A lexer or parser error at an offset of the preprocessed text.
struct SyntaxFailure {
  std::size_t pos;
  std::string message;
};

/// Throws SyntaxFailure.
std::vector<Token> tokenize(const Source& src);

}  // namespace pagedchat::jinja::detail
