// --dtype and --kv-cache-dtype: the element types of the weights and of the KV cache, declared the
// same way by every command that loads a model (generate, chat, bench).
#pragma once

#include <CLI/CLI.hpp>

#include "engine/config.h"

namespace pagedchat::cli {

/// Declares --dtype (EngineConfig::dtype) and --kv-cache-dtype (EngineConfig::kv_cache_dtype) on
/// `cmd`, bound to `e` (which must outlive parsing); values outside the listed ones are refused by
/// CLI11 with the list.
void add_dtype_options(CLI::App* cmd, EngineConfig& e);

}  // namespace pagedchat::cli
