#include "engine/scheduler.h"

#include <algorithm>

namespace pagedchat {

void Scheduler::add_request(Request* request) {
  request->status = RequestStatus::kWaiting;
  waiting_.push_back(request);
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
  request->num_computed_tokens = 0;  // recompute prompt + output so far when admitted again
  ++request->num_preemptions;
  ++num_preemptions_;
  // Back to the front of the waiting queue, keeping arrival order among preempted requests.
  auto it = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](Request* w) { return w->arrival_seq > request->arrival_seq; });
  waiting_.insert(it, request);
}

SchedulerOutput Scheduler::schedule() {
  SchedulerOutput out;
  int budget = config_.max_num_batched_tokens;

  // 1. Running requests, in admission order.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request* req = running_[i];
    const int num_new = std::min(req->num_tokens() - req->num_computed_tokens, budget);
    bool scheduled = true;
    while (!kv_.allocate_slots(*req, num_new)) {
      // Out of blocks: preempt the latest-arrived running request (possibly this one).
      Request* victim = *std::max_element(running_.begin(), running_.end(),
                                          [](Request* a, Request* b) { return a->arrival_seq < b->arrival_seq; });
      // A victim already scheduled this step loses its slot in the batch too.
      if (auto it = std::find_if(out.scheduled.begin(), out.scheduled.end(),
                                 [&](const ScheduledRequest& s) { return s.request == victim; });
          it != out.scheduled.end()) {
        budget += it->num_new_tokens;
        out.total_num_scheduled_tokens -= it->num_new_tokens;
        out.scheduled.erase(it);
        --i;  // the victim stood before req in running_
      }
      preempt(victim);
      out.preempted.push_back(victim);
      if (victim == req) {
        scheduled = false;
        break;
      }
    }
    if (!scheduled) continue;  // running_[i] is now the next request
    out.scheduled.push_back({req, num_new, req->num_computed_tokens + num_new == req->num_tokens()});
    out.total_num_scheduled_tokens += num_new;
    budget -= num_new;
    ++i;
  }

  // 2. Waiting requests, unless this step had to preempt (no room to grow).
  while (out.preempted.empty() && !waiting_.empty() && budget > 0 &&
         int(running_.size()) < config_.max_num_seqs) {
    Request* req = waiting_.front();
    const int num_new = std::min(req->num_tokens() - req->num_computed_tokens, budget);
    if (!kv_.allocate_slots(*req, num_new)) break;
    waiting_.pop_front();
    req->status = RequestStatus::kRunning;
    running_.push_back(req);
    out.scheduled.push_back({req, num_new, req->num_computed_tokens + num_new == req->num_tokens()});
    out.total_num_scheduled_tokens += num_new;
    budget -= num_new;
  }
  return out;
}

void Scheduler::update_after_step(const SchedulerOutput& out) {
  for (const auto& s : out.scheduled) s.request->num_computed_tokens += s.num_new_tokens;
}

}  // namespace pagedchat
