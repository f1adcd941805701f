#include "engine/model/model_runner.h"

#include <algorithm>
#include <stdexcept>

#include "engine/vision/vision_encoder.h"

namespace pagedchat {

ModelRunner::ModelRunner(const LoadedModel& model, std::unique_ptr<kernels::Backend> backend, WeightDType dtype)
    : owned_backend_(std::move(backend)),
      backend_(owned_backend_.get()),
      model_(model.config, model.weights, *backend_, dtype,
             [&model](const void* p, std::size_t n) { model.release_packed(p, n); }) {}

ModelRunner::ModelRunner(const ModelConfig& config, const ModelWeights& weights, const LoadedModel& owner,
                         ModelRunner& target, const MtpWeights& block, WeightDType dtype)
    : backend_(target.backend_),
      model_(
          config, weights, *backend_, dtype, [&owner](const void* p, std::size_t n) { owner.release_packed(p, n); },
          MtpInput{&block, &target.model_}) {}

void ModelRunner::allocate_kv_cache(int num_blocks, int block_size, kernels::KvDType dtype, int num_state_slots) {
  cache_.reset();
  cache_ = std::make_unique<KVCache>(model_.config(), num_blocks, block_size, dtype, backend_, num_state_slots);
}

void ModelRunner::profile_run(int num_tokens, int num_seqs, int max_model_len, int block_size, kernels::KvDType dtype) {
  num_seqs = std::max(1, std::min(num_seqs, num_tokens));
  const int per = num_tokens / num_seqs, first = num_tokens - per * (num_seqs - 1);
  const int seq_len = std::max(max_model_len, first);
  ForwardBatch b;
  b.max_blocks_per_seq = (seq_len + block_size - 1) / block_size;
  b.block_tables.assign(std::size_t(num_seqs) * b.max_blocks_per_seq, 0);  // every block is block 0
  b.query_start_loc.push_back(0);
  for (int r = 0; r < num_seqs; ++r) {
    const int q = r == 0 ? first : per;
    for (int j = 0; j < q; ++j) {
      b.input_ids.push_back(0);
      b.positions.push_back(seq_len - q + j);
      b.slot_mapping.push_back(-1);  // padding: nothing written
    }
    b.query_start_loc.push_back(int(b.input_ids.size()));
    b.seq_lens.push_back(seq_len);
    b.logits_indices.push_back(int(b.input_ids.size()) - 1);
  }
  const bool recurrent = model_.config().num_recurrent_layers() > 0;
  KVCache scratch(model_.config(), 1, block_size, dtype, backend_, recurrent ? num_seqs : 0);
  if (recurrent)
    for (int r = 0; r < num_seqs; ++r) b.state_slots.push_back(r);
  // Every other group: the same padding slots and block-0 tables.
  b.extra_groups.assign(std::size_t(scratch.num_groups() - 1),
                        ForwardBatch::KVGroupTables{b.slot_mapping, b.block_tables, b.max_blocks_per_seq});
  std::vector<float> logits;
  model_.forward(b, scratch, logits);
}

ForwardBatch ModelRunner::build_batch(const SchedulerOutput& out, const KVCacheCoordinator& kv) const {
  ForwardBatch b;
  build_batch(out, kv, b);
  return b;
}

void ModelRunner::build_batch(const SchedulerOutput& out, const KVCacheCoordinator& kv, ForwardBatch& b) const {
  // Every group's table of a request has the same length (a sliding group's released blocks are
  // null entries), so one width serves all groups.
  int max_blocks = 1;
  for (const auto& s : out.scheduled)
    if (!s.request->block_ids.empty()) max_blocks = std::max<int>(max_blocks, s.request->block_ids.front().size());
  const int groups = kv.num_groups();
  b.input_ids.clear();
  b.positions.clear();
  b.query_start_loc.clear();
  b.seq_lens.clear();
  b.logits_indices.clear();
  b.hidden_indices.clear();
  b.state_slots.clear();
  b.state_saves.clear();
  b.state_copies = out.state_copies;
  b.input_embeds.clear();
  b.key_ends.clear();
  b.key_begins.clear();
  b.mrope_positions.clear();
  // M-RoPE (Qwen3-VL): positions (t, h, w) for every token of a step where some request has an
  // image; without images they would all be (p, p, p), which plain RoPE computes.
  bool mrope = false;
  if (model_.config().mrope_sections[0] > 0)
    for (const auto& s : out.scheduled) mrope = mrope || !s.request->mm_inputs.empty();
  bool key_ends = false;  // some image of the step attends both ways: every token gets its key end
  b.extra_groups.resize(std::size_t(groups - 1));
  auto tables = [&](int g) -> std::pair<std::vector<int64_t>&, std::vector<int>&> {
    if (g == 0) return {b.slot_mapping, b.block_tables};
    auto& t = b.extra_groups[std::size_t(g) - 1];
    return {t.slot_mapping, t.block_tables};
  };
  b.max_blocks_per_seq = max_blocks;
  for (auto& t : b.extra_groups) t.max_blocks_per_seq = max_blocks;
  for (int g = 0; g < groups; ++g) {
    auto [slots, table] = tables(g);
    slots.clear();
    table.assign(out.scheduled.size() * std::size_t(max_blocks), BlockPool::kNullBlock);
  }
  b.query_start_loc.push_back(0);
  std::size_t r = 0;
  for (const auto& s : out.scheduled) {
    const Request& req = *s.request;
    const int start = req.num_computed_tokens, end = start + s.num_new_tokens;
    const int known = req.num_tokens();  // positions past it hold draft tokens (speculative decoding)
    const int first_token = int(b.input_ids.size());
    for (const MultiModalPlaceholder& m : req.mm_inputs) {
      // Image positions this step computes read the image's embeddings (the engine encoded them).
      const int lo = std::max(start, m.offset), hi = std::min(end, m.end());
      if (lo >= hi) continue;
      if (!m.embeddings) throw std::logic_error("an image's positions are scheduled before it was encoded");
      for (int pos = lo; pos < hi; ++pos)
        b.input_embeds.push_back(
            {first_token + pos - start,
             m.embeddings->data.data() + std::size_t(pos - m.offset) * std::size_t(m.embeddings->width)});
      if (m.bidirectional) {
        if (!key_ends) {  // causal for every token so far
          key_ends = true;
          b.key_ends.resize(std::size_t(first_token));
          b.key_begins.resize(std::size_t(first_token));
          for (int t = 0; t < first_token; ++t) {
            b.key_ends[std::size_t(t)] = b.positions[std::size_t(t)] + 1;
            b.key_begins[std::size_t(t)] = b.positions[std::size_t(t)];
          }
        }
        if (m.end() > end) throw std::logic_error("a bidirectional image is split across steps");
      }
    }
    if (mrope) {
      // Images before `pos` shift its rotary position back by what they take beyond their span.
      int shift = 0;
      std::size_t next = 0;  // the first image not yet passed
      for (int pos = start; pos < end; ++pos) {
        while (next < req.mm_inputs.size() && req.mm_inputs[next].end() <= pos) {
          shift += req.mm_inputs[next].length - req.mm_inputs[next].rope_span();
          ++next;
        }
        int t = pos - shift, h = t, w = t;
        if (next < req.mm_inputs.size() && req.mm_inputs[next].offset <= pos && req.mm_inputs[next].grid_w > 0) {
          const MultiModalPlaceholder& m = req.mm_inputs[next];
          const int k = pos - m.offset;
          t = m.offset - shift;
          h = t + k / m.grid_w;
          w = t + k % m.grid_w;
        }
        b.mrope_positions.insert(b.mrope_positions.end(), {t, h, w});
      }
    }
    for (int pos = start; pos < end; ++pos) {
      if (capture_hidden_) b.hidden_indices.push_back(int(b.input_ids.size()));
      b.input_ids.push_back(pos < known ? req.token_ids[std::size_t(pos)]
                                        : req.spec_token_ids[std::size_t(pos - known)]);
      b.positions.push_back(pos);
    }
    for (int g = 0; g < groups; ++g) {
      auto [slots, table] = tables(g);
      for (int pos = start; pos < end; ++pos) slots.push_back(kv.slot(req, pos, g));
      const std::vector<int>& ids = req.block_ids[std::size_t(g)];
      std::copy(ids.begin(), ids.end(), table.begin() + std::ptrdiff_t(r) * max_blocks);
    }
    if (key_ends) {
      b.key_ends.resize(b.input_ids.size());
      b.key_begins.resize(b.input_ids.size());
      for (int pos = start; pos < end; ++pos) {
        b.key_ends[std::size_t(first_token + pos - start)] = pos + 1;
        b.key_begins[std::size_t(first_token + pos - start)] = pos;
      }
      for (const MultiModalPlaceholder& m : req.mm_inputs)
        if (m.bidirectional)
          for (int pos = std::max(start, m.offset); pos < std::min(end, m.end()); ++pos) {
            b.key_ends[std::size_t(first_token + pos - start)] = m.end();
            if (m.window_spans_image) b.key_begins[std::size_t(first_token + pos - start)] = m.offset;
          }
    }
    b.query_start_loc.push_back(int(b.input_ids.size()));
    b.seq_lens.push_back(end);
    if (s.samples)  // the last known token's row, then one per draft token
      for (int j = s.num_spec_tokens; j >= 0; --j) b.logits_indices.push_back(int(b.input_ids.size()) - 1 - j);
    if (kv.states()) {
      b.state_slots.push_back(req.state_slot);
      if (s.num_spec_tokens > 0)  // the state rejected drafts roll back to
        b.state_saves.push_back({int(r), s.num_new_tokens - s.num_spec_tokens, req.spec_state_slot});
      if (s.checkpoint.after > 0)
        b.state_saves.push_back(
            {int(r), s.checkpoint.after, s.checkpoint.speculative ? req.spec_checkpoint_slot : req.checkpoint_slot});
      if (s.checkpoint.extra_after > 0)
        b.state_saves.push_back({int(r), s.checkpoint.extra_after, req.extra_checkpoint_slot});
    }
    ++r;
  }
}

bool ModelRunner::execute(const SchedulerOutput& out, const KVCacheCoordinator& kv, std::vector<float>& logits,
                          const std::function<bool()>& abandon) {
  for (const auto& [src, dst] : out.blocks_to_copy) cache_->copy_block(src, dst);
  build_batch(out, kv, batch_);
  return model_.forward(batch_, *cache_, logits, abandon);
}

}  // namespace pagedchat
