// pagedchat-cli subcommands. Each registers its options on a CLI11 subcommand and returns the
// function that runs it (exit code; errors are printed to stderr by main).
#pragma once

#include <functional>

namespace CLI { class App; }

namespace pagedchat::cli {

using Command = std::function<int()>;

/// `generate`: submit every --prompt together (one batch) and print the continuations.
Command add_generate_command(CLI::App& app);

/// `bench`: `throughput`, `latency` and `chat` benchmarks on random token-id prompts (see
/// engine/cli/bench_common.h); model load time is excluded from every figure.
Command add_bench_command(CLI::App& app);

}  // namespace pagedchat::cli
