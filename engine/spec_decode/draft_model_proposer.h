// DraftModelProposer: speculative decoding's "draft_model" method (vLLM's): a smaller model with
// the target's vocabulary, loaded beside it with its own paged KV cache, proposes each request's
// next tokens greedily; the target verifies them in its next step.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/config.h"
#include "engine/core/kv_cache_coordinator.h"
#include "engine/core/request.h"
#include "engine/loader/model_loader.h"
#include "engine/model/model_runner.h"

namespace pagedchat {

class DraftModelProposer {
 public:
  using BackendFactory = std::function<std::unique_ptr<kernels::Backend>(const ModelConfig&)>;

  /// Loads target_config.speculative_config.model (any format load_model reads) on a backend from
  /// `make_backend`, with a bfloat16 paged KV cache of `num_blocks` blocks of the target's block
  /// size (prefix caching off: a draft sequence's blocks are its own). Throws
  /// std::invalid_argument naming --speculative-config when the draft's vocabulary differs from
  /// the target's (sizes, and every token's text where both have a tokenizer) or when it has
  /// recurrent layers; load errors as load_model throws them.
  DraftModelProposer(const EngineConfig& target_config, const ModelConfig& target_model,
                     const Tokenizer* target_tokenizer, const BackendFactory& make_backend, int num_blocks);

  /// For each (request, k) with k > 0: sets request->spec_token_ids to at most k tokens, the
  /// draft model's greedy continuation of request->token_ids. Each request keeps a draft sequence
  /// (its K/V) across steps: only the tokens it has not seen, or that differ from its own earlier
  /// drafts, are computed again. All requests run in the same forwards (at most
  /// max_num_batched_tokens tokens each). A request whose draft sequence gets no blocks gets no
  /// drafts (its draft sequence is dropped).
  void propose(const std::vector<std::pair<Request*, int>>& work);
  /// Drops a request's draft sequence and frees its blocks (finished or aborted).
  void remove(const std::string& request_id);

  const ModelConfig& draft_config() const { return bundle_.model.config; }
  int num_free_blocks() const { return kv_->num_free_blocks(); }

 private:
  ModelBundle bundle_;
  std::unique_ptr<ModelRunner> runner_;
  std::unique_ptr<KVCacheCoordinator> kv_;
  std::unordered_map<std::string, std::unique_ptr<Request>> seqs_;
  int vocab_ = 0;          ///< ids the draft may propose: both models' rows and the tokenizer's
  int max_positions_ = 0;  ///< the draft's positions (no drafts past them)
  int max_step_tokens_ = 0;
  std::vector<float> logits_;
};

}  // namespace pagedchat
