#include "engine/text/jinja/ast.h"

#include <set>
#include <string_view>

#include "engine/text/jinja/strings.h"

namespace pagedchat::jinja::detail {

const char* node_name(NodeType t) {
  switch (t) {
    case NodeType::kIntLit:
      return "IntegerLiteral";
    case NodeType::kFloatLit:
      return "FloatLiteral";
    case NodeType::kStrLit:
      return "StringLiteral";
    case NodeType::kArrayLit:
      return "ArrayLiteral";
    case NodeType::kTupleLit:
      return "TupleLiteral";
    case NodeType::kObjectLit:
      return "ObjectLiteral";
    case NodeType::kIdent:
      return "Identifier";
    case NodeType::kMember:
      return "MemberExpression";
    case NodeType::kSlice:
      return "SliceExpression";
    case NodeType::kCall:
      return "CallExpression";
    case NodeType::kUnary:
      return "UnaryExpression";
    case NodeType::kBinary:
      return "BinaryExpression";
    case NodeType::kFilter:
      return "FilterExpression";
    case NodeType::kTest:
      return "TestExpression";
    case NodeType::kSelect:
      return "SelectExpression";
    case NodeType::kTernary:
      return "Ternary";
    case NodeType::kKwarg:
      return "KeywordArgumentExpression";
    case NodeType::kSpread:
      return "SpreadExpression";
    case NodeType::kKwSpread:
      return "KeywordSpreadExpression";
    case NodeType::kIf:
      return "If";
    case NodeType::kFor:
      return "For";
    case NodeType::kBreak:
      return "Break";
    case NodeType::kContinue:
      return "Continue";
    case NodeType::kSet:
      return "Set";
    case NodeType::kMacro:
      return "Macro";
    case NodeType::kCallBlock:
      return "CallStatement";
    case NodeType::kFilterBlock:
      return "FilterStatement";
    case NodeType::kComment:
      return "Comment";
  }
  return "?";
}

const char* binop_text(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "+";
    case BinOp::kSub:
      return "-";
    case BinOp::kConcat:
      return "~";
    case BinOp::kMul:
      return "*";
    case BinOp::kDiv:
      return "/";
    case BinOp::kFloorDiv:
      return "//";
    case BinOp::kMod:
      return "%";
    case BinOp::kPow:
      return "**";
    case BinOp::kEq:
      return "==";
    case BinOp::kNe:
      return "!=";
    case BinOp::kLt:
      return "<";
    case BinOp::kGt:
      return ">";
    case BinOp::kLe:
      return "<=";
    case BinOp::kGe:
      return ">=";
    case BinOp::kIn:
      return "in";
    case BinOp::kNotIn:
      return "not in";
    case BinOp::kAnd:
      return "and";
    case BinOp::kOr:
      return "or";
  }
  return "?";
}

StrLit::StrLit(std::uint32_t p, std::string v)
    : Node(NodeType::kStrLit, p), text(std::move(v)), value(make_string(text, false)) {}

void for_each_child(const Node& n, const std::function<void(const Node&)>& f) {
  auto one = [&](const NodePtr& c) {
    if (c) f(*c);
  };
  auto all = [&](const std::vector<NodePtr>& v) {
    for (const NodePtr& c : v) one(c);
  };
  switch (n.type) {
    case NodeType::kIntLit:
    case NodeType::kFloatLit:
    case NodeType::kStrLit:
    case NodeType::kIdent:
    case NodeType::kBreak:
    case NodeType::kContinue:
    case NodeType::kComment:
      return;
    case NodeType::kArrayLit:
    case NodeType::kTupleLit:
      return all(static_cast<const ListLit&>(n).items);
    case NodeType::kObjectLit:
      for (const auto& [k, v] : static_cast<const ObjectLit&>(n).entries) one(k), one(v);
      return;
    case NodeType::kMember: {
      const auto& m = static_cast<const Member&>(n);
      return one(m.object), one(m.property);
    }
    case NodeType::kSlice: {
      const auto& s = static_cast<const Slice&>(n);
      return one(s.start), one(s.stop), one(s.step);
    }
    case NodeType::kCall: {
      const auto& c = static_cast<const Call&>(n);
      return one(c.callee), all(c.args);
    }
    case NodeType::kUnary:
      return one(static_cast<const Unary&>(n).operand);
    case NodeType::kBinary: {
      const auto& b = static_cast<const Binary&>(n);
      return one(b.left), one(b.right);
    }
    case NodeType::kFilter: {
      const auto& fl = static_cast<const Filter&>(n);
      return one(fl.operand), one(fl.filter);
    }
    case NodeType::kTest: {
      const auto& t = static_cast<const Test&>(n);
      return one(t.operand), all(t.args);
    }
    case NodeType::kSelect: {
      const auto& s = static_cast<const Select&>(n);
      return one(s.lhs), one(s.test);
    }
    case NodeType::kTernary: {
      const auto& t = static_cast<const Ternary&>(n);
      return one(t.condition), one(t.if_true), one(t.if_false);
    }
    case NodeType::kKwarg:
      return one(static_cast<const Kwarg&>(n).value);
    case NodeType::kSpread:
    case NodeType::kKwSpread:
      return one(static_cast<const Spread&>(n).operand);
    case NodeType::kIf: {
      const auto& i = static_cast<const If&>(n);
      return one(i.test), all(i.body), all(i.alternate);
    }
    case NodeType::kFor: {
      const auto& fr = static_cast<const For&>(n);
      return one(fr.target), one(fr.iterable), one(fr.filter), all(fr.body), all(fr.else_body);
    }
    case NodeType::kSet: {
      const auto& s = static_cast<const Set&>(n);
      return one(s.target), one(s.value), all(s.body);
    }
    case NodeType::kMacro: {
      const auto& m = static_cast<const Macro&>(n);
      return all(m.params), all(m.body);
    }
    case NodeType::kCallBlock: {
      const auto& c = static_cast<const CallBlock&>(n);
      return one(c.call), all(c.params), all(c.body);
    }
    case NodeType::kFilterBlock: {
      const auto& fb = static_cast<const FilterBlock&>(n);
      return one(fb.filter), all(fb.body);
    }
  }
}

namespace {

bool special_name(std::string_view name) { return name == "kwargs" || name == "varargs"; }

// The walk of the reference's findAccessedSpecialMacroArguments: names are "declared" by loop
// targets, set targets and parameters in the order they are met; a special name read before it is
// declared counts as accessed.
class SpecialArgsFinder {
 public:
  SpecialArgs run(const std::vector<NodePtr>& params, const Body& body) {
    for (const NodePtr& p : params) declare_param(*p);
    for (const NodePtr& n : body) visit(*n);
    return result_;
  }

 private:
  void declare_name(const std::string& name) {
    if (special_name(name)) declared_.insert(name);
  }
  void declare_target(const Node& t) {
    if (t.type == NodeType::kIdent) declare_name(static_cast<const Ident&>(t).name);
    if (t.type == NodeType::kTupleLit) {
      for (const NodePtr& item : static_cast<const ListLit&>(t).items) declare_target(*item);
    }
  }
  void declare_param(const Node& p) {
    if (p.type == NodeType::kIdent) declare_name(static_cast<const Ident&>(p).name);
    if (p.type == NodeType::kKwarg) declare_name(static_cast<const Kwarg&>(p).key);
  }
  void visit_defaults(const std::vector<NodePtr>& params) {
    for (const NodePtr& p : params) {
      if (p->type == NodeType::kKwarg) visit(*static_cast<const Kwarg&>(*p).value);
    }
  }
  void visit_filter(const Node& f) {
    if (f.type == NodeType::kCall) {
      for (const NodePtr& a : static_cast<const Call&>(f).args) visit(*a);
    }
  }
  void visit_body(const Body& b) {
    for (const NodePtr& n : b) visit(*n);
  }

  void visit(const Node& n) {
    switch (n.type) {
      case NodeType::kFor: {
        const auto& f = static_cast<const For&>(n);
        declare_target(*f.target);
        visit(*f.iterable);
        visit_body(f.body);
        visit_body(f.else_body);
        if (f.filter) visit(*f.filter);
        return;
      }
      case NodeType::kSet: {
        const auto& s = static_cast<const Set&>(n);
        declare_target(*s.target);
        if (s.value) visit(*s.value);
        visit_body(s.body);
        return;
      }
      case NodeType::kMacro: {
        const auto& m = static_cast<const Macro&>(n);
        for (const NodePtr& p : m.params) declare_param(*p);
        visit_defaults(m.params);
        visit_body(m.body);
        return;
      }
      case NodeType::kCallBlock: {
        const auto& c = static_cast<const CallBlock&>(n);
        visit(*c.call);
        for (const NodePtr& p : c.params) declare_param(*p);
        visit_defaults(c.params);
        visit_body(c.body);
        return;
      }
      case NodeType::kFilterBlock: {
        const auto& fb = static_cast<const FilterBlock&>(n);
        visit_body(fb.body);
        visit_filter(*fb.filter);
        return;
      }
      case NodeType::kIdent: {
        const std::string& name = static_cast<const Ident&>(n).name;
        if (special_name(name) && !declared_.count(name)) (name == "kwargs" ? result_.kwargs : result_.varargs) = true;
        return;
      }
      case NodeType::kMember: {
        const auto& m = static_cast<const Member&>(n);
        visit(*m.object);
        if (m.computed) visit(*m.property);
        return;
      }
      case NodeType::kFilter: {
        const auto& f = static_cast<const Filter&>(n);
        visit(*f.operand);
        visit_filter(*f.filter);
        return;
      }
      case NodeType::kTest:
        visit(*static_cast<const Test&>(n).operand);
        return;
      case NodeType::kSelect: {
        const auto& s = static_cast<const Select&>(n);
        visit(*s.test);
        visit(*s.lhs);
        return;
      }
      default:
        for_each_child(n, [this](const Node& c) { visit(c); });
    }
  }

  std::set<std::string> declared_;
  SpecialArgs result_;
};

}  // namespace

SpecialArgs find_special_args(const std::vector<NodePtr>& params, const Body& body) {
  return SpecialArgsFinder().run(params, body);
}

}  // namespace pagedchat::jinja::detail
