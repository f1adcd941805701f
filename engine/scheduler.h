// Scheduler: continuous batching with a per-step token budget (vLLM v1's unified scheduler).
// Each step: running requests first (a decode token, or the next chunk of an unfinished prefill),
// then waiting requests in arrival order while budget, max_num_seqs and free blocks allow (a long
// prompt is prefilled in chunks). When a running request cannot get a block, the latest-arrived
// running request is preempted: its blocks are freed and it returns to the front of the waiting
// queue, to be recomputed (prompt and output so far) when it is admitted again.
#pragma once

#include <deque>
#include <vector>

#include "engine/kv_cache_manager.h"
#include "engine/request.h"

namespace pagedchat {

struct ScheduledRequest {
  Request* request;
  int num_new_tokens;   ///< tokens computed for it this step, from request->num_computed_tokens
  bool samples;         ///< this step reaches the end of its known tokens: a new token is sampled
};

/// What one step runs: requests in batch order.
struct SchedulerOutput {
  std::vector<ScheduledRequest> scheduled;
  int total_num_scheduled_tokens = 0;
  std::vector<Request*> preempted;  ///< preempted while building this step
};

struct SchedulerConfig {
  int max_num_seqs = 64;
  int max_num_batched_tokens = 512;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, KVCacheManager& kv) : config_(config), kv_(kv) {}

  void add_request(Request* request);
  /// Removes the request from whichever queue holds it and frees its blocks.
  void remove_request(Request* request);
  SchedulerOutput schedule();
  /// After the forward: advances num_computed_tokens of every scheduled request.
  void update_after_step(const SchedulerOutput& out);
  /// Drops a finished request from the running queue and frees its blocks.
  void finish_request(Request* request);

  int num_running() const { return int(running_.size()); }
  int num_waiting() const { return int(waiting_.size()); }
  long long num_preemptions() const { return num_preemptions_; }
  bool has_requests() const { return !running_.empty() || !waiting_.empty(); }

 private:
  void preempt(Request* request);

  SchedulerConfig config_;
  KVCacheManager& kv_;
  std::vector<Request*> running_;   ///< in admission order
  std::deque<Request*> waiting_;
  long long num_preemptions_ = 0;
};

}  // namespace pagedchat
