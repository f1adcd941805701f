// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
// Macros, call blocks and the binding of their parameters, as the reference's evaluateMacro,
// evaluateCallStatement and bindMacroArguments: positional arguments, then keyword ones, then
// defaults evaluated in the macro's own scope, whose parent is the caller's scope.
#include <algorithm>
#include <optional>

#include "engine/text/jinja/interpreter.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/strings.h"

namespace pagedchat::jinja::detail {

using Kind = Value::Kind;

namespace {

// A macro defined with {% macro %}.
class MacroCallable final : public Callable {
 public:
  explicit MacroCallable(const Macro& m) : m_(m) {}
  Value call(Interpreter& interp, Scope& caller, CallArgs& args) const override {
    DepthGuard depth(interp.ctx(), kCallDepthUnits);
    Scope scope(&caller);
    interp.bind_params("'" + m_.name + "'", m_.params, m_.special, args, scope);
    return interp.render_body(m_.body, scope);
  }
  std::string describe() const override { return "macro " + m_.name; }

 private:
  const Macro& m_;
};

// caller() inside a macro called from a {% call %} block. It refers to the block's scope, which
// ends with the block: a caller kept past it (in a namespace) refuses to run.
class CallerCallable final : public Callable {
 public:
  CallerCallable(const CallBlock& cb, Scope& scope, std::shared_ptr<bool> alive)
      : cb_(cb), scope_(scope), alive_(std::move(alive)) {}
  Value call(Interpreter& interp, Scope&, CallArgs& args) const override {
    if (!*alive_) fail("caller() used after its {% call %} block ended");
    DepthGuard depth(interp.ctx(), kCallDepthUnits);
    Scope scope(&scope_);
    interp.bind_params("None", cb_.params, cb_.special, args, scope);
    return interp.render_body(cb_.body, scope);
  }
  std::string describe() const override { return "caller"; }

 private:
  const CallBlock& cb_;
  Scope& scope_;
  std::shared_ptr<bool> alive_;
};

}  // namespace

Value make_macro(const Macro& m) { return make_callable(std::make_shared<MacroCallable>(m)); }

void Interpreter::exec_call_block(const CallBlock& cb, Scope& s, StrBuilder& out) {
  auto alive = std::make_shared<bool>(true);
  struct Expire {
    std::shared_ptr<bool> flag;
    ~Expire() { *flag = false; }
  } expire{alive};
  const Value caller = make_callable(std::make_shared<CallerCallable>(cb, s, alive));
  const auto& call = static_cast<const Call&>(*cb.call);
  CallArgs args = eval_args(call.args, s);
  const Value fn = eval(*call.callee, s);
  if (fn.kind() != Kind::kCallable)
    fail(std::string("Cannot call something that is not a function: got ") + type_name(fn));
  Scope with_caller(&s);
  with_caller.set("caller", caller);
  print(callable_of(fn).call(*this, with_caller, args), out);
}

void Interpreter::bind_params(const std::string& display, const std::vector<NodePtr>& params, SpecialArgs special,
                              CallArgs& args, Scope& scope) {
  std::vector<std::pair<std::string, Value>> keyword = std::move(args.keyword);
  std::vector<std::pair<std::string_view, const Node*>> pending;  // defaults, evaluated last
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Node& p = *params[i];
    const std::string& name = p.type == NodeType::kIdent ? static_cast<const Ident&>(p).name
                                                         : static_cast<const Kwarg&>(p).key;
    std::optional<Value> value;
    if (i < args.positional.size()) value = args.positional[i];
    if (!value) {
      const auto it = std::find_if(keyword.begin(), keyword.end(), [&](const auto& kv) { return kv.first == name; });
      if (it != keyword.end()) {
        value = std::move(it->second);
        keyword.erase(it);
      }
    }
    if (!value && p.type == NodeType::kKwarg) pending.emplace_back(name, static_cast<const Kwarg&>(p).value.get());
    scope.set(name, value ? std::move(*value) : Value());
  }
  if (special.kwargs) {
    Value kw = make_dict();
    for (auto& [k, v] : keyword) dict_set(kw, make_string(k, false), std::move(v));
    scope.set("kwargs", std::move(kw));
  } else if (!keyword.empty()) {
    fail("macro " + display + " takes no keyword argument '" + keyword.front().first + "'");
  }
  if (special.varargs) {
    std::vector<Value> rest;
    for (std::size_t i = params.size(); i < args.positional.size(); ++i) rest.push_back(args.positional[i]);
    scope.set("varargs", make_list(std::move(rest)));
  } else if (args.positional.size() > params.size()) {
    fail("macro " + display + " takes not more than " + std::to_string(params.size()) + " argument(s)");
  }
  for (const auto& [name, def] : pending) scope.set(name, eval(*def, scope));
}

}  // namespace pagedchat::jinja::detail
