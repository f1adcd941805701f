// Internal: the built-ins the interpreter dispatches to: filters (filters.cpp), tests
// (is_tests.cpp), methods of strings and dicts (methods.cpp) and global functions (globals.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/interpreter.h"

namespace pagedchat::jinja::detail {

/// Applies filter `name` to `operand`; `args` are the written arguments, null when the filter was
/// written without parentheses (the reference treats the two forms apart). Throws Failure.
Value apply_filter(Interpreter& interp, Scope& s, const Value& operand, std::string_view name,
                   const std::vector<NodePtr>* args);

/// Runs test `name` (`x is name(args)`); `arg` is the reference's second test argument (equalto's
/// value in selectattr), undefined when absent. Throws Failure for an unknown test or a bad operand.
bool run_test(Ctx& ctx, std::string_view name, const Value& operand, const std::vector<Value>& args);

/// The built-in member `name` of a string, list or dict: a bound method, or the `length`
/// property; undefined when there is none.
Value builtin_member(const Value& obj, std::string_view name);
/// Calls method `name` of a string or dict without binding it first; nullopt when there is no
/// such method. Throws Failure for bad arguments.
std::optional<Value> call_method(Interpreter& interp, const Value& obj, std::string_view name, CallArgs& args);

/// Declares the reference's globals (true, false, none, True, False, None, namespace,
/// raise_exception, range, strftime_now) in `global`.
void install_globals(Scope& global);

/// A stable merge sort with a three-way comparator that may throw (the reference sorts with the
/// stable Array.prototype.sort); memory-safe whatever the comparator answers.
void sort_values(std::vector<Value>& v, const std::function<int(const Value&, const Value&)>& cmp);

/// The value at a dotted attribute path ("function.name", "0.role"), the reference's
/// getAttributeValue (used by map and sort).
Value attribute_path(const Value& item, std::string_view path);

}  // namespace pagedchat::jinja::detail
