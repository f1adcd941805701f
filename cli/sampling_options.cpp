#include "cli/sampling_options.h"

namespace pagedchat::cli {

namespace {
bool given(const CLI::Option* o) { return o && o->count() > 0; }
}  // namespace

SamplingFieldsSet SamplingOptions::given() const {
  SamplingFieldsSet f;
  f.temperature = cli::given(temperature);
  f.top_p = cli::given(top_p);
  f.top_k = cli::given(top_k);
  f.min_p = cli::given(min_p);
  f.repetition_penalty = cli::given(repetition_penalty);
  f.max_tokens = cli::given(max_tokens);
  return f;
}

SamplingOptions add_sampling_options(CLI::App* cmd, SamplingParams& s, const std::string& max_tokens_what) {
  const std::string model = "the model's generation_config.json, else ";
  SamplingOptions o;
  o.temperature = cmd->add_option("--temperature", s.temperature, "0 = greedy (default: " + model + "1)");
  o.top_p = cmd->add_option("--top-p", s.top_p, "nucleus sampling mass (default: " + model + "1 = off)");
  o.top_k = cmd->add_option("--top-k", s.top_k, "keep the k most likely tokens (default: " + model + "0 = off)");
  o.min_p = cmd->add_option("--min-p", s.min_p,
                            "drop tokens less likely than min_p x the most likely (default: " + model + "0 = off)");
  o.repetition_penalty = cmd->add_option("--repetition-penalty", s.repetition_penalty,
                                         "> 0, on prompt and generated tokens (default: " + model + "1 = off)");
  o.max_tokens = cmd->add_option("--max-tokens", s.max_tokens,
                                 "most tokens per " + max_tokens_what + " (default: " + model + "256)");
  return o;
}

}  // namespace pagedchat::cli
