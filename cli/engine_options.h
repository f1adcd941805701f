// The engine options every command that runs the engine takes (generate, chat, serve, bench), in
// one place so that they are spelled, defaulted and explained the same everywhere (vLLM's
// EngineArgs names).
#pragma once

#include <CLI/CLI.hpp>

#include "engine/config.h"

namespace pagedchat::cli {

/// Declares on `cmd`, bound to `e` (which must outlive parsing): --max-model-len,
/// --kv-cache-bytes, --block-size, --max-num-seqs, --num-state-slots, --max-num-batched-tokens,
/// --long-prefill-token-threshold, --threads, and the dtype (add_dtype_options) and device
/// (add_device_options) options; with `prefix_caching_flag`, --no-prefix-caching too (it sets
/// e.enable_prefix_caching to false). Out-of-range values are refused by the engine, by name.
/// --speculative-config's method "oracle" is a usage error unless `oracle_allowed` (the benches
/// that record the continuation it replays).
void add_engine_options(CLI::App* cmd, EngineConfig& e, bool prefix_caching_flag = true, bool oracle_allowed = false);

}  // namespace pagedchat::cli
