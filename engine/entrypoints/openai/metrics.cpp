// Metric names, help texts and buckets are vLLM's (vllm/v1/metrics/loggers.py, Apache-2.0; THIRD_PARTY_NOTICES).
#include "engine/entrypoints/openai/metrics.h"

#include <cstdio>
#include <sstream>

namespace pagedchat::openai {

void Histogram::observe(double v) {
  for (std::size_t i = 0; i < bounds.size(); ++i)
    if (v <= bounds[i]) {
      ++counts[i];
      break;
    }
  sum += v;
  ++count;
}

namespace {

std::string escape_label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void header(std::ostringstream& o, const char* name, const char* type, const char* help) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

void write_histogram(std::ostringstream& o, const char* name, const char* help, const Histogram& h,
                     const std::string& label) {
  header(o, name, "histogram", help);
  long long cumulative = 0;
  for (std::size_t i = 0; i < h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    o << name << "_bucket{" << label << ",le=\"" << num(h.bounds[i]) << "\"} " << cumulative << "\n";
  }
  o << name << "_bucket{" << label << ",le=\"+Inf\"} " << h.count << "\n";
  o << name << "_sum{" << label << "} " << num(h.sum) << "\n";
  o << name << "_count{" << label << "} " << h.count << "\n";
}

}  // namespace

ServerMetrics::ServerMetrics(std::string model_name)
    : label_("model_name=\"" + escape_label(model_name) + "\""),
      ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
             1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
      itl_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e_({0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
            30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}) {}

void ServerMetrics::observe(const RequestOutput& out) {
  std::lock_guard lk(mu_);
  bool new_tokens = false;
  for (const CompletionOutput& c : out.outputs) new_tokens |= !c.token_ids.empty();
  const RequestMetrics& m = out.metrics;
  if (new_tokens && m.last_token_time > 0) {
    auto [it, first] = seen_.try_emplace(out.request_id);
    if (first) {
      if (m.first_token_time > 0) ttft_.observe(m.first_token_time - m.arrival_time);
    } else if (m.last_token_time > it->second.last_token_time) {
      itl_.observe(m.last_token_time - it->second.last_token_time);
    }
    it->second.last_token_time = m.last_token_time;
  }
  // One count per completion, as vLLM v1 counts each of an n > 1 request's child requests: every
  // completion's finish reason is reported once, in the output of the step it ended in.
  int ended = 0;
  for (const CompletionOutput& c : out.outputs)
    if (c.finish_reason) {
      ++finished_[*c.finish_reason];
      ++ended;
    }
  if (ended) ended_[out.request_id] += ended;
  if (out.finished) {
    seen_.erase(out.request_id);
    if (m.finished_time > 0 && m.arrival_time > 0) e2e_.observe(m.finished_time - m.arrival_time);
    const auto it = ended_.find(out.request_id);
    if (it == ended_.end())
      ++finished_[FinishReason::kAbort];  // ended without any reason: aborted
    else
      ended_.erase(it);
  }
}

std::string ServerMetrics::render(const EngineStats& s) const {
  std::lock_guard lk(mu_);
  std::ostringstream o;
  const std::string& l = label_;
  auto sample = [&](const char* name, const char* type, const char* help, const std::string& value) {
    header(o, name, type, help);
    o << name << "{" << l << "} " << value << "\n";
  };
  using std::to_string;
  sample("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
         to_string(s.num_running));
  sample("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", to_string(s.num_waiting));
  sample("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", num(s.kv_cache_usage()));
  sample("vllm:num_kv_cache_blocks", "gauge", "KV-cache blocks in all (PagedChat).", to_string(s.num_total_blocks));
  sample("vllm:num_free_kv_cache_blocks", "gauge", "KV-cache blocks free (PagedChat).", to_string(s.num_free_blocks));
  // Per KV-cache group (engine/core/kv_cache_groups.h): all groups share the blocks above; a model
  // without sliding windows has one group of all its layers.
  header(o, "pagedchat:kv_cache_group_blocks_in_use", "gauge",
         "KV-cache blocks held by requests in each KV-cache group (kind full_attention or sliding_window, "
         "sliding_window in tokens, layers of the model in the group).");
  for (std::size_t g = 0; g < s.kv_cache_groups.size(); ++g) {
    const KVCacheGroupStats& gs = s.kv_cache_groups[g];
    o << "pagedchat:kv_cache_group_blocks_in_use{" << l << ",group=\"" << g << "\",kind=\""
      << (gs.sliding_window > 0 ? "sliding_window" : "full_attention") << "\",sliding_window=\"" << gs.sliding_window
      << "\",layers=\"" << gs.num_layers << "\"} " << gs.num_blocks_in_use << "\n";
  }
  if (s.num_state_slots > 0) {
    // Hybrid models: the recurrent layers' state slots (engine/core/recurrent_state_manager.h).
    header(o, "pagedchat:recurrent_state_slots", "gauge",
           "Recurrent state slots of a hybrid model by use: held by running requests, prefix-cache checkpoints, free.");
    o << "pagedchat:recurrent_state_slots{" << l << ",use=\"held\"} " << s.num_state_slots_held << "\n";
    o << "pagedchat:recurrent_state_slots{" << l << ",use=\"checkpoint\"} " << s.num_state_checkpoints << "\n";
    o << "pagedchat:recurrent_state_slots{" << l << ",use=\"free\"} "
      << s.num_state_slots - s.num_state_slots_held - s.num_state_checkpoints << "\n";
  }
  sample("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.",
         to_string(s.prefix_cache_queries));
  sample("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.",
         to_string(s.prefix_cache_hits));
  sample("pagedchat:encoded_images_total", "counter", "Images the vision encoder encoded (encoder cache misses).",
         to_string(s.num_encoded_images));
  sample("pagedchat:encoder_cache_hits_total", "counter",
         "Images found in the encoder cache (a picture sent again or by another request).",
         to_string(s.num_encoder_cache_hits));
  sample("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
         to_string(s.num_preemptions));
  sample("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", to_string(s.num_prompt_tokens));
  sample("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
         to_string(s.num_generation_tokens));
  if (!s.spec_accepted_per_pos.empty() || s.spec_num_drafts > 0) {
    // Speculative decoding (--speculative-config), vLLM's spec_decode counters.
    // (prometheus_client, which vLLM uses, puts "_total" after a counter's name.)
    sample("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.",
           to_string(s.spec_num_drafts));
    sample("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.",
           to_string(s.spec_num_draft_tokens));
    sample("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.",
           to_string(s.spec_num_accepted_tokens));
    header(o, "vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position.");
    for (std::size_t i = 0; i < s.spec_accepted_per_pos.size(); ++i)
      o << "vllm:spec_decode_num_accepted_tokens_per_pos_total{" << l << ",position=\"" << i << "\"} "
        << s.spec_accepted_per_pos[i] << "\n";
  }
  header(o, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (FinishReason reason : kFinishReasons) {
    auto it = finished_.find(reason);
    o << "vllm:request_success_total{" << l << ",finished_reason=\"" << pagedchat::to_string(reason) << "\"} "
      << (it == finished_.end() ? 0 : it->second) << "\n";
  }
  write_histogram(o, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttft_, l);
  write_histogram(o, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itl_, l);
  write_histogram(o, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e2e_, l);
  return o.str();
}

}  // namespace pagedchat::openai
