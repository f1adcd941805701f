// Internal: the tree-walking interpreter, statement for statement as @huggingface/jinja 0.5.11's
// Interpreter:
//  - scopes: the context and built-ins in the global scope; a for loop opens one scope for all of
//    its iterations (a `set` inside the loop is seen by later iterations, not after the loop);
//    macros run in a scope whose parent is the CALLER's scope (they see the caller's variables);
//    `set` writes to the current scope; if blocks open none;
//  - for: over lists (a tuple target unpacks each item) and dicts (their keys); `loop` holds index,
//    index0, revindex, revindex0, first, last, length, previtem, nextitem; with `if cond` only the
//    matching items count; `else` runs when no iteration completed;
//  - break / continue: the output of the iteration they interrupt is dropped (reference
//    behaviour; Python keeps it); they also cross macro calls to reach the enclosing loop;
//  - macros: positional, then keyword arguments, then defaults (evaluated in the macro's scope);
//    `kwargs` / `varargs` collect extra arguments when the body reads them, extra ones are
//    refused otherwise; a macro returns its rendered body as a string;
//  - call blocks: `caller()` renders the block in the scope of the call statement.
// Every statement and expression evaluated costs a step and a level of depth (Limits).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/objects.h"
#include "engine/text/jinja/runtime.h"
#include "engine/text/jinja/strings.h"

namespace pagedchat::jinja::detail {

/// Variables of one scope. Names are views of the syntax tree, of the context's keys or of
/// static strings: all outlive the render.
struct Scope {
  explicit Scope(Scope* p) : parent(p) {}
  Scope* parent;
  std::vector<std::pair<std::string_view, Value>> vars;

  const Value* lookup(std::string_view name) const;
  bool has_local(std::string_view name) const;
  void set(std::string_view name, Value v);
};

/// Thrown by {% break %} / {% continue %}, caught by the enclosing for loop.
struct BreakSignal {
  std::size_t pos;
};
struct ContinueSignal {
  std::size_t pos;
};

/// Where errors point: the template's name and original text, and the map from preprocessed
/// offsets to original ones.
struct SourceInfo {
  const std::string* name;
  std::string_view original;
  const std::vector<std::uint32_t>* origin;
};

class Interpreter {
 public:
  Interpreter(Ctx& ctx, const SourceInfo& source) : ctx_(ctx), source_(source) {}

  /// Renders `program` with `context` (a dict). Throws Error.
  TemplatedText run(const Body& program, const Value& context);

  Ctx& ctx() { return ctx_; }

  Value eval(const Node& n, Scope& s);
  void exec_body(const Body& body, Scope& s, StrBuilder& out);
  /// Renders `body` into a new string value.
  Value render_body(const Body& body, Scope& s);
  /// Positional and keyword arguments of a call (spreads expanded).
  CallArgs eval_args(const std::vector<NodePtr>& args, Scope& s);
  /// Calls a callable value. Throws Failure when `fn` is not callable.
  Value call_value(const Value& fn, Scope& s, CallArgs& args);
  /// Binds a macro's (or caller block's) parameters in `scope` (the reference's
  /// bindMacroArguments). `display` names it in errors.
  void bind_params(const std::string& display, const std::vector<NodePtr>& params, SpecialArgs special, CallArgs& args,
                   Scope& scope);
  /// An Error at offset `pos` of the preprocessed source.
  Error error_at(std::size_t pos, Error::Kind kind, const std::string& message) const;

 private:
  void exec(const Node& n, Scope& s, StrBuilder& out);
  Value eval_node(const Node& n, Scope& s);
  void print(const Value& v, StrBuilder& out);
  void exec_for(const struct For& f, Scope& s, StrBuilder& out);
  void exec_set(const struct Set& st, Scope& s);
  void exec_call_block(const struct CallBlock& cb, Scope& s, StrBuilder& out);
  Value eval_member(const struct Member& m, Scope& s);
  Value eval_slice(const Value& obj, const struct Slice& sl, Scope& s);
  Value eval_call(const struct Call& c, Scope& s);
  Value eval_filter(const Value& operand, const Node& filter, Scope& s);

  Ctx& ctx_;
  SourceInfo source_;
};

/// obj.prop / obj[prop] (not a slice) as the reference's evaluateMemberExpression (access.cpp).
Value member_lookup(Ctx& ctx, const Value& obj, const Value& prop);
/// The callable a {% macro %} statement defines (macros.cpp).
Value make_macro(const struct Macro& m);

}  // namespace pagedchat::jinja::detail
