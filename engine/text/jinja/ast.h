// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
// Internal: the syntax tree of a template, shaped as @huggingface/jinja 0.5.11's AST (its node
// types in comments). A template body is a list of nodes: statements run, expressions print.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/text/jinja/value.h"

namespace pagedchat::jinja::detail {

enum class NodeType : std::uint8_t {
  // expressions
  kIntLit,     // IntegerLiteral
  kFloatLit,   // FloatLiteral
  kStrLit,     // StringLiteral (also template text)
  kArrayLit,   // ArrayLiteral
  kTupleLit,   // TupleLiteral
  kObjectLit,  // ObjectLiteral
  kIdent,      // Identifier
  kMember,     // MemberExpression: a.b, a[b], a[b:c:d]
  kSlice,      // SliceExpression (only as a computed member property)
  kCall,       // CallExpression
  kUnary,      // UnaryExpression: not, -, +
  kBinary,     // BinaryExpression
  kFilter,     // FilterExpression: a | f, a | f(args)
  kTest,       // TestExpression: a is [not] t
  kSelect,     // SelectExpression: a if c (no else)
  kTernary,    // Ternary: a if c else b
  kKwarg,      // KeywordArgumentExpression: name=value (call arguments, macro parameters)
  kSpread,     // SpreadExpression: *args
  kKwSpread,   // KeywordSpreadExpression: **kwargs
  // statements
  kIf,
  kFor,
  kBreak,
  kContinue,
  kSet,
  kMacro,
  kCallBlock,    // CallStatement: {% call %}
  kFilterBlock,  // FilterStatement: {% filter %}
  kComment,
};

/// The reference's name of a node type ("MemberExpression", ...), for messages.
const char* node_name(NodeType t);

inline bool is_statement(NodeType t) { return t >= NodeType::kIf; }

struct Node {
  explicit Node(NodeType t, std::uint32_t p) : type(t), pos(p) {}
  virtual ~Node() = default;
  NodeType type;
  std::uint32_t depth = 1;  ///< 1 + the deepest child's depth (bounded by the parser)
  std::uint32_t pos;        ///< offset in the preprocessed source
};

using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

enum class BinOp : std::uint8_t {
  kAdd,
  kSub,
  kConcat,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kEq,
  kNe,
  kLt,
  kGt,
  kLe,
  kGe,
  kIn,
  kNotIn,
  kAnd,
  kOr
};
enum class UnOp : std::uint8_t { kNot, kNeg, kPos };

const char* binop_text(BinOp op);

struct IntLit final : Node {
  IntLit(std::uint32_t p, std::int64_t v) : Node(NodeType::kIntLit, p), value(v) {}
  std::int64_t value;
  /// The literal does not fit int64 (JavaScript would hold a double): evaluating it fails, so a
  /// template that never reaches it still renders, as in the reference.
  bool too_big = false;
};
struct FloatLit final : Node {
  FloatLit(std::uint32_t p, double v) : Node(NodeType::kFloatLit, p), value(v) {}
  double value;
};
struct StrLit final : Node {
  StrLit(std::uint32_t p, std::string v);
  std::string text;
  Value value;  ///< the string value, built once (template text, not data)
};
struct ListLit final : Node {  // kArrayLit or kTupleLit
  ListLit(NodeType t, std::uint32_t p) : Node(t, p) {}
  std::vector<NodePtr> items;
};
struct ObjectLit final : Node {
  explicit ObjectLit(std::uint32_t p) : Node(NodeType::kObjectLit, p) {}
  std::vector<std::pair<NodePtr, NodePtr>> entries;
};
struct Ident final : Node {
  Ident(std::uint32_t p, std::string n) : Node(NodeType::kIdent, p), name(std::move(n)) {}
  std::string name;
};
struct Member final : Node {
  Member(std::uint32_t p, NodePtr o, NodePtr prop, bool c)
      : Node(NodeType::kMember, p), object(std::move(o)), property(std::move(prop)), computed(c) {}
  NodePtr object;
  NodePtr property;  ///< Ident or IntLit when not computed; any expression or a Slice when computed
  bool computed;
};
struct Slice final : Node {
  explicit Slice(std::uint32_t p) : Node(NodeType::kSlice, p) {}
  NodePtr start, stop, step;  ///< each may be null
};
struct Call final : Node {
  Call(std::uint32_t p, NodePtr c) : Node(NodeType::kCall, p), callee(std::move(c)) {}
  NodePtr callee;
  std::vector<NodePtr> args;  ///< expressions, Kwarg, Spread, KwSpread
};
struct Unary final : Node {
  Unary(std::uint32_t p, UnOp o, NodePtr a) : Node(NodeType::kUnary, p), op(o), operand(std::move(a)) {}
  UnOp op;
  NodePtr operand;
};
struct Binary final : Node {
  Binary(std::uint32_t p, BinOp o, NodePtr l, NodePtr r)
      : Node(NodeType::kBinary, p), op(o), left(std::move(l)), right(std::move(r)) {}
  BinOp op;
  NodePtr left, right;
};
struct Filter final : Node {
  Filter(std::uint32_t p, NodePtr o, NodePtr f)
      : Node(NodeType::kFilter, p), operand(std::move(o)), filter(std::move(f)) {}
  NodePtr operand;
  NodePtr filter;  ///< an Ident, or a Call of one; anything else fails when evaluated, as in the reference
};
struct Test final : Node {
  Test(std::uint32_t p, NodePtr o, bool n, std::string t)
      : Node(NodeType::kTest, p), operand(std::move(o)), negate(n), name(std::move(t)) {}
  NodePtr operand;
  bool negate;
  std::string name;
  std::vector<NodePtr> args;  ///< `is divisibleby(3)`, `is eq 3`: Python Jinja syntax the reference lacks
};
struct Select final : Node {
  Select(std::uint32_t p, NodePtr l, NodePtr t) : Node(NodeType::kSelect, p), lhs(std::move(l)), test(std::move(t)) {}
  NodePtr lhs, test;
};
struct Ternary final : Node {
  Ternary(std::uint32_t p, NodePtr c, NodePtr a, NodePtr b)
      : Node(NodeType::kTernary, p), condition(std::move(c)), if_true(std::move(a)), if_false(std::move(b)) {}
  NodePtr condition, if_true, if_false;
};
struct Kwarg final : Node {
  Kwarg(std::uint32_t p, std::string k, NodePtr v)
      : Node(NodeType::kKwarg, p), key(std::move(k)), value(std::move(v)) {}
  std::string key;
  NodePtr value;
};
struct Spread final : Node {  // kSpread or kKwSpread
  Spread(NodeType t, std::uint32_t p, NodePtr a) : Node(t, p), operand(std::move(a)) {}
  NodePtr operand;
};

struct If final : Node {
  If(std::uint32_t p, NodePtr t) : Node(NodeType::kIf, p), test(std::move(t)) {}
  NodePtr test;
  Body body;
  Body alternate;  ///< the else part; an elif is a nested If here
};
struct For final : Node {
  explicit For(std::uint32_t p) : Node(NodeType::kFor, p) {}
  NodePtr target;    ///< Ident or TupleLit
  NodePtr iterable;  ///< when the written iterable was `x if cond`, x here and cond in `filter`
  NodePtr filter;    ///< may be null
  Body body;
  Body else_body;
};
struct Flow final : Node {  // kBreak, kContinue, kComment
  Flow(NodeType t, std::uint32_t p) : Node(t, p) {}
};
struct Set final : Node {
  explicit Set(std::uint32_t p) : Node(NodeType::kSet, p) {}
  NodePtr target;  ///< Ident, TupleLit of Idents or Member (ns.attr); checked when run
  NodePtr value;   ///< null for a block set
  Body body;
};
/// Which of the special macro variables a macro body reads (the reference's
/// findAccessedSpecialMacroArguments): extra keyword / positional arguments are refused otherwise.
struct SpecialArgs {
  bool kwargs = false;
  bool varargs = false;
};
struct Macro final : Node {
  explicit Macro(std::uint32_t p) : Node(NodeType::kMacro, p) {}
  std::string name;
  std::vector<NodePtr> params;  ///< Ident or Kwarg (with its default)
  Body body;
  SpecialArgs special;
};
struct CallBlock final : Node {
  explicit CallBlock(std::uint32_t p) : Node(NodeType::kCallBlock, p) {}
  NodePtr call;                 ///< a Call whose callee is an Ident
  std::vector<NodePtr> params;  ///< caller(...) parameters
  Body body;
  SpecialArgs special;
};
struct FilterBlock final : Node {
  explicit FilterBlock(std::uint32_t p) : Node(NodeType::kFilterBlock, p) {}
  NodePtr filter;
  Body body;
};

/// Calls f(child) for every direct child of `n`, in the order the reference's fields have them
/// (null children skipped).
void for_each_child(const Node& n, const std::function<void(const Node&)>& f);

/// The reference's findAccessedSpecialMacroArguments for a macro or call block.
SpecialArgs find_special_args(const std::vector<NodePtr>& params, const Body& body);

}  // namespace pagedchat::jinja::detail
