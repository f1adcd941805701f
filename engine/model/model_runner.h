// ModelRunner: turns a SchedulerOutput into a flattened ForwardBatch (input ids, positions, slot
// mapping, query_start_loc, seq_lens, block tables), runs the model and returns the logits of the
// requests that sample this step (vLLM's GPUModelRunner, on the CPU backend).
#pragma once

#include <memory>
#include <vector>

#include "engine/core/kv_cache_manager.h"
#include "engine/model/decoder_model.h"
#include "engine/core/scheduler.h"

namespace pagedchat {

class ModelRunner {
 public:
  /// Packs `model`'s matrices as `dtype` says, dropping the pages of its mapped files as they
  /// are packed (so resident memory stays near the packed size); `model` must outlive the runner.
  ModelRunner(const LoadedModel& model, int num_blocks, int block_size, int num_threads,
              WeightDType dtype = WeightDType::kAuto, kernels::KvDType kv_cache_dtype = kernels::KvDType::kFloat32);

  /// Runs one step. logits: [number of sampling requests, vocab], in SchedulerOutput order of the
  /// requests with samples == true.
  void execute(const SchedulerOutput& out, const KVCacheManager& kv, std::vector<float>& logits);

  /// Builds the batch for `out` (exposed for tests).
  ForwardBatch build_batch(const SchedulerOutput& out, const KVCacheManager& kv) const;
  /// The same into `b`, reusing its vectors' capacity (no allocation once they are large enough).
  void build_batch(const SchedulerOutput& out, const KVCacheManager& kv, ForwardBatch& b) const;

  DecoderModel& model() { return model_; }
  KVCache& cache() { return cache_; }
  kernels::Backend& backend() { return *backend_; }

 private:
  std::unique_ptr<kernels::Backend> backend_;
  DecoderModel model_;
  KVCache cache_;
  ForwardBatch batch_;
};

}  // namespace pagedchat
