// Structured outputs as grammars: a JSON Schema, any JSON object, a regular expression, or one of
// a list of choices (vLLM's StructuredOutputsParams json / json_object / regex / choice; OpenAI's
// response_format). Every output the grammar admits parses as JSON and validates against the
// schema (the generation may pick a subset of what the schema allows: see json_schema_grammar).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sample/structured/grammar.h"

namespace pagedchat::structured {

/// A schema (or regex) the grammars cannot express: the message names the keyword and where it
/// is (a JSON pointer), e.g. "unsupported JSON Schema keyword 'uniqueItems' at /properties/tags".
/// The server answers it with a 400.
class UnsupportedSchema : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Any JSON object (response_format {"type": "json_object"}).
std::shared_ptr<const Grammar> json_object_grammar();

/// JSON texts valid against `schema` (draft 2020-12 keywords: type (one or a list), enum, const,
/// properties, required, additionalProperties, items, prefixItems, minItems, maxItems, anyOf,
/// oneOf (as anyOf), allOf (merged), $ref to "#", $defs / definitions and JSON pointers, string
/// minLength / maxLength / pattern / format (date, time, date-time, uuid, email, ipv4, uri),
/// integer and number minimum / maximum / exclusiveMinimum / exclusiveMaximum; annotations
/// (title, description, default, examples, $schema, $id, $comment, deprecated, readOnly,
/// writeOnly) are ignored). Choices that keep every output valid: properties in the schema's
/// order (hence an ordered_json); with properties and no additionalProperties, only those; number bounds rounded inward
/// to whole numbers; at most 12 whitespace characters between tokens and none after the value; numbers of at most 16
/// digits. Throws UnsupportedSchema for other keywords, an invalid schema or a false schema.
std::shared_ptr<const Grammar> json_schema_grammar(const nlohmann::ordered_json& schema);

/// Outputs that match `pattern` whole (vLLM's guided_regex; regex_grammar.h's syntax). Throws
/// UnsupportedSchema for a pattern it cannot compile.
std::shared_ptr<const Grammar> regex_grammar(std::string_view pattern);

/// Exactly one of `choices` (vLLM's guided_choice). Throws UnsupportedSchema when empty.
std::shared_ptr<const Grammar> choice_grammar(const std::vector<std::string>& choices);

}  // namespace pagedchat::structured
