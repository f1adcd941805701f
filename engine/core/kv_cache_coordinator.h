// KVCacheCoordinator: maps requests to KV blocks, one block table per KV-cache group (vLLM v1's
// KVCacheManager + KVCacheCoordinator; the groups: engine/core/kv_cache_groups.h). What the
// scheduler asks; each group's rules (full attention, sliding window) are its manager's
// (engine/core/single_type_kv_cache_manager.h). Every group allocates from one BlockPool.
//
// A request's table in every group covers positions [0, num_computed_tokens + num_new_tokens);
// slot = block_id * block_size + offset. In a sliding-window group the blocks the window has
// passed hold the null block instead (BlockPool::kNullBlock; released to the pool, still
// registered in the prefix cache until evicted).
//
// With prefix caching, a new (or preempted) request first takes the registered blocks matching
// its leading full blocks, as long a prefix as every group can take (a full group needs every
// block of the prefix, a sliding group only the ones its window reaches from the first token to
// compute: vLLM's HybridKVCacheCoordinator.find_longest_cache_hit, iterated to the length all
// agree on). Every block that will be full once the tokens scheduled this step are computed is
// registered when its slots are allocated (vLLM v1's allocate_slots -> cache_full_blocks), so a
// request admitted later in the same step with the same prefix shares it instead of computing it
// again (see allocate_slots() in the .cpp for why that is safe). Blocks shared by the n
// completions of one request are copied before a completion writes into them (copy-on-write, in
// every group): the copies are queued for the model runner (take_pending_copies()).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine/core/block_pool.h"
#include "engine/core/kv_cache_groups.h"
#include "engine/core/recurrent_state_manager.h"
#include "engine/core/request.h"
#include "engine/core/single_type_kv_cache_manager.h"

namespace pagedchat {

/// The recurrent-state checkpoints one step writes for a request: after `after` of its new tokens
/// into its rolling checkpoint slot, and after `extra_after` into request.extra_checkpoint_slot
/// (registered as soon as the step ran). 0: none.
struct CheckpointPlan {
  int after = 0;
  int extra_after = 0;
  /// `after` falls among the step's draft tokens: written to request.spec_checkpoint_slot and
  /// settled by speculative_checkpoint_verified once the drafts are verified.
  bool speculative = false;
};

class KVCacheCoordinator {
 public:
  /// One full-attention group (a model without sliding windows).
  KVCacheCoordinator(int num_blocks, int block_size, bool enable_prefix_caching);
  /// The groups of a model; with a sliding-window group the pool reserves the null block (so
  /// num_blocks() is one less than the ids).
  KVCacheCoordinator(const KVCacheGroups& groups, int num_blocks, int block_size, bool enable_prefix_caching);
  /// A hybrid model's: also num_state_slots recurrent state slots (RecurrentStateManager), which
  /// every request needs one of to run, and which prefix-cache hits need a checkpoint in.
  KVCacheCoordinator(const KVCacheGroups& groups, int num_blocks, int block_size, bool enable_prefix_caching,
                     int num_state_slots);

  /// Prefix-cache hits of a request holding no blocks: the longest prefix of its full blocks that
  /// every group has cached (as its manager counts), capped so at least one token is left to
  /// compute (its logits are needed).
  struct ComputedBlocks {
    std::vector<std::vector<int>> block_ids;  ///< per group: the table the hit gives (null entries in sliding groups)
    int num_tokens = 0;                       ///< hit blocks * block_size
    int state_source = -1;                    ///< recurrent layers: the checkpoint slot the hit resumes from
  };
  ComputedBlocks get_computed_blocks(Request& request);

  /// Blocks allocate_slots(request, num_new_tokens, computed) takes from the free queue over all
  /// groups: new table entries and copy-on-write copies (a hit's blocks that sit in the free queue
  /// leave it too, not counted here; allocate_slots checks both).
  int num_blocks_to_allocate(const Request& request, int num_new_tokens,
                             const ComputedBlocks* computed = nullptr) const;
  /// Grows the request's tables to hold num_computed_tokens + num_new_tokens tokens. First, in
  /// sliding-window groups, releases the blocks no token from num_computed_tokens on reads. For a
  /// request holding no blocks, `computed` (from get_computed_blocks) is taken first and sets its
  /// num_computed_tokens. With prefix caching, then registers the blocks that are full once those
  /// num_new_tokens are computed (cache_blocks). Returns false when there are not enough free
  /// blocks, changing nothing but the release of blocks the request no longer reads.
  bool allocate_slots(Request& request, int num_new_tokens, const ComputedBlocks* computed = nullptr);
  /// Registers the request's blocks that are full once `num_computed_tokens` tokens are computed
  /// (allocate_slots does it for the tokens it allocates; idempotent).
  void cache_blocks(Request& request, int num_computed_tokens);
  /// Makes `child` share every block of `parent` (reference counts; used for n > 1); with
  /// recurrent layers the child's live state slot is one `parent` reserved at admission, starting
  /// as a copy of the parent's state.
  void fork(Request& parent, Request& child);
  /// Releases every block of the request (its tables become empty), tail blocks first so that
  /// they are evicted before the shared-prefix blocks. A block it registered ahead of its
  /// computation (past request.num_computed_tokens: allocated for a step that never ran for it,
  /// e.g. preempted while the step was built) loses its registration, so no later request can hit
  /// K/V that were never written. Throws std::logic_error, changing nothing, if such a block is
  /// also held by another request (that request would read K/V nobody writes: the scheduler's
  /// ordering rules it out).
  void free(Request& request);
  /// Drops every unreferenced registered block and every state checkpoint (vLLM's
  /// reset_prefix_cache); false when some registered blocks are still in use.
  bool reset_prefix_cache() {
    if (states_) states_->reset();
    return pool_.reset_prefix_cache();
  }
  /// (source, destination) block pairs to copy before the next forward, then clears them.
  std::vector<std::pair<int, int>> take_pending_copies();

  // Recurrent state (hybrid models; see engine/core/recurrent_state_manager.h).
  /// The recurrent state slots, or null for a model without recurrent layers.
  const RecurrentStateManager* states() const { return states_.get(); }
  /// With recurrent layers and prefix caching: which block boundaries the step computing
  /// num_new_tokens of `request` checkpoints. `after`: the last boundary it crosses, into the
  /// request's rolling checkpoint slot (taken now if it has none); the step that ends the prompt
  /// exactly on a boundary takes the boundary before it there (the deepest a request with the
  /// same prompt, a regenerate, can resume from). `extra_after`: the boundary of the request's
  /// stable prefix (RequestOptions::stable_prefix_tokens: where its next turn resumes) when the
  /// step crosses it, else, without a hint, the prompt's end when that is a boundary (a next
  /// request that extends the whole sequence). Slots are taken now; a boundary that gets none
  /// is not checkpointed, nor one the rolling checkpoint already holds. The last num_spec_tokens
  /// of num_new_tokens are drafts: a boundary among them is a speculative checkpoint
  /// (CheckpointPlan::speculative) in a slot of its own, so a rejection leaves the rolling one whole.
  CheckpointPlan plan_checkpoint(Request& request, int num_new_tokens, int num_spec_tokens = 0);
  /// After the step ran: the extra checkpoint is registered; the rolling one now holds the state
  /// at its boundary, registered when `register_now` or when kCheckpointIntervalBlocks blocks
  /// passed since the request's last one. A `register_now` step that wrote no rolling checkpoint
  /// (a prompt's last chunk that crossed no boundary) registers the one an earlier chunk wrote,
  /// if any, before decoding moves it on.
  void checkpoint_written(Request& request, const CheckpointPlan& plan, bool register_now);
  /// After a step with drafts was verified: a speculative checkpoint at computed_before +
  /// plan.after tokens becomes the request's rolling checkpoint when that many tokens are valid
  /// (num_valid_tokens: the known tokens and accepted drafts the step computed), else its slot is
  /// freed. No-op for other plans.
  void speculative_checkpoint_verified(Request& request, const CheckpointPlan& plan, int computed_before,
                                       int num_valid_tokens);
  /// Recurrent layers: gives the request a slot for the state after its known tokens in steps
  /// with drafts (request.spec_state_slot; kept until it is freed). False when no slot is free
  /// (the step then runs without drafts).
  bool hold_spec_state_slot(Request& request);
  /// Recurrent layers: the request's live state becomes the one saved before its drafts (a state
  /// copy before the next forward), for a step whose drafts were not all accepted.
  void restore_spec_state(Request& request);
  /// (source, destination) state slot copies for the next forward (source -1: zero), then clears them.
  std::vector<std::pair<int, int>> take_pending_state_copies();

  /// Table entries (per group) to hold n tokens.
  int blocks_for(int num_tokens) const { return (num_tokens + block_size_ - 1) / block_size_; }
  /// Slot of position `pos` of a request in `group` (its table must cover pos with a real block).
  int64_t slot(const Request& request, int pos, int group = 0) const {
    return int64_t(request.block_ids[std::size_t(group)][std::size_t(pos / block_size_)]) * block_size_ +
           pos % block_size_;
  }
  /// Blocks the request holds over all groups (null entries not counted; a block shared with a
  /// sibling counted for each).
  int num_request_blocks(const Request& request) const;

  int block_size() const { return block_size_; }
  int num_groups() const { return groups_.num_groups(); }
  const KVCacheGroups& groups() const { return groups_; }
  /// Blocks that can be handed out (the pool's ids less the null block).
  int num_blocks() const { return pool_.num_usable_blocks(); }
  int num_free_blocks() const { return pool_.num_free_blocks(); }
  /// Blocks referenced by requests in `group`.
  int num_blocks_in_use(int group) const { return pool_.num_blocks_in_use(group); }
  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  long long prefix_cache_queries() const { return queries_; }  ///< prompt tokens looked up
  long long prefix_cache_hits() const { return hits_; }        ///< of those, tokens found cached

 private:
  bool is_null(int block_id) const { return pool_.has_null_block() && block_id == BlockPool::kNullBlock; }
  void remove_skipped_blocks(Request& request);

  KVCacheGroups groups_;
  BlockPool pool_;
  int block_size_;
  std::vector<std::unique_ptr<SingleTypeKVCacheManager>> managers_;  // per group
  std::vector<std::pair<int, int>> pending_copies_;
  std::unique_ptr<RecurrentStateManager> states_;
  std::vector<std::pair<int, int>> pending_state_copies_;
  void register_checkpoint(Request& request);
  /// The rolling checkpoint now holds the state at request.checkpoint_tokens: registered when
  /// `register_now`, at the stable prefix's boundary, or kCheckpointIntervalBlocks blocks after
  /// the request's last registered one.
  void rolling_checkpoint_moved(Request& request, bool register_now);
  /// The deepest block boundary within request.stable_prefix_tokens (a resumable one: short of
  /// the whole prompt); 0 without a hint.
  int stable_boundary(const Request& request) const;
  long long queries_ = 0, hits_ = 0;
};

}  // namespace pagedchat
