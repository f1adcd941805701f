#include "engine/llm_engine.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "engine/kv_cache_manager.h"
#include "engine/llama2c_loader.h"
#include "engine/model_files.h"
#include "engine/model_runner.h"
#include "engine/request.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "engine/tokenizer.h"

namespace pagedchat {

namespace {

constexpr int kAutoCacheSequences = 8;  // kv_cache_bytes = 0: room for this many full-length sequences

std::size_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : std::size_t(8) << 30;
}

void check_config(const EngineConfig& c) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("invalid engine config: " + m); };
  if (c.block_size < 1 || c.block_size > 1024) fail("block_size must be in [1, 1024], got " + std::to_string(c.block_size));
  if (c.max_num_seqs < 1) fail("max_num_seqs must be >= 1");
  if (c.max_num_batched_tokens < 1) fail("max_num_batched_tokens must be >= 1");
  if (c.num_blocks < 0) fail("num_blocks must be >= 0");
  if (c.max_model_len < 0) fail("max_model_len must be >= 0");
}

}  // namespace

struct LLMEngine::Impl {
  EngineConfig config;
  LoadedModel model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<KVCacheManager> kv;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<ModelRunner> runner;
  Sampler sampler;
  std::unordered_map<std::string, std::unique_ptr<Request>> requests;
  std::vector<RequestOutput> pending;  // aborted requests, reported by the next step()
  std::vector<std::string> last_scheduled;
  std::vector<float> logits;
  uint64_t next_arrival = 0;
  EngineStats stats;

  RequestOutput make_output(Request& r, bool finished);
  void add(const std::string& id, std::string prompt, std::vector<int> ids, const SamplingParams& params);
};

LLMEngine::LLMEngine(const EngineConfig& config) : impl_(std::make_unique<Impl>()) {
  check_config(config);
  Impl& m = *impl_;
  m.config = config;
  const ModelFiles files = resolve_model_files(config.model, config.tokenizer);
  m.model = load_llama2c(files.checkpoint);
  m.tokenizer = std::make_unique<Tokenizer>(files.tokenizer);
  ModelConfig& mc = m.model.config;
  if (m.tokenizer->vocab_size() != mc.vocab_size)
    throw std::runtime_error("tokenizer '" + files.tokenizer + "' has " + std::to_string(m.tokenizer->vocab_size()) +
                             " pieces but the model '" + files.checkpoint + "' has a vocabulary of " +
                             std::to_string(mc.vocab_size) + ": they do not belong together");
  if (m.tokenizer->bos_id() >= 0) mc.bos_id = m.tokenizer->bos_id();
  if (m.tokenizer->eos_id() >= 0) mc.eos_id = m.tokenizer->eos_id();

  if (m.config.max_model_len == 0) m.config.max_model_len = mc.max_seq_len;
  if (m.config.max_model_len > mc.max_seq_len)
    throw std::invalid_argument("max_model_len " + std::to_string(m.config.max_model_len) + " exceeds the model's " +
                                std::to_string(mc.max_seq_len) + " positions ('" + files.checkpoint + "')");

  const int bs = m.config.block_size;
  const std::size_t block_bytes = KVCache::bytes_per_block(mc, bs);
  const int blocks_per_seq = (m.config.max_model_len + bs - 1) / bs;
  long long num_blocks = m.config.num_blocks;
  if (num_blocks == 0) {
    if (m.config.kv_cache_bytes > 0) {
      num_blocks = static_cast<long long>(m.config.kv_cache_bytes / block_bytes);
    } else {
      num_blocks = static_cast<long long>(blocks_per_seq) * kAutoCacheSequences;
      const long long cap = static_cast<long long>(physical_memory_bytes() / 4 / block_bytes);
      num_blocks = std::max<long long>(blocks_per_seq, std::min(num_blocks, cap));
    }
  }
  if (num_blocks < blocks_per_seq)
    throw std::runtime_error("KV cache too small: " + std::to_string(num_blocks) + " blocks of " + std::to_string(bs) +
                             " tokens cannot hold one sequence of max_model_len " +
                             std::to_string(m.config.max_model_len) + " (needs " + std::to_string(blocks_per_seq) +
                             " blocks, " + std::to_string(blocks_per_seq * block_bytes) +
                             " bytes); raise kv_cache_bytes or lower max_model_len");
  if (num_blocks > (1 << 30)) throw std::runtime_error("KV cache of " + std::to_string(num_blocks) + " blocks is too large");
  m.config.num_blocks = static_cast<int>(num_blocks);
  m.config.kv_cache_bytes = std::size_t(num_blocks) * block_bytes;

  m.kv = std::make_unique<KVCacheManager>(m.config.num_blocks, bs);
  m.scheduler = std::make_unique<Scheduler>(
      SchedulerConfig{m.config.max_num_seqs, m.config.max_num_batched_tokens}, *m.kv);
  m.runner = std::make_unique<ModelRunner>(m.model, m.config.num_blocks, bs, m.config.num_threads);
  m.config.num_threads = m.runner->backend().num_threads();
}

LLMEngine::~LLMEngine() = default;

void LLMEngine::Impl::add(const std::string& id, std::string prompt, std::vector<int> ids, const SamplingParams& params) {
  params.validate();
  if (id.empty()) throw std::invalid_argument("request id must not be empty");
  if (requests.count(id)) throw std::invalid_argument("request id '" + id + "' is already in use");
  if (ids.empty()) throw std::invalid_argument("request '" + id + "': the prompt has no tokens");
  const int vocab = model.config.vocab_size;
  for (int t : ids)
    if (t < 0 || t >= vocab)
      throw std::invalid_argument("request '" + id + "': token id " + std::to_string(t) + " outside the vocabulary [0, " +
                                  std::to_string(vocab) + ")");
  if (int(ids.size()) >= config.max_model_len)
    throw std::invalid_argument("request '" + id + "': the prompt has " + std::to_string(ids.size()) +
                                " tokens, but the context holds " + std::to_string(config.max_model_len) +
                                " (max_model_len) and at least one must be left to generate");
  auto req = std::make_unique<Request>(id, std::move(prompt), std::move(ids), params, next_arrival++, *tokenizer);
  scheduler->add_request(req.get());
  requests.emplace(id, std::move(req));
}

void LLMEngine::add_request(const std::string& id, const std::string& prompt, const SamplingParams& params) {
  impl_->add(id, prompt, impl_->tokenizer->encode(prompt, /*add_bos=*/true), params);
}

void LLMEngine::add_request(const std::string& id, const std::vector<int>& ids, const SamplingParams& params) {
  impl_->add(id, std::string(), ids, params);
}

bool LLMEngine::abort_request(const std::string& id) {
  Impl& m = *impl_;
  auto it = m.requests.find(id);
  if (it == m.requests.end()) return false;
  Request& r = *it->second;
  m.scheduler->remove_request(&r);
  r.status = RequestStatus::kFinished;
  r.finish_reason = "abort";
  m.pending.push_back(m.make_output(r, true));
  m.requests.erase(it);
  return true;
}

RequestOutput LLMEngine::Impl::make_output(Request& r, bool finished) {
  RequestOutput out;
  out.request_id = r.request_id;
  out.prompt = r.prompt;
  out.prompt_token_ids = r.prompt_token_ids;
  out.finished = finished;
  out.num_computed_prompt_tokens = std::min(r.num_computed_tokens, r.num_prompt_tokens());
  CompletionOutput c;
  c.finish_reason = r.finish_reason;
  const std::string& text = r.detokenizer.text();
  const auto first_output = r.token_ids.begin() + r.num_prompt_tokens();
  if (r.params.output_kind == RequestOutputKind::kDelta) {
    c.text = text.substr(r.num_reported_chars);
    c.token_ids.assign(first_output + r.num_reported_tokens, r.token_ids.end());
  } else {
    c.text = text;
    c.token_ids.assign(first_output, r.token_ids.end());
  }
  r.num_reported_chars = text.size();
  r.num_reported_tokens = r.num_output_tokens();
  out.outputs.push_back(std::move(c));
  return out;
}

std::vector<RequestOutput> LLMEngine::step() {
  Impl& m = *impl_;
  std::vector<RequestOutput> outputs = std::move(m.pending);
  m.pending.clear();
  m.last_scheduled.clear();
  if (!m.scheduler->has_requests()) return outputs;

  const SchedulerOutput so = m.scheduler->schedule();
  if (so.scheduled.empty()) return outputs;
  for (const auto& s : so.scheduled) {
    m.last_scheduled.push_back(s.request->request_id);
    const int prompt_left = std::max(0, s.request->num_prompt_tokens() - s.request->num_computed_tokens);
    m.stats.num_prompt_tokens += std::min(prompt_left, s.num_new_tokens);
  }
  m.runner->execute(so, *m.kv, m.logits);
  m.scheduler->update_after_step(so);
  ++m.stats.num_steps;

  const ModelConfig& mc = m.model.config;
  int row = 0;
  for (const auto& s : so.scheduled) {
    if (!s.samples) continue;
    Request& r = *s.request;
    const int token = m.sampler.sample(m.logits.data() + std::size_t(row++) * mc.vocab_size, mc.vocab_size, r.params, r.rng);
    r.token_ids.push_back(token);
    ++m.stats.num_generation_tokens;
    const bool is_stop_token = !r.params.ignore_eos && (token == mc.eos_id || (mc.stop_on_bos && token == mc.bos_id));
    if (is_stop_token) {
      r.finish_reason = "stop";
    } else {
      r.detokenizer.add_token(token);
      if (r.num_output_tokens() >= r.params.max_tokens || r.num_tokens() >= m.config.max_model_len)
        r.finish_reason = "length";
    }
    const bool finished = r.finish_reason.has_value();
    if (finished) {
      r.detokenizer.flush();
      r.status = RequestStatus::kFinished;
      m.scheduler->finish_request(&r);
    }
    const bool has_news = r.detokenizer.text().size() > r.num_reported_chars ||
                          size_t(r.num_output_tokens()) > r.num_reported_tokens;
    if (finished || (has_news && r.params.output_kind != RequestOutputKind::kFinalOnly))
      outputs.push_back(m.make_output(r, finished));
    if (finished) m.requests.erase(r.request_id);
  }
  return outputs;
}

bool LLMEngine::has_unfinished_requests() const { return !impl_->requests.empty() || !impl_->pending.empty(); }
int LLMEngine::num_unfinished_requests() const { return int(impl_->requests.size()); }
const ModelConfig& LLMEngine::model_config() const { return impl_->model.config; }
const EngineConfig& LLMEngine::engine_config() const { return impl_->config; }
const Tokenizer& LLMEngine::tokenizer() const { return *impl_->tokenizer; }
const std::vector<std::string>& LLMEngine::last_scheduled_request_ids() const { return impl_->last_scheduled; }

std::optional<RequestState> LLMEngine::request_state(const std::string& id) const {
  auto it = impl_->requests.find(id);
  if (it == impl_->requests.end()) return std::nullopt;
  const Request& r = *it->second;
  return RequestState{r.status, r.num_prompt_tokens(), r.num_computed_tokens, r.num_output_tokens(),
                      int(r.block_ids.size()), r.num_preemptions};
}

EngineStats LLMEngine::stats() const {
  EngineStats s = impl_->stats;
  s.num_running = impl_->scheduler->num_running();
  s.num_waiting = impl_->scheduler->num_waiting();
  s.num_total_blocks = impl_->kv->num_blocks();
  s.num_free_blocks = impl_->kv->num_free_blocks();
  s.num_preemptions = impl_->scheduler->num_preemptions();
  return s;
}

}  // namespace pagedchat
