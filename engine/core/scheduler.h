// Scheduler: continuous batching with vLLM v1's unified token budget. Each step: running requests
// first (a decode token, or the next chunk of an unfinished prefill), then waiting requests
// (priority order, then arrival) while budget, max_num_seqs and free blocks allow; a long prompt
// is prefilled in chunks of at most long_prefill_token_threshold tokens, so other requests keep
// going. Blocks are asked of the KVCacheCoordinator, which counts them over every KV-cache group
// (a sliding-window group needs only its window's blocks, and gives back the rest as a request
// grows). A waiting request first takes its prefix-cache hits, including blocks that requests
// scheduled before it in the same step will fill (registered at allocation). When a running
// request cannot get a block, the latest-arrived (fcfs) or lowest-priority (priority) running
// request is preempted: its blocks are freed and it goes back to the waiting queue, to be
// recomputed when admitted again. Waiting requests are admitted by fair share between their keys
// (RequestOptions::fair_share_key):
// the key with the fewest running sequences first, then in scheduling order.
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "engine/config.h"
#include "engine/core/kv_cache_coordinator.h"
#include "engine/core/request.h"

namespace pagedchat {

struct ScheduledRequest {
  Request* request;
  int num_new_tokens;  ///< tokens computed for it this step, from request->num_computed_tokens
  bool samples;        ///< this step reaches the end of its known tokens: a new token is sampled
  /// Recurrent layers: the state checkpoints this step writes (KVCacheCoordinator::plan_checkpoint).
  CheckpointPlan checkpoint;
  /// Speculative decoding: the last num_spec_tokens of num_new_tokens are request->spec_token_ids'
  /// first drafts (then samples is true and the step gives 1 + num_spec_tokens rows of logits).
  int num_spec_tokens = 0;
};

/// What one step runs: requests in batch order.
struct SchedulerOutput {
  std::vector<ScheduledRequest> scheduled;
  int total_num_scheduled_tokens = 0;
  std::vector<Request*> preempted;                  ///< preempted while building this step
  std::vector<std::pair<int, int>> blocks_to_copy;  ///< copy-on-write (source, destination)
  /// Recurrent state slots to copy before the forward, in order (source -1: zero the destination).
  std::vector<std::pair<int, int>> state_copies;
};

struct SchedulerConfig {
  int max_num_seqs = 64;
  int max_num_batched_tokens = 512;
  int long_prefill_token_threshold = 0;  ///< most prompt tokens of one request per step; 0 = no cap
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, KVCacheCoordinator& kv) : config_(config), kv_(kv) {}

  void add_request(Request* request);
  /// Adds a request that already holds its blocks and computed tokens (a forked completion).
  void add_running(Request* request);
  /// Removes the request from whichever queue holds it and frees its blocks.
  void remove_request(Request* request);
  SchedulerOutput schedule();
  /// After the forward: advances num_computed_tokens (the blocks they fill were registered in the
  /// prefix cache by allocate_slots, when the step was scheduled).
  void update_after_step(const SchedulerOutput& out);
  /// After verification of a step `s` with drafts, num_accepted of them accepted (`finished`: the
  /// request finished on them). A speculative checkpoint is kept or dropped; the rejected drafts'
  /// K/V slots count as not computed (the next step writes over them). With recurrent layers the
  /// live state goes back to the one saved after the step's known tokens, and the accepted drafts
  /// count as not computed too (recomputed by the next step: one saved state per step instead of
  /// one per draft position). Returns the accepted drafts to be recomputed.
  int drafts_verified(Request& request, const ScheduledRequest& s, int num_accepted, bool finished);
  /// Drops a finished request from the running queue and frees its blocks.
  void finish_request(Request* request);

  int num_running() const { return int(running_.size()); }
  int num_waiting() const { return int(waiting_.size()); }
  long long num_preemptions() const { return num_preemptions_; }
  bool has_requests() const { return !running_.empty() || !waiting_.empty(); }
  const std::vector<Request*>& running() const { return running_; }
  const std::deque<Request*>& waiting() const { return waiting_; }

 private:
  void preempt(Request* request);
  void insert_waiting(Request* request);
  bool before(const Request* a, const Request* b) const;  // runs first
  /// The tokens r computes this step from position `start`: num_new cut by the long-prefill
  /// threshold and the budget, and never ending inside a bidirectional image that is not yet
  /// computed (the cut moves to the image's start, or, when the image starts at `start`, takes it
  /// whole within the budget, past the threshold). 0: r waits for a step with more budget.
  int cap(const Request* r, int start, int num_new, int budget) const;

  SchedulerConfig config_;
  KVCacheCoordinator& kv_;
  std::vector<Request*> running_;  ///< in admission order
  std::deque<Request*> waiting_;   ///< in scheduling order
  long long num_preemptions_ = 0;
};

}  // namespace pagedchat
