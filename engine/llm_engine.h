// LLMEngine: the continuous-batching engine (vLLM's LLMEngine). Not thread-safe: one thread
// (the app's EngineWorker, or the CLI) owns it and calls add_request/abort_request/step().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <optional>

#include "engine/config.h"
#include "engine/core/request_status.h"
#include "engine/model/weight_dtype.h"
#include "engine/multimodal/mm_input.h"
#include "engine/outputs.h"
#include "engine/sample/sampling_defaults.h"
#include "engine/sample/sampling_params.h"
#include "engine/text/tokenizer.h"
#include "kernels/ops.h"

namespace pagedchat {

class VisionEncoder;

/// The checks LLMEngine::add_request makes of a request before queueing it, other than a
/// duplicate id: valid params (SamplingParams::validate, validate_for_vocab), a non-empty id and
/// prompt, every token id in [0, vocab), prompt length + max_tokens <= max_model_len. Throws
/// std::invalid_argument naming the request and the problem. Pure: safe from any thread.
void check_request(const std::string& request_id, const std::vector<int>& prompt_token_ids,
                   const SamplingParams& params, int vocab, int max_model_len);

class Scheduler;
class ModelRunner;
class Sampler;
struct Request;

/// One KV-cache block as an engine view shows it (see LLMEngine::kv_cache_snapshot()).
struct KVBlockInfo {
  int ref_count = 0;                     ///< 0 = free
  bool cached = false;                   ///< registered in the prefix cache (reusable by hash)
  std::vector<std::string> request_ids;  ///< requests whose block tables hold it (shared prefix: several)
  int group = 0;            ///< KV-cache group it was last allocated for (EngineStats::kv_cache_groups); -1: null block
  bool null_block = false;  ///< the reserved null block of a model with sliding windows (never handed out)
};

/// One KV-cache group (engine/core/kv_cache_groups.h) in EngineStats.
struct KVCacheGroupStats {
  int sliding_window = 0;     ///< 0: full attention
  int num_layers = 0;         ///< model layers in the group
  int num_blocks_in_use = 0;  ///< blocks held by requests in this group now
};

/// Per-request options beside the sampling params (vLLM's add_request arguments).
struct RequestOptions {
  int priority = 0;        ///< lower runs first under SchedulingPolicy::kPriority
  std::string cache_salt;  ///< requests with different salts never share prefix-cache blocks
  /// Requests with the same key share one fair share of the batch: when slots free up, a waiting
  /// request of the key with the fewest running sequences goes first (the server gives an API
  /// call's prompts one key, so a call of 30 000 prompts cannot hold every slot while another
  /// client waits). Empty: the request is a key of its own.
  std::string fair_share_key;
  /// The prompt's first N tokens that later requests are expected to repeat: a chat turn's
  /// conversation without the generation prompt (the next turn re-renders the reply in place of
  /// "<|im_start|>assistant\n<think>\n", so it shares only this much). Recurrent layers checkpoint
  /// their state at the deepest block boundary <= N while computing the prompt, so the next turn
  /// resumes there. 0: no hint (the prompt's end is checkpointed).
  int stable_prefix_tokens = 0;
  /// Speculative method "oracle" (benchmarks): the output tokens a first run gave; each step
  /// proposes the next of them as drafts. Ignored under other methods.
  std::vector<int> oracle_token_ids{};
  /// False: this request proposes no draft tokens although the engine speculates (a pane's
  /// setting); its output is the same either way.
  bool speculative = true;
  /// The proposer of this request's drafts when the engine has it (LLMEngine::
  /// speculative_methods(); kNone: none, as speculative = false). Unset, or one the engine has
  /// not loaded: the engine's default (speculative_methods().front()).
  std::optional<SpeculativeConfig::Method> speculative_method{};
  /// The prompt's images (engine/multimodal/mm_prompt.h's encode_image_prompt lays them out):
  /// in position order, inside the prompt, not overlapping, each as long as the engine's vision
  /// encoder makes it. Needs an engine loaded with EngineConfig::mmproj.
  std::vector<MultiModalPlaceholder> images{};
};

/// Counters for a status line / engine view.
struct EngineStats {
  int num_running = 0;
  int num_waiting = 0;
  int num_total_blocks = 0;
  int num_free_blocks = 0;
  long long num_preemptions = 0;        ///< since start
  long long num_prompt_tokens = 0;      ///< prompt tokens computed since start
  long long num_generation_tokens = 0;  ///< tokens generated since start
  long long num_steps = 0;
  /// Steps stopped inside their forward because every request of theirs was aborted
  /// (request_abort); not in num_steps.
  long long num_abandoned_steps = 0;
  /// Images the vision encoder encoded since start, and images a step found in the encoder cache
  /// (a picture sent again, or by another pane); a stopped encoding counts in neither.
  long long num_encoded_images = 0;
  long long num_encoder_cache_hits = 0;
  long long prefix_cache_queries = 0;  ///< prompt tokens looked up in the prefix cache
  long long prefix_cache_hits = 0;     ///< of those, tokens found cached
  int num_cached_blocks = 0;           ///< blocks registered in the prefix cache
  /// Speculative decoding since start (vLLM's spec_decode counters): verifications with at least
  /// one draft, draft tokens verified, draft tokens accepted, and accepted per draft position
  /// (spec_accepted_per_pos[i]: drafts accepted at position i; size num_speculative_tokens).
  long long spec_num_drafts = 0;
  long long spec_num_draft_tokens = 0;
  long long spec_num_accepted_tokens = 0;
  std::vector<long long> spec_accepted_per_pos;
  /// Accepted draft tokens computed a second time: on recurrent layers a step whose drafts were
  /// not all accepted rolls the state back to its known tokens and recomputes the accepted ones.
  long long spec_num_recomputed_tokens = 0;
  /// Proposed drafts left out because the batch was compute-bound (batch_draft_budget), and the
  /// step cost fit the latest cut used: seconds per step and per token (0 before any cut).
  long long spec_num_trimmed_tokens = 0;
  double step_cost_intercept_s = 0, step_cost_per_token_s = 0;
  /// The KV-cache groups: all share the num_total_blocks blocks; one block holds
  /// kv_cache_group_size layers' K and V of block_size tokens. A model without sliding windows has
  /// one group of all its layers.
  std::vector<KVCacheGroupStats> kv_cache_groups;
  int kv_cache_group_size = 0;
  int block_size = 0;
  /// Recurrent (Gated DeltaNet) layers' state slots (0 without them): each running request holds
  /// one live slot and at most one rolling checkpoint; registered checkpoints let a prompt resume
  /// at a block boundary (prefix caching). state_slot_bytes: one slot over every recurrent layer.
  int num_state_slots = 0;
  int num_state_slots_held = 0;
  int num_state_checkpoints = 0;
  std::size_t state_slot_bytes = 0;
  /// Tokens of K/V the requests hold now, counted per layer: sum over groups of blocks in use *
  /// block_size * the group's layers (what "bench memory" compares to layers * context).
  long long kv_layer_tokens_in_use() const {
    long long n = 0;
    for (const auto& g : kv_cache_groups) n += (long long)g.num_blocks_in_use * block_size * g.num_layers;
    return n;
  }
  double kv_cache_usage() const {
    return num_total_blocks ? double(num_total_blocks - num_free_blocks) / num_total_blocks : 0.0;
  }
};

/// A snapshot of one unfinished request (for tests and the engine view).
struct RequestState {
  RequestStatus status = RequestStatus::kWaiting;
  int num_prompt_tokens = 0;
  int num_computed_tokens = 0;  ///< tokens whose K/V are in the cache
  int num_output_tokens = 0;
  int num_blocks = 0;  ///< blocks it holds over every KV-cache group (a sliding window's released ones not counted)
  int num_preemptions = 0;
};

class LLMEngine {
 public:
  /// Loads the model and tokenizer and sizes the KV cache. Throws std::runtime_error naming the
  /// file and the problem (missing, truncated, bad header, no tokenizer, cache too small).
  explicit LLMEngine(const EngineConfig& config);
  ~LLMEngine();
  LLMEngine(const LLMEngine&) = delete;
  LLMEngine& operator=(const LLMEngine&) = delete;

  /// Queues a request; it joins the batch at the next step(). The prompt is tokenized with BOS
  /// prepended. Throws std::invalid_argument for a duplicate id, invalid params, or a request
  /// that can never fit (prompt length + max_tokens > max_model_len).
  void add_request(const std::string& request_id, const std::string& prompt, const SamplingParams& params,
                   const RequestOptions& options = {});
  /// Same with token ids given directly (used as is, no BOS added).
  void add_request(const std::string& request_id, const std::vector<int>& prompt_token_ids,
                   const SamplingParams& params, const RequestOptions& options = {});

  /// Aborts a waiting or running request and frees its blocks at once. Returns false when the id
  /// is unknown or already finished. The next step() reports it with FinishReason::kAbort.
  bool abort_request(const std::string& request_id);
  /// Thread-safe (any thread, also while step() runs on another): asks for `request_id` to be
  /// aborted. A step() running now stops its forward between layers once every request it
  /// computes has been asked to stop (a 512-token prefill chunk ends within a layer's time, not
  /// the chunk's), and reports them aborted with their blocks freed; otherwise the next step()
  /// aborts the request before it schedules (abort_request). An unknown or finished id is
  /// ignored. A stopped step leaves nothing behind: the blocks and recurrent-state checkpoints it
  /// would have filled are unregistered from the prefix cache, never shared half-written.
  void request_abort(const std::string& request_id);

  /// Runs one scheduler + forward + sampling step over every scheduled request and returns the
  /// outputs of requests that produced new text or finished (shape per SamplingParams::output_kind).
  std::vector<RequestOutput> step();

  bool has_unfinished_requests() const;
  /// Forgets every cached prefix not in use (vLLM's reset_prefix_cache); false if some are in use.
  bool reset_prefix_cache();
  int num_unfinished_requests() const;

  /// Every KV block's state, indexed by block id (a copy; O(blocks + running tokens)).
  std::vector<KVBlockInfo> kv_cache_snapshot() const;

  /// State of an unfinished request; nullopt when the id is unknown or finished.
  std::optional<RequestState> request_state(const std::string& request_id) const;

  const ModelConfig& model_config() const;
  const EngineConfig& engine_config() const;
  /// The tokenizer; throws std::logic_error for a model loaded without one (random:).
  const Tokenizer& tokenizer() const;
  /// The image encoder loaded from EngineConfig::mmproj, or null (the engine reads no images).
  const VisionEncoder* vision_encoder() const;
  bool has_tokenizer() const;
  /// The chat template text the model files carry (Jinja), or "" when none.
  const std::string& chat_template() const;
  /// The sampling defaults the model files carry (generation_config.json); empty when none.
  /// Apply them with apply_sampling_defaults().
  const SamplingDefaults& sampling_defaults() const;
  EngineStats stats() const;
  /// KV-cache blocks requests can hold: engine_config().num_blocks less the null block when one
  /// is reserved (sliding-window models); what stats().num_total_blocks and /metrics report. Fixed
  /// after construction, so safe to read while another thread steps.
  int num_usable_blocks() const;
  /// The backend and its kernels, e.g. "cpu avx512, 2 threads", "cuda:0 NVIDIA H200 (sm_90, ...)".
  std::string backend_name() const;
  /// What went wrong at load but did not stop it (also printed on stderr), e.g. a GPU backend that
  /// disagreed with the CPU on the load-time check, so the CPU runs instead. Empty when nothing.
  const std::vector<std::string>& warnings() const;
  /// Bytes of the weight matrices as packed for the backend (in their file's type unless dtype
  /// says otherwise; the embedding table, read in place, is not counted).
  std::size_t packed_weight_bytes() const;
  /// The packed matrix types and their counts, e.g. "q4_K x 97, q6_K x 24" (most first).
  std::string weight_types() const;
  /// Ids of the requests scheduled in the most recent step (for tests and the engine view).
  const std::vector<std::string>& last_scheduled_request_ids() const;
  /// Called by step() once it has scheduled requests, before their images are encoded and their
  /// forward (on the thread calling step()): stats() then counts them running, so a caller
  /// publishing stats here shows a long prefill step while it runs, not only after. Empty: none.
  void set_on_scheduled(std::function<void()> callback);
  /// Called by step() with each request's drafts as its proposer made them (before the batch's
  /// cut: SpeculativeConfig::fit_to_batch), the request's id and its token count then (the drafts
  /// continue its token_ids): tests and debugging. Empty: none.
  using DraftObserver =
      std::function<void(const std::string& request_id, int num_tokens, const std::vector<int>& drafts)>;
  void set_draft_observer(DraftObserver observer);
  /// The proposers requests can choose (RequestOptions::speculative_method), the default of those
  /// that do not choose first: the model's MTP block where mtp_if_available loaded it, else the
  /// configured method; then n-gram lookup (it needs nothing loaded), the MTP block (method mtp,
  /// or mtp_if_available on a model with one) and the draft model. Empty: no speculation.
  std::vector<SpeculativeConfig::Method> speculative_methods() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pagedchat
