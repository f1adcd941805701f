// Internal: the two halves of filter dispatch. filters.cpp holds the reference's filters, split as
// the reference splits them between the bare form (`x | f`) and the call form (`x | f(...)`);
// python_filters.cpp holds Python Jinja filters the reference lacks, consulted only for names
// (or forms) the reference does not know, so they never change a template the reference renders.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/interpreter.h"

namespace pagedchat::jinja::detail {

/// `x | name`. Throws Failure.
Value filter_bare(Interpreter& interp, const Value& operand, std::string_view name);
/// `x | name(args)`; `nodes` are the written arguments when there are any (selectattr checks them).
Value filter_call(Interpreter& interp, Scope& s, const Value& operand, std::string_view name, CallArgs& args,
                  const std::vector<NodePtr>* nodes);
/// A Python Jinja filter the reference lacks; `args` null for the bare form. nullopt: unknown.
std::optional<Value> python_filter(Interpreter& interp, Scope& s, const Value& operand, std::string_view name,
                                   CallArgs* args);

/// Helpers shared by both halves.
const Value* arg_or_kw(const CallArgs& a, std::size_t i, std::string_view kw);
Value join_values(Ctx& ctx, const Value& operand, const Value& separator);
Value unique_values(Ctx& ctx, const Value& list);

}  // namespace pagedchat::jinja::detail
