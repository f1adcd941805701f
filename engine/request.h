// Request: one prompt's life in the engine (vLLM's v1 Request), owned by the engine, referenced
// by the scheduler's queues.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/request_status.h"
#include "engine/sampling_params.h"
#include "engine/tokenizer.h"

namespace pagedchat {

struct Request {
  Request(std::string id, std::string prompt_text, std::vector<int> prompt_ids, SamplingParams p,
          uint64_t arrival, const Tokenizer& tok)
      : request_id(std::move(id)), prompt(std::move(prompt_text)), prompt_token_ids(std::move(prompt_ids)),
        params(p), arrival_seq(arrival), detokenizer(tok, prompt_token_ids) {
    token_ids = prompt_token_ids;
    rng.seed(params.seed ? *params.seed : std::random_device{}());
  }

  std::string request_id;
  std::string prompt;
  std::vector<int> prompt_token_ids;
  std::vector<int> token_ids;       ///< prompt then generated ids (what the KV cache must hold)
  SamplingParams params;
  uint64_t arrival_seq;             ///< order of add_request (lower = earlier)
  RequestStatus status = RequestStatus::kWaiting;
  int num_computed_tokens = 0;      ///< tokens whose K/V are in the cache
  std::vector<int> block_ids;       ///< block table: block i holds positions [i*bs, (i+1)*bs)
  int num_preemptions = 0;
  std::optional<std::string> finish_reason;
  std::mt19937_64 rng;
  IncrementalDetokenizer detokenizer;
  size_t num_reported_tokens = 0;   ///< output ids already returned (kDelta)
  size_t num_reported_chars = 0;    ///< output text bytes already returned (kDelta)

  int num_tokens() const { return int(token_ids.size()); }
  int num_prompt_tokens() const { return int(prompt_token_ids.size()); }
  int num_output_tokens() const { return int(token_ids.size() - prompt_token_ids.size()); }
  bool is_finished() const { return status == RequestStatus::kFinished; }
};

}  // namespace pagedchat
