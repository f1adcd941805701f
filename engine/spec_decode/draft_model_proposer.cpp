#include "engine/spec_decode/draft_model_proposer.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "engine/core/kv_cache_groups.h"
#include "engine/model/kv_cache_dtype.h"

namespace pagedchat {

namespace {

[[noreturn]] void draft_error(const std::string& what) {
  throw std::invalid_argument("--speculative-config: the draft model " + what);
}

// The draft model as load_model gives it; its errors name the option.
ModelBundle load_draft(const EngineConfig& target);

EngineConfig draft_load_config(const EngineConfig& target) {
  EngineConfig c;
  c.model = target.speculative_config.model;
  c.num_threads = target.num_threads;
  c.device = target.device;
  c.dtype = target.dtype;
  return c;
}

ModelBundle load_draft(const EngineConfig& target) {
  try {
    return load_model(draft_load_config(target));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--speculative-config: the draft model: ") + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--speculative-config: the draft model: ") + e.what());
  }
}

}  // namespace

DraftModelProposer::DraftModelProposer(const EngineConfig& target_config, const ModelConfig& target_model,
                                       const Tokenizer* target_tokenizer, const BackendFactory& make_backend,
                                       int num_blocks)
    : bundle_(load_draft(target_config)) {
  const ModelConfig& mc = bundle_.model.config;
  const std::string name = "'" + bundle_.path + "'";
  if (mc.num_recurrent_layers() > 0)
    draft_error(name + " has recurrent (linear-attention) layers, which cannot be rolled back yet");
  // The same vocabulary: the same ids mean the same text. A vocabulary may list padding entries
  // past its real tokens (a Qwen GGUF lists 151936, its tokenizer.json 151669), so the tokens both
  // list are compared, the lists may differ by padding's allowance, and the draft must have an
  // embedding row for every id the model can take or give.
  const std::string vocab_hint = ": it must share the model's vocabulary";
  if (mc.vocab_size < target_model.vocab_size)
    draft_error(name + " has " + std::to_string(mc.vocab_size) + " embedding rows; the model's ids go up to " +
                std::to_string(target_model.vocab_size - 1) + vocab_hint);
  const int target_vocab = target_tokenizer ? target_tokenizer->vocab_size() : target_model.vocab_size;
  const int draft_vocab = bundle_.tokenizer ? bundle_.tokenizer->vocab_size() : mc.vocab_size;
  const int common = std::min(target_vocab, draft_vocab);
  const int padding = std::max(target_vocab, draft_vocab) / 16 + 1024;  // model_loader's allowance
  if (target_vocab != draft_vocab &&
      (!target_tokenizer || !bundle_.tokenizer || std::abs(target_vocab - draft_vocab) > padding))
    draft_error(name + " has a vocabulary of " + std::to_string(draft_vocab) + " tokens; the model has " +
                std::to_string(target_vocab) + vocab_hint);
  if (target_tokenizer && bundle_.tokenizer)
    for (int id = 0; id < common; ++id)
      if (target_tokenizer->token_text(id) != bundle_.tokenizer->token_text(id))
        draft_error(name + " has another vocabulary: token " + std::to_string(id) + " is '" +
                    bundle_.tokenizer->token_text(id) + "' there and '" + target_tokenizer->token_text(id) +
                    "' in the model");
  vocab_ = std::min({common, mc.vocab_size, target_model.vocab_size});
  max_positions_ = mc.max_seq_len;
  max_step_tokens_ = std::max(1, target_config.max_num_batched_tokens);
  const KVCacheGroups groups = KVCacheGroups::of(mc);
  runner_ = std::make_unique<ModelRunner>(bundle_.model, make_backend(mc), target_config.dtype);
  const kernels::KvDType kv_dtype = resolve_kv_cache_dtype(KvCacheDType::kAuto);
  runner_->allocate_kv_cache(num_blocks, target_config.block_size, kv_dtype);
  kv_ = std::make_unique<KVCacheCoordinator>(groups, num_blocks, target_config.block_size,
                                             /*enable_prefix_caching=*/false);
}

void DraftModelProposer::remove(const std::string& request_id) {
  const auto it = seqs_.find(request_id);
  if (it == seqs_.end()) return;
  kv_->free(*it->second);
  seqs_.erase(it);
}

void DraftModelProposer::propose(const std::vector<std::pair<Request*, int>>& work) {
  struct Item {
    Request* target;
    Request* draft;
    int k;
    int made = 0;
  };
  std::vector<Item> items;
  for (const auto& [r, wanted] : work) {
    r->spec_token_ids.clear();
    const int k = std::min(wanted, max_positions_ - r->num_tokens());
    if (k <= 0) continue;
    std::unique_ptr<Request>& slot = seqs_[r->request_id];
    if (!slot) slot = std::make_unique<Request>(r->request_id, r->token_ids, SamplingParams{}, 0, nullptr);
    Request& d = *slot;
    // What it computed before still holds up to the first token that differs (a rejected draft).
    std::size_t same = 0;
    const std::size_t n = std::min(d.token_ids.size(), r->token_ids.size());
    while (same < n && d.token_ids[same] == r->token_ids[same]) ++same;
    d.num_computed_tokens = std::min(d.num_computed_tokens, int(same));
    d.token_ids = r->token_ids;
    if (d.num_computed_tokens >= d.num_tokens()) d.num_computed_tokens = d.num_tokens() - 1;  // recompute the last
    items.push_back({r, &d, k});
  }
  // Each forward: every unfinished draft sequence computes what it has not (in chunks within the
  // step budget) and, where that reaches its last token, proposes the next.
  for (;;) {
    SchedulerOutput so;
    std::vector<Item*> rows;
    int budget = max_step_tokens_;
    for (Item& it : items) {
      if (it.made >= it.k || it.draft == nullptr || budget <= 0) continue;
      Request& d = *it.draft;
      const int left = d.num_tokens() - d.num_computed_tokens;
      const int take = std::min(left, budget);
      if (!kv_->allocate_slots(d, take)) {
        // No room: this request goes without drafts this step (the others keep theirs).
        it.draft = nullptr;
        remove(it.target->request_id);
        continue;
      }
      so.scheduled.push_back({&d, take, take == left, {}});
      so.total_num_scheduled_tokens += take;
      budget -= take;
      if (take == left) rows.push_back(&it);
    }
    if (so.scheduled.empty()) break;
    runner_->execute(so, *kv_, logits_);
    for (const ScheduledRequest& s : so.scheduled) s.request->num_computed_tokens += s.num_new_tokens;
    const std::size_t stride = std::size_t(runner_->model().config().vocab_size);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const float* row = logits_.data() + i * stride;
      const int token = int(std::max_element(row, row + vocab_) - row);  // first maximum, as the sampler
      rows[i]->draft->token_ids.push_back(token);
      ++rows[i]->made;
    }
  }
  for (const Item& it : items)
    if (it.draft)
      it.target->spec_token_ids.assign(it.draft->token_ids.begin() + it.target->num_tokens(),
                                       it.draft->token_ids.end());
}

}  // namespace pagedchat
