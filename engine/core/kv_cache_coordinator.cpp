// Follows the design of vLLM v1's KVCacheManager and KVCacheCoordinator (Apache-2.0; THIRD_PARTY_NOTICES).
#include "engine/core/kv_cache_coordinator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pagedchat {

KVCacheCoordinator::KVCacheCoordinator(int num_blocks, int block_size, bool enable_prefix_caching)
    : KVCacheCoordinator(KVCacheGroups::single(1), num_blocks, block_size, enable_prefix_caching) {}

KVCacheCoordinator::KVCacheCoordinator(const KVCacheGroups& groups, int num_blocks, int block_size,
                                       bool enable_prefix_caching)
    : groups_(groups), pool_(num_blocks, enable_prefix_caching, groups.has_sliding_window()), block_size_(block_size) {
  if (groups_.num_groups() < 1) throw std::invalid_argument("KVCacheCoordinator: no KV-cache groups");
  for (int g = 0; g < groups_.num_groups(); ++g) {
    const int w = groups_.groups[std::size_t(g)].sliding_window;
    if (w > 0)
      managers_.push_back(std::make_unique<SlidingWindowManager>(pool_, g, block_size, w));
    else
      managers_.push_back(std::make_unique<FullAttentionManager>(pool_, g, block_size));
  }
}

KVCacheCoordinator::KVCacheCoordinator(const KVCacheGroups& groups, int num_blocks, int block_size,
                                       bool enable_prefix_caching, int num_state_slots)
    : KVCacheCoordinator(groups, num_blocks, block_size, enable_prefix_caching) {
  if (num_state_slots > 0) states_ = std::make_unique<RecurrentStateManager>(num_state_slots, enable_prefix_caching);
}

KVCacheCoordinator::ComputedBlocks KVCacheCoordinator::get_computed_blocks(Request& r) {
  ComputedBlocks out;
  if (!pool_.caching_enabled() || !r.block_ids.empty()) return out;
  const int max_blocks = (r.num_tokens() - 1) / block_size_;  // leave >= 1 token to compute
  queries_ += r.num_tokens();
  // The length every group agrees on: each group takes the current candidate or shortens it; a
  // shortened candidate goes round all groups again (a sliding group's hit at a shorter length
  // needs other blocks). Full groups are looked up once: their hits are downward closed.
  const int n = num_groups();
  std::vector<std::vector<int>> hits(static_cast<std::size_t>(n));
  std::vector<bool> looked_up(static_cast<std::size_t>(n), false);
  int length = max_blocks;
  for (;;) {
    int candidate = length;
    for (int g = 0; g < n && candidate > 0; ++g) {
      auto& hit = hits[std::size_t(g)];
      if (managers_[std::size_t(g)]->hit_is_downward_closed() && looked_up[std::size_t(g)]) {
        hit.resize(std::min<std::size_t>(hit.size(), std::size_t(candidate)));
      } else {
        hit = managers_[std::size_t(g)]->find_longest_cache_hit(r, candidate);
        looked_up[std::size_t(g)] = true;
      }
      candidate = int(hit.size());
    }
    // Recurrent layers resume only from a block boundary with a state checkpoint: the deepest one
    // within the attention layers' hit (a shorter length goes round the groups again).
    if (states_)
      while (candidate > 0 &&
             !states_->contains(block_key(r, candidate - 1, block_size_), block_hash(r, candidate - 1, block_size_)))
        --candidate;
    // An image whose tokens see their whole image on sliding-window layers (Gemma 4) is computed
    // in one piece: a hit never ends inside it (the blocks of its start may lie before the ones a
    // sliding group's hit keeps). Later images first, so a cut moves past earlier ones too.
    for (auto m = r.mm_inputs.rbegin(); m != r.mm_inputs.rend(); ++m)
      if (m->window_spans_image && m->offset < candidate * block_size_ && candidate * block_size_ < m->end())
        candidate = m->offset / block_size_;
    if (candidate >= length) break;
    length = candidate;
  }
  if (length == 0) return out;
  if (states_)
    out.state_source = *states_->lookup(block_key(r, length - 1, block_size_), block_hash(r, length - 1, block_size_));
  for (auto& hit : hits) hit.resize(std::size_t(length));
  out.block_ids = std::move(hits);
  out.num_tokens = length * block_size_;
  hits_ += out.num_tokens;
  return out;
}

int KVCacheCoordinator::num_blocks_to_allocate(const Request& r, int num_new_tokens,
                                               const ComputedBlocks* computed) const {
  const bool take = computed && r.block_ids.empty() && computed->num_tokens > 0;
  const int num_computed = take ? computed->num_tokens : r.num_computed_tokens;
  static const std::vector<int> kEmpty;
  int n = 0;
  for (int g = 0; g < num_groups(); ++g) {
    const std::vector<int>& table = take                  ? computed->block_ids[std::size_t(g)]
                                    : r.block_ids.empty() ? kEmpty
                                                          : r.block_ids[std::size_t(g)];
    n += managers_[std::size_t(g)]->num_blocks_to_allocate(table, num_computed, num_computed + num_new_tokens, !take);
  }
  return n;
}

void KVCacheCoordinator::remove_skipped_blocks(Request& r) {
  for (std::size_t g = 0; g < r.block_ids.size(); ++g)
    managers_[g]->remove_skipped_blocks(r.block_ids[g], r.num_computed_tokens);
}

bool KVCacheCoordinator::allocate_slots(Request& r, int num_new_tokens, const ComputedBlocks* computed) {
  const bool take = computed && r.block_ids.empty() && computed->num_tokens > 0;
  // Blocks the window has passed go back first: they count as free for this allocation.
  remove_skipped_blocks(r);
  int free_after_hits = pool_.num_free_blocks();
  if (take)
    for (const auto& table : computed->block_ids)
      for (int b : table) free_after_hits -= !is_null(b) && pool_.ref_count(b) == 0;  // leave the free queue
  if (num_blocks_to_allocate(r, num_new_tokens, computed) > free_after_hits) return false;
  // A request starting (or restarting) takes its live state slot: a copy of the hit's checkpoint,
  // or zeros.
  // The first sequence of an n > 1 request not yet forked also reserves its completions' slots.
  if (states_ && r.state_slot < 0) {
    const int source = take ? computed->state_source : -1;
    const int completions = r.group && !r.group->forked && r.index == 0 ? std::max(1, r.params.n) : 1;
    if (states_->num_available(source) < completions) return false;
    const int slot = *states_->allocate(source);
    r.state_slot = slot;
    pending_state_copies_.emplace_back(source, slot);
    for (int i = 1; i < completions; ++i) r.reserved_state_slots.push_back(*states_->allocate(source));
  }

  // Every group's hits are referenced before any group allocates, so no allocation evicts a hit.
  if (take) {
    for (const auto& table : computed->block_ids)
      for (int b : table)
        if (!is_null(b)) pool_.incref(b);
    r.block_ids = computed->block_ids;
    r.num_computed_tokens = computed->num_tokens;
    r.num_cached_blocks = computed->num_tokens / block_size_;
  }
  if (r.block_ids.empty()) r.block_ids.resize(std::size_t(num_groups()));
  const int num_computed = r.num_computed_tokens, num_tokens = num_computed + num_new_tokens;
  for (int g = 0; g < num_groups(); ++g)
    managers_[std::size_t(g)]->allocate(r.block_ids[std::size_t(g)], num_computed, num_tokens, !take, pending_copies_);
  // Register now the blocks this step fills, before their K/V exist (as vLLM v1 does), so that
  // another request with the same prefix admitted later in this same step (or in a later one)
  // takes them from get_computed_blocks and computes only its remaining tokens: the "send to all
  // panes" case, where every pane's request arrives before one step(). This is safe because
  //  - within one forward, DecoderModel::forward (engine/model/decoder_model.cpp) runs, layer by
  //    layer, qkv_rope_and_cache for ALL the batch's tokens (writing every scheduled token's K/V
  //    into its slot) before paged_attention for any of them, and each op finishes (the thread
  //    pool joins) before the next starts; so the request sharing a block reads, in every layer,
  //    K/V its owner wrote earlier in that same layer, identical to what it would have written
  //    itself (a K/V row depends only on the tokens up to its position; linear() is batch
  //    invariant). The sharer never writes into the shared blocks: its own tokens start after them.
  //  - a block registered here whose step does not run for its request (preempted while the step
  //    is built) is unregistered by free(): the scheduler preempts only while scheduling running
  //    requests and takes prefix hits (admits waiting requests) only in a step that preempted
  //    nobody, so such a block is never shared by the time it is freed.
  // The same holds in every group: a sliding group's hit holds only blocks inside the window.
  // Draft tokens (speculative decoding) beyond r.token_ids are never registered: their blocks
  // are registered once accepted tokens fill them.
  cache_blocks(r, std::min(num_tokens, r.num_tokens()));
  return true;
}

void KVCacheCoordinator::cache_blocks(Request& r, int num_computed_tokens) {
  if (!pool_.caching_enabled() || r.block_ids.empty()) return;
  const int full = std::min<int>(num_computed_tokens / block_size_, int(r.block_ids.front().size()));
  for (int i = r.num_cached_blocks; i < full; ++i) {
    const uint64_t h = block_hash(r, i, block_size_);
    const BlockKey key = block_key(r, i, block_size_);
    for (const auto& table : r.block_ids)
      if (!is_null(table[std::size_t(i)])) pool_.register_block(table[std::size_t(i)], key, h);
  }
  r.num_cached_blocks = std::max(r.num_cached_blocks, full);
}

CheckpointPlan KVCacheCoordinator::plan_checkpoint(Request& r, int num_new_tokens, int num_spec_tokens) {
  CheckpointPlan plan;
  if (!states_ || !states_->caching_enabled() || r.state_slot < 0) return plan;
  const int computed = r.num_computed_tokens, end = computed + num_new_tokens, prompt = r.num_prompt_tokens();
  const bool ends_prompt = computed < prompt && end >= prompt;
  // (A boundary the rolling checkpoint already holds is not written again: a step recomputing
  // accepted drafts after a rollback crosses it a second time.)
  auto wanted = [&](int boundary) {
    return boundary > computed && boundary <= end && boundary > r.checkpoint_registered_tokens &&
           boundary > r.checkpoint_tokens;
  };
  int boundary = end / block_size_ * block_size_;
  int extra = stable_boundary(r);
  // The step that ends the prompt exactly on a boundary keeps the one before it, the deepest a
  // request with this very prompt can resume from (one token must be left to compute): a
  // regenerate hits it. Without a hint, the prompt's end is the extra checkpoint (a next request
  // that extends the whole sequence, as a completion's continuation does).
  if (ends_prompt && boundary == prompt) {
    boundary -= block_size_;
    if (r.stable_prefix_tokens == 0) extra = prompt;
  }
  if (!wanted(extra) || extra == boundary) extra = 0;
  if (!wanted(boundary)) boundary = 0;
  if (boundary > 0 && boundary - computed > num_new_tokens - num_spec_tokens) {
    // Among the drafts: into a slot of its own until verification says whether it is valid.
    if (r.spec_checkpoint_slot < 0) {
      const std::optional<int> slot = states_->allocate();
      if (slot) r.spec_checkpoint_slot = *slot;
    }
    if (r.spec_checkpoint_slot >= 0) {
      plan.after = boundary - computed;
      plan.speculative = true;
    }
    boundary = 0;
  }
  if (boundary > 0 && r.checkpoint_slot < 0) {
    const std::optional<int> slot = states_->allocate();
    if (slot) r.checkpoint_slot = *slot;
  }
  if (boundary > 0 && r.checkpoint_slot >= 0) {
    r.checkpoint_tokens = 0;  // overwritten by this step
    plan.after = boundary - computed;
  }
  if (extra > 0) {
    const std::optional<int> slot = states_->allocate();
    if (slot) {
      r.extra_checkpoint_slot = *slot;
      plan.extra_after = extra - computed;
    }
  }
  return plan;
}

void KVCacheCoordinator::speculative_checkpoint_verified(Request& r, const CheckpointPlan& plan, int computed_before,
                                                         int num_valid_tokens) {
  if (!states_ || !plan.speculative || r.spec_checkpoint_slot < 0) return;
  const int tokens = computed_before + plan.after;
  if (tokens > num_valid_tokens) {  // the state of a rejected draft
    states_->free(r.spec_checkpoint_slot);
    r.spec_checkpoint_slot = -1;
    return;
  }
  if (r.checkpoint_slot >= 0) states_->free(r.checkpoint_slot);
  r.checkpoint_slot = r.spec_checkpoint_slot;
  r.spec_checkpoint_slot = -1;
  r.checkpoint_tokens = tokens;
  rolling_checkpoint_moved(r, false);
}

bool KVCacheCoordinator::hold_spec_state_slot(Request& r) {
  if (!states_) return true;
  if (r.spec_state_slot < 0) {
    const std::optional<int> slot = states_->allocate();
    if (slot) r.spec_state_slot = *slot;
  }
  return r.spec_state_slot >= 0;
}

void KVCacheCoordinator::restore_spec_state(Request& r) {
  if (!states_ || r.spec_state_slot < 0 || r.state_slot < 0)
    throw std::logic_error("KVCacheCoordinator: request " + r.request_id + " has no saved state to roll back to");
  pending_state_copies_.emplace_back(r.spec_state_slot, r.state_slot);
}

int KVCacheCoordinator::stable_boundary(const Request& r) const {
  // One token of a prompt is always computed, so a prompt's own length is never resumed from.
  const int n = std::min(r.stable_prefix_tokens, r.num_prompt_tokens() - 1);
  return n > 0 ? n / block_size_ * block_size_ : 0;
}

void KVCacheCoordinator::checkpoint_written(Request& r, const CheckpointPlan& plan, bool register_now) {
  if (!states_) return;
  if (plan.extra_after > 0 && r.extra_checkpoint_slot >= 0) {
    const int tokens = r.num_computed_tokens + plan.extra_after;  // num_computed_tokens before the step
    const int i = tokens / block_size_ - 1;
    states_->register_checkpoint(r.extra_checkpoint_slot, block_key(r, i, block_size_), block_hash(r, i, block_size_));
    r.checkpoint_registered_tokens = std::max(r.checkpoint_registered_tokens, tokens);
    r.extra_checkpoint_slot = -1;
  }
  if (r.checkpoint_slot < 0) return;
  if (plan.after > 0) {
    r.checkpoint_tokens = r.num_computed_tokens + plan.after;
  } else if (!register_now || r.checkpoint_tokens <= 0) {
    return;  // nothing written this step, nothing held to register
  }
  rolling_checkpoint_moved(r, register_now);
}

void KVCacheCoordinator::rolling_checkpoint_moved(Request& r, bool register_now) {
  // (The stable prefix's boundary may be this rolling one, when it was the step's last.)
  if (register_now || r.checkpoint_tokens == stable_boundary(r) ||
      r.checkpoint_tokens - r.checkpoint_registered_tokens >=
          RecurrentStateManager::kCheckpointIntervalBlocks * block_size_)
    register_checkpoint(r);
}

void KVCacheCoordinator::register_checkpoint(Request& r) {
  if (r.checkpoint_slot < 0) return;
  if (r.checkpoint_tokens <= 0) {
    states_->free(r.checkpoint_slot);
  } else {
    const int i = r.checkpoint_tokens / block_size_ - 1;
    states_->register_checkpoint(r.checkpoint_slot, block_key(r, i, block_size_), block_hash(r, i, block_size_));
    r.checkpoint_registered_tokens = std::max(r.checkpoint_registered_tokens, r.checkpoint_tokens);
  }
  r.checkpoint_slot = -1;
  r.checkpoint_tokens = 0;
}

std::vector<std::pair<int, int>> KVCacheCoordinator::take_pending_state_copies() {
  std::vector<std::pair<int, int>> out;
  out.swap(pending_state_copies_);
  return out;
}

void KVCacheCoordinator::fork(Request& parent, Request& child) {
  if (states_) {
    if (parent.reserved_state_slots.empty())
      throw std::logic_error("KVCacheCoordinator: completion " + child.request_id +
                             " forks from a request that reserved no state slot for it");
    const int slot = parent.reserved_state_slots.back();
    parent.reserved_state_slots.pop_back();
    child.state_slot = slot;
    pending_state_copies_.emplace_back(parent.state_slot, slot);
  }
  for (const auto& table : parent.block_ids)
    for (int b : table)
      if (!is_null(b)) pool_.incref(b);
  child.block_ids = parent.block_ids;
  child.block_hashes = parent.block_hashes;
  child.num_cached_blocks = parent.num_cached_blocks;
}

int KVCacheCoordinator::num_request_blocks(const Request& r) const {
  int n = 0;
  for (const auto& table : r.block_ids)
    for (int b : table) n += !is_null(b);
  return n;
}

void KVCacheCoordinator::free(Request& r) {
  // Blocks [first_pending, num_cached_blocks) were registered by this request for tokens it has not
  // computed (see allocate_slots). Nobody else may hold them; unregister them as they are freed.
  std::size_t longest = 0;
  for (const auto& table : r.block_ids) longest = std::max(longest, table.size());
  const std::size_t first_pending = std::min<std::size_t>(std::size_t(r.num_computed_tokens / block_size_), longest);
  const std::size_t end_pending = std::min<std::size_t>(std::size_t(std::max(0, r.num_cached_blocks)), longest);
  for (const auto& table : r.block_ids)
    for (std::size_t i = first_pending; i < std::min(end_pending, table.size()); ++i) {
      const int b = table[i];
      if (!is_null(b) && pool_.ref_count(b) > 1 && pool_.block_hash(b))
        throw std::logic_error("KVCacheCoordinator: request " + r.request_id + " frees block " + std::to_string(b) +
                               ", registered for tokens not yet computed, while another request shares it");
    }
  for (const auto& table : r.block_ids)
    for (std::size_t i = first_pending; i < std::min(end_pending, table.size()); ++i)
      if (!is_null(table[i])) pool_.unregister_block(table[i]);
  // Tail blocks first in every group: the free queue evicts them before the prefix.
  for (std::size_t i = longest; i-- > 0;)
    for (const auto& table : r.block_ids)
      if (i < table.size() && !is_null(table[i])) pool_.free(table[i]);
  r.block_ids.clear();
  r.num_cached_blocks = 0;
  if (states_) {
    // The end of a turn (or a preemption): its last block-boundary state becomes a checkpoint.
    register_checkpoint(r);
    if (r.state_slot >= 0) states_->free(r.state_slot);
    if (r.extra_checkpoint_slot >= 0) states_->free(r.extra_checkpoint_slot);  // planned, never written
    r.extra_checkpoint_slot = -1;
    for (int* slot : {&r.spec_state_slot, &r.spec_checkpoint_slot})
      if (*slot >= 0) {
        states_->free(*slot);
        *slot = -1;
      }
    for (int slot : r.reserved_state_slots) states_->free(slot);
    r.reserved_state_slots.clear();
    r.state_slot = -1;
    r.checkpoint_registered_tokens = 0;
  }
}

std::vector<std::pair<int, int>> KVCacheCoordinator::take_pending_copies() {
  std::vector<std::pair<int, int>> out;
  out.swap(pending_copies_);
  return out;
}

}  // namespace pagedchat
