// MtpProposer: speculative decoding's "mtp" method (vLLM's): the model's own multi-token-prediction
// block (Qwen3.5/3.6's nextn layer, GGUF nextn_predict_layers) proposes each request's next
// tokens from the target's hidden states.
//
// The MTP block is a decoder layer over x = eh_proj · [rms_norm(embed(x_p))·enorm |
// rms_norm(h_{p-1})·hnorm] at position p, where h_{p-1} is the target's hidden state (after its
// final norm) at the position before; its output, after shared_head_norm, goes through the
// target's classifier and predicts x_{p+1}. Row p pairs token p with the hidden state of p - 1 and
// row 0 with zeros, as ik_llama.cpp's MTP warm-up does (common/speculative.cpp; THIRD_PARTY_NOTICES),
// so row p depends on tokens 0..p only. The first draft comes from row N (the request's last
// token x_N with h_{N-1}); each further draft feeds the previous draft with the block's own
// normed output as its hidden state (vLLM's and ik_llama.cpp's chained MTP drafting).
//
// The block has its own paged KV cache (one attention layer, the target's block size, prefix
// caching as the target's: a row depends on its prefix only, so a chat's next turn finds its
// history's rows) and a shadow sequence per request whose rows are the "true" rows (target hidden
// states); draft rows are written past them as spec tokens (never registered) and overwritten
// later. A row whose hidden state the target did not compute in this engine (the first one after
// a prefix-cache hit whose rows the MTP cache no longer holds, or the row right after a hit) is
// computed with a zero hidden state: the drafts may be worse there, never the output
// (verification keeps it exact).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/config.h"
#include "engine/core/kv_cache_coordinator.h"
#include "engine/core/request.h"
#include "engine/model/model_runner.h"
#include "engine/model/model_weights.h"

namespace pagedchat {

/// The shape of `target`'s MTP head: the target's, one layer with the spec of its (last) full
/// attention layer, with the block's feed-forward (dense, experts, or none). Throws
/// std::invalid_argument naming --speculative-config when the target has no such layer.
ModelConfig mtp_head_config(const ModelConfig& target, const MtpWeights& block);

class MtpProposer {
 public:
  /// The first MTP block of `target` (ModelWeights::mtp) as a one-layer model on
  /// `target_runner`'s backend, sharing its token embedding and classifier, with a KV cache of
  /// `num_blocks` blocks of `config.block_size` tokens in `kv_dtype` (prefix caching when
  /// config.enable_prefix_caching). `target` and `target_runner`
  /// must outlive the proposer. Throws std::invalid_argument naming --speculative-config when the
  /// model has no MTP block, or the block cannot run (its eh_proj missing, ...).
  MtpProposer(const EngineConfig& config, const LoadedModel& target, ModelRunner& target_runner, int num_blocks,
              kernels::KvDType kv_dtype);

  /// The target's step computed positions [first, first + n) of `r` with hidden states `rows`
  /// ([n, hidden_size], ModelRunner::set_capture_hidden); the first `valid` positions' inputs
  /// are tokens r keeps (the rest were rejected drafts). Read by the next propose().
  void observe(const Request& r, int first, int valid, const float* rows);
  /// Computes the block's rows for every request observed since the last call and, for each
  /// (request, k) of `work` with k > 0, sets request->spec_token_ids to at most k greedy MTP
  /// drafts. All requests share each forward (at most max_num_batched_tokens rows). A request
  /// whose shadow sequence gets no KV blocks gets no drafts (its sequence is dropped).
  void propose(const std::vector<std::pair<Request*, int>>& work);
  /// Drops a request's shadow sequence and frees its blocks (finished or aborted).
  void remove(const std::string& request_id);

  int num_free_blocks() const { return kv_->num_free_blocks(); }

 private:
  struct Seq {
    std::unique_ptr<Request> rows;  // token_ids: the target's; num_computed_tokens: true rows done
    int hidden_first = 0;           // positions [hidden_first, + hidden.size() / H) of observed states
    std::vector<float> hidden;
    Request* target = nullptr;  // this step's request (observed or asked for drafts)
    int want = 0;               // drafts asked for
  };
  // The hidden state row p pairs with (h_{p-1}; zeros when the target's is not at hand).
  const float* hidden_for(const Seq& s, int p) const;
  // One forward of `so` with `inputs` as its hidden rows; returns false when it did not run.
  void run(const SchedulerOutput& so, const std::vector<float>& inputs);

  ModelConfig head_config_;
  ModelWeights head_weights_;
  MtpWeights block_;
  std::unique_ptr<ModelRunner> runner_;
  std::unique_ptr<KVCacheCoordinator> kv_;
  std::unordered_map<std::string, Seq> seqs_;
  std::vector<float> zeros_;
  std::vector<float> logits_;
  int hidden_size_ = 0;
  int vocab_ = 0;
  int max_positions_ = 0;
  int max_step_tokens_ = 0;
};

}  // namespace pagedchat
