// Helpers shared by the engine tests: stories260K engine configs and drive-to-completion loops.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "test_paths.h"

namespace testutil {

inline pagedchat::EngineConfig storiesConfig() {
  pagedchat::EngineConfig c;
  c.model = testpaths::stories260K().toStdString();
  c.num_threads = 2;
  return c;
}

inline pagedchat::SamplingParams greedy(int max_tokens) {
  pagedchat::SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = max_tokens;
  return p;
}

/// Steps until the engine is idle; returns finished outputs by request id (cumulative params
/// expected). `on_step` runs before every step with the step index (to add requests mid-flight).
template <typename OnStep>
std::map<std::string, pagedchat::RequestOutput> runToCompletion(pagedchat::LLMEngine& engine, OnStep on_step,
                                                                int max_steps = 100000) {
  std::map<std::string, pagedchat::RequestOutput> done;
  for (int i = 0; i < max_steps; ++i) {
    on_step(i);
    if (!engine.has_unfinished_requests()) break;
    for (auto& o : engine.step())
      if (o.finished) done[o.request_id] = o;
  }
  return done;
}

inline std::map<std::string, pagedchat::RequestOutput> runToCompletion(pagedchat::LLMEngine& engine) {
  return runToCompletion(engine, [](int) {});
}

}  // namespace testutil
