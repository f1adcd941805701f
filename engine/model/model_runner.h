// ModelRunner: turns a SchedulerOutput into a flattened ForwardBatch (input ids, positions,
// query_start_loc, seq_lens, and every KV-cache group's slot mapping and block tables), runs the
// model and returns the logits of the requests that sample this step (vLLM's GPUModelRunner, on
// whichever backend it is given).
#pragma once

#include <functional>

#include <memory>
#include <vector>

#include "engine/core/kv_cache_coordinator.h"
#include "engine/core/scheduler.h"
#include "engine/model/decoder_model.h"

namespace pagedchat {

class ModelRunner {
 public:
  /// Packs `model`'s matrices for `backend` as `dtype` says, dropping the pages of its mapped
  /// files as they are packed (so resident memory stays near the packed size); `model` must
  /// outlive the runner. allocate_kv_cache() comes before the first execute().
  ModelRunner(const LoadedModel& model, std::unique_ptr<kernels::Backend> backend,
              WeightDType dtype = WeightDType::kAuto);
  /// An MTP head of `target`'s model on `target`'s backend (DecoderModel::MtpInput): `config` and
  /// `weights` describe its one layer (they and `owner`, whose files its matrices are in, must
  /// outlive the runner, as must `target`).
  ModelRunner(const ModelConfig& config, const ModelWeights& weights, const LoadedModel& owner, ModelRunner& target,
              const MtpWeights& block, WeightDType dtype = WeightDType::kAuto);

  /// The paged KV cache and, for a model with recurrent layers, its num_state_slots state slots,
  /// in the backend's memory (throws what Backend::allocate throws).
  void allocate_kv_cache(int num_blocks, int block_size, kernels::KvDType dtype, int num_state_slots = 0);
  /// vLLM's profile_run: one forward of the largest step the scheduler can make (num_tokens
  /// tokens over num_seqs requests, every one sampling, contexts of max_model_len) on a one-block
  /// scratch cache whose slots are padding, so the backend's workspaces reach their largest size
  /// before the KV cache takes the rest of the memory.
  void profile_run(int num_tokens, int num_seqs, int max_model_len, int block_size, kernels::KvDType dtype);

  /// Runs one step. logits: [rows, vocab]: for each request with samples == true, in
  /// SchedulerOutput order, 1 + num_spec_tokens rows (its last known token's, then each draft's). `abandon` (optional)
  /// is asked between the forward's layers: when it returns true the forward stops there and execute() returns false
  /// (logits unset; some layers' K/V and recurrent state written for the step's tokens, see DecoderModel::forward).
  bool execute(const SchedulerOutput& out, const KVCacheCoordinator& kv, std::vector<float>& logits,
               const std::function<bool()>& abandon = {});

  /// Builds the batch for `out` (exposed for tests).
  ForwardBatch build_batch(const SchedulerOutput& out, const KVCacheCoordinator& kv) const;
  /// The same into `b`, reusing its vectors' capacity (no allocation once they are large enough).
  void build_batch(const SchedulerOutput& out, const KVCacheCoordinator& kv, ForwardBatch& b) const;

  /// Every scheduled token's hidden state comes back from execute() (DecoderModel::hidden(), in
  /// batch order): the MTP proposer reads them.
  void set_capture_hidden(bool on) { capture_hidden_ = on; }
  /// An MTP head's batch: execute() sends these [T, hidden_size] rows as ForwardBatch::input_hidden.
  std::vector<float>& input_hidden() { return batch_.input_hidden; }

  DecoderModel& model() { return model_; }
  KVCache& cache() { return *cache_; }
  kernels::Backend& backend() { return *backend_; }

 private:
  std::unique_ptr<kernels::Backend> owned_backend_;
  kernels::Backend* backend_;
  DecoderModel model_;
  std::unique_ptr<KVCache> cache_;
  ForwardBatch batch_;
  bool capture_hidden_ = false;
};

}  // namespace pagedchat
