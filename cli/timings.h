// The timing line of `generate --timings` and `chat --timings` (as llama-cli prints its perf
// lines), and a reply's text with its accepted drafts tinted (`chat --tint-drafts`).
#pragma once

#include <ostream>
#include <string>

#include "engine/outputs.h"

namespace pagedchat::cli {

/// One line, from a finished request's metrics (RequestMetrics, steady-clock seconds):
///   [prompt: 580 tokens (512 cached) in 0.21 s, 323.8 tok/s | decode: 128 tokens in 4.10 s, 31.0 tok/s]
/// prompt: the tokens computed (prompt minus cached) over first_scheduled_time -> first_token_time
/// (the first token's sampling included); decode: the tokens after the first over first_token_time
/// -> last_token_time. A part with no time to measure shows "-" for its rate. With speculative
/// decoding a last part says whose drafts, how many were accepted and the mean tokens per step
/// that verified drafts (` | ngram drafts: 17 of 32 accepted, 1.53 tokens per verifying step`).
/// Never fails.
std::string timings_line(const RequestOutput& out);

/// Writes `c.text` to `out`; with `tint`, its accepted draft text (c.draft_spans) in green, between
/// the ANSI escapes SGR 32 and SGR 0 (`chat --tint-drafts`).
void write_text(std::ostream& out, const CompletionOutput& c, bool tint);

}  // namespace pagedchat::cli
