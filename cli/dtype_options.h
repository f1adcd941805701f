// --dtype and --kv-cache-dtype: the element types of the weights and of the KV cache, declared the
// same way by every command that loads a model (generate, chat, bench).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "engine/config.h"

namespace pagedchat::cli {

/// Declares --dtype (EngineConfig::dtype) and --kv-cache-dtype (EngineConfig::kv_cache_dtype) on
/// `cmd`, bound to `e` (which must outlive parsing): the names (parse_weight_dtype(),
/// parse_kv_cache_dtype()) become the enums here; values outside the listed ones are refused by
/// CLI11 with the list.
void add_dtype_options(CLI::App* cmd, EngineConfig& e);

/// Declares one weight-dtype option `flag` ("auto", "float32", "bfloat16", "float16") bound to
/// `out` (which must outlive parsing).
CLI::Option* add_weight_dtype_option(CLI::App* cmd, const std::string& flag, WeightDType& out, const std::string& help);

}  // namespace pagedchat::cli
