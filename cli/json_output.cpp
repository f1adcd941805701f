#include "cli/json_output.h"

namespace pagedchat::cli {

namespace {
nlohmann::json finish_reason_json(const std::optional<FinishReason>& r) {
  if (r) return std::string(to_string(*r));
  return nullptr;
}

nlohmann::json stop_reason_json(const StopReason& r) {
  if (const auto* s = std::get_if<std::string>(&r)) return *s;
  if (const auto* i = std::get_if<int>(&r)) return *i;
  return nullptr;
}
}  // namespace

nlohmann::json to_json(const RequestOutput& out) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& c : out.outputs) {
    nlohmann::json o = {{"index", c.index},
                        {"text", c.text},
                        {"token_ids", c.token_ids},
                        {"finish_reason", finish_reason_json(c.finish_reason)},
                        {"stop_reason", stop_reason_json(c.stop_reason)}};
    if (c.logprobs) {
      nlohmann::json lps = nlohmann::json::array();
      for (const auto& step : *c.logprobs) {
        nlohmann::json m = nlohmann::json::object();
        for (const auto& [id, lp] : step)
          m[std::to_string(id)] = {{"logprob", lp.logprob}, {"rank", lp.rank}, {"decoded_token", lp.decoded_token}};
        lps.push_back(m);
      }
      o["logprobs"] = lps;
      o["cumulative_logprob"] = c.cumulative_logprob.value_or(0.0);
    }
    outputs.push_back(o);
  }
  const RequestMetrics& m = out.metrics;
  return {{"request_id", out.request_id},
          {"prompt", out.prompt},
          {"prompt_token_ids", out.prompt_token_ids},
          {"outputs", outputs},
          {"finished", out.finished},
          {"num_cached_tokens", out.num_cached_tokens},
          {"metrics",
           {{"arrival_time", m.arrival_time},
            {"first_scheduled_time", m.first_scheduled_time},
            {"first_token_time", m.first_token_time},
            {"last_token_time", m.last_token_time},
            {"finished_time", m.finished_time},
            {"time_to_first_token", m.time_to_first_token},
            {"mean_inter_token_latency", m.mean_inter_token_latency},
            {"num_cached_tokens", m.num_cached_tokens},
            {"num_preemptions", m.num_preemptions},
            {"num_generation_tokens", m.num_generation_tokens}}}};
}

nlohmann::json to_json(const EngineStats& s) {
  nlohmann::json groups = nlohmann::json::array();
  for (const KVCacheGroupStats& g : s.kv_cache_groups)
    groups.push_back({{"sliding_window", g.sliding_window},
                      {"num_layers", g.num_layers},
                      {"num_blocks_in_use", g.num_blocks_in_use}});
  return {{"num_running", s.num_running},
          {"num_waiting", s.num_waiting},
          {"num_total_blocks", s.num_total_blocks},
          {"num_free_blocks", s.num_free_blocks},
          {"kv_cache_usage", s.kv_cache_usage()},
          {"num_cached_blocks", s.num_cached_blocks},
          {"prefix_cache_queries", s.prefix_cache_queries},
          {"prefix_cache_hits", s.prefix_cache_hits},
          {"num_preemptions", s.num_preemptions},
          {"num_prompt_tokens", s.num_prompt_tokens},
          {"num_generation_tokens", s.num_generation_tokens},
          {"num_steps", s.num_steps},
          {"kv_cache_group_size", s.kv_cache_group_size},
          {"kv_cache_groups", groups},
          {"spec_decode",
           {{"num_drafts", s.spec_num_drafts},
            {"num_draft_tokens", s.spec_num_draft_tokens},
            {"num_accepted_tokens", s.spec_num_accepted_tokens},
            {"num_accepted_tokens_per_pos", s.spec_accepted_per_pos},
            {"num_recomputed_tokens", s.spec_num_recomputed_tokens},
            {"num_trimmed_tokens", s.spec_num_trimmed_tokens},
            {"step_cost_intercept_s", s.step_cost_intercept_s},
            {"step_cost_per_token_s", s.step_cost_per_token_s},
            {"acceptance_rate",
             s.spec_num_draft_tokens ? double(s.spec_num_accepted_tokens) / double(s.spec_num_draft_tokens) : 0.0},
            {"mean_acceptance_length",
             s.spec_num_drafts ? 1.0 + double(s.spec_num_accepted_tokens) / double(s.spec_num_drafts) : 0.0}}}};
}

std::string dump(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pagedchat::cli
