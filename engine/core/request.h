// Request: one sequence's life in the engine (vLLM's v1 Request). A user request with n > 1 is a
// RequestGroup of n sequences that share the prompt's KV blocks after its prefill (fork).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "engine/core/request_status.h"
#include "engine/multimodal/mm_input.h"
#include "engine/outputs.h"
#include "engine/sample/sampling_params.h"
#include "engine/sample/stop_automaton.h"
#include "engine/sample/structured/grammar_matcher.h"
#include "engine/spec_decode/speculative_config.h"
#include "engine/text/reply_detokenizer.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

struct RequestGroup;

struct Request {
  Request(std::string id, std::vector<int> prompt_ids, SamplingParams p, uint64_t arrival, const Tokenizer* tok)
      : request_id(std::move(id)), prompt_token_ids(std::move(prompt_ids)), params(std::move(p)), arrival_seq(arrival) {
    token_ids = prompt_token_ids;
    rng.seed(params.seed ? *params.seed : std::random_device{}());
    if (tok) detokenizer.emplace(*tok, prompt_token_ids);
  }

  std::string request_id;  ///< internal id (the group's id, "#i" appended for i > 0)
  std::vector<int> prompt_token_ids;
  std::vector<int> token_ids;  ///< prompt then generated ids (what the KV cache must hold)
  SamplingParams params;
  uint64_t arrival_seq;          ///< order of add_request (lower = earlier)
  int priority = 0;              ///< lower runs first under the priority policy
  std::string cache_salt;        ///< isolates this request's prefix-cache entries
  std::string share_key;         ///< RequestOptions::fair_share_key, else the group's id
  int stable_prefix_tokens = 0;  ///< RequestOptions::stable_prefix_tokens (<= the prompt's length)
  /// The prompt's images in position order, not overlapping (RequestOptions::images); their
  /// identities join the prefix-cache keys of the blocks they lie in.
  std::vector<MultiModalPlaceholder> mm_inputs;
  RequestGroup* group = nullptr;
  int index = 0;  ///< completion index within the group

  RequestStatus status = RequestStatus::kWaiting;
  int num_computed_tokens = 0;  ///< tokens whose K/V are in the cache
  /// Block tables, one per KV-cache group (engine/core/kv_cache_groups.h), all the same length:
  /// block_ids[g][i] holds positions [i*bs, (i+1)*bs) for group g's layers (BlockPool::kNullBlock
  /// where a sliding window has released it). Empty while the request holds no blocks.
  std::vector<std::vector<int>> block_ids;
  std::vector<uint64_t> block_hashes;  ///< prefix-cache hash chain of its full blocks (the same in every group)
  int num_cached_blocks = 0;           ///< leading blocks registered in the prefix cache (every group)
  int num_preemptions = 0;
  // Recurrent (Gated DeltaNet) layers' state slots (engine/core/recurrent_state_manager.h).
  int state_slot = -1;                   ///< its live state (covering num_computed_tokens tokens); -1: none
  int checkpoint_slot = -1;              ///< its rolling checkpoint: the state after checkpoint_tokens tokens
  int checkpoint_tokens = 0;             ///< a block boundary; 0: the checkpoint slot holds nothing yet
  int checkpoint_registered_tokens = 0;  ///< the deepest checkpoint it registered
  int extra_checkpoint_slot = -1;        ///< a second checkpoint of this step (CheckpointPlan::extra_after)
  /// n > 1 before the fork: the live slots its completions will take (held from admission, so
  /// the fork never waits for one).
  std::vector<int> reserved_state_slots;
  // Speculative decoding (engine/spec_decode/).
  std::vector<int> spec_token_ids;  ///< draft tokens to verify after token_ids in its next step
  int num_spec_budget = 0;          ///< most draft tokens it proposes next (adapts to its acceptance)
  SpeculativeConfig::Method spec_method = SpeculativeConfig::Method::kNone;  ///< its proposer
  std::vector<int> oracle_token_ids;  ///< method "oracle": the continuation it proposes from (benchmarks)
  int spec_skip_steps = 0;            ///< steps left without proposals (after drafts nobody accepted)
  int spec_misses = 0;                ///< verifications in a row that accepted no draft
  /// Drafts accepted and drafts judged (each accepted one, and the first rejected), decayed by
  /// 5 % per verification, from the prior 1 of 2: spec_acceptance() estimates the chance that a
  /// draft is accepted once the one before it was.
  double spec_hits = 1, spec_trials = 2;
  double spec_acceptance() const { return spec_hits / spec_trials; }
  void observe_judged(double hits, double trials) {
    spec_hits = 0.95 * spec_hits + hits;
    spec_trials = 0.95 * spec_trials + trials;
  }
  void observe_drafts(int proposed, int accepted) {
    observe_judged(accepted, accepted + (accepted < proposed ? 1 : 0));
  }
  /// The first draft the batch-aware cut left out of its step (-1: none): judged against the
  /// token sampled in its place, so the estimate keeps learning while drafts are cut.
  int spec_cut_draft = -1;
  void observe_cut_draft(int sampled) {
    if (spec_cut_draft < 0) return;
    observe_judged(sampled == spec_cut_draft ? 1 : 0, 1);
    spec_cut_draft = -1;
  }
  /// Recurrent layers: the state after the known tokens of a step with drafts (the point rejected
  /// drafts roll back to); held from its first draft until freed.
  int spec_state_slot = -1;
  /// Recurrent layers: a block-boundary checkpoint that falls among a step's drafts, kept as the
  /// rolling checkpoint only if verification accepts the drafts up to it (else freed); -1: none.
  int spec_checkpoint_slot = -1;

  // Output side.
  std::mt19937_64 rng;
  std::optional<ReplyDetokenizer> detokenizer;  ///< absent for engines without a tokenizer
  std::string text;                             ///< output text (stop string cut applied once finished)
  size_t num_releasable_chars = 0;              ///< text bytes that can be reported (held back: maybe a stop string)
  size_t num_reported_chars = 0;                ///< text bytes already returned (kDelta)
  size_t num_reported_tokens = 0;               ///< output ids already returned (kDelta)
  size_t last_token_text_begin = 0;             ///< text's length before the latest token was appended
  /// Byte ranges [first, second) of `text` that came from accepted speculative drafts, in order
  /// (LLMEngine's verification adds them; CompletionOutput::draft_spans reports them).
  std::vector<std::pair<size_t, size_t>> draft_text_spans;
  std::optional<FinishReason> finish_reason;
  /// Why the engine itself ended this sequence "abort" (no token satisfies its restrictions, its
  /// grammar allows nothing next); empty otherwise (a user's abort, or not an error).
  std::string error;
  bool reported_finish = false;  ///< the finish reason was returned once
  StopReason stop_reason;
  std::shared_ptr<const StopAutomaton> stop_automaton;  ///< params.stop, built at the first text (shared by the group)
  StopAutomaton::Cursor stop_cursor;                    ///< how far text has been fed to it
  /// Where its output stands in params.structured_outputs' grammar (null without one).
  std::unique_ptr<structured::GrammarMatcher> matcher;
  std::vector<std::map<int, Logprob>> logprobs;
  double cumulative_logprob = 0.0;

  int num_tokens() const { return int(token_ids.size()); }
  int num_prompt_tokens() const { return int(prompt_token_ids.size()); }
  int num_output_tokens() const { return int(token_ids.size() - prompt_token_ids.size()); }
  bool is_finished() const { return status == RequestStatus::kFinished; }
};

/// The user-visible request: n sequences (completions) and the timings of the whole.
struct RequestGroup {
  std::string request_id;
  std::string prompt;
  std::vector<int> prompt_token_ids;
  SamplingParams params;
  std::vector<std::unique_ptr<Request>> seqs;           ///< seqs[0] prefills; the rest fork from it
  std::shared_ptr<const StopAutomaton> stop_automaton;  ///< params.stop as one automaton, once built
  std::shared_ptr<const structured::Grammar> grammar;   ///< params.structured_outputs compiled (or null)
  bool forked = false;
  RequestMetrics metrics;

  /// All sequences finished (before the fork there is only seqs[0]).
  bool finished() const {
    for (const auto& s : seqs)
      if (!s->is_finished()) return false;
    return true;
  }
};

}  // namespace pagedchat
