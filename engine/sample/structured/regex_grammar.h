// Regular expressions as grammar expressions: vLLM's guided_regex, and JSON Schema's `pattern`
// and string formats inside a JSON string (where '"', '\' and control characters are written as
// JSON escapes).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/sample/structured/grammar.h"

namespace pagedchat::structured {

/// Code point ranges [lo, hi], sorted and disjoint.
using CodepointSet = std::vector<std::pair<uint32_t, uint32_t>>;

/// How a code point is written: as its UTF-8 bytes, or as a character of a JSON string's content
/// (RFC 8259: '"' as \", '\' as \\, U+0000..U+001F as \n, \t, ... or \u00XX; others as UTF-8).
enum class CharContext { kRaw, kJsonString };

/// The expression of one code point of `set` written in `context`.
GrammarBuilder::Expr char_set_expr(GrammarBuilder& b, const CodepointSet& set, CharContext context);

/// Compiles `pattern` (ECMAScript-style syntax, as JSON Schema's `pattern` and vLLM's regex:
/// literals, `.`, classes `[a-z]`, `[^...]`, `\d \w \s \D \W \S`, escapes `\n \t \uXXXX \xHH`,
/// groups `( )`, `(?: )`, `(?<name> )`, alternation `|`, quantifiers `* + ? {m} {m,} {m,n}` (lazy
/// forms read as greedy: the language is the same), `^` at the start and `$` at the end). The
/// whole output matches it when `full_match`; else (JSON Schema's search semantics) any text may
/// come before it unless it starts with `^`, and after it unless it ends with `$`. Throws
/// std::invalid_argument naming the construct it does not support (back-references, look-around,
/// `\b`, anchors elsewhere) or the syntax error and its position.
GrammarBuilder::Expr regex_expr(GrammarBuilder& b, std::string_view pattern, CharContext context, bool full_match);

}  // namespace pagedchat::structured
