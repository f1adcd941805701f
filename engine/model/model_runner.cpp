#include "engine/model/model_runner.h"

#include <algorithm>

namespace pagedchat {

ModelRunner::ModelRunner(const LoadedModel& model, int num_blocks, int block_size, int num_threads, WeightDType dtype,
                         kernels::KvDType kv_cache_dtype)
    : backend_(kernels::make_cpu_backend(num_threads)),
      model_(model.config, model.weights, *backend_, dtype,
             [&model](const void* p, std::size_t n) {
               for (const auto& f : model.files) f->release(p, n);  // packed: the file's pages can go
             }),
      cache_(model.config, num_blocks, block_size, kv_cache_dtype) {}

ForwardBatch ModelRunner::build_batch(const SchedulerOutput& out, const KVCacheManager& kv) const {
  ForwardBatch b;
  build_batch(out, kv, b);
  return b;
}

void ModelRunner::build_batch(const SchedulerOutput& out, const KVCacheManager& kv, ForwardBatch& b) const {
  int max_blocks = 1;
  for (const auto& s : out.scheduled) max_blocks = std::max<int>(max_blocks, s.request->block_ids.size());
  b.input_ids.clear();
  b.positions.clear();
  b.slot_mapping.clear();
  b.query_start_loc.clear();
  b.seq_lens.clear();
  b.logits_indices.clear();
  b.max_blocks_per_seq = max_blocks;
  b.block_tables.assign(out.scheduled.size() * std::size_t(max_blocks), 0);
  b.query_start_loc.push_back(0);
  std::size_t r = 0;
  for (const auto& s : out.scheduled) {
    const Request& req = *s.request;
    const int start = req.num_computed_tokens, end = start + s.num_new_tokens;
    for (int pos = start; pos < end; ++pos) {
      b.input_ids.push_back(req.token_ids[pos]);
      b.positions.push_back(pos);
      b.slot_mapping.push_back(kv.slot(req, pos));
    }
    b.query_start_loc.push_back(int(b.input_ids.size()));
    b.seq_lens.push_back(end);
    std::copy(req.block_ids.begin(), req.block_ids.end(), b.block_tables.begin() + r * max_blocks);
    if (s.samples) b.logits_indices.push_back(int(b.input_ids.size()) - 1);
    ++r;
  }
}

void ModelRunner::execute(const SchedulerOutput& out, const KVCacheManager& kv, std::vector<float>& logits) {
  for (const auto& [src, dst] : out.blocks_to_copy) cache_.copy_block(src, dst);
  build_batch(out, kv, batch_);
  model_.forward(batch_, cache_, logits);
}

}  // namespace pagedchat
