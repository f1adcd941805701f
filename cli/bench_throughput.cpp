// `pagedchat-cli bench throughput`: offline throughput as vLLM's benchmark_throughput.py measures
// it: every request submitted at once, wall time from the first add_request to the last finish.
// --same-prompt sends one prompt to every request (the app's "send to all panes"): with prefix
// caching, the requests share the first one's prompt blocks from the first step on.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "cli/bench_common.h"
#include "cli/json_output.h"

namespace pagedchat::cli::bench {

namespace {

struct ThroughputOptions {
  CommonOptions common;
  int num_prompts = 16;
  int input_len = 128;
  int output_len = 128;
  bool same_prompt = false;
  int oracle_wrong_every = 0;  ///< method "oracle": every n-th proposed token is wrong (0: none)
};

// One pass: every request submitted at once, run to the last finish.
struct Pass {
  double elapsed = 0;
  long long output_tokens = 0;
  std::vector<double> ttfts_ms;
  std::vector<std::vector<int>> outputs;  // per request
  double kv_peak = 0;
  std::vector<int> group_peak;      // per KV-cache group: most blocks in use
  long long layer_tokens_peak = 0;  // most K/V tokens held, counted per layer
};

Pass run_pass(LLMEngine& engine, const ThroughputOptions& opt, const std::vector<std::vector<int>>& prompts,
              const std::vector<std::vector<int>>* oracles) {
  Pass p;
  p.outputs.resize(prompts.size());
  const double t0 = now_s();
  for (int i = 0; i < opt.num_prompts; ++i) {
    RequestOptions options;
    if (oracles) options.oracle_token_ids = (*oracles)[std::size_t(i)];
    engine.add_request(
        std::to_string(i), prompts[size_t(i)],
        exact_length_params(opt.output_len, opt.common.seed + uint64_t(i), RequestOutputKind::kFinalOnly), options);
  }
  while (engine.has_unfinished_requests()) {
    for (const auto& out : engine.step()) {
      if (!out.finished) continue;
      const size_t n = out.outputs.empty() ? 0 : out.outputs.front().token_ids.size();
      if (n != size_t(opt.output_len))
        throw std::runtime_error("request " + out.request_id + " generated " + std::to_string(n) +
                                 " tokens, expected " + std::to_string(opt.output_len));
      p.output_tokens += static_cast<long long>(n);
      p.ttfts_ms.push_back(out.metrics.time_to_first_token * 1e3);
      p.outputs[std::size_t(std::stoi(out.request_id))] = out.outputs.front().token_ids;
    }
    const EngineStats now = engine.stats();
    p.kv_peak = std::max(p.kv_peak, now.kv_cache_usage());
    p.group_peak.resize(now.kv_cache_groups.size(), 0);
    for (std::size_t g = 0; g < now.kv_cache_groups.size(); ++g)
      p.group_peak[g] = std::max(p.group_peak[g], now.kv_cache_groups[g].num_blocks_in_use);
    p.layer_tokens_peak = std::max(p.layer_tokens_peak, now.kv_layer_tokens_in_use());
  }
  p.elapsed = now_s() - t0;
  return p;
}

int run_throughput(ThroughputOptions& opt) {
  if (opt.num_prompts < 1 || opt.input_len < 1 || opt.output_len < 1)
    throw std::invalid_argument("--num-prompts, --input-len and --output-len must be >= 1");
  if (opt.oracle_wrong_every < 0) throw std::invalid_argument("--oracle-wrong-every must be >= 0");
  const std::string sum = "input_len " + std::to_string(opt.input_len) + " + output_len " +
                          std::to_string(opt.output_len);
  const long long seq_len = static_cast<long long>(opt.input_len) + opt.output_len;
  check_fits(seq_len, sum, opt.common.engine.max_model_len);  // early, before the load, when given
  EngineConfig config = opt.common.engine;
  const bool oracle = config.speculative_config.method == SpeculativeConfig::Method::kOracle;
  if (opt.oracle_wrong_every > 0 && !oracle)
    throw std::invalid_argument("--oracle-wrong-every needs --speculative-config with method \"oracle\"");
  LoadedEngine loaded = load_engine(config);
  LLMEngine& engine = *loaded.engine;
  check_fits(seq_len, sum, engine);

  std::mt19937_64 rng(opt.common.seed);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < opt.num_prompts; ++i)
    prompts.push_back(i > 0 && opt.same_prompt ? prompts.front()
                                               : random_prompt(rng, opt.input_len, engine.model_config().vocab_size));

  // Method "oracle": a first pass without drafts (its oracles are empty) records every request's
  // continuation and is the baseline; the timed pass proposes it (every --oracle-wrong-every-th
  // token changed, so that some drafts are rejected) on a cold prefix cache. Seeded sampling gives
  // the same tokens with or without drafts, which is checked.
  std::optional<Pass> baseline;
  std::vector<std::vector<int>> oracles;
  if (oracle) {
    baseline = run_pass(engine, opt, prompts, nullptr);
    oracles = baseline->outputs;
    const int vocab = engine.model_config().vocab_size;
    for (auto& o : oracles)
      for (std::size_t i = std::size_t(opt.oracle_wrong_every) - 1; opt.oracle_wrong_every > 0 && i < o.size();
           i += std::size_t(opt.oracle_wrong_every))
        o[i] = (o[i] + 1) % vocab;
    engine.reset_prefix_cache();
  }
  const EngineStats before = engine.stats();
  const Pass pass = run_pass(engine, opt, prompts, oracle ? &oracles : nullptr);
  if (baseline && pass.outputs != baseline->outputs)
    throw std::runtime_error(
        "speculative decoding changed the output (oracle drafts): the verify step's logits "
        "differ from plain decoding's");
  const double elapsed = pass.elapsed;
  const long long output_tokens = pass.output_tokens;
  const std::vector<double>& ttfts_ms = pass.ttfts_ms;
  const double kv_peak = pass.kv_peak;
  const std::vector<int>& group_peak = pass.group_peak;
  const long long layer_tokens_peak = pass.layer_tokens_peak;
  // (With an oracle, the counters of the timed pass alone: the first pass's are subtracted.)
  EngineStats stats = engine.stats();
  stats.num_steps -= before.num_steps;
  stats.num_prompt_tokens -= before.num_prompt_tokens;
  stats.prefix_cache_hits -= before.prefix_cache_hits;
  stats.num_preemptions -= before.num_preemptions;
  const long long prompt_tokens = static_cast<long long>(opt.num_prompts) * opt.input_len;

  nlohmann::json j = {
      {"benchmark", "throughput"},
      {"num_prompts", opt.num_prompts},
      {"input_len", opt.input_len},
      {"output_len", opt.output_len},
      {"elapsed_s", elapsed},
      {"requests_per_s", opt.num_prompts / elapsed},
      {"output_tokens_per_s", double(output_tokens) / elapsed},
      {"total_tokens_per_s", double(prompt_tokens + output_tokens) / elapsed},
      {"same_prompt", opt.same_prompt},
      {"num_prompt_tokens", prompt_tokens},
      {"num_prompt_tokens_computed", stats.num_prompt_tokens},  // prefill tokens run (cache hits excluded)
      {"num_output_tokens", output_tokens},
      {"ttft_ms_mean", mean(ttfts_ms)},
      {"ttft_ms_max", ttfts_ms.empty() ? 0.0 : *std::max_element(ttfts_ms.begin(), ttfts_ms.end())},
      {"num_preemptions", stats.num_preemptions},
      {"kv_cache_usage_peak", kv_peak},
      {"kv_cache_group_blocks_peak", group_peak},   // per KV-cache group (engine_stats.kv_cache_groups)
      {"kv_layer_tokens_peak", layer_tokens_peak},  // K/V tokens held, counted per layer
      {"num_steps", stats.num_steps},
      {"load_time_s", loaded.load_s},
      {"sampling", "temperature 1.0, seed = --seed + request index, ignore_eos, min_tokens = max_tokens = output_len"},
      {"engine", engine_json(engine)},
      {"engine_stats", to_json(stats)}};
  if (baseline) {
    j["baseline_elapsed_s"] = baseline->elapsed;
    j["baseline_output_tokens_per_s"] = double(baseline->output_tokens) / baseline->elapsed;
    j["speedup"] = baseline->elapsed / elapsed;
    j["oracle_wrong_every"] = opt.oracle_wrong_every;
  }
  if (opt.common.json) {
    std::cout << dump(j) << "\n";
    return 0;
  }
  std::printf("%s\n", engine_line(engine).c_str());
  std::printf("model load %.2f s (excluded)\n", loaded.load_s);
  std::printf("%d %s x %d input tokens -> %d output tokens each, all submitted at once\n", opt.num_prompts,
              opt.same_prompt ? "copies of one prompt" : "prompts", opt.input_len, opt.output_len);
  std::printf("Elapsed:    %.3f s over %lld steps\n", elapsed, stats.num_steps);
  std::printf("Throughput: %.2f requests/s, %.1f total tokens/s, %.1f output tokens/s\n", opt.num_prompts / elapsed,
              double(prompt_tokens + output_tokens) / elapsed, double(output_tokens) / elapsed);
  if (baseline) {
    const long long drafts = stats.spec_num_draft_tokens, accepted = stats.spec_num_accepted_tokens;
    std::printf(
        "Oracle:     %.1f output tokens/s without drafts (first pass), %.2fx with them; %.1f%% of %lld drafts "
        "accepted\n",
        double(baseline->output_tokens) / baseline->elapsed, baseline->elapsed / elapsed,
        drafts ? 100.0 * double(accepted) / double(drafts) : 0.0, drafts);
  } else if (engine.engine_config().speculative_config.enabled()) {
    const long long drafts = stats.spec_num_draft_tokens, accepted = stats.spec_num_accepted_tokens;
    std::printf("Speculative: %s, %d tokens; %.1f%% of %lld drafts accepted, %lld trimmed by the batch\n",
                engine.engine_config().speculative_config.method_name().c_str(),
                engine.engine_config().speculative_config.num_speculative_tokens,
                drafts ? 100.0 * double(accepted) / double(drafts) : 0.0, drafts, stats.spec_num_trimmed_tokens);
  }
  std::printf("TTFT:       mean %.1f ms, max %.1f ms\n", mean(ttfts_ms), j["ttft_ms_max"].get<double>());
  std::printf("Prefill:    %lld of %lld prompt tokens computed (%lld prefix-cache hits)\n", stats.num_prompt_tokens,
              prompt_tokens, stats.prefix_cache_hits);
  std::printf("KV cache:   peak usage %.1f%% of %d blocks, %lld preemptions\n", kv_peak * 100.0, stats.num_total_blocks,
              stats.num_preemptions);
  if (stats.kv_cache_groups.size() > 1) {
    // Sliding-window models: what each KV-cache group held at most, e.g. "full 40, window 512: 28 x5".
    std::printf("KV groups:  peak blocks in use (a block: %d layer%s x %d tokens):", stats.kv_cache_group_size,
                stats.kv_cache_group_size == 1 ? "" : "s", stats.block_size);
    for (std::size_t g = 0; g < stats.kv_cache_groups.size(); ++g) {
      const int w = stats.kv_cache_groups[g].sliding_window;
      if (g > 0 && w == stats.kv_cache_groups[g - 1].sliding_window) {
        std::printf(" %d", group_peak[g]);
        continue;
      }
      if (w > 0)
        std::printf("%s window %d: %d", g ? "," : "", w, group_peak[g]);
      else
        std::printf("%s full %d", g ? "," : "", group_peak[g]);
    }
    std::printf("; K/V held at most %lld tokens x layers\n", layer_tokens_peak);
  }
  return 0;
}

}  // namespace

Command add_throughput_command(CLI::App& bench) {
  auto opt = std::make_shared<ThroughputOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "throughput", "N random token-id prompts submitted at once, each generating exactly output-len tokens");
  add_common_options(cmd, opt->common, /*prefix_caching_flag=*/true, /*oracle_allowed=*/true);
  cmd->add_option("--num-prompts", opt->num_prompts, "number of requests (default 16)");
  cmd->add_option("--input-len", opt->input_len, "prompt tokens per request (default 128)");
  cmd->add_option("--output-len", opt->output_len, "generated tokens per request (default 128)");
  cmd->add_flag("--same-prompt", opt->same_prompt,
                "send one random prompt to every request (the app's \"send to all panes\"), as one batch");
  cmd->add_option("--oracle-wrong-every", opt->oracle_wrong_every,
                  "with --speculative-config method \"oracle\": change every n-th proposed token, so that a "
                  "share of the drafts is rejected (default 0: none)");
  return [opt]() { return run_throughput(*opt); };
}

}  // namespace pagedchat::cli::bench
