// JSON forms of engine outputs for pagedchat-cli (nlohmann::json).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"

namespace pagedchat::cli {

/// A RequestOutput as JSON: request_id, prompt, prompt_token_ids, outputs[{index, text,
/// token_ids, finish_reason, stop_reason, cumulative_logprob?, logprobs?}], finished,
/// num_cached_tokens, metrics{...}.
nlohmann::json to_json(const RequestOutput& out);
/// EngineStats as JSON.
nlohmann::json to_json(const EngineStats& stats);
/// Serialises with invalid UTF-8 replaced (never throws on odd bytes).
std::string dump(const nlohmann::json& j, int indent = 2);

}  // namespace pagedchat::cli
