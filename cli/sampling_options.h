// The sampling options generate and chat share, and which of them the user gave: an option not
// given takes the model's default (generation_config.json), as vLLM fills in a request's unset
// fields, before the CLI's own default.
#pragma once

#include <CLI/CLI.hpp>

#include "engine/sample/sampling_defaults.h"
#include "engine/sample/sampling_params.h"

namespace pagedchat::cli {

/// The options add_sampling_options() declared, to ask after parsing which were given.
struct SamplingOptions {
  CLI::Option* temperature = nullptr;
  CLI::Option* top_p = nullptr;
  CLI::Option* top_k = nullptr;
  CLI::Option* min_p = nullptr;
  CLI::Option* repetition_penalty = nullptr;
  CLI::Option* max_tokens = nullptr;
  /// The fields whose option appeared on the command line.
  SamplingFieldsSet given() const;
};

/// Declares --temperature, --top-p, --top-k, --min-p, --repetition-penalty and --max-tokens on
/// `cmd`, bound to the fields of `s` (which must outlive parsing). `max_tokens_what` names what
/// max_tokens bounds ("completion", "reply") in the help text.
SamplingOptions add_sampling_options(CLI::App* cmd, SamplingParams& s, const std::string& max_tokens_what);

}  // namespace pagedchat::cli
