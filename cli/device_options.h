// --device, --gpu-memory-utilization and --enforce-eager: where the forward runs, declared the
// same way by every command that loads a model (generate, chat, bench, serve).
#pragma once

#include <CLI/CLI.hpp>

#include "engine/config.h"

namespace pagedchat::cli {

/// Declares --device (EngineConfig::device), --gpu-memory-utilization and --enforce-eager on
/// `cmd`, bound to `e` (which must outlive parsing); a bad device string is refused by the engine
/// with the allowed forms.
void add_device_options(CLI::App* cmd, EngineConfig& e);

}  // namespace pagedchat::cli
