// Follows the algorithm and step order of vLLM v1's Scheduler.schedule (Apache-2.0; THIRD_PARTY_NOTICES).
#include "engine/core/scheduler.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace pagedchat {

bool Scheduler::before(const Request* a, const Request* b) const {
  if (config_.policy == SchedulingPolicy::kPriority && a->priority != b->priority) return a->priority < b->priority;
  return a->arrival_seq < b->arrival_seq;
}

void Scheduler::insert_waiting(Request* request) {
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](Request* w) { return before(request, w); });
  waiting_.insert(it, request);
}

void Scheduler::add_request(Request* request) {
  request->status = RequestStatus::kWaiting;
  insert_waiting(request);
}

void Scheduler::add_running(Request* request) {
  request->status = RequestStatus::kRunning;
  running_.push_back(request);
}

void Scheduler::remove_request(Request* request) {
  std::erase(running_, request);
  std::erase(waiting_, request);
  kv_.free(*request);
}

void Scheduler::finish_request(Request* request) {
  std::erase(running_, request);
  kv_.free(*request);
}

void Scheduler::preempt(Request* request) {
  std::erase(running_, request);
  kv_.free(*request);
  request->status = RequestStatus::kPreempted;
  request->spec_token_ids.clear();
  request->num_computed_tokens = 0;  // recompute prompt + output so far (or from a checkpoint) when admitted again
  ++request->num_preemptions;
  ++num_preemptions_;
  insert_waiting(request);
}

int Scheduler::cap(const Request* r, int start, int num_new, int budget) const {
  int n = num_new;
  if (config_.long_prefill_token_threshold > 0) n = std::min(n, config_.long_prefill_token_threshold);
  n = std::min(n, budget);
  for (const MultiModalPlaceholder& m : r->mm_inputs) {
    if (!m.bidirectional || m.end() <= start || m.offset >= start + n || m.end() <= start + n) continue;
    // The step would end inside this image: stop before it, or take all of it.
    if (m.offset > start) return m.offset - start;
    return m.end() - start <= std::min(num_new, budget) ? m.end() - start : 0;
  }
  return n;
}

SchedulerOutput Scheduler::schedule() {
  SchedulerOutput out;
  int budget = config_.max_num_batched_tokens;

  // 1. Running requests, in admission order.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request* req = running_[i];
    // A decoding request verifies its draft tokens too (vLLM's num_tokens_with_spec); the budget
    // may cut some of them. (More than one known token before the drafts: a hybrid model's
    // accepted drafts, recomputed after a rollback.)
    const int num_known = req->num_tokens() - req->num_computed_tokens;
    const int num_drafts = int(req->spec_token_ids.size());
    int num_new = cap(req, req->num_computed_tokens, num_known + num_drafts, budget);
    if (num_new == 0) {  // an image that needs more of the budget than this step has left
      ++i;
      continue;
    }
    int num_spec = std::max(0, num_new - num_known);
    bool scheduled = true;
    while (!kv_.allocate_slots(*req, num_new)) {
      if (num_spec > 0) {  // drafts never cost another request its place: the step goes without them
        num_new -= num_spec;
        num_spec = 0;
        continue;
      }
      // Out of blocks: preempt the running request that would run last (possibly this one).
      Request* victim = *std::max_element(running_.begin(), running_.end(),
                                          [&](Request* a, Request* b) { return before(a, b); });
      if (auto it = std::find_if(out.scheduled.begin(), out.scheduled.end(),
                                 [&](const ScheduledRequest& s) { return s.request == victim; });
          it != out.scheduled.end()) {
        // A victim already scheduled this step loses its place in the batch too.
        budget += it->num_new_tokens;
        out.total_num_scheduled_tokens -= it->num_new_tokens;
        out.scheduled.erase(it);
        --i;  // it stood before req in running_
      }
      preempt(victim);
      out.preempted.push_back(victim);
      if (victim == req) {
        scheduled = false;
        break;
      }
    }
    if (!scheduled) continue;  // running_[i] is now the next request
    // Recurrent layers: without a slot for the state to roll back to, the step has no drafts.
    if (num_spec > 0 && !kv_.hold_spec_state_slot(*req)) {
      num_new -= num_spec;
      num_spec = 0;
    }
    out.scheduled.push_back(
        {req, num_new, req->num_computed_tokens + num_new - num_spec == req->num_tokens(), {}, num_spec});
    out.total_num_scheduled_tokens += num_new;
    budget -= num_new;
    ++i;
  }

  // 2. Waiting requests, unless this step had to preempt (no room to grow). This is also what keeps
  // registering blocks at allocation safe: a request admitted here may share blocks that requests
  // scheduled earlier in this step registered but have not computed yet; nothing is preempted
  // after that point, so each of those blocks is computed by this step's forward. (A request
  // preempted above frees its own not-yet-computed registered blocks before anyone could share
  // them, and KVCacheCoordinator::free unregisters them.)
  // Fair share (RequestOptions::fair_share_key): among the waiting requests the one whose key has
  // the fewest running sequences goes first (the scheduling order among equals; priorities first).
  std::unordered_map<std::string_view, int> running_per_key;
  for (const Request* r : running_) ++running_per_key[r->share_key];
  while (out.preempted.empty() && !waiting_.empty() && budget > 0 && int(running_.size()) < config_.max_num_seqs) {
    auto pick = waiting_.begin();
    int fewest = running_per_key[(*pick)->share_key];
    for (auto it = std::next(waiting_.begin()); it != waiting_.end() && fewest > 0; ++it) {
      if (config_.policy == SchedulingPolicy::kPriority && (*it)->priority != (*pick)->priority) break;
      const auto found = running_per_key.find((*it)->share_key);
      const int count = found == running_per_key.end() ? 0 : found->second;
      if (count < fewest) {
        pick = it;
        fewest = count;
      }
    }
    Request* req = *pick;
    KVCacheCoordinator::ComputedBlocks computed;
    if (req->block_ids.empty()) computed = kv_.get_computed_blocks(*req);
    const int start = req->block_ids.empty() ? computed.num_tokens : req->num_computed_tokens;
    const int num_new = cap(req, start, req->num_tokens() - start, budget);
    if (num_new == 0 || !kv_.allocate_slots(*req, num_new, &computed)) break;
    waiting_.erase(pick);
    ++running_per_key[req->share_key];
    req->status = RequestStatus::kRunning;
    running_.push_back(req);
    out.scheduled.push_back({req, num_new, req->num_computed_tokens + num_new == req->num_tokens(), {}});
    out.total_num_scheduled_tokens += num_new;
    budget -= num_new;
  }
  // Recurrent layers: the requests whose step crosses a block boundary checkpoint their state there
  // (planned after every preemption of this step, so only for requests that run).
  for (ScheduledRequest& s : out.scheduled)
    s.checkpoint = kv_.plan_checkpoint(*s.request, s.num_new_tokens, s.num_spec_tokens);
  out.blocks_to_copy = kv_.take_pending_copies();
  out.state_copies = kv_.take_pending_state_copies();
  return out;
}

int Scheduler::drafts_verified(Request& r, const ScheduledRequest& s, int num_accepted, bool finished) {
  const int num_known = s.num_new_tokens - s.num_spec_tokens;
  const int before = r.num_computed_tokens - s.num_new_tokens;  // update_after_step has advanced it
  const int num_valid = before + num_known + num_accepted;
  kv_.speculative_checkpoint_verified(r, s.checkpoint, before, num_valid);
  int recompute = 0;
  if (!finished && num_accepted < s.num_spec_tokens) {
    if (kv_.states()) {
      // The live state has taken every draft: back to the state saved after the known tokens;
      // the accepted drafts are computed again with the next step's tokens.
      kv_.restore_spec_state(r);
      r.num_computed_tokens = before + num_known;
      recompute = num_accepted;
    } else {
      r.num_computed_tokens = num_valid;
    }
  }
  // Blocks that accepted drafts filled join the prefix cache now (allocation registered only
  // blocks of known tokens), so a turn that ends on accepted drafts is cached to its end.
  kv_.cache_blocks(r, std::min(r.num_computed_tokens, num_valid));
  return recompute;
}

void Scheduler::update_after_step(const SchedulerOutput& out) {
  // The blocks these tokens fill were registered in the prefix cache when they were allocated; a
  // state checkpoint is registered at the end of a prompt (and every few blocks of a long one).
  for (const auto& s : out.scheduled) {
    Request& r = *s.request;
    const int before = r.num_computed_tokens;
    const bool ends_prompt = before < r.num_prompt_tokens() && before + s.num_new_tokens >= r.num_prompt_tokens();
    if (!s.checkpoint.speculative && (s.checkpoint.after > 0 || s.checkpoint.extra_after > 0 || ends_prompt))
      kv_.checkpoint_written(r, s.checkpoint, ends_prompt);
    r.num_computed_tokens += s.num_new_tokens;
  }
}

}  // namespace pagedchat
