#include "engine/llm_engine.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "engine/core/kv_cache_manager.h"
#include "engine/loader/model_loader.h"
#include "engine/model/model_runner.h"
#include "engine/output_processor.h"
#include "engine/core/request.h"
#include "engine/sample/sampler.h"
#include "engine/core/scheduler.h"
#include "engine/text/tokenizer.h"
#include "kernels/cpu/cpu_backend.h"

namespace pagedchat {

namespace {

constexpr int kAutoCacheSequences = 8;  // kv_cache_bytes = 0: room for this many full-length sequences

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::size_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : std::size_t(8) << 30;
}

SchedulingPolicy parse_policy(const std::string& s) {
  if (s == "fcfs") return SchedulingPolicy::kFcfs;
  if (s == "priority") return SchedulingPolicy::kPriority;
  throw std::invalid_argument("invalid engine config: scheduling_policy must be \"fcfs\" or \"priority\", got \"" + s + "\"");
}

}  // namespace

WeightDType parse_dtype(const std::string& s) {
  try {
    return parse_weight_dtype(s);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("invalid engine config: ") + e.what());
  }
}

kernels::KvDType parse_kv_cache_dtype(const std::string& s) {
  if (s == "auto" || s == "bfloat16") return kernels::KvDType::kBFloat16;
  if (s == "float32") return kernels::KvDType::kFloat32;
  if (s == "float16") return kernels::KvDType::kFloat16;
  throw std::invalid_argument(
      "invalid engine config: kv_cache_dtype must be \"auto\", \"float32\", \"bfloat16\" or \"float16\", got \"" + s +
      "\"");
}

namespace {

void check_config(const EngineConfig& c) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("invalid engine config: " + m); };
  if (c.block_size < 1 || c.block_size > 1024) fail("block_size must be in [1, 1024], got " + std::to_string(c.block_size));
  if (c.max_num_seqs < 1) fail("max_num_seqs must be >= 1");
  if (c.max_num_batched_tokens < 1) fail("max_num_batched_tokens must be >= 1");
  if (c.num_blocks < 0) fail("num_blocks must be >= 0");
  if (c.max_model_len < 0) fail("max_model_len must be >= 0");
  if (c.num_threads < 0 || c.num_threads > 1024) fail("num_threads must be in [0, 1024] (0 = all cores), got " + std::to_string(c.num_threads));
  if (c.long_prefill_token_threshold < 0) fail("long_prefill_token_threshold must be >= 0");
  parse_policy(c.scheduling_policy);
  parse_dtype(c.dtype);
  parse_kv_cache_dtype(c.kv_cache_dtype);
}

}  // namespace

struct LLMEngine::Impl {
  EngineConfig config;
  LoadedModel model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string chat_template;
  SamplingDefaults sampling_defaults;
  std::unique_ptr<KVCacheManager> kv;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<ModelRunner> runner;
  std::unique_ptr<OutputProcessor> output;
  Sampler sampler;
  std::unordered_map<std::string, std::unique_ptr<RequestGroup>> groups;
  std::vector<RequestOutput> pending;  // aborted requests, reported by the next step()
  std::vector<std::string> last_scheduled;
  std::vector<float> logits;
  uint64_t next_arrival = 0;
  EngineStats stats;

  void add(const std::string& id, std::string prompt, std::vector<int> ids, const SamplingParams& params,
           const RequestOptions& options);
  SampleResult sample(Request& r, const float* row);
  void fork(RequestGroup& g);
  void on_token(RequestGroup& g, Request& r, const SampleResult& s, double t);
};

LLMEngine::LLMEngine(const EngineConfig& config) : impl_(std::make_unique<Impl>()) {
  check_config(config);
  Impl& m = *impl_;
  m.config = config;
  ModelBundle bundle = load_model(config);
  m.model = std::move(bundle.model);
  m.tokenizer = std::move(bundle.tokenizer);
  m.chat_template = std::move(bundle.chat_template);
  m.sampling_defaults = bundle.generation_defaults;
  ModelConfig& mc = m.model.config;
  const std::string model_path = bundle.path;

  if (m.config.max_model_len == 0) m.config.max_model_len = mc.max_seq_len;
  if (m.config.max_model_len > mc.max_seq_len && mc.max_seq_len_is_soft) {
    std::fprintf(stderr, "pagedchat: warning: max_model_len %d exceeds the %d positions in the metadata of '%s'; "
                 "outputs past them may be wrong if the model was not trained that long\n",
                 m.config.max_model_len, mc.max_seq_len, model_path.c_str());
    mc.max_seq_len = m.config.max_model_len;
  }
  if (m.config.max_model_len > mc.max_seq_len)
    throw std::invalid_argument("max_model_len " + std::to_string(m.config.max_model_len) + " exceeds the model's " +
                                std::to_string(mc.max_seq_len) + " positions ('" + model_path + "')");

  const int bs = m.config.block_size;
  const kernels::KvDType kv_dtype = parse_kv_cache_dtype(m.config.kv_cache_dtype);
  m.config.kv_cache_dtype = kernels::kv_dtype_name(kv_dtype);
  const std::size_t block_bytes = KVCache::bytes_per_block(mc, bs, kv_dtype);
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
  if (num_blocks > (1 << 30))
    throw std::runtime_error("KV cache of " + std::to_string(num_blocks) + " blocks is too large (at most " +
                             std::to_string(1 << 30) + " blocks)");
  m.config.num_blocks = static_cast<int>(num_blocks);
  m.config.kv_cache_bytes = std::size_t(num_blocks) * block_bytes;

  m.kv = std::make_unique<KVCacheManager>(m.config.num_blocks, bs, m.config.enable_prefix_caching);
  m.scheduler = std::make_unique<Scheduler>(
      SchedulerConfig{m.config.max_num_seqs, m.config.max_num_batched_tokens, m.config.long_prefill_token_threshold,
                      parse_policy(m.config.scheduling_policy)},
      *m.kv);
  m.runner = std::make_unique<ModelRunner>(m.model, m.config.num_blocks, bs, m.config.num_threads,
                                           parse_dtype(m.config.dtype), kv_dtype);
  m.output = std::make_unique<OutputProcessor>(mc, m.config.max_model_len, m.tokenizer.get());
  m.config.num_threads = m.runner->backend().num_threads();
}

void check_request(const std::string& id, const std::vector<int>& ids, const SamplingParams& params, int vocab,
                   int max_model_len) {
  params.validate();
  params.validate_for_vocab(vocab);
  if (id.empty()) throw std::invalid_argument("request id must not be empty");
  if (ids.empty()) throw std::invalid_argument("request '" + id + "': the prompt has no tokens");
  for (int t : ids)
    if (t < 0 || t >= vocab)
      throw std::invalid_argument("request '" + id + "': token id " + std::to_string(t) + " outside the vocabulary [0, " +
                                  std::to_string(vocab) + ")");
  const long long need = static_cast<long long>(ids.size()) + params.max_tokens;
  if (need > max_model_len)
    throw std::invalid_argument("request '" + id + "': the prompt (" + std::to_string(ids.size()) +
                                " tokens) plus max_tokens (" + std::to_string(params.max_tokens) + ") is " +
                                std::to_string(need) + " tokens, more than max_model_len " +
                                std::to_string(max_model_len));
}

LLMEngine::~LLMEngine() = default;

void LLMEngine::Impl::add(const std::string& id, std::string prompt, std::vector<int> ids, const SamplingParams& params,
                          const RequestOptions& options) {
  check_request(id, ids, params, model.config.vocab_size, config.max_model_len);
  if (groups.count(id)) throw std::invalid_argument("request id '" + id + "' is already in use");
  auto g = std::make_unique<RequestGroup>();
  g->request_id = id;
  g->prompt = std::move(prompt);
  g->prompt_token_ids = ids;
  g->params = params;
  g->metrics.arrival_time = now_seconds();
  auto seq = std::make_unique<Request>(id, std::move(ids), params, next_arrival++, tokenizer.get());
  seq->priority = options.priority;
  seq->cache_salt = options.cache_salt;
  seq->group = g.get();
  scheduler->add_request(seq.get());
  g->seqs.push_back(std::move(seq));
  groups.emplace(id, std::move(g));
}

void LLMEngine::add_request(const std::string& id, const std::string& prompt, const SamplingParams& params,
                            const RequestOptions& options) {
  if (!impl_->tokenizer)
    throw std::invalid_argument("request '" + id + "': this model has no tokenizer; pass prompt token ids");
  impl_->add(id, prompt, impl_->tokenizer->encode(prompt, impl_->model.config.add_bos), params, options);
}

void LLMEngine::add_request(const std::string& id, const std::vector<int>& ids, const SamplingParams& params,
                            const RequestOptions& options) {
  impl_->add(id, std::string(), ids, params, options);
}

bool LLMEngine::abort_request(const std::string& id) {
  Impl& m = *impl_;
  auto it = m.groups.find(id);
  if (it == m.groups.end()) return false;
  RequestGroup& g = *it->second;
  for (auto& s : g.seqs) {
    if (!s->is_finished()) m.scheduler->remove_request(s.get());
    m.output->abort(*s);
  }
  g.metrics.finished_time = now_seconds();
  m.pending.push_back(m.output->make_output(g));
  m.groups.erase(it);
  return true;
}

SampleResult LLMEngine::Impl::sample(Request& r, const float* row) {
  const int vocab = model.config.vocab_size;
  const std::span<const int> all(r.token_ids);
  return sampler.sample(row, vocab, r.params, all.first(r.num_prompt_tokens()), all.subspan(r.num_prompt_tokens()),
                        output->masked_ids(r), r.rng);
}

// n > 1: the first sequence has just finished the prefill; the others start from its blocks.
void LLMEngine::Impl::fork(RequestGroup& g) {
  const Request& parent = *g.seqs.front();
  for (int i = 1; i < g.params.n; ++i) {
    SamplingParams p = g.params;
    if (p.seed) p.seed = *p.seed + uint64_t(i);  // distinct but reproducible streams (as vLLM does)
    auto child = std::make_unique<Request>(g.request_id + "#" + std::to_string(i), g.prompt_token_ids, p,
                                           parent.arrival_seq, tokenizer.get());
    child->index = i;
    child->group = &g;
    child->priority = parent.priority;
    child->cache_salt = parent.cache_salt;
    child->num_computed_tokens = parent.num_computed_tokens;
    kv->fork(parent, *child);
    scheduler->add_running(child.get());
    g.seqs.push_back(std::move(child));
  }
  g.forked = true;
}

void LLMEngine::Impl::on_token(RequestGroup& g, Request& r, const SampleResult& s, double t) {
  output->append_token(r, s);
  ++stats.num_generation_tokens;
  if (r.index == 0) {
    if (g.metrics.first_token_time == 0) g.metrics.first_token_time = t;
    g.metrics.last_token_time = t;
    ++g.metrics.num_generation_tokens;
  }
  if (r.finish_reason) scheduler->finish_request(&r);
}

std::vector<RequestOutput> LLMEngine::step() {
  Impl& m = *impl_;
  std::vector<RequestOutput> outputs = std::move(m.pending);
  m.pending.clear();
  m.last_scheduled.clear();
  if (!m.scheduler->has_requests()) return outputs;

  const SchedulerOutput so = m.scheduler->schedule();
  if (so.scheduled.empty()) return outputs;
  const double t_sched = now_seconds();
  for (const auto& s : so.scheduled) {
    Request& r = *s.request;
    RequestGroup& g = *r.group;
    m.last_scheduled.push_back(r.request_id);
    if (g.metrics.first_scheduled_time == 0) {
      g.metrics.first_scheduled_time = t_sched;
      g.metrics.num_cached_tokens = r.num_computed_tokens;  // prefix-cache hits taken at admission
    }
    const int prompt_left = std::max(0, r.num_prompt_tokens() - r.num_computed_tokens);
    m.stats.num_prompt_tokens += std::min(prompt_left, s.num_new_tokens);
  }
  for (Request* r : so.preempted) ++r->group->metrics.num_preemptions;
  m.runner->execute(so, *m.kv, m.logits);
  m.scheduler->update_after_step(so);
  ++m.stats.num_steps;

  const int vocab = m.model.config.vocab_size;
  const double t = now_seconds();
  std::vector<RequestGroup*> touched;
  int row = 0;
  for (const auto& s : so.scheduled) {
    if (!s.samples) continue;
    Request& r = *s.request;
    RequestGroup& g = *r.group;
    const float* logits = m.logits.data() + std::size_t(row++) * vocab;
    const SampleResult first = m.sample(r, logits);
    if (!g.forked && g.params.n > 1) {
      // Every completion samples its first token from the prompt's logits, then runs on its own.
      m.fork(g);
      for (size_t i = 1; i < g.seqs.size(); ++i) m.on_token(g, *g.seqs[i], m.sample(*g.seqs[i], logits), t);
    }
    m.on_token(g, r, first, t);
    if (std::find(touched.begin(), touched.end(), &g) == touched.end()) touched.push_back(&g);
  }
  for (RequestGroup* g : touched) {
    const bool finished = g->finished();
    if (finished) {
      g->metrics.finished_time = t;
      g->metrics.time_to_first_token = g->metrics.first_token_time - g->metrics.arrival_time;
      if (g->metrics.num_generation_tokens > 1)
        g->metrics.mean_inter_token_latency = (g->metrics.last_token_time - g->metrics.first_token_time) /
                                              (g->metrics.num_generation_tokens - 1);
    }
    if (finished || (g->params.output_kind != RequestOutputKind::kFinalOnly && m.output->has_news(*g)))
      outputs.push_back(m.output->make_output(*g));
    if (finished) m.groups.erase(g->request_id);
  }
  return outputs;
}

bool LLMEngine::has_unfinished_requests() const { return !impl_->groups.empty() || !impl_->pending.empty(); }
int LLMEngine::num_unfinished_requests() const { return int(impl_->groups.size()); }
bool LLMEngine::reset_prefix_cache() { return impl_->kv->pool().reset_prefix_cache(); }
const ModelConfig& LLMEngine::model_config() const { return impl_->model.config; }
const EngineConfig& LLMEngine::engine_config() const { return impl_->config; }
const Tokenizer& LLMEngine::tokenizer() const {
  if (!impl_->tokenizer) throw std::logic_error("this engine's model has no tokenizer");
  return *impl_->tokenizer;
}
const std::string& LLMEngine::chat_template() const { return impl_->chat_template; }
const SamplingDefaults& LLMEngine::sampling_defaults() const { return impl_->sampling_defaults; }
bool LLMEngine::has_tokenizer() const { return impl_->tokenizer != nullptr; }
const std::vector<std::string>& LLMEngine::last_scheduled_request_ids() const { return impl_->last_scheduled; }

std::optional<RequestState> LLMEngine::request_state(const std::string& id) const {
  auto it = impl_->groups.find(id);
  if (it == impl_->groups.end()) return std::nullopt;
  const Request& r = *it->second->seqs.front();
  return RequestState{r.status, r.num_prompt_tokens(), r.num_computed_tokens, r.num_output_tokens(),
                      int(r.block_ids.size()), r.num_preemptions};
}

std::vector<KVBlockInfo> LLMEngine::kv_cache_snapshot() const {
  const Impl& m = *impl_;
  const BlockPool& pool = m.kv->pool();
  std::vector<KVBlockInfo> blocks(pool.num_blocks());
  for (int b = 0; b < pool.num_blocks(); ++b) {
    blocks[b].ref_count = pool.ref_count(b);
    blocks[b].cached = pool.block_hash(b).has_value();
  }
  for (const Request* r : m.scheduler->running())
    for (int b : r->block_ids) {
      auto& ids = blocks[b].request_ids;
      if (std::find(ids.begin(), ids.end(), r->group->request_id) == ids.end()) ids.push_back(r->group->request_id);
    }
  return blocks;
}

EngineStats LLMEngine::stats() const {
  const Impl& m = *impl_;
  EngineStats s = m.stats;
  s.num_running = m.scheduler->num_running();
  s.num_waiting = m.scheduler->num_waiting();
  s.num_total_blocks = m.kv->num_blocks();
  s.num_free_blocks = m.kv->num_free_blocks();
  s.num_preemptions = m.scheduler->num_preemptions();
  s.prefix_cache_queries = m.kv->prefix_cache_queries();
  s.prefix_cache_hits = m.kv->prefix_cache_hits();
  s.num_cached_blocks = m.kv->pool().num_cached_blocks();
  return s;
}

std::string LLMEngine::backend_name() const {
  kernels::Backend& b = impl_->runner->backend();
  std::string s = b.name();
  if (s == "cpu") s += std::string(" ") + cpu::isa_name(cpu::backend_isa(b));
  return s + ", " + std::to_string(b.num_threads()) + " threads";
}

std::size_t LLMEngine::packed_weight_bytes() const { return impl_->runner->model().packed_bytes(); }
std::string LLMEngine::weight_types() const { return impl_->runner->model().packed_types(); }

}  // namespace pagedchat
