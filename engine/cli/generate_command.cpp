#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "engine/cli/commands.h"
#include "engine/llm.h"

namespace pagedchat::cli {

namespace {
struct GenerateOptions {
  EngineConfig engine;
  SamplingParams sampling;
  std::vector<std::string> prompts;
  long long seed = -1;
  bool json = false;
};

nlohmann::json to_json(const RequestOutput& out) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& c : out.outputs)
    outputs.push_back({{"index", c.index},
                       {"text", c.text},
                       {"token_ids", c.token_ids},
                       {"finish_reason", c.finish_reason ? nlohmann::json(*c.finish_reason) : nlohmann::json()}});
  return {{"request_id", out.request_id},
          {"prompt", out.prompt},
          {"prompt_token_ids", out.prompt_token_ids},
          {"outputs", outputs},
          {"finished", out.finished}};
}
}  // namespace

Command add_generate_command(CLI::App& app) {
  auto opt = std::make_shared<GenerateOptions>();
  opt->sampling.max_tokens = 256;
  CLI::App* cmd = app.add_subcommand("generate", "Generate continuations of one or more prompts (submitted as one batch)");
  cmd->add_option("--model", opt->engine.model, "llama2.c checkpoint (.bin) or a folder holding one .bin and one .model")
      ->required();
  cmd->add_option("--tokenizer", opt->engine.tokenizer, "sentencepiece tokenizer (.model)");
  cmd->add_option("--prompt", opt->prompts, "prompt text (repeat for several prompts)")->required();
  cmd->add_option("--temperature", opt->sampling.temperature, "0 = greedy (default 1)");
  cmd->add_option("--top-k", opt->sampling.top_k, "keep the k most likely tokens (0 = off)");
  cmd->add_option("--top-p", opt->sampling.top_p, "nucleus sampling mass (1 = off)");
  cmd->add_option("--seed", opt->seed, "per-request RNG seed");
  cmd->add_option("--max-tokens", opt->sampling.max_tokens, "most tokens to generate per prompt (default 256)");
  cmd->add_option("--max-model-len", opt->engine.max_model_len, "context length (default: the model's)");
  cmd->add_option("--kv-cache-bytes", opt->engine.kv_cache_bytes, "KV-cache memory in bytes (default: auto)");
  cmd->add_option("--block-size", opt->engine.block_size, "tokens per KV-cache block (default 16)");
  cmd->add_option("--max-num-seqs", opt->engine.max_num_seqs, "most requests running at once");
  cmd->add_option("--max-num-batched-tokens", opt->engine.max_num_batched_tokens, "token budget of one step");
  cmd->add_option("--threads", opt->engine.num_threads, "CPU threads (default: all)");
  cmd->add_flag("--json", opt->json, "print a JSON array of request outputs");

  return [opt]() {
    if (opt->seed >= 0) opt->sampling.seed = static_cast<uint64_t>(opt->seed);
    opt->sampling.validate();
    LLM llm(opt->engine);
    const auto outs = llm.generate(opt->prompts, opt->sampling);
    if (opt->json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& o : outs) arr.push_back(to_json(o));
      std::cout << arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      for (size_t i = 0; i < outs.size(); ++i) {
        if (outs.size() > 1) std::cout << "=== [" << i << "] " << outs[i].prompt << "\n";
        std::cout << outs[i].outputs[0].text << "\n";
      }
    }
    return 0;
  };
}

}  // namespace pagedchat::cli
