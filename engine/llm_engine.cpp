#include "engine/llm_engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "engine/core/host_memory.h"
#include "engine/core/kv_cache_groups.h"
#include "engine/llm_engine_impl.h"
#include "engine/loader/hf/hf_loader.h"
#include "engine/loader/model_loader.h"
#include "engine/model/backend_check.h"
#include "engine/sample/structured/json_schema_grammar.h"
#include "engine/spec_decode/draft_budget.h"
#include "engine/vision/hf_vision.h"
#include "kernels/backend_factory.h"

namespace pagedchat {

namespace {

constexpr int kAutoCacheSequences = 8;  // kv_cache_bytes = 0: room for this many full-length sequences

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Physical memory, 8 GiB where it cannot be read (the automatic caches' reference).
std::size_t physical_memory_or_8gib() {
  const std::uint64_t bytes = physical_memory_bytes();
  return bytes > 0 ? std::size_t(bytes) : std::size_t(8) << 30;
}

}  // namespace

namespace {

void check_config(const EngineConfig& c) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("invalid engine config: " + m); };
  if (c.block_size < 1 || c.block_size > 1024)
    fail("block_size must be in [1, 1024], got " + std::to_string(c.block_size));
  if (c.max_num_seqs < 1) fail("max_num_seqs must be >= 1");
  if (c.num_state_slots < 0) fail("num_state_slots must be >= 0 (0: automatic)");
  if (c.max_num_batched_tokens < 1) fail("max_num_batched_tokens must be >= 1");
  if (c.num_blocks < 0) fail("num_blocks must be >= 0");
  if (c.max_model_len < 0) fail("max_model_len must be >= 0");
  if (c.num_threads < 0 || c.num_threads > 1024)
    fail("num_threads must be in [0, 1024] (0 = all cores), got " + std::to_string(c.num_threads));
  if (c.long_prefill_token_threshold < 0) fail("long_prefill_token_threshold must be >= 0");
  if (std::string(weight_dtype_name(c.dtype)) == "invalid")
    fail("dtype has no such value (" + std::to_string(static_cast<int>(c.dtype)) + ")");
  if (std::string(kv_cache_dtype_name(c.kv_cache_dtype)) == "invalid")
    fail("kv_cache_dtype has no such value (" + std::to_string(static_cast<int>(c.kv_cache_dtype)) + ")");
  try {
    kernels::parse_device(c.device);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  if (!(c.gpu_memory_utilization > 0.0 && c.gpu_memory_utilization <= 1.0))
    fail("gpu_memory_utilization must be in (0, 1], got " + std::to_string(c.gpu_memory_utilization));
  c.speculative_config.validate();  // its errors name --speculative-config
  if (c.image_min_tokens < 0 || c.image_max_tokens < 0) fail("image_min_tokens and image_max_tokens must be >= 0");
  if (c.image_min_tokens > 0 && c.image_max_tokens > 0 && c.image_min_tokens > c.image_max_tokens)
    fail("the fewest tokens an image becomes (--image-min-tokens, " + std::to_string(c.image_min_tokens) +
         ") is above the most (--image-max-tokens, " + std::to_string(c.image_max_tokens) + ")");
  if (c.mmproj.empty() && (c.image_min_tokens > 0 || c.image_max_tokens > 0 || c.image_bidirectional) &&
      !hf_folder_has_vision(hf_folder_of(c.model)))
    fail(
        "--image-min-tokens, --image-max-tokens and --image-attention are about images: they need --mmproj "
        "(the model's image projector) or a Hugging Face folder with its vision tower");
}

// A warning of the load: to EngineConfig::on_warning, or to stderr without one.
void warn(const EngineConfig& c, const std::string& warning) {
  if (c.on_warning)
    c.on_warning(warning);
  else
    std::fprintf(stderr, "pagedchat: warning: %s\n", warning.c_str());
}

// The backend for c.device, checked against the CPU when it is a device of its own (a GPU): on
// disagreement the CPU runs instead, and `warnings` (and warn()) says why.
std::unique_ptr<kernels::Backend> make_checked_backend(const EngineConfig& c, const ModelConfig& mc,
                                                       std::vector<std::string>& warnings) {
  std::string note;
  auto backend = kernels::make_backend({c.device, c.num_threads, c.enforce_eager}, &note);
  if (!note.empty()) std::fprintf(stderr, "pagedchat: %s\n", note.c_str());
  // An op this model needs that the backend has no kernel for: "auto" runs on the CPU, an
  // explicit device is an error naming the op.
  for (kernels::OpFeature f : model_op_features(mc)) {
    if (backend->supports(f)) continue;
    const std::string why = std::string(backend->description()) + " has no kernel for " + kernels::op_feature_name(f) +
                            " yet, which this " + mc.architecture + " model needs";
    if (c.device != "auto") throw std::invalid_argument("--device " + c.device + ": " + why);
    warnings.push_back(why + "; running on the CPU instead");
    warn(c, warnings.back());
    backend.reset();
    return kernels::make_backend({"cpu", c.num_threads});
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  if (!backend->device_memory_info(&free_bytes, &total_bytes)) return backend;
  const std::string problem = check_backend_agrees(*backend, c.num_threads);
  if (problem.empty()) return backend;
  warnings.push_back(problem + "; running on the CPU instead");
  warn(c, warnings.back());
  backend.reset();
  return kernels::make_backend({"cpu", c.num_threads});
}

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
  return buf;
}

// MiB below 1 GiB (a small model's state slots), else GiB.
std::string mib_or_gib(std::size_t bytes) {
  if (bytes >= (1ull << 30)) return gib(bytes);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / double(1ull << 20));
  return buf;
}

// EngineConfig::host_memory_budget: the KV blocks `num_blocks` lowered to what the budget leaves
// after `weight_bytes`; throws when that is less than one full-length sequence (`blocks_per_seq`).
// A configured size (`sized`) that is lowered gets a warning; the automatic one is lowered silently.
long long fit_host_memory_budget(const EngineConfig& c, std::size_t weight_bytes, long long num_blocks,
                                 long long blocks_per_seq, std::size_t block_bytes, bool sized,
                                 std::vector<std::string>& warnings) {
  const std::size_t budget = c.host_memory_budget;
  const long long fit = budget > weight_bytes ? static_cast<long long>((budget - weight_bytes) / block_bytes) : 0;
  if (fit < blocks_per_seq)
    throw std::runtime_error("not enough memory: the weights take " + gib(weight_bytes) +
                             " and one sequence of max_model_len " + std::to_string(c.max_model_len) + " needs " +
                             gib(std::size_t(blocks_per_seq) * block_bytes) + " of KV cache, but " + gib(budget) +
                             " is available for this model; free memory (unload another model) or lower "
                             "max_model_len");
  if (num_blocks <= fit) return num_blocks;
  if (sized) {
    warnings.push_back("KV cache lowered from " + gib(std::size_t(num_blocks) * block_bytes) + " to " +
                       gib(std::size_t(fit) * block_bytes) + ": the weights (" + gib(weight_bytes) +
                       ") and the cache must fit the " + gib(budget) + " of memory available for this model");
    warn(c, warnings.back());
  }
  return fit;
}

}  // namespace

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
  // LongRoPE (Phi-3): the long factors when the context goes past the original one, as llama.cpp
  // chooses them by its context size.
  mc.use_long_rope_factors(m.config.max_model_len);
  if (m.config.max_model_len > mc.max_seq_len && mc.max_seq_len_is_soft) {
    const std::string warning = "max_model_len " + std::to_string(m.config.max_model_len) + " exceeds the " +
                                std::to_string(mc.max_seq_len) + " positions in the metadata of '" + model_path +
                                "'; outputs past them may be wrong if the model was not trained that long";
    warn(m.config, warning);
    mc.max_seq_len = m.config.max_model_len;
  }
  if (m.config.max_model_len > mc.max_seq_len)
    throw std::invalid_argument("max_model_len " + std::to_string(m.config.max_model_len) + " exceeds the model's " +
                                std::to_string(mc.max_seq_len) + " positions ('" + model_path + "')");

  const int bs = m.config.block_size;
  const kernels::KvDType kv_dtype = resolve_kv_cache_dtype(m.config.kv_cache_dtype);
  m.config.kv_cache_dtype = kv_cache_dtype_of(kv_dtype);
  for (int l = 0; l < mc.n_layers; ++l)  // every layer's head size (Gemma 4's local and global differ)
    if (mc.layer_head_dim(l) % kernels::kv_block_elems(kv_dtype) != 0)
      throw std::invalid_argument(std::string("kv_cache_dtype ") + kv_cache_dtype_name(m.config.kv_cache_dtype) +
                                  " stores blocks of " + std::to_string(kernels::kv_block_elems(kv_dtype)) +
                                  " values and needs a head size that is a multiple of it; '" + model_path +
                                  "' has head_dim " + std::to_string(mc.layer_head_dim(l)) +
                                  " (use bfloat16 or float16)");
  // KV-cache groups (engine/core/kv_cache_groups.h): one block id holds group_size layers; a
  // request needs every block of its sequence in a full group, its window's in a sliding one.
  const KVCacheGroups kv_groups = KVCacheGroups::of(mc);
  // The MTP block's cache (speculative decoding) has a block for each of the target's: counted in
  // the same budget.
  const SpeculativeConfig& spec = m.config.speculative_config;
  std::size_t mtp_block_bytes = 0;
  if (!m.model.weights.mtp.empty() &&
      (spec.method == SpeculativeConfig::Method::kMtp || (spec.enabled() && spec.mtp_if_available))) {
    try {
      const ModelConfig head = mtp_head_config(mc, m.model.weights.mtp.front());
      mtp_block_bytes = KVCache::bytes_per_block(head, KVCacheGroups::of(head), bs, kv_dtype);
    } catch (const std::invalid_argument&) {  // (MtpProposer says why, below)
    }
  }
  const std::size_t block_bytes = KVCache::bytes_per_block(mc, kv_groups, bs, kv_dtype) + mtp_block_bytes;
  const int max_step_tokens = std::min(
      m.config.max_model_len, m.config.long_prefill_token_threshold > 0
                                  ? std::min(m.config.long_prefill_token_threshold, m.config.max_num_batched_tokens)
                                  : m.config.max_num_batched_tokens);
  // Blocks one sequence of max_model_len needs, the sliding groups' null block included.
  const long long blocks_per_seq = kv_groups.max_blocks_per_request(m.config.max_model_len, bs, max_step_tokens) +
                                   (kv_groups.has_sliding_window() ? 1 : 0);
  auto backend = make_checked_backend(m.config, mc, m.warnings);
  std::size_t device_free = 0, device_total = 0;
  const bool on_device = backend->device_memory_info(&device_free, &device_total);
  if (on_device && kv_dtype == kernels::KvDType::kQ8_0)
    throw std::invalid_argument("kv_cache_dtype q8_0 is not supported on " + backend->description() +
                                " (the CUDA kernels read float32, bfloat16 or float16 caches); use --kv-cache-dtype "
                                "bfloat16 there");
  long long num_blocks = m.config.num_blocks;
  const bool sized = num_blocks > 0 || m.config.kv_cache_bytes > 0;  // else: automatic
  if (num_blocks == 0 && m.config.kv_cache_bytes > 0)
    num_blocks = static_cast<long long>(m.config.kv_cache_bytes / block_bytes);
  if (!sized && !on_device) {
    num_blocks = blocks_per_seq * kAutoCacheSequences;
    const long long cap = static_cast<long long>(physical_memory_or_8gib() / 4 / block_bytes);
    num_blocks = std::max<long long>(blocks_per_seq, std::min(num_blocks, cap));
  }
  auto too_small = [&](long long blocks, const std::string& how) {
    return std::runtime_error("KV cache too small: " + std::to_string(blocks) + " blocks of " + std::to_string(bs) +
                              " tokens cannot hold one sequence of max_model_len " +
                              std::to_string(m.config.max_model_len) + " (needs " + std::to_string(blocks_per_seq) +
                              " blocks, " + std::to_string(blocks_per_seq * block_bytes) + " bytes); " + how);
  };
  if ((sized || !on_device) && num_blocks < blocks_per_seq)
    throw too_small(num_blocks, "raise kv_cache_bytes or lower max_model_len");
  m.runner = std::make_unique<ModelRunner>(m.model, std::move(backend), m.config.dtype);
  if (std::string w = m.load_vision(bundle.format == "huggingface" ? model_path : ""); !w.empty())
    warn(m.config, m.warnings.emplace_back(std::move(w)));
  if (m.config.host_memory_budget > 0 && !on_device)
    num_blocks = fit_host_memory_budget(m.config, m.runner->model().packed_bytes(), num_blocks, blocks_per_seq,
                                        block_bytes, sized, m.warnings);
  if (!sized && on_device) {
    // vLLM's memory plan: weights, then the activations of the largest step (measured), then
    // gpu_memory_utilization of the card minus both becomes KV blocks.
    std::size_t free_before = 0, free_after = 0;
    m.runner->backend().device_memory_info(&free_before, &device_total);
    m.runner->profile_run(m.config.max_num_batched_tokens, m.config.max_num_seqs, m.config.max_model_len, bs, kv_dtype);
    m.runner->backend().device_memory_info(&free_after, &device_total);
    const std::size_t used = device_total - free_after;
    const double budget = m.config.gpu_memory_utilization * double(device_total) - double(used);
    num_blocks = budget > 0 ? static_cast<long long>(budget / double(block_bytes)) : 0;
    // No more than every running sequence at full length needs twice over (the rest would only
    // hold prefix-cache blocks): a small model does not take the whole card.
    num_blocks = std::min(num_blocks, 2LL * m.config.max_num_seqs * blocks_per_seq);
    std::fprintf(stderr,
                 "pagedchat: %s: %s total, weights %s, activations %s (profiled: %d tokens, %d sequences), in use %s; "
                 "KV cache %s = %lld blocks of %d tokens (gpu_memory_utilization %.2f; %s)\n",
                 m.runner->backend().description().c_str(), gib(device_total).c_str(),
                 gib(m.runner->model().packed_bytes()).c_str(),
                 gib(free_before > free_after ? free_before - free_after : 0).c_str(), m.config.max_num_batched_tokens,
                 m.config.max_num_seqs, gib(used).c_str(),
                 gib(std::size_t(std::max(0LL, num_blocks)) * block_bytes).c_str(), num_blocks, bs,
                 m.config.gpu_memory_utilization, kv_groups.describe().c_str());
    if (num_blocks < blocks_per_seq)
      throw too_small(num_blocks, "the device has " + gib(device_total) + ", of which weights and activations use " +
                                      gib(used) + " and gpu_memory_utilization " +
                                      std::to_string(m.config.gpu_memory_utilization) +
                                      " leaves the rest; raise gpu_memory_utilization, lower max_model_len, "
                                      "max_num_batched_tokens or max_num_seqs, or use a smaller dtype");
  }
  if (num_blocks > (1 << 30))
    throw std::runtime_error("KV cache of " + std::to_string(num_blocks) + " blocks is too large (at most " +
                             std::to_string(1 << 30) + " blocks)");
  m.config.num_blocks = static_cast<int>(num_blocks);
  m.config.kv_cache_bytes = std::size_t(num_blocks) * block_bytes;
  // Recurrent state slots (engine/core/recurrent_state_manager.h): besides the KV cache.
  int state_slots = 0;
  if (const std::size_t slot_bytes = KVCache::bytes_per_state_slot(mc); slot_bytes > 0) {
    // Per running sequence a live state and a rolling checkpoint; with speculative decoding also
    // the state its drafts roll back to (a step without a free slot for it runs without drafts).
    const long long per_seq = m.config.speculative_config.enabled() ? 3 : 2;
    long long want = m.config.num_state_slots > 0 ? m.config.num_state_slots : per_seq * m.config.max_num_seqs + 16;
    if (m.config.num_state_slots == 0)
      want = std::max<long long>(4, std::min<long long>(want, (long long)(physical_memory_or_8gib() / 8 / slot_bytes)));
    if (want < 2) throw std::invalid_argument("num_state_slots must be >= 2 (a live state and a checkpoint)");
    state_slots = int(std::min<long long>(want, 1 << 20));
    if (2 * m.config.max_num_seqs > state_slots) {
      // Each running sequence holds a live slot and at most a rolling checkpoint.
      m.config.max_num_seqs = std::max(1, state_slots / 2);
      m.warnings.push_back("max_num_seqs lowered to " + std::to_string(m.config.max_num_seqs) + ": " +
                           std::to_string(state_slots) + " recurrent state slots of " + mib_or_gib(slot_bytes) +
                           " hold that many running sequences with their checkpoints");
      warn(m.config, m.warnings.back());
    }
    std::fprintf(stderr,
                 "pagedchat: recurrent state %s = %d slots of %s (%d Gated DeltaNet layers; a live state and a "
                 "rolling checkpoint per running sequence%s, the rest prefix-cache checkpoints)\n",
                 mib_or_gib(std::size_t(state_slots) * slot_bytes).c_str(), state_slots, mib_or_gib(slot_bytes).c_str(),
                 mc.num_recurrent_layers(),
                 m.config.speculative_config.enabled() ? " and the state its drafts roll back to" : "");
  }
  m.config.num_state_slots = state_slots;
  try {
    m.runner->allocate_kv_cache(m.config.num_blocks, bs, kv_dtype, state_slots);
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory allocating the KV cache (" + gib(m.config.kv_cache_bytes) + ")" +
                             (state_slots > 0
                                  ? " and " + std::to_string(state_slots) + " recurrent state slots (" +
                                        mib_or_gib(std::size_t(state_slots) * KVCache::bytes_per_state_slot(mc)) +
                                        "); lower --num-state-slots or kv_cache_bytes"
                                  : std::string("; lower kv_cache_bytes or max_model_len")));
  }

  if (kv_groups.has_sliding_window() && !(!sized && on_device))
    // Sliding-window groups reserve block 0 as the null block: counted as /metrics counts them.
    std::fprintf(stderr, "pagedchat: KV cache %s = %d blocks of %d tokens and the null block (%s)\n",
                 gib(std::size_t(m.config.kv_cache_bytes)).c_str(), m.config.num_blocks - 1, bs,
                 kv_groups.describe().c_str());
  m.kv = std::make_unique<KVCacheCoordinator>(kv_groups, m.config.num_blocks, bs, m.config.enable_prefix_caching,
                                              state_slots);
  m.scheduler = std::make_unique<Scheduler>(
      SchedulerConfig{m.config.max_num_seqs, m.config.max_num_batched_tokens, m.config.long_prefill_token_threshold,
                      m.config.scheduling_policy},
      *m.kv);
  const auto make_drafter = [&m, &mc] {
    return std::make_unique<DraftModelProposer>(
        m.config, mc, m.tokenizer.get(),
        [&m](const ModelConfig& draft) { return make_checked_backend(m.config, draft, m.warnings); },
        m.config.num_blocks);
  };
  if (m.config.speculative_config.method == SpeculativeConfig::Method::kDraftModel) {
    m.drafter = make_drafter();
  } else if (m.config.speculative_config.enabled() && !m.config.speculative_config.model.empty()) {
    try {  // an optional proposer (the app's): the others still run
      m.drafter = make_drafter();
    } catch (const std::exception& e) {
      m.warnings.push_back(std::string("the draft model is not used: ") + e.what());
      warn(m.config, m.warnings.back());
    }
  }
  const SpeculativeConfig& sc = m.config.speculative_config;
  if (mtp_block_bytes > 0)
    std::fprintf(stderr, "pagedchat: the MTP block's KV cache takes %s of that (one layer per block)\n",
                 mib_or_gib(std::size_t(m.config.num_blocks) * mtp_block_bytes).c_str());
  if (sc.method == SpeculativeConfig::Method::kMtp) {
    m.mtp = std::make_unique<MtpProposer>(m.config, m.model, *m.runner, m.config.num_blocks, kv_dtype);
  } else if (sc.enabled() && sc.mtp_if_available && !m.model.weights.mtp.empty()) {
    try {
      m.mtp = std::make_unique<MtpProposer>(m.config, m.model, *m.runner, m.config.num_blocks, kv_dtype);
    } catch (const std::exception& e) {  // an optional proposer: the others still run
      m.warnings.push_back(std::string("the model's MTP block is not used: ") + e.what());
      warn(m.config, m.warnings.back());
    }
  }
  if (m.mtp) m.runner->set_capture_hidden(true);
  m.stats.spec_accepted_per_pos.assign(std::size_t(m.config.speculative_config.num_speculative_tokens), 0);
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
      throw std::invalid_argument("request '" + id + "': token id " + std::to_string(t) +
                                  " outside the vocabulary [0, " + std::to_string(vocab) + ")");
  const long long need = static_cast<long long>(ids.size()) + params.max_tokens;
  if (need > max_model_len)
    throw std::invalid_argument("request '" + id + "': the prompt (" + std::to_string(ids.size()) +
                                " tokens) plus max_tokens (" + std::to_string(params.max_tokens) + ") is " +
                                std::to_string(need) + " tokens, more than max_model_len " +
                                std::to_string(max_model_len));
}

LLMEngine::~LLMEngine() = default;

void LLMEngine::Impl::apply_asked_aborts() {
  if (num_abort_asked.load(std::memory_order_acquire) == 0) return;
  std::unordered_set<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(abort_mutex);
    ids.swap(abort_asked);
    num_abort_asked.store(0, std::memory_order_release);
  }
  for (const std::string& id : ids) abort(id);
}

bool LLMEngine::Impl::step_abandoned(const SchedulerOutput& so) {
  if (num_abort_asked.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(abort_mutex);
  for (const ScheduledRequest& s : so.scheduled)
    if (!abort_asked.count(s.request->group->request_id)) return false;
  return true;
}

void LLMEngine::Impl::add(const std::string& id, std::string prompt, std::vector<int> ids, const SamplingParams& params,
                          const RequestOptions& options) {
  check_request(id, ids, params, model.config.vocab_size, config.max_model_len);
  // A hybrid model runs an n > 1 request's completions on n state slots at once.
  if (config.num_state_slots > 0 && params.n > config.num_state_slots)
    throw std::invalid_argument("request '" + id + "': n = " + std::to_string(params.n) + " completions need " +
                                std::to_string(params.n) + " recurrent state slots at once; this engine has " +
                                std::to_string(config.num_state_slots) + " (--num-state-slots)");
  if (groups.count(id)) throw std::invalid_argument("request id '" + id + "' is already in use");
  std::shared_ptr<const structured::Grammar> grammar;
  if (params.structured_outputs) grammar = grammar_for(*params.structured_outputs);
  auto g = std::make_unique<RequestGroup>();
  g->grammar = grammar;
  g->request_id = id;
  g->prompt = std::move(prompt);
  g->prompt_token_ids = ids;
  g->params = params;
  g->metrics.arrival_time = now_seconds();
  auto seq = std::make_unique<Request>(id, std::move(ids), params, next_arrival++, tokenizer.get());
  const std::vector<SpeculativeConfig::Method> have = methods();
  seq->spec_method = have.empty() ? SpeculativeConfig::Method::kNone : have.front();
  if (options.speculative_method) {
    if (std::find(have.begin(), have.end(), *options.speculative_method) != have.end() ||
        *options.speculative_method == SpeculativeConfig::Method::kNone)
      seq->spec_method = *options.speculative_method;
  }
  if (!options.speculative) seq->spec_method = SpeculativeConfig::Method::kNone;
  seq->num_spec_budget = seq->spec_method != SpeculativeConfig::Method::kNone
                             ? config.speculative_config.num_speculative_tokens
                             : 0;
  if (seq->spec_method != SpeculativeConfig::Method::kNone)
    g->metrics.spec_method = SpeculativeConfig::method_name(seq->spec_method);
  if (config.speculative_config.method == SpeculativeConfig::Method::kOracle)
    seq->oracle_token_ids = options.oracle_token_ids;
  seq->priority = options.priority;
  seq->cache_salt = options.cache_salt;
  seq->share_key = options.fair_share_key.empty() ? id : options.fair_share_key;
  seq->stable_prefix_tokens = std::clamp(options.stable_prefix_tokens, 0, seq->num_prompt_tokens());
  if (!options.images.empty()) take_images(*seq, options.images);
  seq->group = g.get();
  if (grammar) seq->matcher = make_matcher(grammar);
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

bool LLMEngine::abort_request(const std::string& id) { return impl_->abort(id); }

void LLMEngine::request_abort(const std::string& id) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.abort_mutex);
  if (m.abort_asked.insert(id).second) m.num_abort_asked.fetch_add(1, std::memory_order_release);
}

bool LLMEngine::Impl::abort(const std::string& id) {
  Impl& m = *this;
  auto it = m.groups.find(id);
  if (it == m.groups.end()) return false;
  RequestGroup& g = *it->second;
  for (auto& s : g.seqs) {
    if (!s->is_finished()) m.scheduler->remove_request(s.get());
    if (m.drafter) m.drafter->remove(s->request_id);
    if (m.mtp) m.mtp->remove(s->request_id);
    m.output->abort(*s);
  }
  g.metrics.finished_time = now_seconds();
  m.pending.push_back(m.output->make_output(g));
  m.groups.erase(it);
  return true;
}

std::shared_ptr<const structured::Grammar> LLMEngine::Impl::grammar_for(const StructuredOutputsParams& so) {
  if (!tokenizer) throw std::invalid_argument("structured outputs need the model's tokenizer");
  std::string key;
  if (so.json) key = "json:" + *so.json;
  if (so.regex) key = "regex:" + *so.regex;
  if (so.json_object) key = "json_object";
  if (so.choice) {
    key = "choice";
    for (const std::string& c : *so.choice) key += '\0' + c;
  }
  if (const auto it = grammars.find(key); it != grammars.end()) return it->second;
  std::shared_ptr<const structured::Grammar> g;
  if (so.json) {
    nlohmann::ordered_json schema;  // properties in the order the schema gives them
    try {
      schema = nlohmann::ordered_json::parse(*so.json);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(std::string("the JSON Schema is not valid JSON: ") + e.what());
    }
    g = structured::json_schema_grammar(schema);
  } else if (so.regex) {
    g = structured::regex_grammar(*so.regex);
  } else if (so.choice) {
    g = structured::choice_grammar(*so.choice);
  } else {
    g = structured::json_object_grammar();
  }
  if (grammars.size() >= 64) grammars.clear();  // a bounded cache
  grammars.emplace(std::move(key), g);
  return g;
}

std::unique_ptr<structured::GrammarMatcher> LLMEngine::Impl::make_matcher(
    const std::shared_ptr<const structured::Grammar>& g) {
  if (!token_trie) {
    std::vector<int> eos = tokenizer->eos_ids();
    if (model.config.eos_id >= 0) eos.push_back(model.config.eos_id);
    eos.insert(eos.end(), model.config.extra_eos_ids.begin(), model.config.extra_eos_ids.end());
    std::sort(eos.begin(), eos.end());
    eos.erase(std::unique(eos.begin(), eos.end()), eos.end());
    const int vocab = std::min(model.config.vocab_size, tokenizer->vocab_size());
    token_trie = std::make_shared<const structured::TokenTrie>(*tokenizer, vocab, std::move(eos));
  }
  return std::make_unique<structured::GrammarMatcher>(g, token_trie);
}

// n > 1: the first sequence has just finished the prefill; the others start from its blocks.
void LLMEngine::Impl::fork(RequestGroup& g) {
  Request& parent = *g.seqs.front();
  for (int i = 1; i < g.params.n; ++i) {
    SamplingParams p = g.params;
    if (p.seed) p.seed = *p.seed + uint64_t(i);  // distinct but reproducible streams (as vLLM does)
    auto child = std::make_unique<Request>(g.request_id + "#" + std::to_string(i), g.prompt_token_ids, p,
                                           parent.arrival_seq, tokenizer.get());
    child->index = i;
    child->group = &g;
    child->priority = parent.priority;
    child->cache_salt = parent.cache_salt;
    child->mm_inputs = parent.mm_inputs;  // a preempted child recomputes its prompt, images too
    child->share_key = parent.share_key;
    child->num_computed_tokens = parent.num_computed_tokens;
    child->num_spec_budget = parent.num_spec_budget;
    child->spec_method = parent.spec_method;
    child->oracle_token_ids = parent.oracle_token_ids;
    if (g.grammar) child->matcher = make_matcher(g.grammar);
    kv->fork(parent, *child);
    scheduler->add_running(child.get());
    g.seqs.push_back(std::move(child));
  }
  g.forked = true;
}

std::vector<RequestOutput> LLMEngine::step() {
  Impl& m = *impl_;
  std::vector<RequestOutput> outputs = std::move(m.pending);
  m.pending.clear();
  m.last_scheduled.clear();
  m.apply_asked_aborts();
  for (RequestOutput& o : m.pending) outputs.push_back(std::move(o));
  m.pending.clear();
  if (!m.scheduler->has_requests()) return outputs;

  const SchedulerOutput so = m.scheduler->schedule();
  if (so.scheduled.empty()) return outputs;
  const double t_sched = now_seconds();
  bool decode_only = true;  // no prompt tokens in the step
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
    decode_only = decode_only && prompt_left == 0;
  }
  for (Request* r : so.preempted) ++r->group->metrics.num_preemptions;
  if (m.on_scheduled) m.on_scheduled();
  const auto abandoned = [&m, &so] { return m.step_abandoned(so); };
  // (Images first: a step's image tokens read their embeddings; a stop during the encoding ends
  // the step as one during the forward does.)
  if ((m.vision && !m.encode_scheduled_images(so)) || !m.runner->execute(so, *m.kv, m.logits, abandoned)) {
    // Every request of the step was asked to stop while it ran: none of its tokens counts. The
    // K/V rows it wrote are in blocks registered for tokens not computed, which free()
    // unregisters; sharers (admitted after their owner) go first, so each block is unregistered
    // by its owner once nobody else holds it. A recurrent request's rolling checkpoint may be
    // half-written (some layers saved, some not): dropped, not registered.
    // (The ids are copied first: abort() frees the requests, and `so` still points at them.)
    std::vector<std::string> ids;
    for (auto it = so.scheduled.rbegin(); it != so.scheduled.rend(); ++it) {
      it->request->checkpoint_tokens = 0;
      ids.push_back(it->request->group->request_id);
    }
    for (const std::string& id : ids) m.abort(id);
    {
      std::lock_guard<std::mutex> lock(m.abort_mutex);
      for (const std::string& id : ids)
        if (m.abort_asked.erase(id)) m.num_abort_asked.fetch_sub(1, std::memory_order_release);
    }
    ++m.stats.num_abandoned_steps;
    for (RequestOutput& o : m.pending) outputs.push_back(std::move(o));
    m.pending.clear();
    return outputs;
  }
  m.scheduler->update_after_step(so);
  ++m.stats.num_steps;

  const int vocab = m.model.config.vocab_size;
  const double t = now_seconds();
  std::vector<RequestGroup*> touched;
  int row = 0;
  // Where each request's tokens start (before verification moves num_computed_tokens back) and
  // their rows in the step's hidden states (the MTP proposer's input).
  std::vector<int> first_pos;
  for (const auto& s : so.scheduled) first_pos.push_back(s.request->num_computed_tokens - s.num_new_tokens);
  int hidden_offset = 0;
  for (std::size_t si = 0; si < so.scheduled.size(); ++si) {
    const ScheduledRequest& s = so.scheduled[si];
    const int offset = hidden_offset;
    hidden_offset += s.num_new_tokens;
    if (!s.samples) {
      s.request->spec_cut_draft = -1;  // (its position is not sampled in this step)
      m.observe_hidden(s, first_pos[si], offset);
      continue;
    }
    Request& r = *s.request;
    RequestGroup& g = *r.group;
    const float* logits = m.logits.data() + std::size_t(row) * vocab;
    row += 1 + s.num_spec_tokens;
    const SampleResult first = m.sample(r, logits);
    if (!g.forked && g.params.n > 1) {
      // Every completion samples its first token from the prompt's logits, then runs on its own.
      m.fork(g);
      for (size_t i = 1; i < g.seqs.size(); ++i) m.on_token(g, *g.seqs[i], m.sample(*g.seqs[i], logits), t);
    }
    m.on_token(g, r, first, t, s.num_spec_tokens > 0);
    if (s.num_spec_tokens > 0)
      m.verify_drafts(g, r, s, first.token, logits, t);
    else if (r.spec_token_ids.empty() && first.token >= 0)
      r.observe_cut_draft(first.token);  // drafts the batch cut entirely: the first judged anyway
    m.observe_hidden(s, first_pos[si], offset);
    if (r.num_spec_budget > 0 && !r.finish_reason) m.propose(r);
    if (std::find(touched.begin(), touched.end(), &g) == touched.end()) touched.push_back(&g);
  }
  // The step's cost (forward and sampling) against its tokens, for the batch-aware draft budget:
  // decode and verify steps only (a prompt chunk's tokens cost otherwise, attending to each other).
  if (decode_only) m.step_cost.observe(so.total_num_scheduled_tokens, now_seconds() - t_sched);
  m.propose_queued();
  m.fit_drafts_to_batch();
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
bool LLMEngine::reset_prefix_cache() { return impl_->kv->reset_prefix_cache(); }
const ModelConfig& LLMEngine::model_config() const { return impl_->model.config; }
const EngineConfig& LLMEngine::engine_config() const { return impl_->config; }
const Tokenizer& LLMEngine::tokenizer() const {
  if (!impl_->tokenizer) throw std::logic_error("this engine's model has no tokenizer");
  return *impl_->tokenizer;
}
const std::string& LLMEngine::chat_template() const { return impl_->chat_template; }
const VisionEncoder* LLMEngine::vision_encoder() const { return impl_->vision.get(); }
const SamplingDefaults& LLMEngine::sampling_defaults() const { return impl_->sampling_defaults; }
bool LLMEngine::has_tokenizer() const { return impl_->tokenizer != nullptr; }
const std::vector<std::string>& LLMEngine::last_scheduled_request_ids() const { return impl_->last_scheduled; }

void LLMEngine::set_on_scheduled(std::function<void()> callback) { impl_->on_scheduled = std::move(callback); }

void LLMEngine::set_draft_observer(DraftObserver observer) { impl_->draft_observer = std::move(observer); }

std::vector<SpeculativeConfig::Method> LLMEngine::speculative_methods() const { return impl_->methods(); }

std::optional<RequestState> LLMEngine::request_state(const std::string& id) const {
  auto it = impl_->groups.find(id);
  if (it == impl_->groups.end()) return std::nullopt;
  const Request& r = *it->second->seqs.front();
  return RequestState{r.status,
                      r.num_prompt_tokens(),
                      r.num_computed_tokens,
                      r.num_output_tokens(),
                      impl_->kv->num_request_blocks(r),
                      r.num_preemptions};
}

std::vector<KVBlockInfo> LLMEngine::kv_cache_snapshot() const {
  const Impl& m = *impl_;
  const BlockPool& pool = m.kv->pool();
  std::vector<KVBlockInfo> blocks(pool.num_blocks());
  for (int b = 0; b < pool.num_blocks(); ++b) {
    blocks[b].ref_count = pool.ref_count(b);
    blocks[b].cached = pool.block_hash(b).has_value();
    blocks[b].group = pool.group_of(b);
    blocks[b].null_block = pool.has_null_block() && b == BlockPool::kNullBlock;
  }
  for (const Request* r : m.scheduler->running())
    for (const auto& table : r->block_ids)
      for (int b : table) {
        if (blocks[b].null_block) continue;
        auto& ids = blocks[b].request_ids;
        if (std::find(ids.begin(), ids.end(), r->group->request_id) == ids.end()) ids.push_back(r->group->request_id);
      }
  return blocks;
}

int LLMEngine::num_usable_blocks() const { return impl_->kv->num_blocks(); }

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
  const KVCacheGroups& groups = m.kv->groups();
  s.kv_cache_groups.resize(std::size_t(groups.num_groups()));
  for (int g = 0; g < groups.num_groups(); ++g) {
    KVCacheGroupStats& gs = s.kv_cache_groups[std::size_t(g)];
    gs.sliding_window = groups.groups[std::size_t(g)].sliding_window;
    gs.num_layers = int(groups.groups[std::size_t(g)].layers.size());
    gs.num_blocks_in_use = m.kv->num_blocks_in_use(g);
  }
  s.kv_cache_group_size = groups.group_size;
  s.block_size = m.kv->block_size();
  if (const RecurrentStateManager* st = m.kv->states()) {
    s.num_state_slots = st->num_slots();
    s.num_state_slots_held = st->num_held_slots();
    s.num_state_checkpoints = st->num_checkpoints();
    s.state_slot_bytes = KVCache::bytes_per_state_slot(m.model.config);
  }
  return s;
}

std::string LLMEngine::backend_name() const { return impl_->runner->backend().description(); }

const std::vector<std::string>& LLMEngine::warnings() const { return impl_->warnings; }

std::size_t LLMEngine::packed_weight_bytes() const { return impl_->runner->model().packed_bytes(); }
std::string LLMEngine::weight_types() const { return impl_->runner->model().packed_types(); }

}  // namespace pagedchat
