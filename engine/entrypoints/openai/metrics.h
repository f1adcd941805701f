// ServerMetrics: GET /metrics in Prometheus' text exposition format
// (https://prometheus.io/docs/instrumenting/exposition_formats/) under vLLM v1's metric names
// (vllm/v1/metrics/loggers.py, docs "Production Metrics"): vllm:num_requests_running,
// vllm:num_requests_waiting, vllm:kv_cache_usage_perc, vllm:prefix_cache_queries_total,
// vllm:prefix_cache_hits_total, vllm:num_preemptions_total, vllm:prompt_tokens_total,
// vllm:generation_tokens_total, vllm:request_success_total{finished_reason},
// vllm:time_to_first_token_seconds, vllm:inter_token_latency_seconds,
// vllm:e2e_request_latency_seconds (histograms with vLLM's buckets; seconds); and PagedChat's
// pagedchat:kv_cache_group_blocks_in_use{group,kind,sliding_window,layers} per KV-cache group.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/llm_engine.h"
#include "engine/outputs.h"

namespace pagedchat::openai {

/// A Prometheus histogram: cumulative bucket counts at fixed upper bounds, sum and count.
struct Histogram {
  explicit Histogram(std::vector<double> upper_bounds) : bounds(std::move(upper_bounds)), counts(bounds.size(), 0) {}
  void observe(double v);
  std::vector<double> bounds;
  std::vector<long long> counts;  ///< per bound, not cumulative (made cumulative when written)
  double sum = 0;
  long long count = 0;
};

class ServerMetrics {
 public:
  explicit ServerMetrics(std::string model_name);
  /// Every output a step reports (AsyncEngineClient::set_output_observer): TTFT at a request's first
  /// tokens, one inter-token gap per later step, e2e latency at the end, and each completion's
  /// finish reason (request_success_total counts completions: n of them for a request with n > 1).
  /// Thread-safe.
  void observe(const RequestOutput& output);
  /// The text for GET /metrics, with the engine's counters `stats`. Thread-safe.
  std::string render(const EngineStats& stats) const;

 private:
  struct Seen {
    double last_token_time = 0;
  };
  std::string label_;
  mutable std::mutex mu_;
  Histogram ttft_, itl_, e2e_;
  std::map<FinishReason, long long> finished_;  ///< finish reason -> completions (n per request)
  std::unordered_map<std::string, int> ended_;  ///< request id -> completions counted so far
  std::unordered_map<std::string, Seen> seen_;
};

}  // namespace pagedchat::openai
