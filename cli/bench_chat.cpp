// `pagedchat-cli bench chat`: S concurrent multi-turn conversations of T turns. Every turn sends
// the whole conversation so far (previous prompt + its generated ids + U new random "user" ids);
// all sessions' turn k are submitted together and run to completion before turn k+1. The whole
// run is done twice, on fresh engines, with prefix caching on and off, to show what reusing the
// conversation's KV blocks saves.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <utility>

#include "cli/bench_common.h"
#include "cli/json_output.h"

namespace pagedchat::cli::bench {

namespace {

struct ChatOptions {
  CommonOptions common;
  int sessions = 4;
  int turns = 4;
  int user_len = 32;
  int output_len = 32;
};

// Figures of one turn (all sessions) in one pass.
struct TurnResult {
  int prompt_len = 0;  // per session: the same for every session
  std::vector<double> ttft_ms;
  std::vector<double> cached_tokens;
  long long hits = 0, queries = 0, output_tokens = 0;
  double kv_peak = 0, elapsed_s = 0;
};

// One pass over every turn on a fresh engine.
struct PassResult {
  double load_s = 0;
  std::vector<TurnResult> turns;
  EngineStats stats;
  nlohmann::json engine;
  std::string engine_line;
};

double hit_rate(long long hits, long long queries) { return queries > 0 ? double(hits) / double(queries) : 0.0; }

// Loads a fresh engine with prefix caching on or off.
LoadedEngine load_pass_engine(const ChatOptions& opt, bool caching) {
  EngineConfig config = opt.common.engine;
  config.enable_prefix_caching = caching;
  return load_engine(config);
}

PassResult run_pass(const ChatOptions& opt, LoadedEngine loaded,
                    const std::vector<std::vector<std::vector<int>>>& user_ids) {
  LLMEngine& engine = *loaded.engine;
  PassResult pass;
  pass.load_s = loaded.load_s;
  std::vector<std::vector<int>> conv(size_t(opt.sessions));
  for (int t = 0; t < opt.turns; ++t) {
    TurnResult turn;
    const EngineStats before = engine.stats();
    const double t0 = now_s();
    for (int s = 0; s < opt.sessions; ++s) {
      auto& c = conv[size_t(s)];
      const auto& u = user_ids[size_t(s)][size_t(t)];
      c.insert(c.end(), u.begin(), u.end());
      turn.prompt_len = int(c.size());
      const uint64_t seed = opt.common.seed + uint64_t(s) * 1000 + uint64_t(t);
      engine.add_request(std::to_string(s), c,
                         exact_length_params(opt.output_len, seed, RequestOutputKind::kFinalOnly));
    }
    while (engine.has_unfinished_requests()) {
      for (const auto& out : engine.step()) {
        if (!out.finished) continue;
        const auto& ids = out.outputs.front().token_ids;
        if (ids.size() != size_t(opt.output_len))
          throw std::runtime_error("session " + out.request_id + " generated " + std::to_string(ids.size()) +
                                   " tokens, expected " + std::to_string(opt.output_len));
        auto& c = conv[size_t(std::stoi(out.request_id))];
        c.insert(c.end(), ids.begin(), ids.end());
        turn.ttft_ms.push_back(out.metrics.time_to_first_token * 1e3);
        turn.cached_tokens.push_back(out.num_cached_tokens);
        turn.output_tokens += static_cast<long long>(ids.size());
      }
      turn.kv_peak = std::max(turn.kv_peak, engine.stats().kv_cache_usage());
    }
    turn.elapsed_s = now_s() - t0;
    const EngineStats after = engine.stats();
    turn.hits = after.prefix_cache_hits - before.prefix_cache_hits;
    turn.queries = after.prefix_cache_queries - before.prefix_cache_queries;
    pass.turns.push_back(std::move(turn));
  }
  pass.stats = engine.stats();
  pass.engine = engine_json(engine);
  pass.engine_line = engine_line(engine);
  return pass;
}

nlohmann::json turn_json(const TurnResult& t) {
  return {{"ttft_ms_mean", mean(t.ttft_ms)},
          {"num_cached_tokens_mean", mean(t.cached_tokens)},
          {"prefix_cache_hit_rate", hit_rate(t.hits, t.queries)},
          {"prefix_cache_hits", t.hits},
          {"prefix_cache_queries", t.queries},
          {"kv_cache_usage_peak", t.kv_peak},
          {"elapsed_s", t.elapsed_s}};
}

nlohmann::json totals_json(const PassResult& p) {
  std::vector<double> ttft;
  double cached = 0, elapsed = 0, kv_peak = 0;
  long long prompt_tokens = 0, output_tokens = 0, hits = 0, queries = 0;
  for (const auto& t : p.turns) {
    ttft.insert(ttft.end(), t.ttft_ms.begin(), t.ttft_ms.end());
    for (double c : t.cached_tokens) cached += c;
    prompt_tokens += static_cast<long long>(t.prompt_len) * static_cast<long long>(t.ttft_ms.size());
    output_tokens += t.output_tokens;
    hits += t.hits;
    queries += t.queries;
    elapsed += t.elapsed_s;
    kv_peak = std::max(kv_peak, t.kv_peak);
  }
  return {{"elapsed_s", elapsed},
          {"ttft_ms_mean", mean(ttft)},
          {"num_prompt_tokens", prompt_tokens},
          {"num_cached_tokens", static_cast<long long>(cached)},
          {"num_computed_prompt_tokens", p.stats.num_prompt_tokens},
          {"num_output_tokens", output_tokens},
          {"output_tokens_per_s", elapsed > 0 ? double(output_tokens) / elapsed : 0.0},
          {"total_tokens_per_s", elapsed > 0 ? double(prompt_tokens + output_tokens) / elapsed : 0.0},
          {"prefix_cache_hit_rate", hit_rate(hits, queries)},
          {"kv_cache_usage_peak", kv_peak},
          {"num_preemptions", p.stats.num_preemptions},
          {"load_time_s", p.load_s}};
}

int run_chat(ChatOptions& opt) {
  if (opt.sessions < 1 || opt.turns < 1 || opt.user_len < 1 || opt.output_len < 1)
    throw std::invalid_argument("--sessions, --turns, --user-len and --output-len must be >= 1");
  const long long final_len = static_cast<long long>(opt.turns) * (opt.user_len + opt.output_len);
  const std::string sum = "turns " + std::to_string(opt.turns) + " x (user_len " + std::to_string(opt.user_len) +
                          " + output_len " + std::to_string(opt.output_len) + ")";
  check_fits(final_len, sum, opt.common.engine.max_model_len);
  LoadedEngine first = load_pass_engine(opt, true);
  check_fits(final_len, sum, *first.engine);  // the model's own limit
  // The same user turns in both passes.
  std::mt19937_64 rng(opt.common.seed);
  const int vocab = first.engine->model_config().vocab_size;
  std::vector<std::vector<std::vector<int>>> user_ids(size_t(opt.sessions));
  for (auto& session : user_ids)
    for (int t = 0; t < opt.turns; ++t) session.push_back(random_prompt(rng, opt.user_len, vocab));

  const PassResult on = run_pass(opt, std::move(first), user_ids);  // frees that engine on return
  const PassResult off = run_pass(opt, load_pass_engine(opt, false), user_ids);

  nlohmann::json per_turn = nlohmann::json::array();
  for (int t = 0; t < opt.turns; ++t)
    per_turn.push_back({{"turn", t + 1},
                        {"prompt_len", on.turns[size_t(t)].prompt_len},
                        {"caching_on", turn_json(on.turns[size_t(t)])},
                        {"caching_off", turn_json(off.turns[size_t(t)])}});
  nlohmann::json totals = {{"caching_on", totals_json(on)}, {"caching_off", totals_json(off)}};
  const double ttft_on = totals["caching_on"]["ttft_ms_mean"], ttft_off = totals["caching_off"]["ttft_ms_mean"];
  nlohmann::json engine = on.engine;
  engine.erase("enable_prefix_caching");
  nlohmann::json j = {{"benchmark", "chat"},
                      {"num_sessions", opt.sessions},
                      {"num_turns", opt.turns},
                      {"user_len", opt.user_len},
                      {"output_len", opt.output_len},
                      {"per_turn", per_turn},
                      {"totals", totals},
                      {"ttft_speedup", ttft_on > 0 ? ttft_off / ttft_on : 0.0},
                      {"sampling", "temperature 1.0, seeded, ignore_eos, min_tokens = max_tokens = output_len"},
                      {"engine", engine}};
  if (opt.common.json) {
    std::cout << dump(j) << "\n";
    return 0;
  }
  std::printf("%s\n", off.engine_line.c_str());
  std::printf("model load %.2f s + %.2f s (excluded)\n", on.load_s, off.load_s);
  std::printf("%d sessions x %d turns, %d user tokens + %d generated tokens per turn; caching on vs off\n",
              opt.sessions, opt.turns, opt.user_len, opt.output_len);
  std::printf("%4s %6s | %9s %9s | %8s %8s | %8s | %6s %6s | %7s %7s\n", "turn", "prompt", "TTFT on", "TTFT off",
              "cached", "cached", "hit rate", "KV on", "KV off", "s on", "s off");
  std::printf("%4s %6s | %9s %9s | %8s %8s | %8s | %6s %6s | %7s %7s\n", "", "tokens", "ms", "ms", "on", "off", "on",
              "peak", "peak", "", "");
  for (int t = 0; t < opt.turns; ++t) {
    const TurnResult &a = on.turns[size_t(t)], &b = off.turns[size_t(t)];
    std::printf("%4d %6d | %9.1f %9.1f | %8.1f %8.1f | %7.1f%% | %5.1f%% %5.1f%% | %7.2f %7.2f\n", t + 1, a.prompt_len,
                mean(a.ttft_ms), mean(b.ttft_ms), mean(a.cached_tokens), mean(b.cached_tokens),
                hit_rate(a.hits, a.queries) * 100.0, a.kv_peak * 100.0, b.kv_peak * 100.0, a.elapsed_s, b.elapsed_s);
  }
  for (const char* k : {"caching_on", "caching_off"}) {
    const auto& x = totals[k];
    std::printf(
        "%-11s: %.2f s, mean TTFT %.1f ms, %lld of %lld prompt tokens cached (hit rate %.1f%%), "
        "%.1f output tokens/s, %lld preemptions\n",
        k, x["elapsed_s"].get<double>(), x["ttft_ms_mean"].get<double>(), x["num_cached_tokens"].get<long long>(),
        x["num_prompt_tokens"].get<long long>(), x["prefix_cache_hit_rate"].get<double>() * 100.0,
        x["output_tokens_per_s"].get<double>(), x["num_preemptions"].get<long long>());
  }
  std::printf("TTFT speedup from prefix caching: %.2fx\n", j["ttft_speedup"].get<double>());
  return 0;
}

}  // namespace

Command add_chat_command(CLI::App& bench) {
  auto opt = std::make_shared<ChatOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "chat", "Concurrent multi-turn conversations, run with prefix caching on and then off (fresh engines)");
  add_common_options(cmd, opt->common, /*prefix_caching_flag=*/false);
  cmd->add_option("--sessions", opt->sessions, "concurrent conversations (default 4)");
  cmd->add_option("--turns", opt->turns, "turns per conversation (default 4)");
  cmd->add_option("--user-len", opt->user_len, "new user tokens per turn (default 32)");
  cmd->add_option("--output-len", opt->output_len, "generated tokens per turn (default 32)");
  return [opt]() { return run_chat(*opt); };
}

}  // namespace pagedchat::cli::bench
