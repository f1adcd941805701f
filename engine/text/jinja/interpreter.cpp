// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
#include "engine/text/jinja/interpreter.h"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/serialize.h"
#include "engine/text/jinja/source.h"
#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja::detail {

using Kind = Value::Kind;

// --- scopes ---

const Value* Scope::lookup(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent) {
    for (const auto& [k, v] : s->vars) {
      if (k == name) return &v;
    }
  }
  return nullptr;
}

bool Scope::has_local(std::string_view name) const {
  for (const auto& [k, v] : vars) {
    if (k == name) return true;
  }
  return false;
}

void Scope::set(std::string_view name, Value v) {
  for (auto& [k, old] : vars) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  vars.emplace_back(name, std::move(v));
}

namespace {

const Value& static_name(std::string_view s) {
  // Keys of `loop`: built once, shared (never appended to).
  static const Value index = make_string("index", false), index0 = make_string("index0", false),
                     revindex = make_string("revindex", false), revindex0 = make_string("revindex0", false),
                     first = make_string("first", false), last = make_string("last", false),
                     length = make_string("length", false), previtem = make_string("previtem", false),
                     nextitem = make_string("nextitem", false);
  if (s == "index") return index;
  if (s == "index0") return index0;
  if (s == "revindex") return revindex;
  if (s == "revindex0") return revindex0;
  if (s == "first") return first;
  if (s == "last") return last;
  if (s == "length") return length;
  if (s == "previtem") return previtem;
  return nextitem;
}

Value loop_object(std::size_t i, std::size_t n, const std::vector<const Value*>& items) {
  Value loop = make_dict();
  auto& entries = dict_of(loop).entries;
  entries.reserve(9);
  const auto ii = static_cast<std::int64_t>(i), nn = static_cast<std::int64_t>(n);
  entries.emplace_back(static_name("index"), Value::integer(ii + 1));
  entries.emplace_back(static_name("index0"), Value::integer(ii));
  entries.emplace_back(static_name("revindex"), Value::integer(nn - ii));
  entries.emplace_back(static_name("revindex0"), Value::integer(nn - ii - 1));
  entries.emplace_back(static_name("first"), Value::boolean(i == 0));
  entries.emplace_back(static_name("last"), Value::boolean(i + 1 == n));
  entries.emplace_back(static_name("length"), Value::integer(nn));
  entries.emplace_back(static_name("previtem"), i > 0 ? *items[i - 1] : Value());
  entries.emplace_back(static_name("nextitem"), i + 1 < n ? *items[i + 1] : Value());
  std::uint32_t depth = 0;
  for (const auto& [k, v] : entries) depth = std::max(depth, depth_of(v));
  dict_of(loop).depth = depth + 1;
  return loop;
}

// Binds a for target (an identifier or a tuple of them) to `item`.
void bind_target(const Node& target, const Value& item, Scope& s) {
  if (target.type == NodeType::kIdent) {
    s.set(static_cast<const Ident&>(target).name, item);
    return;
  }
  const auto& names = static_cast<const ListLit&>(target).items;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (names[j]->type != NodeType::kIdent) {
      fail(std::string("Cannot unpack non-identifier type: ") + node_name(names[j]->type));
    }
    s.set(static_cast<const Ident&>(*names[j]).name, list_of(item).items[j]);
  }
}

// The reference's checks before a tuple target can take `item`.
void check_unpack(const Node& target, const Value& item) {
  if (target.type != NodeType::kTupleLit) return;
  if (!item.is_list() || list_of(item).tuple) fail(std::string("Cannot unpack non-iterable type: ") + type_name(item));
  const std::size_t want = static_cast<const ListLit&>(target).items.size(), have = list_of(item).items.size();
  if (want != have) fail(std::string("Too ") + (want > have ? "few" : "many") + " items to unpack");
}

}  // namespace

// --- errors ---

Error Interpreter::error_at(std::size_t pos, Error::Kind kind, const std::string& message) const {
  const auto& origin = *source_.origin;
  const std::size_t original = origin[std::min(pos, origin.size() - 1)];
  const LineColumn lc = line_column(source_.original, original);
  return Error(kind, message, *source_.name, lc.line, lc.column);
}

// --- statements ---

TemplatedText Interpreter::run(const Body& program, const Value& context) {
  struct NamespaceReaper {
    Ctx& ctx;
    ~NamespaceReaper() {
      for (auto& ns : ctx.namespaces) ns->clear();
    }
  } reaper{ctx_};
  Scope global(nullptr);
  install_globals(global);
  if (!context.is_undefined() && !context.is_none()) {
    if (!context.is_dict())
      throw Error(Error::Kind::kRender, "the context of a render must be a dict", *source_.name, 1, 1);
    for (const auto& [key, value] : dict_of(context).entries) {
      const std::string_view name = bytes_of(key);
      if (global.has_local(name)) {
        throw Error(Error::Kind::kRender, "Variable already declared: " + std::string(name), *source_.name, 1, 1);
      }
      global.set(name, value);
    }
  }
  StrBuilder out(ctx_);
  try {
    exec_body(program, global, out);
  } catch (const Failure& f) {  // every failure is positioned on its way up; this is a safety net
    throw error_at(0, f.kind, f.message);
  } catch (const BreakSignal& b) {
    throw error_at(b.pos, Error::Kind::kRender, "'break' outside of a for loop");
  } catch (const ContinueSignal& c) {
    throw error_at(c.pos, Error::Kind::kRender, "'continue' outside of a for loop");
  }
  return out.take();
}

void Interpreter::exec_body(const Body& body, Scope& s, StrBuilder& out) {
  for (const NodePtr& n : body) exec(*n, s, out);
}

Value Interpreter::render_body(const Body& body, Scope& s) {
  StrBuilder out(ctx_);
  exec_body(body, s, out);
  return out.finish();
}

void Interpreter::print(const Value& v, StrBuilder& out) {
  if (v.is_none() || v.is_undefined()) return;
  append_display(ctx_, out, v);
}

void Interpreter::exec(const Node& n, Scope& s, StrBuilder& out) {
  try {
    if (n.type == NodeType::kStrLit) {  // template text
      ctx_.step();
      out.add(static_cast<const StrLit&>(n).value);
      return;
    }
    if (!is_statement(n.type)) {
      print(eval(n, s), out);  // eval positions its own failures; printing's are positioned here
      return;
    }
    DepthGuard frame(ctx_);
    switch (n.type) {
      case NodeType::kIf: {
        const auto& i = static_cast<const If&>(n);
        exec_body(truthy(eval(*i.test, s)) ? i.body : i.alternate, s, out);
        return;
      }
      case NodeType::kFor:
        return exec_for(static_cast<const For&>(n), s, out);
      case NodeType::kSet:
        return exec_set(static_cast<const Set&>(n), s);
      case NodeType::kMacro: {
        const auto& m = static_cast<const Macro&>(n);
        s.set(m.name, make_macro(m));
        return;
      }
      case NodeType::kCallBlock:
        return exec_call_block(static_cast<const CallBlock&>(n), s, out);
      case NodeType::kFilterBlock: {
        const auto& fb = static_cast<const FilterBlock&>(n);
        const Value body = render_body(fb.body, s);
        print(eval_filter(body, *fb.filter, s), out);
        return;
      }
      case NodeType::kBreak:
        throw BreakSignal{n.pos};
      case NodeType::kContinue:
        throw ContinueSignal{n.pos};
      default:
        return;  // comments
    }
  } catch (const Failure& f) {
    throw error_at(n.pos, f.kind, f.message);
  } catch (const std::bad_alloc&) {
    throw error_at(n.pos, Error::Kind::kLimit, "out of memory");
  } catch (const std::length_error& e) {
    throw error_at(n.pos, Error::Kind::kLimit, std::string("too large: ") + e.what());
  }
}

void Interpreter::exec_for(const For& f, Scope& s, StrBuilder& out) {
  Scope scope(&s);
  Value iterable = eval(*f.iterable, scope);
  std::vector<Value> keys;  // a dict iterates over its keys
  const std::vector<Value>* items = nullptr;
  if (iterable.is_list()) {
    items = &list_of(iterable).items;
  } else if (iterable.is_dict()) {
    for (const auto& entry : dict_of(iterable).entries) keys.push_back(entry.first);
    items = &keys;
  } else {
    fail(std::string("Expected iterable or object type in for loop: got ") + type_name(iterable));
  }
  ctx_.charge_items(items->size());
  std::vector<const Value*> selected;
  selected.reserve(items->size());
  for (const Value& item : *items) {
    check_unpack(*f.target, item);
    if (f.filter) {
      Scope test_scope(&scope);
      bind_target(*f.target, item, test_scope);
      if (!truthy(eval(*f.filter, test_scope))) continue;
    }
    selected.push_back(&item);
  }
  bool no_iteration = true;
  const std::size_t n = selected.size();
  for (std::size_t i = 0; i < n; ++i) {
    scope.set("loop", loop_object(i, n, selected));
    bind_target(*f.target, *selected[i], scope);
    const std::size_t mark = out.size();
    try {
      exec_body(f.body, scope, out);
    } catch (const ContinueSignal&) {
      out.truncate(mark);  // the reference drops the interrupted iteration's output
      continue;
    } catch (const BreakSignal&) {
      out.truncate(mark);
      break;
    }
    no_iteration = false;
  }
  if (no_iteration) exec_body(f.else_body, scope, out);
}

void Interpreter::exec_set(const Set& st, Scope& s) {
  Value rhs = st.value ? eval(*st.value, s) : render_body(st.body, s);
  const Node& target = *st.target;
  switch (target.type) {
    case NodeType::kIdent:
      s.set(static_cast<const Ident&>(target).name, std::move(rhs));
      return;
    case NodeType::kTupleLit: {
      if (!rhs.is_list()) fail(std::string("Cannot unpack non-iterable type in set: ") + type_name(rhs));
      const auto& names = static_cast<const ListLit&>(target).items;
      const auto& values = list_of(rhs).items;
      if (names.size() != values.size()) {
        fail(std::string("Too ") + (names.size() > values.size() ? "few" : "many") + " items to unpack in set");
      }
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i]->type != NodeType::kIdent) {
          fail(std::string("Cannot unpack to non-identifier in set: ") + node_name(names[i]->type));
        }
        s.set(static_cast<const Ident&>(*names[i]).name, values[i]);
      }
      return;
    }
    case NodeType::kMember: {
      const auto& m = static_cast<const Member&>(target);
      const Value object = eval(*m.object, s);
      if (object.kind() != Kind::kNamespace) fail("cannot assign attribute on non-namespace object");
      if (m.property->type != NodeType::kIdent) fail("Cannot assign to member with non-identifier property");
      dict_set(object, make_string(static_cast<const Ident&>(*m.property).name, false), std::move(rhs));
      return;
    }
    default:
      fail(std::string("Invalid LHS inside assignment expression: ") + node_name(target.type));
  }
}

// --- expressions ---

Value Interpreter::eval(const Node& n, Scope& s) {
  try {
    DepthGuard frame(ctx_);
    return eval_node(n, s);
  } catch (const Failure& f) {
    throw error_at(n.pos, f.kind, f.message);
  } catch (const std::bad_alloc&) {
    throw error_at(n.pos, Error::Kind::kLimit, "out of memory");
  } catch (const std::length_error& e) {
    throw error_at(n.pos, Error::Kind::kLimit, std::string("too large: ") + e.what());
  }
}

Value Interpreter::eval_node(const Node& n, Scope& s) {
  switch (n.type) {
    case NodeType::kIntLit: {
      const auto& lit = static_cast<const IntLit&>(n);
      if (lit.too_big) fail("integer literal does not fit 64 bits");
      return Value::integer(lit.value);
    }
    case NodeType::kFloatLit:
      return Value::number(static_cast<const FloatLit&>(n).value);
    case NodeType::kStrLit:
      return static_cast<const StrLit&>(n).value;
    case NodeType::kArrayLit:
    case NodeType::kTupleLit: {
      const auto& l = static_cast<const ListLit&>(n);
      std::vector<Value> items;
      items.reserve(l.items.size());
      for (const NodePtr& item : l.items) items.push_back(eval(*item, s));
      return make_list(std::move(items), n.type == NodeType::kTupleLit);
    }
    case NodeType::kObjectLit: {
      Value dict = make_dict();
      for (const auto& [k, v] : static_cast<const ObjectLit&>(n).entries) {
        const Value key = eval(*k, s);
        if (!key.is_string()) fail(std::string("Object keys must be strings: got ") + type_name(key));
        dict_set(dict, key, eval(*v, s));
      }
      return dict;
    }
    case NodeType::kIdent: {
      const Value* v = s.lookup(static_cast<const Ident&>(n).name);
      return v ? *v : Value();
    }
    case NodeType::kMember:
      return eval_member(static_cast<const Member&>(n), s);
    case NodeType::kCall:
      return eval_call(static_cast<const Call&>(n), s);
    case NodeType::kUnary: {
      const auto& u = static_cast<const Unary&>(n);
      return unary_op(u.op, eval(*u.operand, s));
    }
    case NodeType::kBinary: {
      const auto& b = static_cast<const Binary&>(n);
      Value left = eval(*b.left, s);
      if (b.op == BinOp::kAnd) return truthy(left) ? eval(*b.right, s) : left;
      if (b.op == BinOp::kOr) return truthy(left) ? left : eval(*b.right, s);
      const Value right = eval(*b.right, s);
      return binary_op(ctx_, b.op, left, right);
    }
    case NodeType::kFilter: {
      const auto& f = static_cast<const Filter&>(n);
      return eval_filter(eval(*f.operand, s), *f.filter, s);
    }
    case NodeType::kTest: {
      const auto& t = static_cast<const Test&>(n);
      const Value operand = eval(*t.operand, s);
      std::vector<Value> args;
      if (!t.args.empty()) args = eval_args(t.args, s).positional;
      const bool r = run_test(ctx_, t.name, operand, args);
      return Value::boolean(t.negate ? !r : r);
    }
    case NodeType::kSelect: {
      const auto& sel = static_cast<const Select&>(n);
      if (!truthy(eval(*sel.test, s))) return Value();
      return eval(*sel.lhs, s);
    }
    case NodeType::kTernary: {
      const auto& t = static_cast<const Ternary&>(n);
      return truthy(eval(*t.condition, s)) ? eval(*t.if_true, s) : eval(*t.if_false, s);
    }
    default:
      fail(std::string("Unknown node type: ") + node_name(n.type));
  }
}

CallArgs Interpreter::eval_args(const std::vector<NodePtr>& args, Scope& s) {
  CallArgs out;
  for (const NodePtr& a : args) {
    if (a->type == NodeType::kSpread) {
      const Value v = eval(*static_cast<const Spread&>(*a).operand, s);
      if (!v.is_list()) fail(std::string("Cannot unpack non-iterable type: ") + type_name(v));
      for (const Value& item : list_of(v).items) out.positional.push_back(item);
    } else if (a->type != NodeType::kKwarg && a->type != NodeType::kKwSpread) {
      out.positional.push_back(eval(*a, s));
    }
  }
  auto add = [&](std::string key, Value v) {
    if (out.kw(key)) fail("Got multiple values for keyword argument '" + key + "'");
    out.keyword.emplace_back(std::move(key), std::move(v));
  };
  for (const NodePtr& a : args) {
    if (a->type == NodeType::kKwarg) {
      const auto& kw = static_cast<const Kwarg&>(*a);
      add(kw.key, eval(*kw.value, s));
    } else if (a->type == NodeType::kKwSpread) {
      const Value v = eval(*static_cast<const Spread&>(*a).operand, s);
      if (!v.is_dict()) fail(std::string("Argument after ** must be a mapping, not ") + type_name(v));
      for (const auto& [k, val] : dict_of(v).entries) add(std::string(bytes_of(k)), val);
    }
  }
  ctx_.check_items(out.positional.size() + out.keyword.size());
  return out;
}

Value Interpreter::call_value(const Value& fn, Scope& s, CallArgs& args) {
  if (fn.kind() != Kind::kCallable)
    fail(std::string("Cannot call something that is not a function: got ") + type_name(fn));
  return callable_of(fn).call(*this, s, args);
}

Value Interpreter::eval_call(const Call& c, Scope& s) {
  CallArgs args = eval_args(c.args, s);
  // obj.method(...) on a string or dict: call the built-in without binding it first.
  if (c.callee->type == NodeType::kMember) {
    const auto& m = static_cast<const Member&>(*c.callee);
    if (!m.computed && m.property->type == NodeType::kIdent) {
      const Value obj = eval(*m.object, s);
      const std::string& name = static_cast<const Ident&>(*m.property).name;
      const bool own = (obj.is_dict() || obj.kind() == Kind::kNamespace) && dict_of(obj).find(name) != nullptr;
      if (!own && (obj.is_string() || obj.is_dict())) {
        if (auto r = call_method(*this, obj, name, args)) return std::move(*r);
      }
      return call_value(member_lookup(ctx_, obj, make_string(name, false)), s, args);
    }
  }
  return call_value(eval(*c.callee, s), s, args);
}

Value Interpreter::eval_filter(const Value& operand, const Node& filter, Scope& s) {
  if (filter.type == NodeType::kIdent)
    return apply_filter(*this, s, operand, static_cast<const Ident&>(filter).name, nullptr);
  if (filter.type == NodeType::kCall) {
    const auto& c = static_cast<const Call&>(filter);
    if (c.callee->type != NodeType::kIdent) fail(std::string("Unknown filter: ") + node_name(c.callee->type));
    return apply_filter(*this, s, operand, static_cast<const Ident&>(*c.callee).name, &c.args);
  }
  fail(std::string("Unknown filter: ") + node_name(filter.type));
}

}  // namespace pagedchat::jinja::detail
