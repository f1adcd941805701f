// Internal: the parser, production for production as @huggingface/jinja 0.5.11's `parse`.
//
// Statements: if/elif/else, for (tuple targets, `if` filter, else), set (= value, tuple targets,
// ns.attr, block form), macro (defaults), call (with caller parameters), filter blocks, break,
// continue, comments. Anything else ({% include %}, {% import %}, {% extends %}, {% raw %},
// {% block %}, ...) is a syntax error.
// Expression precedence, loosest first (as the reference; note that `not` binds looser than
// comparisons, comparisons chain left to right, ** is left-associative, a unary sign binds
// tighter than filters):
//   a if c else b | a if c     or     and     not     in, not in, == != < > <= >=
//   + - ~     * / // %     **     is [not] test     | filter     unary - +     call, .attr, [i], [a:b:c]
// As in the reference, commas between call arguments and list / dict items may be left out.
// Beyond the reference: tests take arguments, `x is divisibleby(3)`, `x is eq 3`, `x is in items`
// (Python Jinja's syntax; the reference cannot parse these). Since the reference lets commas
// between list items and call arguments be left out, `[x is odd (1)]` means one item here, two there.
// Nesting is bounded (kMaxNesting levels of parentheses, blocks and elif chains; syntax trees
// kMaxTreeDepth deep), so no template can exhaust the stack while being parsed or run.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/lexer.h"

namespace pagedchat::jinja::detail {

constexpr std::size_t kMaxNesting = 100;  // about 2 KB of stack each while parsing
constexpr std::size_t kMaxTreeDepth = 400;

/// Parses the tokens of a template whose preprocessed text has `source_size` bytes (the position
/// of "unexpected end" errors). Throws SyntaxFailure.
Body parse(const std::vector<Token>& tokens, std::size_t source_size);

}  // namespace pagedchat::jinja::detail
