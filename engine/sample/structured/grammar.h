// Grammar: the language a structured output must belong to, over bytes, as a recursive
// transition network — rules, each a small nondeterministic automaton whose edges read one byte
// of a range or call another rule. JSON Schema (json_schema_grammar.h), regular expressions
// (regex_grammar.h) and choices compile to it; GrammarMatcher runs it token by token.
// The construction is Thompson's (Thompson 1968, "Regular expression search algorithm"), with
// rule calls as in Woods' recursive transition networks (Woods 1970).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagedchat::structured {

/// A compiled grammar. States are numbered across all rules; each rule has one start and one
/// final state. Immutable once built (GrammarBuilder::build()), so one Grammar is shared by every
/// request using the same schema.
struct Grammar {
  /// An edge reading one byte in [lo, hi] (call < 0), or calling rule `call` (lo, hi unused):
  /// after the callee reaches its final state, the run goes on at `to`.
  struct Edge {
    uint8_t lo = 0, hi = 0;
    int32_t call = -1;
    int32_t to = 0;
  };
  struct State {
    std::vector<Edge> edges;
    std::vector<int32_t> eps;  ///< edges reading nothing
    bool final = false;        ///< the final state of its rule
  };
  std::vector<State> states;
  std::vector<int32_t> rule_start;  ///< per rule: its start state
  std::vector<std::string> rule_names;
  int root = 0;  ///< the rule a whole output must match
};

/// Builds a Grammar from expressions. Expressions are indices into the builder's pool; rules may
/// refer to each other (and to themselves) by index before they are defined. Throws
/// std::invalid_argument when the grammar grows past `max_states` (a schema asking for thousands
/// of repetitions), naming what grew.
class GrammarBuilder {
 public:
  using Expr = int;
  explicit GrammarBuilder(std::size_t max_states = 200000) : max_states_(max_states) {}

  Expr empty();
  /// The bytes of `text` in order.
  Expr literal(std::string_view text);
  /// One byte in [lo, hi].
  Expr byte_range(uint8_t lo, uint8_t hi);
  /// One byte in any of the ranges.
  Expr byte_set(std::vector<std::pair<uint8_t, uint8_t>> ranges);
  Expr seq(std::vector<Expr> parts);
  Expr alt(std::vector<Expr> options);
  /// `e` repeated min to max times (max < 0: unbounded).
  Expr repeat(Expr e, int min, int max);
  Expr optional(Expr e) { return repeat(e, 0, 1); }
  Expr star(Expr e) { return repeat(e, 0, -1); }
  Expr plus(Expr e) { return repeat(e, 1, -1); }
  /// A call of rule `rule` (declare_rule()).
  Expr ref(int rule);

  /// A new rule named `name` (for messages), defined later with define().
  int declare_rule(std::string name);
  void define(int rule, Expr body);
  int num_rules() const { return int(rules_.size()); }

  /// The grammar whose outputs match rule `root`. Throws std::invalid_argument for a rule declared
  /// and never defined, or past max_states.
  Grammar build(int root) const;

 private:
  enum class Kind : uint8_t { kEmpty, kBytes, kSeq, kAlt, kRepeat, kRef };
  struct Node {
    Kind kind = Kind::kEmpty;
    std::vector<std::pair<uint8_t, uint8_t>> ranges;  // kBytes
    std::vector<Expr> kids;                           // kSeq, kAlt, kRepeat (one)
    int min = 0, max = 0;                             // kRepeat
    int rule = -1;                                    // kRef
  };
  struct Rule {
    std::string name;
    Expr body = -1;
  };
  Expr add(Node n);
  void compile(Grammar& g, Expr e, int32_t from, int32_t to) const;
  int32_t new_state(Grammar& g) const;

  std::vector<Node> nodes_;
  std::vector<Rule> rules_;
  std::size_t max_states_;
};

/// Per rule: whether it derives at least one finite string (a path from its start to its final
/// state through calls of such rules only). A rule that only recurses into itself (a schema
/// {"$ref": "#"}) does not: a grammar whose root rule does not would leave the model no way to
/// finish. A worklist over callers: each rule is walked again only when a rule it calls turns out
/// productive.
std::vector<bool> productive_rules(const Grammar& g);

/// UTF-8 byte sequences of the code points in [lo, hi] (lo <= hi <= 0x10FFFF; surrogates are
/// left out), as an expression: alternatives of byte-range sequences (the standard split of a
/// code point range by encoded length and continuation-byte boundaries, as RE2 and Rust's
/// regex-syntax do).
GrammarBuilder::Expr utf8_range(GrammarBuilder& b, uint32_t lo, uint32_t hi);

}  // namespace pagedchat::structured
