#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/json_output.h"
#include "cli/sampling_options.h"
#include "cli/timings.h"
#include "engine/llm_engine.h"

namespace pagedchat::cli {

namespace {
struct GenerateOptions {
  EngineConfig engine;
  SamplingParams sampling;
  std::vector<std::string> prompts;
  std::optional<uint64_t> seed;
  int logprobs = -1;
  int priority = 0;
  bool json = false, sequential = false, stream = false, timings = false;
  SamplingOptions given;  ///< which sampling options the command line set
};

// Folds a kDelta output into the cumulative record of its request.
void merge_delta(RequestOutput& acc, const RequestOutput& delta) {
  if (acc.request_id.empty()) {
    acc = delta;
    return;
  }
  for (const auto& c : delta.outputs) {
    auto it = std::find_if(acc.outputs.begin(), acc.outputs.end(),
                           [&](const CompletionOutput& a) { return a.index == c.index; });
    if (it == acc.outputs.end()) {
      acc.outputs.push_back(c);
      continue;
    }
    it->text += c.text;
    it->token_ids.insert(it->token_ids.end(), c.token_ids.begin(), c.token_ids.end());
    if (c.logprobs) {
      if (!it->logprobs) it->logprobs.emplace();
      it->logprobs->insert(it->logprobs->end(), c.logprobs->begin(), c.logprobs->end());
    }
    it->cumulative_logprob = c.cumulative_logprob;
    it->finish_reason = c.finish_reason;
    it->stop_reason = c.stop_reason;
  }
  acc.finished = delta.finished;
  acc.metrics = delta.metrics;
  acc.num_cached_tokens = delta.num_cached_tokens;
}

int run_generate(GenerateOptions& opt) {
  if (opt.seed) opt.sampling.seed = opt.seed;
  if (opt.logprobs >= 0) opt.sampling.logprobs = opt.logprobs;
  opt.sampling.output_kind = opt.stream ? RequestOutputKind::kDelta : RequestOutputKind::kFinalOnly;
  opt.sampling.validate();
  if (opt.priority != 0) opt.engine.scheduling_policy = SchedulingPolicy::kPriority;
  LLMEngine engine(opt.engine);
  apply_sampling_defaults(engine.sampling_defaults(), opt.sampling, opt.given.given());
  opt.sampling.validate();

  std::vector<RequestOutput> results(opt.prompts.size());
  // A prompt the engine refuses (too long for the context, ...) is reported and skipped; the
  // others still run, and the command ends with status 1.
  std::vector<std::string> errors(opt.prompts.size());
  std::map<std::string, size_t> index;
  const bool many = opt.prompts.size() > 1;
  // Without --max-tokens the default (256, or generation_config.json's) is at most the context the
  // prompt leaves, as vLLM's server does: a prompt that fits is not refused for a number the user
  // never asked for. A --max-tokens that does not fit is still an error.
  const bool max_tokens_given = opt.given.given().max_tokens;
  auto submit = [&](size_t i) {
    const std::string id = std::to_string(i);
    SamplingParams params = opt.sampling;
    if (!max_tokens_given && engine.has_tokenizer()) {
      const int prompt_len = int(engine.tokenizer().encode(opt.prompts[i], engine.model_config().add_bos).size());
      const int room = engine.engine_config().max_model_len - prompt_len;
      if (room > 0) params.max_tokens = std::min(params.max_tokens, room);
    }
    try {
      RequestOptions options;
      options.priority = opt.priority;
      engine.add_request(id, opt.prompts[i], params, options);
    } catch (const std::invalid_argument& e) {
      if (!many) throw;  // the command's error, as before
      errors[i] = e.what();
      std::cerr << "pagedchat-cli: error: prompt " << i << ": " << e.what() << "\n";
      results[i].request_id = id;
      results[i].prompt = opt.prompts[i];
      return;
    }
    index[id] = i;
  };
  auto drain = [&] {
    while (engine.has_unfinished_requests())
      for (auto& out : engine.step()) {
        const size_t i = index.at(out.request_id);
        if (!opt.stream) {
          if (out.finished) results[i] = std::move(out);
          continue;
        }
        for (const auto& c : out.outputs) {
          if (c.text.empty()) continue;
          if (opt.json)
            std::cout << dump({{"request_id", out.request_id}, {"index", c.index}, {"delta", c.text}}, -1) << "\n";
          else if (many || opt.sampling.n > 1)
            std::cout << "[" << i << (opt.sampling.n > 1 ? "." + std::to_string(c.index) : "") << "] " << c.text
                      << "\n";
          else
            std::cout << c.text;
        }
        std::cout.flush();
        merge_delta(results[i], out);
      }
  };
  if (opt.sequential) {
    for (size_t i = 0; i < opt.prompts.size(); ++i) {
      submit(i);
      drain();
    }
  } else {
    for (size_t i = 0; i < opt.prompts.size(); ++i) submit(i);
    drain();
  }
  const bool all_ok = std::all_of(errors.begin(), errors.end(), [](const std::string& e) { return e.empty(); });
  if (opt.timings)  // on stderr, so that stdout stays the text (or the JSON)
    for (size_t i = 0; i < results.size(); ++i)
      if (errors[i].empty())
        std::cerr << (many ? "[" + std::to_string(i) + "] " : std::string()) << timings_line(results[i]) << "\n";
  if (opt.stream && !opt.json) {
    std::cout << "\n";
    return all_ok ? 0 : 1;
  }
  if (opt.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (size_t i = 0; i < results.size(); ++i)
      arr.push_back(errors[i].empty() ? to_json(results[i])
                                      : nlohmann::json{{"request_id", results[i].request_id},
                                                       {"prompt", results[i].prompt},
                                                       {"error", errors[i]}});
    arr.push_back({{"engine_stats", to_json(engine.stats())}});
    std::cout << dump(arr) << "\n";
    return all_ok ? 0 : 1;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (many) std::cout << "=== [" << i << "] " << results[i].prompt << "\n";
    if (!errors[i].empty()) {
      std::cout << "(not run: " << errors[i] << ")\n";
      continue;
    }
    for (const auto& c : results[i].outputs) {
      if (results[i].outputs.size() > 1) std::cout << "--- completion " << c.index << "\n";
      std::cout << c.text << "\n";
    }
  }
  return all_ok ? 0 : 1;
}
}  // namespace

Command add_generate_command(CLI::App& app) {
  auto opt = std::make_shared<GenerateOptions>();
  opt->sampling.max_tokens = 256;
  SamplingParams& s = opt->sampling;
  CLI::App* cmd = app.add_subcommand("generate",
                                     "Generate continuations of one or more prompts (submitted as one batch)");
  cmd->add_option("--model", opt->engine.model, kModelHelp)->required();
  cmd->add_option("--tokenizer", opt->engine.tokenizer, "sentencepiece tokenizer (.model)");
  cmd->add_option("--prompt", opt->prompts, "prompt text (repeat for several prompts)")->required();
  cmd->add_option("--n", s.n, "completions per prompt (default 1)");
  opt->given = add_sampling_options(cmd, s, "completion");
  cmd->add_option("--presence-penalty", s.presence_penalty, "[-2, 2], on tokens already generated");
  cmd->add_option("--frequency-penalty", s.frequency_penalty, "[-2, 2], times each token's count so far");
  cmd->add_option("--seed", opt->seed, "per-request RNG seed")->check([](const std::string& v) {
    uint64_t x = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    return r.ec == std::errc() && r.ptr == v.data() + v.size() ? std::string()
                                                               : "seed must be an integer in [0, 2^64 - 1]";
  });
  cmd->add_option("--min-tokens", s.min_tokens, "tokens generated before EOS or a stop may end it");
  cmd->add_option("--stop", s.stop, "stop string (repeatable)");
  cmd->add_option("--stop-token-id", s.stop_token_ids, "stop token id (repeatable)");
  cmd->add_flag("--include-stop-str-in-output", s.include_stop_str_in_output, "keep the stop string in the text");
  cmd->add_flag("--ignore-eos", s.ignore_eos, "keep generating past EOS");
  cmd->add_option("--logprobs", opt->logprobs, "report the top-N log-probabilities of each token");
  cmd->add_option("--priority", opt->priority, "request priority (lower first; switches to priority scheduling)");
  cmd->add_flag("--sequential", opt->sequential, "submit the prompts one after another (shows prefix-cache reuse)");
  cmd->add_flag("--stream", opt->stream, "print text deltas as they are generated");
  add_engine_options(cmd, opt->engine);
  cmd->add_flag("--json", opt->json, "print a JSON array of request outputs, then {\"engine_stats\": ...}");
  cmd->add_flag("--timings", opt->timings, "print each request's prompt and decode speed on stderr");
  return [opt]() { return run_generate(*opt); };
}

}  // namespace pagedchat::cli
