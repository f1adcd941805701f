// LLMEngine's state and the steps it is made of, shared by the files that implement it
// (llm_engine.cpp: loading, requests, the step loop; llm_engine_spec.cpp: speculative decoding).
// Private to the engine: include engine/llm_engine.h elsewhere.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/core/kv_cache_coordinator.h"
#include "engine/core/request.h"
#include "engine/core/scheduler.h"
#include "engine/llm_engine.h"
#include "engine/model/model_runner.h"
#include "engine/multimodal/encoder_cache.h"
#include "engine/output_processor.h"
#include "engine/sample/sampler.h"
#include "engine/spec_decode/batch_draft_budget.h"
#include "engine/spec_decode/draft_model_proposer.h"
#include "engine/spec_decode/mtp_proposer.h"
#include "engine/text/tokenizer.h"

namespace pagedchat {

struct LLMEngine::Impl {
  EngineConfig config;
  LoadedModel model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string chat_template;
  SamplingDefaults sampling_defaults;
  std::unique_ptr<KVCacheCoordinator> kv;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<ModelRunner> runner;
  std::unique_ptr<OutputProcessor> output;
  Sampler sampler;
  std::unique_ptr<DraftModelProposer> drafter;           ///< speculative method draft_model
  std::unique_ptr<MtpProposer> mtp;                      ///< speculative method mtp
  std::unique_ptr<VisionEncoder> vision;                 ///< EngineConfig::mmproj (null: text only)
  EncoderCache encoder_cache;                            ///< image embeddings by image identity
  LLMEngine::DraftObserver draft_observer;               ///< set_draft_observer()
  std::vector<std::pair<Request*, int>> to_propose;      ///< one step's requests and their draft budgets
  std::vector<std::pair<Request*, int>> to_propose_mtp;  ///< the same for the MTP proposer
  std::vector<Request*> proposed;                        ///< one step's requests that proposed (any method)
  StepCostModel step_cost;                               ///< step time against tokens (batch_draft_budget)
  std::unordered_map<std::string, std::unique_ptr<RequestGroup>> groups;
  std::vector<RequestOutput> pending;  // aborted requests, reported by the next step()
  // request_abort(): ids asked for from any thread, applied by step() (under abort_mutex).
  std::mutex abort_mutex;
  std::unordered_set<std::string> abort_asked;
  std::atomic<int> num_abort_asked{0};
  std::vector<std::string> last_scheduled;
  std::function<void()> on_scheduled;
  std::vector<float> logits;
  std::vector<std::string> warnings;
  // Structured outputs: the vocabulary's byte trie (built at the first such request), compiled
  // grammars by their source (a schema sent again is not compiled again), one step's bitmask.
  std::shared_ptr<const structured::TokenTrie> token_trie;
  std::map<std::string, std::shared_ptr<const structured::Grammar>> grammars;
  std::vector<uint64_t> mask;
  uint64_t next_arrival = 0;
  EngineStats stats;

  void add(const std::string& id, std::string prompt, std::vector<int> ids, const SamplingParams& params,
           const RequestOptions& options);
  /// The request's next token from its row of logits; token -1 when none can be drawn
  /// (NoTokenError: its restrictions leave none), which on_token turns into the
  /// end of that request alone.
  SampleResult sample(Request& r, const float* row);
  /// params.structured_outputs compiled (cached); throws std::invalid_argument naming what the
  /// grammar cannot express, or when there is no tokenizer.
  std::shared_ptr<const structured::Grammar> grammar_for(const StructuredOutputsParams& so);
  std::unique_ptr<structured::GrammarMatcher> make_matcher(const std::shared_ptr<const structured::Grammar>& g);
  void fork(RequestGroup& g);
  /// Opens config.mmproj — or, without one, the vision tower of `hf_folder` (the model's Hugging
  /// Face folder, "" for other formats) when its config.json has one (config.mmproj is then set to
  /// the folder) — and checks it against the model and the backend (std::runtime_error); returns
  /// a warning about the settings, or "". Nothing to open: no encoder, "".
  std::string load_vision(const std::string& hf_folder);
  /// Opens config.mmproj and checks it (load_vision's work once the projector is chosen).
  std::string open_vision();
  /// Encodes (or finds in the encoder cache) the images whose positions `so` computes. False when
  /// every request of the step was asked to stop meanwhile (step_abandoned(), asked between the
  /// encoder's layers): what was encoded before stays in the cache, the rest is not encoded.
  bool encode_scheduled_images(const SchedulerOutput& so);
  /// Checks and takes RequestOptions::images for `seq` (std::invalid_argument naming the problem).
  void take_images(Request& seq, const std::vector<MultiModalPlaceholder>& images);
  /// abort_request(): false when `id` is unknown or finished.
  bool abort(const std::string& id);
  /// Aborts what request_abort() asked for since the last call.
  void apply_asked_aborts();
  /// True when every request of `so` was asked to abort (the check between the forward's layers).
  bool step_abandoned(const SchedulerOutput& so);
  /// Appends a sampled token; a request it finishes is freed unless `defer_finish` (a step with
  /// drafts: verify_drafts settles the drafts' state first, then calls finish_if_done). Token -1
  /// (sample() found none) ends the request "abort" with its text so far.
  void on_token(RequestGroup& g, Request& r, const SampleResult& s, double t, bool defer_finish = false);
  void finish_if_done(Request& r);
  /// Speculative decoding: after the first row's token (already appended), accepts r's drafts
  /// while the token sampled from the row before equals them, sampling each next row from the
  /// target's logits (rows [1 .. s.num_spec_tokens] after `first_row`); rolls back the rest.
  void verify_drafts(RequestGroup& g, Request& r, const ScheduledRequest& s, int first_token, const float* first_row,
                     double t);
  /// Queues r for drafts for its next step (r.spec_token_ids; empty: none); propose_queued()
  /// proposes them, all the step's requests at once (a draft model runs them batched).
  void propose(Request& r);
  void propose_queued();
  /// LLMEngine::speculative_methods().
  std::vector<SpeculativeConfig::Method> methods() const;
  /// Hands the step's hidden states of s's tokens (rows [offset, offset + s.num_new_tokens) of the
  /// runner's hidden()) to the MTP proposer: those whose inputs r kept (after verification).
  void observe_hidden(const ScheduledRequest& s, int first, int offset);
  /// Cuts the running requests' drafts to what pays in a batch the step cost model says is
  /// compute-bound (engine/spec_decode/batch_draft_budget.h).
  void fit_drafts_to_batch();
};

}  // namespace pagedchat
