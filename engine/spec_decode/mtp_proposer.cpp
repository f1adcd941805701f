#include "engine/spec_decode/mtp_proposer.h"

#include <algorithm>
#include <stdexcept>

#include "engine/core/kv_cache_groups.h"
#include "engine/loader/hf/hf_loader.h"

namespace pagedchat {

namespace {

[[noreturn]] void mtp_error(const std::string& what) {
  throw std::invalid_argument("--speculative-config: method mtp: " + what);
}

}  // namespace

ModelConfig mtp_head_config(const ModelConfig& target, const MtpWeights& block) {
  int attention_layer = -1;
  for (int l = 0; l < target.n_layers; ++l)
    if (!target.layer(l).is_recurrent() && !target.layer(l).shares_kv() && target.layer(l).sliding_window == 0)
      attention_layer = l;
  if (attention_layer < 0) mtp_error("the model has no full-attention layer whose shape the MTP block could take");
  ModelConfig c = target;
  LayerSpec spec = target.layer(attention_layer);
  spec.moe = bool(block.layer.moe.router);
  spec.ffn = spec.moe || bool(block.layer.gate_proj);
  c.n_layers = 1;
  c.layer_specs = {spec};
  c.nextn_predict_layers = 0;
  c.per_layer_input_size = 0;
  return c;
}

MtpProposer::MtpProposer(const EngineConfig& config, const LoadedModel& target, ModelRunner& target_runner,
                         int num_blocks, kernels::KvDType kv_dtype) {
  const ModelConfig& tc = target.config;
  if (tc.nextn_predict_layers < 1 || target.weights.mtp.empty()) {
    // A Hugging Face folder's mtp.* block is not loaded (transformers does not run it either).
    const bool folder = !hf_folder_of(config.model).empty();
    mtp_error("'" + config.model + "' has no MTP layers " +
              (folder ? std::string("loaded (a Hugging Face folder's mtp.* block is not read: its GGUF file keeps "
                                    "it)")
                      : std::string("(nextn_predict_layers is 0)")) +
              "; use ngram or draft_model");
  }
  block_ = target.weights.mtp.front();
  head_config_ = mtp_head_config(tc, block_);
  // Some checkpoints leave out the block's attn_q: it is the main stack's last attention layer's
  // (ik_llama.cpp create_qwen35_tensors).
  if (!block_.layer.q_proj)
    for (int l = tc.n_layers - 1; l >= 0 && !block_.layer.q_proj; --l)
      if (!tc.layer(l).is_recurrent()) block_.layer.q_proj = target.weights.layers[std::size_t(l)].q_proj;
  head_weights_.token_embedding = target.weights.token_embedding;
  head_weights_.lm_head = target.weights.lm_head;
  head_weights_.layers = {block_.layer};
  if (!head_config_.layer(0).ffn) head_weights_.layers[0].ffn_norm = nullptr;  // (ik's files keep it)
  // Without a shared_head_norm the target's final norm reads the block's output.
  head_weights_.final_norm = block_.shared_head_norm ? block_.shared_head_norm : target.weights.final_norm;
  try {
    runner_ = std::make_unique<ModelRunner>(head_config_, head_weights_, target, target_runner, block_, config.dtype);
  } catch (const std::invalid_argument& e) {
    mtp_error(std::string("the MTP block cannot run: ") + e.what());
  }
  runner_->set_capture_hidden(true);
  runner_->allocate_kv_cache(num_blocks, config.block_size, kv_dtype);
  // Prefix caching as the target's: row p depends on tokens 0..p only, so a chat's next turn finds
  // its history's rows (true ones) under the same block hashes.
  kv_ = std::make_unique<KVCacheCoordinator>(KVCacheGroups::of(head_config_), num_blocks, config.block_size,
                                             config.enable_prefix_caching);
  hidden_size_ = tc.hidden_size;
  vocab_ = tc.vocab_size;
  max_positions_ = tc.max_seq_len;
  max_step_tokens_ = std::max(1, config.max_num_batched_tokens);
  zeros_.assign(std::size_t(hidden_size_), 0.0f);
}

void MtpProposer::remove(const std::string& request_id) {
  const auto it = seqs_.find(request_id);
  if (it == seqs_.end()) return;
  if (it->second.rows) kv_->free(*it->second.rows);
  seqs_.erase(it);
}

void MtpProposer::observe(const Request& r, int first, int valid, const float* rows) {
  Seq& s = seqs_[r.request_id];
  s.target = const_cast<Request*>(&r);
  s.hidden_first = first;
  s.hidden.assign(rows, rows + std::size_t(std::max(valid, 0)) * std::size_t(hidden_size_));
}

const float* MtpProposer::hidden_for(const Seq& s, int p) const {
  const int q = p - 1, n = int(s.hidden.size()) / hidden_size_;
  if (q < s.hidden_first || q >= s.hidden_first + n) return zeros_.data();
  return s.hidden.data() + std::size_t(q - s.hidden_first) * std::size_t(hidden_size_);
}

void MtpProposer::run(const SchedulerOutput& so, const std::vector<float>& inputs) {
  runner_->input_hidden() = inputs;
  runner_->execute(so, *kv_, logits_);
  for (const ScheduledRequest& s : so.scheduled) s.request->num_computed_tokens += s.num_new_tokens;
}

void MtpProposer::propose(const std::vector<std::pair<Request*, int>>& work) {
  for (const auto& [r, k] : work) {
    r->spec_token_ids.clear();
    Seq& s = seqs_[r->request_id];
    s.target = r;
    s.want = std::max(0, std::min(k, max_positions_ - r->num_tokens()));
  }
  struct Item {
    std::string id;
    Seq* seq;
    int last;                   // the last true row to compute (N when drafting)
    std::vector<float> hidden;  // the previous draft row's output: the next one's hidden state
  };
  std::vector<Item> items;
  for (auto& [id, s] : seqs_) {
    if (!s.target) continue;
    const Request& t = *s.target;
    if (!s.rows) {
      s.rows = std::make_unique<Request>(t.request_id, t.token_ids, SamplingParams{}, 0, nullptr);
      s.rows->cache_salt = t.cache_salt;
      // The rows an earlier request with the same prefix computed (a chat's earlier turns).
      const KVCacheCoordinator::ComputedBlocks hit = kv_->get_computed_blocks(*s.rows);
      if (hit.num_tokens > 0 && !kv_->allocate_slots(*s.rows, 0, &hit)) s.rows->num_computed_tokens = 0;
    }
    Request& d = *s.rows;
    // Rows computed before still hold up to the first token that differs.
    std::size_t same = 0;
    const std::size_t n = std::min(d.token_ids.size(), t.token_ids.size());
    while (same < n && d.token_ids[same] == t.token_ids[same]) ++same;
    d.num_computed_tokens = std::min(d.num_computed_tokens, int(same));
    d.token_ids = t.token_ids;
    const int N = t.num_tokens() - 1;
    if (s.want > 0) d.num_computed_tokens = std::min(d.num_computed_tokens, N);  // row N gives the first draft
    const int observed_end = s.hidden_first + int(s.hidden.size()) / hidden_size_;
    items.push_back({id, &s, s.want > 0 ? N : std::min(N, observed_end), {}});
  }
  // After a forward: each sampled item's next draft (its logits row's first maximum, as the
  // sampler) and the block's output at `rows[i]`, the hidden state of its next draft row.
  const auto take_drafts = [this](const std::vector<Item*>& sampled, const std::vector<int>& rows) {
    for (std::size_t i = 0; i < sampled.size(); ++i) {
      const float* row = logits_.data() + i * std::size_t(vocab_);
      sampled[i]->seq->target->spec_token_ids.push_back(int(std::max_element(row, row + vocab_) - row));
      const float* h = runner_->model().hidden().data() + std::size_t(rows[i]) * std::size_t(hidden_size_);
      sampled[i]->hidden.assign(h, h + hidden_size_);
    }
  };
  // The true rows, every request's in the same forwards; the row of a drafting request's last
  // token gives its first draft.
  std::vector<float> inputs;
  for (;;) {
    SchedulerOutput so;
    std::vector<Item*> sampled;
    inputs.clear();
    int budget = max_step_tokens_;
    for (Item& it : items) {
      if (!it.seq || budget <= 0) continue;
      Request& d = *it.seq->rows;
      const int left = it.last + 1 - d.num_computed_tokens;
      if (left <= 0) continue;
      const int take = std::min(left, budget);
      if (!kv_->allocate_slots(d, take)) {
        // No room: this request goes without drafts (its rows are dropped; the others keep theirs).
        if (it.seq->want > 0) it.seq->target->spec_token_ids.clear();
        remove(it.id);
        it.seq = nullptr;
        continue;
      }
      for (int p = d.num_computed_tokens; p < d.num_computed_tokens + take; ++p) {
        const float* h = hidden_for(*it.seq, p);
        inputs.insert(inputs.end(), h, h + hidden_size_);
      }
      const bool samples = take == left && it.seq->want > 0;
      so.scheduled.push_back({&d, take, samples, {}});
      so.total_num_scheduled_tokens += take;
      budget -= take;
      if (samples) sampled.push_back(&it);
    }
    if (so.scheduled.empty()) break;
    // The hidden row of each sampled request: its last token's, in batch order.
    std::vector<int> last_row;
    int offset = 0;
    for (const ScheduledRequest& s : so.scheduled) {
      offset += s.num_new_tokens;
      if (s.samples) last_row.push_back(offset - 1);
    }
    run(so, inputs);
    take_drafts(sampled, last_row);
  }
  // The chained drafts: each feeds the previous draft with the block's own output.
  for (;;) {
    SchedulerOutput so;
    std::vector<Item*> sampled;
    std::vector<int> rows;
    inputs.clear();
    for (Item& it : items) {
      if (!it.seq || it.hidden.empty()) continue;
      Request& t = *it.seq->target;
      Request& d = *it.seq->rows;
      if (int(t.spec_token_ids.size()) >= it.seq->want) continue;
      // Draft rows go past the known tokens as spec tokens: their blocks are never registered in
      // the prefix cache (allocate_slots registers known tokens' blocks only).
      const int computed = d.num_computed_tokens;
      d.spec_token_ids.push_back(t.spec_token_ids.back());
      d.num_computed_tokens = d.num_tokens() + int(d.spec_token_ids.size()) - 1;
      if (!kv_->allocate_slots(d, 1)) {  // no block for it: the drafts so far stay, no more
        d.spec_token_ids.pop_back();
        d.num_computed_tokens = computed;
        it.hidden.clear();
        continue;
      }
      inputs.insert(inputs.end(), it.hidden.begin(), it.hidden.end());
      so.scheduled.push_back({&d, 1, true, {}});
      so.total_num_scheduled_tokens += 1;
      rows.push_back(int(sampled.size()));
      sampled.push_back(&it);
    }
    if (so.scheduled.empty()) break;
    run(so, inputs);
    take_drafts(sampled, rows);
  }
  // Draft rows are left in the cache past the true ones, to be overwritten.
  for (Item& it : items) {
    if (!it.seq) continue;
    Request& d = *it.seq->rows;
    if (!d.spec_token_ids.empty()) {
      d.spec_token_ids.clear();
      d.num_computed_tokens = d.num_tokens();
    }
    it.seq->target = nullptr;
    it.seq->want = 0;
    it.seq->hidden.clear();
  }
}

}  // namespace pagedchat
