// Shared pieces of `pagedchat-cli bench` (throughput, latency, chat): the engine flags, engine
// loading (timed apart from the measurements), random token-id prompts and statistics helpers.
// Terms follow vLLM's benchmarks/benchmark_throughput.py and benchmark_latency.py.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "engine/llm_engine.h"

namespace pagedchat::cli::bench {

/// Options every bench subcommand takes: the model, the engine settings and --json.
struct CommonOptions {
  EngineConfig engine;
  bool json = false;
  uint64_t seed = 0;  ///< seed of the random prompts and of the per-request samplers
};

/// Registers --model, --tokenizer, the engine flags (--max-model-len, --kv-cache-bytes,
/// --block-size, --max-num-seqs, --max-num-batched-tokens, --threads, --dtype, --kv-cache-dtype), --seed
/// and --json on
/// `cmd`; --no-prefix-caching too when `prefix_caching_flag`; --speculative-config's method
/// "oracle" only when `oracle_allowed` (benches that record the continuation it replays).
void add_common_options(CLI::App* cmd, CommonOptions& opt, bool prefix_caching_flag, bool oracle_allowed = false);

/// Throws std::invalid_argument when a sequence of `tokens` tokens (`what` spells out the sum)
/// cannot fit in `max_model_len` positions; the message names the limit (and the model's
/// max_seq_len when given, > 0). Does nothing when max_model_len is 0 (not known yet).
void check_fits(long long tokens, const std::string& what, int max_model_len, int model_max_seq_len = 0);

/// check_fits against a loaded engine's max_model_len and its model's max_seq_len.
void check_fits(long long tokens, const std::string& what, const LLMEngine& engine);

/// A loaded engine and the seconds the load took (reported, never part of a figure).
struct LoadedEngine {
  std::unique_ptr<LLMEngine> engine;
  double load_s = 0;
};

/// Builds an engine from `config` (prefix caching as given there) and times the load.
LoadedEngine load_engine(const EngineConfig& config);

/// The process's peak resident memory (VmHWM in /proc/self/status), 0 where unknown.
std::size_t peak_rss_bytes();

/// Seconds on the monotonic clock (std::chrono::steady_clock), the engine's own time base.
double now_s();

/// `len` token ids drawn uniformly from [3, vocab): no BOS (1) or EOS (2), nor <unk> (0).
std::vector<int> random_prompt(std::mt19937_64& rng, int len, int vocab);

/// Sampling for a benchmark request that generates exactly `output_len` tokens: temperature 1,
/// seed `seed`, ignore_eos, min_tokens = max_tokens = output_len.
SamplingParams exact_length_params(int output_len, uint64_t seed, RequestOutputKind kind);

/// The p-th percentile (p in [0, 100]) with linear interpolation between order statistics
/// (numpy's default); 0 for an empty sample.
double percentile(std::vector<double> values, double p);

/// The median (50th percentile); 0 for an empty sample.
double median(const std::vector<double>& values);

/// Arithmetic mean; 0 for an empty sample.
double mean(const std::vector<double>& values);

/// The engine settings that shape the figures, as JSON (model, block_size, num_blocks,
/// kv_cache_bytes, max_model_len, max_num_seqs, max_num_batched_tokens, num_threads,
/// enable_prefix_caching, dtype, kv_cache_dtype, backend, packed_weight_bytes, peak_rss_bytes) plus the model's
/// shape.
nlohmann::json engine_json(const LLMEngine& engine);

/// One line describing the engine for the human-readable summaries.
std::string engine_line(const LLMEngine& engine);

/// `throughput`: N requests submitted at once (benchmark_throughput.py).
Command add_throughput_command(CLI::App& bench);
/// `latency`: one request at a time, per-token arrival times (benchmark_latency.py).
Command add_latency_command(CLI::App& bench);
/// `chat`: concurrent multi-turn sessions, prefix caching on and off.
Command add_chat_command(CLI::App& bench);
/// `llama`: llama-bench (pp512, tg128) and llama-batched-bench workloads in their terms.
Command add_llama_command(CLI::App& bench);
/// `tokenize`: tokenizer encode/decode speed on ~1 MB of text (loads only the tokenizer).
Command add_tokenize_bench_command(CLI::App& bench);
/// `structured`: a structured output's token-mask time per step (loads only the tokenizer).
Command add_structured_bench_command(CLI::App& bench);
/// What `bench memory` reads: `bytes` (rounded down to whole words, at least 8 KiB) of uint64
/// words 0, 1, 2, ..., every page resident, on 2 MiB transparent huge pages where Linux gives
/// them, as the packed weights are (kernels/cpu/packed_weights.cpp). Throws std::bad_alloc.
class ReadBuffer {
 public:
  explicit ReadBuffer(std::size_t bytes);
  const uint64_t* data() const { return words_.get(); }
  std::size_t size() const { return size_; }  ///< words

 private:
  struct Free {
    void operator()(uint64_t* p) const;
  };
  std::unique_ptr<uint64_t[], Free> words_;
  std::size_t size_ = 0;
};
/// One pass of `bench memory`: `threads` threads each sum their slice of buf with bench memory's
/// 4-stream loop. Returns the read bandwidth in GB/s (1e9 bytes/s); *sum, when given, gets the
/// sum of every word (a check that all were read). The first passes over a fresh buffer read
/// slower on some machines: take the best of several.
double read_pass_gbs(const ReadBuffer& buf, int threads, uint64_t* sum = nullptr);
/// `memory`: memory read bandwidth with N threads (the single-stream decode roofline).
Command add_memory_bench_command(CLI::App& bench);
/// `bench vision`: an image projector's encode time for one picture (cli/bench_vision.cpp).
Command add_vision_bench_command(CLI::App& bench);
/// `kl`: KL divergence of a model's next-token distributions from a base model's on a text.
Command add_kl_bench_command(CLI::App& bench);
/// `soak`: sessions generating for a bounded time with random stops and edits: block leak, memory
/// growth and stuck requests (cli/bench_soak.cpp).
Command add_soak_command(CLI::App& bench);

}  // namespace pagedchat::cli::bench
