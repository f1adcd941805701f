#include "engine/llm.h"

#include <stdexcept>
#include <unordered_map>

namespace pagedchat {

LLM::LLM(const EngineConfig& config) : engine_(config) {}

namespace {

template <typename Prompt>
std::vector<RequestOutput> run_all(LLMEngine& engine, long long& next_id, const std::vector<Prompt>& prompts,
                                   SamplingParams params) {
  params.output_kind = RequestOutputKind::kFinalOnly;
  params.validate();
  std::vector<std::string> ids;
  std::unordered_map<std::string, size_t> index;
  try {
    for (size_t i = 0; i < prompts.size(); ++i) {
      ids.push_back("llm-" + std::to_string(next_id++));
      engine.add_request(ids.back(), prompts[i], params);
      index[ids.back()] = i;
    }
  } catch (...) {
    for (const auto& id : ids) engine.abort_request(id);
    while (engine.has_unfinished_requests()) engine.step();  // drain the abort reports
    throw;
  }
  std::vector<RequestOutput> results(prompts.size());
  size_t done = 0;
  while (done < prompts.size()) {
    for (auto& out : engine.step()) {
      auto it = index.find(out.request_id);
      if (it == index.end() || !out.finished) continue;
      results[it->second] = std::move(out);
      ++done;
    }
  }
  return results;
}

}  // namespace

SamplingParams LLM::get_default_sampling_params() const {
  SamplingParams p;
  apply_sampling_defaults(engine_.sampling_defaults(), p);
  return p;
}

std::vector<RequestOutput> LLM::generate(const std::vector<std::string>& prompts) {
  return generate(prompts, get_default_sampling_params());
}

std::vector<RequestOutput> LLM::generate(const std::vector<std::string>& prompts, const SamplingParams& params) {
  return run_all(engine_, next_id_, prompts, params);
}

std::vector<RequestOutput> LLM::generate(const std::vector<std::vector<int>>& prompt_token_ids,
                                         const SamplingParams& params) {
  return run_all(engine_, next_id_, prompt_token_ids, params);
}

}  // namespace pagedchat
