// `pagedchat-cli bench latency`: single-request latency (vLLM's benchmark_latency.py, plus the
// per-token view of its serving benchmark): one request at a time, kDelta outputs, the arrival
// time of every token taken right after the step() that produced it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "cli/bench_common.h"
#include "cli/json_output.h"

namespace pagedchat::cli::bench {

namespace {

struct LatencyOptions {
  CommonOptions common;
  int input_len = 128;
  int output_len = 128;
  int num_iters = 3;
};

// Figures of one request, milliseconds (decode in tokens/s).
struct Iteration {
  double ttft_ms = 0, e2e_ms = 0, itl_p50 = 0, itl_p90 = 0, itl_p99 = 0, itl_mean = 0, decode_tps = 0;
};

// Runs one request alone and times each token's arrival; `ids` gets its output tokens.
Iteration run_one(LLMEngine& engine, const std::string& id, const std::vector<int>& prompt, int output_len,
                  uint64_t seed, const RequestOptions& options = {}, std::vector<int>* ids = nullptr) {
  std::vector<double> arrivals;
  const double t0 = now_s();
  engine.add_request(id, prompt, exact_length_params(output_len, seed, RequestOutputKind::kDelta), options);
  while (engine.has_unfinished_requests()) {
    auto outs = engine.step();
    const double t = now_s();
    for (const auto& out : outs)
      for (const auto& c : out.outputs) {
        for (size_t k = 0; k < c.token_ids.size(); ++k) arrivals.push_back(t);
        if (ids) ids->insert(ids->end(), c.token_ids.begin(), c.token_ids.end());
      }
  }
  if (arrivals.size() != size_t(output_len))
    throw std::runtime_error("request " + id + " generated " + std::to_string(arrivals.size()) + " tokens, expected " +
                             std::to_string(output_len));
  std::vector<double> itl;
  for (size_t k = 1; k < arrivals.size(); ++k) itl.push_back((arrivals[k] - arrivals[k - 1]) * 1e3);
  Iteration it;
  it.ttft_ms = (arrivals.front() - t0) * 1e3;
  it.e2e_ms = (arrivals.back() - t0) * 1e3;
  it.itl_p50 = percentile(itl, 50);
  it.itl_p90 = percentile(itl, 90);
  it.itl_p99 = percentile(itl, 99);
  it.itl_mean = mean(itl);
  const double decode_s = arrivals.back() - arrivals.front();
  it.decode_tps = decode_s > 0 ? double(arrivals.size() - 1) / decode_s : 0.0;
  return it;
}

int run_latency(LatencyOptions& opt) {
  if (opt.input_len < 1 || opt.output_len < 1 || opt.num_iters < 1)
    throw std::invalid_argument("--input-len, --output-len and --num-iters must be >= 1");
  const std::string sum = "input_len " + std::to_string(opt.input_len) + " + output_len " +
                          std::to_string(opt.output_len);
  const long long seq_len = static_cast<long long>(opt.input_len) + opt.output_len;
  check_fits(seq_len, sum, opt.common.engine.max_model_len);
  EngineConfig config = opt.common.engine;
  LoadedEngine loaded = load_engine(config);
  LLMEngine& engine = *loaded.engine;
  check_fits(seq_len, sum, engine);

  // A fresh random prompt per iteration (warm-up included), so the prefix cache never hits.
  std::mt19937_64 rng(opt.common.seed);
  const int vocab = engine.model_config().vocab_size;
  run_one(engine, "warmup", random_prompt(rng, opt.input_len, vocab), opt.output_len, opt.common.seed);
  std::vector<Iteration> iters;
  const bool oracle = config.speculative_config.method == SpeculativeConfig::Method::kOracle;
  for (int i = 0; i < opt.num_iters; ++i) {
    const std::string id = "iter" + std::to_string(i);
    const std::vector<int> prompt = random_prompt(rng, opt.input_len, vocab);
    const uint64_t seed = opt.common.seed + uint64_t(i) + 1;
    RequestOptions options;
    if (oracle) {
      // Method "oracle": a first run (no drafts: its oracle is empty) records the continuation the
      // timed run then proposes; seeded sampling gives the same tokens with or without drafts, so
      // every draft is accepted and the figure is the ceiling of propose -> verify -> accept.
      run_one(engine, id + "-record", prompt, opt.output_len, seed, {}, &options.oracle_token_ids);
    }
    std::vector<int> got;
    iters.push_back(run_one(engine, id, prompt, opt.output_len, seed, options, &got));
    if (oracle && got != options.oracle_token_ids)
      throw std::runtime_error("speculative decoding changed the output of " + id +
                               " (oracle drafts): the verify step's logits differ from plain decoding's");
  }

  auto med = [&](double Iteration::*field) {
    std::vector<double> v;
    for (const auto& it : iters) v.push_back(it.*field);
    return median(v);
  };
  nlohmann::json per_iter = nlohmann::json::array();
  for (const auto& it : iters)
    per_iter.push_back({{"ttft_ms", it.ttft_ms},
                        {"itl_ms_p50", it.itl_p50},
                        {"itl_ms_p90", it.itl_p90},
                        {"itl_ms_p99", it.itl_p99},
                        {"itl_ms_mean", it.itl_mean},
                        {"decode_tokens_per_s", it.decode_tps},
                        {"e2e_ms", it.e2e_ms}});
  const EngineStats stats = engine.stats();
  nlohmann::json j = {{"benchmark", "latency"},
                      {"input_len", opt.input_len},
                      {"output_len", opt.output_len},
                      {"num_iters", opt.num_iters},
                      {"ttft_ms", med(&Iteration::ttft_ms)},
                      {"itl_ms_p50", med(&Iteration::itl_p50)},
                      {"itl_ms_p90", med(&Iteration::itl_p90)},
                      {"itl_ms_p99", med(&Iteration::itl_p99)},
                      {"itl_ms_mean", med(&Iteration::itl_mean)},
                      {"decode_tokens_per_s", med(&Iteration::decode_tps)},
                      {"e2e_ms", med(&Iteration::e2e_ms)},
                      {"iterations", per_iter},
                      {"load_time_s", loaded.load_s},
                      {"sampling", "temperature 1.0, seeded, ignore_eos, min_tokens = max_tokens = output_len"},
                      {"engine", engine_json(engine)},
                      {"engine_stats", to_json(stats)}};
  if (opt.common.json) {
    std::cout << dump(j) << "\n";
    return 0;
  }
  std::printf("%s\n", engine_line(engine).c_str());
  std::printf("model load %.2f s (excluded)\n", loaded.load_s);
  std::printf("one request at a time: %d input tokens -> %d output tokens; 1 warm-up + %d iterations (medians)\n",
              opt.input_len, opt.output_len, opt.num_iters);
  std::printf("TTFT:          %.2f ms\n", j["ttft_ms"].get<double>());
  std::printf("ITL:           p50 %.2f ms, p90 %.2f ms, p99 %.2f ms (mean %.2f ms)\n", j["itl_ms_p50"].get<double>(),
              j["itl_ms_p90"].get<double>(), j["itl_ms_p99"].get<double>(), j["itl_ms_mean"].get<double>());
  std::printf("Decode:        %.1f tokens/s\n", j["decode_tokens_per_s"].get<double>());
  std::printf("End to end:    %.1f ms\n", j["e2e_ms"].get<double>());
  if (config.speculative_config.enabled())
    std::printf("Speculative:   %s, %d tokens; acceptance %.1f %%, mean accepted length %.2f\n",
                config.speculative_config.method_name().c_str(), config.speculative_config.num_speculative_tokens,
                100.0 * j["engine_stats"]["spec_decode"]["acceptance_rate"].get<double>(),
                j["engine_stats"]["spec_decode"]["mean_acceptance_length"].get<double>());
  return 0;
}

}  // namespace

Command add_latency_command(CLI::App& bench) {
  auto opt = std::make_shared<LatencyOptions>();
  CLI::App* cmd = bench.add_subcommand("latency", "One request at a time: TTFT, inter-token latency, decode speed");
  add_common_options(cmd, opt->common, /*prefix_caching_flag=*/true, /*oracle_allowed=*/true);
  cmd->add_option("--input-len", opt->input_len, "prompt tokens (default 128)");
  cmd->add_option("--output-len", opt->output_len, "generated tokens (default 128)");
  cmd->add_option("--num-iters", opt->num_iters, "measured iterations after one warm-up (default 3)");
  return [opt]() { return run_latency(*opt); };
}

}  // namespace pagedchat::cli::bench
