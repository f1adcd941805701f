#include "cli/bench_common.h"
#include "cli/commands.h"
#include "cli/engine_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace pagedchat::cli {

namespace bench {

void add_common_options(CLI::App* cmd, CommonOptions& opt, bool prefix_caching_flag, bool oracle_allowed) {
  EngineConfig& e = opt.engine;
  cmd->add_option("--model", e.model, std::string(kModelHelp) + ", or random:SHAPE")->required();
  cmd->add_option("--tokenizer", e.tokenizer,
                  "sentencepiece tokenizer (.model) loaded with the model; the prompts are token ids");
  // The engine's options, --no-prefix-caching where the benchmark does not set caching itself
  // (bench chat runs both ways).
  add_engine_options(cmd, e, prefix_caching_flag, oracle_allowed);
  cmd->add_option("--seed", opt.seed, "seed of the random prompts and the samplers (default 0)");
  cmd->add_flag("--json", opt.json, "print the results as one JSON object");
}

void check_fits(long long tokens, const std::string& what, int max_model_len, int model_max_seq_len) {
  if (max_model_len <= 0 || tokens <= max_model_len) return;
  std::string hint = "lower the lengths";
  if (model_max_seq_len <= 0)
    hint += ", or raise --max-model-len up to the model's max_seq_len";
  else if (max_model_len < model_max_seq_len)
    hint += ", or raise --max-model-len up to the model's max_seq_len " + std::to_string(model_max_seq_len);
  else
    hint = "the model's max_seq_len; " + hint;
  throw std::invalid_argument(what + " = " + std::to_string(tokens) + " tokens exceeds max_model_len " +
                              std::to_string(max_model_len) + " (" + hint + ")");
}

void check_fits(long long tokens, const std::string& what, const LLMEngine& engine) {
  check_fits(tokens, what, engine.engine_config().max_model_len, engine.model_config().max_seq_len);
}

std::size_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::size_t(std::stoull(line.substr(6))) * 1024;  // kB
  return 0;
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

LoadedEngine load_engine(const EngineConfig& config) {
  LoadedEngine out;
  const double t0 = now_s();
  out.engine = std::make_unique<LLMEngine>(config);
  out.load_s = now_s() - t0;
  return out;
}

std::vector<int> random_prompt(std::mt19937_64& rng, int len, int vocab) {
  if (vocab <= 3) throw std::invalid_argument("vocabulary of " + std::to_string(vocab) + " tokens is too small");
  std::uniform_int_distribution<int> dist(3, vocab - 1);
  std::vector<int> ids(static_cast<size_t>(std::max(0, len)));
  for (int& t : ids) t = dist(rng);
  return ids;
}

SamplingParams exact_length_params(int output_len, uint64_t seed, RequestOutputKind kind) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = seed;
  p.ignore_eos = true;
  p.max_tokens = output_len;
  p.min_tokens = output_len;
  p.output_kind = kind;
  return p;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * double(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - double(lo));
}

double median(const std::vector<double>& v) { return percentile(v, 50.0); }

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

nlohmann::json engine_json(const LLMEngine& engine) {
  const EngineConfig& c = engine.engine_config();
  const ModelConfig& m = engine.model_config();
  return {{"model", c.model},
          {"block_size", c.block_size},
          {"num_blocks", c.num_blocks},
          {"kv_cache_bytes", c.kv_cache_bytes},
          {"max_model_len", c.max_model_len},
          {"max_num_seqs", c.max_num_seqs},
          {"max_num_batched_tokens", c.max_num_batched_tokens},
          {"num_threads", c.num_threads},
          {"enable_prefix_caching", c.enable_prefix_caching},
          {"dtype", weight_dtype_name(c.dtype)},
          {"kv_cache_dtype", kv_cache_dtype_name(c.kv_cache_dtype)},
          {"device", c.device},
          {"backend", engine.backend_name()},
          {"packed_weight_bytes", engine.packed_weight_bytes()},
          {"weight_types", engine.weight_types()},
          {"peak_rss_bytes", peak_rss_bytes()},
          {"model_shape",
           {{"dim", m.hidden_size},
            {"hidden_dim", m.intermediate_size},
            {"n_layers", m.n_layers},
            {"n_heads", m.n_heads},
            {"n_kv_heads", m.n_kv_heads},
            {"vocab_size", m.vocab_size},
            {"max_seq_len", m.max_seq_len}}}};
}

std::string engine_line(const LLMEngine& engine) {
  const EngineConfig& c = engine.engine_config();
  const ModelConfig& m = engine.model_config();
  std::ostringstream s;
  s << "model " << c.model << " (dim " << m.hidden_size << ", " << m.n_layers << " layers, vocab " << m.vocab_size
    << "), max_model_len " << c.max_model_len << ", " << engine.num_usable_blocks() << " KV blocks of " << c.block_size
    << " tokens, max_num_seqs " << c.max_num_seqs << ", max_num_batched_tokens " << c.max_num_batched_tokens
    << ", threads " << (c.num_threads > 0 ? std::to_string(c.num_threads) : std::string("auto")) << ", prefix caching "
    << (c.enable_prefix_caching ? "on" : "off") << ", dtype " << weight_dtype_name(c.dtype) << ", KV cache "
    << kv_cache_dtype_name(c.kv_cache_dtype) << " (weights " << engine.weight_types() << "; " << engine.backend_name()
    << ")";
  return s.str();
}

}  // namespace bench

Command add_bench_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Benchmarks: throughput, latency, multi-turn chat, llama.cpp's workloads (model load excluded), tokenizer speed, "
      "memory bandwidth, KL divergence against a base model, structured outputs' token masks, image encoding; soak "
      "test");
  cmd->require_subcommand(1);
  auto throughput = bench::add_throughput_command(*cmd);
  auto latency = bench::add_latency_command(*cmd);
  auto chat = bench::add_chat_command(*cmd);
  auto llama = bench::add_llama_command(*cmd);
  auto tokenize = bench::add_tokenize_bench_command(*cmd);
  auto memory = bench::add_memory_bench_command(*cmd);
  auto kl = bench::add_kl_bench_command(*cmd);
  auto soak = bench::add_soak_command(*cmd);
  auto structured = bench::add_structured_bench_command(*cmd);
  auto vision = bench::add_vision_bench_command(*cmd);
  return [cmd, throughput, latency, chat, llama, tokenize, memory, kl, soak, structured, vision]() {
    if (cmd->got_subcommand("throughput")) return throughput();
    if (cmd->got_subcommand("latency")) return latency();
    if (cmd->got_subcommand("chat")) return chat();
    if (cmd->got_subcommand("llama")) return llama();
    if (cmd->got_subcommand("tokenize")) return tokenize();
    if (cmd->got_subcommand("memory")) return memory();
    if (cmd->got_subcommand("kl")) return kl();
    if (cmd->got_subcommand("soak")) return soak();
    if (cmd->got_subcommand("structured")) return structured();
    if (cmd->got_subcommand("vision")) return vision();
    return 2;
  };
}

}  // namespace pagedchat::cli
