// `pagedchat-cli bench llama`: the workloads of llama.cpp's llama-bench (-p 512 -n 128) and
// llama-batched-bench (-npp 128 -ntg 128 -npl 1,4,8,16), run through the engine and printed in
// their terms, so the two can be compared on one machine:
//   pp512: one 512-token prompt, time to its first token (one forward of 512 tokens);
//   tg128: one request from a 1-token prompt, 128 single-token forwards;
//   batched: B requests of PP random tokens prefilled together (one step), then TG decode steps
//   of B tokens; S_PP = B*PP / T_PP, S_TG = B*TG / T_TG, S = B*(PP+TG) / (T_PP + T_TG).
// Greedy sampling, ignore_eos, prefix caching off; the KV cache and the step token budget are
// raised to hold the largest batch.
// --roofline: the tg test's decode against the memory bandwidth of the same minutes. Before and
// after every repetition, 3 `bench memory` passes read a 1 GiB buffer (allocated for the tg test
// only) with the engine's thread count; each repetition's fraction is weight bytes x tok/s / the
// best of its 6 passes (a decode step reads every matrix once). Weight bytes: the packed matrices
// (what the engine reads; the embedding table is read one row per token); beside it, as a
// second figure, the model file's bytes (a GGUF or llama2.c file, or a folder's .safetensors)
// when the weights keep the file's type (--dtype auto).
#include <CLI/CLI.hpp>
#include <cctype>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include "cli/bench_common.h"

namespace pagedchat::cli::bench {

namespace {

struct LlamaOptions {
  CommonOptions common;
  int n_prompt = 512;
  int n_gen = 128;
  int repetitions = 5;
  int npp = 128;
  int ntg = 128;
  std::vector<int> npl = {1, 4, 8, 16};
  bool roofline = false;
};

// The bytes of a model's weight file: a file's size (GGUF, llama2.c), or a Hugging Face folder's
// .safetensors files; 0 otherwise (a random: model, a folder of other files, whose weight file
// the loader picks: not counted rather than guessed).
std::uintmax_t weight_file_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path, ec);
  if (!fs::is_directory(path, ec)) return 0;
  std::uintmax_t total = 0;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".safetensors") total += e.file_size(ec);
  return total;
}

SamplingParams greedy_exact(int n) {
  SamplingParams p = exact_length_params(n, 0, RequestOutputKind::kDelta);
  p.temperature = 0.0f;
  return p;
}

// Submits `prompts` together and steps to the end. Returns {seconds until every request had its
// first token, seconds after that until all finished}.
std::pair<double, double> run_batch(LLMEngine& engine, const std::vector<std::vector<int>>& prompts, int max_tokens,
                                    int& next_id) {
  std::map<std::string, int> tokens;
  const double t0 = now_s();
  for (const auto& p : prompts) {
    const std::string id = "llama-bench-" + std::to_string(next_id++);
    engine.add_request(id, p, greedy_exact(max_tokens));
    tokens[id] = 0;
  }
  size_t started = 0;
  double t1 = 0;
  while (engine.has_unfinished_requests()) {
    for (const auto& out : engine.step())
      for (const auto& c : out.outputs) {
        int& n = tokens[out.request_id];
        if (n == 0 && !c.token_ids.empty()) ++started;
        n += int(c.token_ids.size());
      }
    if (t1 == 0 && started == prompts.size()) t1 = now_s();
  }
  const double t2 = now_s();
  for (const auto& [id, n] : tokens)
    if (n != max_tokens)
      throw std::runtime_error("request " + id + " generated " + std::to_string(n) + " tokens, expected " +
                               std::to_string(max_tokens));
  return {t1 - t0, t2 - t1};
}

struct Stat {
  double mean = 0, stddev = 0;
};
Stat stat(const std::vector<double>& v) {
  Stat s;
  s.mean = mean(v);
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / double(v.size() - 1)) : 0.0;
  return s;
}

long long parameter_count(const ModelConfig& m) {
  const long long dim = m.hidden_size;
  long long n = (long long)(m.vocab_size) * dim * (m.shared_classifier ? 1 : 2) + dim;
  for (int l = 0; l < m.n_layers; ++l) {
    // Attention (a layer reading another's KV has no K/V projections), then the MLP: dense, or
    // every expert plus the router (llama-bench counts all of them), or both (Gemma 4's MoE).
    const long long hd = m.layer_head_dim(l), q = m.n_heads * hd, kv = m.layer_kv_heads(l) * hd;
    n += 2 * dim + dim * q + (m.layer(l).shares_kv() ? 0 : 2 * dim * kv) + q * dim;
    if (m.layer(l).moe) n += (long long)m.moe.num_experts * (3 * dim * m.moe.expert_intermediate_size + dim);
    if (!m.layer(l).moe || m.moe.parallel_dense) n += 3 * dim * (long long)m.layer_intermediate_size(l);
  }
  // Per-layer embeddings (Gemma 4): the table and the projection.
  n += (long long)(m.vocab_size + dim) * m.n_layers * m.per_layer_input_size;
  return n;
}

int run_llama(LlamaOptions& opt) {
  if (opt.n_prompt < 0 || opt.n_gen < 0 || opt.repetitions < 1 || opt.npp < 1 || opt.ntg < 1)
    throw std::invalid_argument("-p and -n must be >= 0; -r, --npp and --ntg >= 1");
  std::erase(opt.npl, 0);  // --npl 0: no batched runs
  for (int b : opt.npl)
    if (b < 1) throw std::invalid_argument("--npl values must be >= 1 (0 alone skips the batched runs)");
  EngineConfig config = opt.common.engine;
  config.enable_prefix_caching = false;
  const int max_npl = opt.npl.empty() ? 1 : *std::max_element(opt.npl.begin(), opt.npl.end());
  config.max_num_seqs = std::max(config.max_num_seqs, max_npl);
  config.max_num_batched_tokens = std::max({config.max_num_batched_tokens, opt.n_prompt, max_npl * opt.npp});
  LoadedEngine loaded = load_engine(config);
  // The KV cache must hold the largest batch without preemption.
  const int bs = loaded.engine->engine_config().block_size;
  const long long need = std::max<long long>((long long)max_npl * ((opt.npp + opt.ntg + bs - 1) / bs),
                                             (std::max(opt.n_prompt, opt.n_gen) + 1 + bs - 1) / bs);
  if (config.num_blocks == 0 && config.kv_cache_bytes == 0 && loaded.engine->stats().num_total_blocks < need) {
    loaded.engine.reset();
    config.num_blocks = int(need);
    loaded = load_engine(config);
  }
  LLMEngine& engine = *loaded.engine;
  const ModelConfig& mc = engine.model_config();
  const int max_len = engine.engine_config().max_model_len;
  std::mt19937_64 rng(opt.common.seed);
  int next_id = 0;

  // --roofline: bench memory's buffer (1 GiB, for the tg test only), and the best of 3 passes (the
  // first passes over a buffer can read slower).
  std::unique_ptr<ReadBuffer> read_buf;
  const double weight_bytes = double(engine.packed_weight_bytes());
  const double file_bytes = engine.engine_config().dtype == WeightDType::kAuto
                                ? double(weight_file_bytes(engine.engine_config().model))
                                : 0.0;
  const int threads = engine.engine_config().num_threads;
  auto read_gbs = [&] {
    double best = 0;
    for (int i = 0; i < 3; ++i) best = std::max(best, read_pass_gbs(*read_buf, threads));
    return best;
  };

  nlohmann::json tests = nlohmann::json::array();
  auto single = [&](const std::string& name, int prompt_len, int max_tokens, int counted, bool roof) {
    if (prompt_len + max_tokens > max_len) {
      std::fprintf(stderr, "pagedchat-cli: note: %s skipped: %d tokens exceed max_model_len %d\n", name.c_str(),
                   prompt_len + max_tokens, max_len);
      return;
    }
    if (roof) read_buf = std::make_unique<ReadBuffer>(std::size_t(1) << 30);
    std::vector<double> tps, gbs, fractions, file_fractions;
    for (int r = -1; r < opt.repetitions; ++r) {  // r = -1: warm-up
      const double before = roof && r >= 0 ? read_gbs() : 0;
      const auto [first, rest] = run_batch(engine, {random_prompt(rng, prompt_len, mc.vocab_size)}, max_tokens,
                                           next_id);
      if (r < 0) continue;
      tps.push_back(counted / (first + rest));
      if (!roof) continue;
      gbs.push_back(std::max(before, read_gbs()));
      fractions.push_back(weight_bytes * tps.back() / 1e9 / gbs.back());
      file_fractions.push_back(file_bytes * tps.back() / 1e9 / gbs.back());
    }
    read_buf.reset();
    const Stat s = stat(tps);
    tests.push_back({{"test", name},
                     {"n_prompt", prompt_len},
                     {"n_gen", max_tokens},
                     {"avg_ts", s.mean},
                     {"stddev_ts", s.stddev},
                     {"samples_ts", tps}});
    if (!roof) return;
    nlohmann::json& r = tests.back()["roofline"];
    r = {{"weight_bytes", weight_bytes},
         {"read_gb_per_s", gbs},
         {"fraction", fractions},
         {"fraction_median", median(fractions)},
         {"read_gb_per_s_median", median(gbs)},
         {"tokens_per_s_median", median(tps)},
         {"read_buffer_bytes", std::size_t(1) << 30}};  // part of peak_rss_bytes
    if (file_bytes > 0) {
      r["file_bytes"] = file_bytes;
      r["file_fraction"] = file_fractions;
      r["file_fraction_median"] = median(file_fractions);
    }
  };
  if (opt.n_prompt > 0) single("pp" + std::to_string(opt.n_prompt), opt.n_prompt, 1, opt.n_prompt, false);
  if (opt.n_gen > 0) single("tg" + std::to_string(opt.n_gen), 1, opt.n_gen, opt.n_gen, opt.roofline);
  if (opt.roofline && (tests.empty() || !tests.back().contains("roofline")))
    std::fprintf(stderr, "pagedchat-cli: note: --roofline measures the tg test, and none ran\n");

  nlohmann::json batched = nlohmann::json::array();
  // max_tokens = ntg + 1: the prefill samples the first token, then ntg decode steps follow. The
  // engine admits prompt + max_tokens <= max_model_len, so at exactly npp + ntg = max_model_len
  // one decode step fewer is run (and counted).
  if (!opt.npl.empty()) check_fits((long long)opt.npp + opt.ntg, "npp + ntg", engine);
  const int decode_steps = opt.npp + opt.ntg + 1 <= max_len ? opt.ntg : opt.ntg - 1;
  if (!opt.npl.empty() && decode_steps < opt.ntg)
    std::fprintf(stderr, "pagedchat-cli: note: npp + ntg = max_model_len %d: %d decode steps are timed, not %d\n",
                 max_len, decode_steps, opt.ntg);
  for (int b : opt.npl) {
    std::vector<std::vector<int>> prompts;
    for (int i = 0; i < b; ++i) prompts.push_back(random_prompt(rng, opt.npp, mc.vocab_size));
    const auto [t_pp, t_tg] = run_batch(engine, prompts, decode_steps + 1, next_id);
    const double pp = double(b) * opt.npp, tg = double(b) * decode_steps;
    batched.push_back({{"pp", opt.npp},
                       {"tg", opt.ntg},
                       {"pl", b},
                       {"n_kv", b * (opt.npp + opt.ntg)},
                       {"t_pp", t_pp},
                       {"speed_pp", pp / t_pp},
                       {"t_tg", t_tg},
                       {"speed_tg", tg / t_tg},
                       {"t", t_pp + t_tg},
                       {"speed", (pp + tg) / (t_pp + t_tg)},
                       {"speed_out", tg / (t_pp + t_tg)}});
  }

  const long long params = parameter_count(mc);
  if (opt.common.json) {
    nlohmann::json j = {{"benchmark", "llama"},         {"model", engine.engine_config().model},
                        {"n_params", params},           {"tests", tests},
                        {"batched", batched},           {"load_time_s", loaded.load_s},
                        {"engine", engine_json(engine)}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s\n", engine_line(engine).c_str());
  std::printf("model load %.2f s (excluded); greedy sampling; %d repetitions after a warm-up\n\n", loaded.load_s,
              opt.repetitions);
  // llama-bench names the file type; here the most common packed matrix type ("q4_K x 97, ...").
  const std::string types = engine.weight_types();
  std::string main_type = types.substr(0, types.find(' '));
  for (char& ch : main_type) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  const std::string model = engine.engine_config().model + " " + main_type;
  std::string backend = engine.backend_name();
  backend = backend.substr(0, backend.find(','));
  const double mib = double(engine.packed_weight_bytes()) / (1 << 20);
  if (!tests.empty()) {  // -p 0 -n 0: only the batched table
    std::printf("| model | size | params | backend | threads | test | t/s |\n");
    std::printf("| --- | ---: | ---: | --- | ---: | ---: | ---: |\n");
  }
  for (const auto& t : tests)
    std::printf("| %s | %.2f MiB | %.2f M | %s | %d | %s | %.2f ± %.2f |\n", model.c_str(), mib, params / 1e6,
                backend.c_str(), engine.engine_config().num_threads, t["test"].get<std::string>().c_str(),
                t["avg_ts"].get<double>(), t["stddev_ts"].get<double>());
  for (const auto& t : tests) {
    if (!t.contains("roofline")) continue;
    const auto& r = t["roofline"];
    const double wb = r["weight_bytes"].get<double>(), tps = r["tokens_per_s_median"].get<double>();
    std::printf(
        "\nroofline of %s (medians): %.1f MB of packed matrices per token x %.2f tok/s = %.1f GB/s streamed,"
        "\nagainst %.1f GB/s read by `bench memory`'s loop in the same minutes: %.1f %% (runs:",
        t["test"].get<std::string>().c_str(), wb / 1e6, tps, wb * tps / 1e9, r["read_gb_per_s_median"].get<double>(),
        100 * r["fraction_median"].get<double>());
    for (double f : r["fraction"]) std::printf(" %.1f", 100 * f);
    std::printf(" %%)\n");
    if (r.contains("file_bytes"))
      std::printf("counted in file bytes (%.1f MB, the embedding table included), as llama.cpp's size: %.1f %%\n",
                  r["file_bytes"].get<double>() / 1e6, 100 * r["file_fraction_median"].get<double>());
    if (wb < 256e6)
      std::printf("(%.0f MB of weights may stay in the caches between tokens: above 100 %% is possible)\n", wb / 1e6);
  }
  if (!batched.empty()) {
    std::printf(
        "\n|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s | S_out "
        "t/s |\n");
    std::printf(
        "|-------|--------|------|--------|----------|----------|----------|----------|----------|----------|----------"
        "-|\n");
    for (const auto& r : batched)
      std::printf("| %5d | %6d | %4d | %6d | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f | %9.2f |\n",
                  r["pp"].get<int>(), r["tg"].get<int>(), r["pl"].get<int>(), r["n_kv"].get<int>(),
                  r["t_pp"].get<double>(), r["speed_pp"].get<double>(), r["t_tg"].get<double>(),
                  r["speed_tg"].get<double>(), r["t"].get<double>(), r["speed"].get<double>(),
                  r["speed_out"].get<double>());
    std::printf("S_out: output tokens per second over the whole run (B*TG / T).\n");
  }
  const bool buffer = opt.roofline && !tests.empty() && tests.back().contains("roofline");
  std::printf("peak resident memory %.1f MiB%s\n", double(peak_rss_bytes()) / (1 << 20),
              buffer ? " (with the 1 GiB read buffer of --roofline)" : "");
  return 0;
}

}  // namespace

Command add_llama_command(CLI::App& bench) {
  auto opt = std::make_shared<LlamaOptions>();
  CLI::App* cmd = bench.add_subcommand("llama",
                                       "llama-bench (pp/tg) and llama-batched-bench workloads, printed in their terms");
  add_common_options(cmd, opt->common, /*prefix_caching_flag=*/false);
  cmd->add_option("-p,--n-prompt", opt->n_prompt, "prompt tokens of the pp test (default 512; 0 skips it)");
  cmd->add_option("-n,--n-gen", opt->n_gen, "generated tokens of the tg test (default 128; 0 skips it)");
  cmd->add_option("-r,--repetitions", opt->repetitions, "repetitions of pp and tg (default 5)");
  cmd->add_option("--npp", opt->npp, "batched: prompt tokens per sequence (default 128)");
  cmd->add_option("--ntg", opt->ntg, "batched: generated tokens per sequence (default 128)");
  cmd->add_option("--npl", opt->npl, "batched: numbers of parallel sequences (default 1,4,8,16; 0 skips)")
      ->delimiter(',');
  cmd->add_flag("--roofline", opt->roofline,
                "tg: memory read passes before and after each repetition; prints weight bytes x tok/s / read GB/s");
  return [opt]() { return run_llama(*opt); };
}

}  // namespace pagedchat::cli::bench
