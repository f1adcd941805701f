#include "engine/model_runner.h"

#include <algorithm>

namespace pagedchat {

ModelRunner::ModelRunner(const LoadedModel& model, int num_blocks, int block_size, int num_threads)
    : backend_(kernels::make_cpu_backend(num_threads)),
      model_(model.config, model.weights, *backend_),
      cache_(model.config, num_blocks, block_size) {}

ForwardBatch ModelRunner::build_batch(const SchedulerOutput& out, const KVCacheManager& kv) const {
  ForwardBatch b;
  int max_blocks = 1;
  for (const auto& s : out.scheduled) max_blocks = std::max<int>(max_blocks, s.request->block_ids.size());
  b.max_blocks_per_seq = max_blocks;
  b.query_start_loc.push_back(0);
  for (const auto& s : out.scheduled) {
    const Request& r = *s.request;
    const int start = r.num_computed_tokens, end = start + s.num_new_tokens;
    for (int pos = start; pos < end; ++pos) {
      b.input_ids.push_back(r.token_ids[pos]);
      b.positions.push_back(pos);
      b.slot_mapping.push_back(kv.slot(r, pos));
    }
    b.query_start_loc.push_back(int(b.input_ids.size()));
    b.seq_lens.push_back(end);
    std::vector<int> row(max_blocks, 0);
    std::copy(r.block_ids.begin(), r.block_ids.end(), row.begin());
    b.block_tables.insert(b.block_tables.end(), row.begin(), row.end());
    if (s.samples) b.logits_indices.push_back(int(b.input_ids.size()) - 1);
  }
  return b;
}

void ModelRunner::execute(const SchedulerOutput& out, const KVCacheManager& kv, std::vector<float>& logits) {
  for (const auto& [src, dst] : out.blocks_to_copy) cache_.copy_block(src, dst);
  batch_ = build_batch(out, kv);
  model_.forward(batch_, cache_, logits);
}

}  // namespace pagedchat
