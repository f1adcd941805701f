// What the model loaders (llama2c/, gguf/, hf/) share: the bounds a model's dimensions must keep,
// and the wording of their errors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pagedchat::load {

// Sane bounds: well past any model of the supported families (vocabularies up to 262144 rows,
// hidden sizes up to 16384), small enough that products of them cannot overflow 64 bits.
inline constexpr int64_t kMaxDim = 1 << 16;        ///< hidden size, FFN size, head size
inline constexpr int64_t kMaxLayers = 1024;        ///< decoder layers
inline constexpr int64_t kMaxHeads = 1024;         ///< attention heads (query or KV)
inline constexpr int64_t kMaxVocab = 1 << 22;      ///< vocabulary rows or tokens
inline constexpr int64_t kMaxPositions = 1 << 24;  ///< context length / max_position_embeddings
/// Deepest nesting of arrays and objects a model folder's JSON files (config.json, tokenizer.json,
/// safetensors headers, ...) may have: real ones stay under 10; a hostile one nested 100 000 deep
/// would overflow the stack in anything that walks it recursively (a copy, a dump).
inline constexpr int kMaxJsonDepth = 128;

/// "[a, b, c]" for a tensor shape.
std::string shape_str(const std::vector<uint64_t>& shape);

/// Throws std::runtime_error("'NAME': WHAT"): a problem with the file or folder named `name`.
[[noreturn]] void fail_in(const std::string& name, const std::string& what);

/// The deepest nesting of arrays and objects in a JSON text (strings and escapes skipped), counted
/// without parsing; stops counting at `limit` + 1. For any text, valid JSON or not.
int json_nesting_depth(std::string_view text, int limit);

/// `text` parsed as JSON, after checking its nesting against kMaxJsonDepth. Throws
/// std::runtime_error("'NAME': not valid JSON: ...") / ("'NAME': nests arrays and objects deeper
/// than 128 levels").
nlohmann::json parse_json(std::string_view text, const std::string& name);

/// A JSON value as a short string for messages: its dump, cut to 60 characters.
std::string brief(const nlohmann::json& value);

}  // namespace pagedchat::load
