// Internal: truthiness, equality, ordering and the arithmetic / string operators, with the
// semantics of @huggingface/jinja 0.5.11's evaluateBinaryExpression and compareRuntimeValues:
//  - `==` is JavaScript's loose equality of the underlying values (1 == 1.0, "1" == 1, true == 1,
//    none == undefined; lists and dicts compare by identity);
//  - `in` looks for a strictly equal item (===) in a list, a substring in a string, a key in a dict;
//  - + - * on two integers stay integers, / always gives a float, // floors, % keeps the
//    dividend's sign (JavaScript's %), ** is left-associative;
//  - ~ and string + join the values' JavaScript strings ("a" ~ 1.0 is "a1");
//  - undefined or none operands are errors (except == and `x in undefined`);
//  - < > <= >= compare numbers only (the reference refuses strings).
// Integers are int64 here (JavaScript doubles there): a result past int64 is an error, and so is
// an integer // or % by zero (JavaScript would give Infinity or NaN).
#pragma once

#include <string>

#include "engine/text/jinja/ast.h"
#include "engine/text/jinja/runtime.h"
#include "engine/text/jinja/value.h"

namespace pagedchat::jinja::detail {

/// The reference's type name of a value ("StringValue", "ArrayValue", ...), for messages.
const char* type_name(const Value& v);

/// Python-style truthiness (the reference's __bool__): empty strings, lists and dicts, 0, none,
/// undefined and false are false; namespaces and callables are true.
bool truthy(const Value& v);
/// JavaScript's !!value.value (lists and dicts are always true): used where the reference tests
/// a raw value (indent's first / blank flags).
bool raw_truthy(const Value& v);

bool is_number(const Value& v);        ///< int or float
bool is_numeric_like(const Value& v);  ///< int, float or bool
double numeric_value(const Value& v);  ///< of a numeric-like value

/// left.value == right.value in JavaScript.
bool loose_equals(const Value& a, const Value& b);
/// left.value === right.value in JavaScript (`in`, `equalto`).
bool strict_equals(const Value& a, const Value& b);
/// SameValueZero (a JavaScript Set: `unique`).
bool same_value_zero(const Value& a, const Value& b);

/// compareRuntimeValues: <0, 0 or >0; none with none and undefined with undefined are equal,
/// numbers and bools compare numerically, strings by UTF-16 units (lowercased unless
/// `case_sensitive`). Throws Failure for other pairs.
int compare_values(const Value& a, const Value& b, bool case_sensitive);

/// A binary operator other than and / or. Throws Failure.
Value binary_op(Ctx& ctx, BinOp op, const Value& left, const Value& right);
/// not, unary - and +. Throws Failure.
Value unary_op(UnOp op, const Value& v);

}  // namespace pagedchat::jinja::detail
