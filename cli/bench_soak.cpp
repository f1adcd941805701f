// `pagedchat-cli bench soak`: S chat sessions generating continuously for a bounded time, with
// random aborts (Stop), edits (a question changed and resent: the reply in flight is aborted) and
// new conversations, on one engine. Checks what a long-running app needs: every KV block free
// again at the end (no leak), resident memory flat after a warm-up, no request stuck (every one
// either makes progress or finishes). Sessions work on random token ids, as `bench chat` does.
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/bench_common.h"
#include "cli/json_output.h"

namespace pagedchat::cli::bench {

namespace {

struct SoakOptions {
  CommonOptions common;
  int sessions = 8;
  double duration_s = 600;
  double warmup_s = -1;        // < 0: a fifth of the duration, at most 60 s
  int user_len = 24;           // new "user" tokens per turn (at most)
  int max_output = 64;         // tokens per reply (at most)
  double abort_rate = 0.02;    // per step and busy session
  double edit_rate = 0.01;     // per step and busy session
  double new_chat_rate = 0.1;  // per finished turn: the next turn starts a new conversation
  double stuck_s = 30;         // a request without progress this long is stuck
};

/// Resident memory now (VmRSS), bytes.
std::size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  f >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

struct Session {
  std::vector<int> conversation;  // token ids of the conversation so far
  std::vector<int> question;      // the turn's user ids (an edit replaces them)
  std::string request;            // in flight ("" = idle)
  double last_progress = 0;
  double submitted = 0;
  int turn = 0;
};

struct Totals {
  long long submitted = 0, finished = 0, aborted = 0, edits = 0, new_chats = 0, tokens = 0, steps = 0;
  double max_request_s = 0;
  std::vector<std::string> stuck;
};

int run_soak(const SoakOptions& opt) {
  LoadedEngine loaded = load_engine(opt.common.engine);
  LLMEngine& engine = *loaded.engine;
  const int vocab = engine.model_config().vocab_size;
  const int max_len = engine.engine_config().max_model_len;
  if (opt.sessions < 1) throw std::invalid_argument("--sessions must be at least 1");
  check_fits(static_cast<long long>(opt.user_len) + opt.max_output, "--user-len + --max-output", engine);
  const double warmup = opt.warmup_s >= 0 ? opt.warmup_s : std::min(60.0, opt.duration_s / 5);
  std::mt19937_64 rng(opt.common.seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  auto between = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)); };

  std::vector<Session> sessions(static_cast<std::size_t>(opt.sessions));
  std::map<std::string, int> owner;  // request id -> session
  Totals totals;
  long long next_id = 0;
  auto submit = [&](int s) {
    Session& ses = sessions[static_cast<std::size_t>(s)];
    std::vector<int> prompt = ses.conversation;
    prompt.insert(prompt.end(), ses.question.begin(), ses.question.end());
    const int output = between(4, opt.max_output);
    if (static_cast<int>(prompt.size()) + output > max_len) {  // the context is full: a new chat
      ses.conversation.clear();
      prompt = ses.question;
      ++totals.new_chats;
    }
    SamplingParams p = exact_length_params(output, opt.common.seed + static_cast<uint64_t>(next_id),
                                           RequestOutputKind::kDelta);
    p.min_tokens = 0;
    p.ignore_eos = false;
    ses.request = "s" + std::to_string(s) + "-" + std::to_string(next_id++);
    engine.add_request(ses.request, prompt, p);
    owner[ses.request] = s;
    ses.submitted = ses.last_progress = now_s();
    ++totals.submitted;
  };
  auto new_question = [&](Session& ses) { ses.question = random_prompt(rng, between(1, opt.user_len), vocab); };

  struct Sample {
    double t;
    std::size_t rss;
  };
  std::vector<Sample> samples;
  const double start = now_s();
  double next_sample = start;
  std::vector<std::vector<int>> replies(static_cast<std::size_t>(opt.sessions));
  for (int s = 0; s < opt.sessions; ++s) {
    new_question(sessions[static_cast<std::size_t>(s)]);
    submit(s);
  }
  while (now_s() - start < opt.duration_s) {
    const double t = now_s();
    if (t >= next_sample) {
      samples.push_back({t - start, rss_bytes()});
      next_sample += 1.0;
    }
    for (RequestOutput& out : engine.step()) {
      const auto it = owner.find(out.request_id);
      if (it == owner.end()) continue;
      const int s = it->second;
      Session& ses = sessions[static_cast<std::size_t>(s)];
      if (ses.request != out.request_id) {  // an edited turn's aborted request reporting back
        if (out.finished) owner.erase(it);
        continue;
      }
      const auto& ids = out.outputs.front().token_ids;
      replies[static_cast<std::size_t>(s)].insert(replies[static_cast<std::size_t>(s)].end(), ids.begin(), ids.end());
      totals.tokens += static_cast<long long>(ids.size());
      ses.last_progress = now_s();
      if (!out.finished) continue;
      owner.erase(it);
      totals.max_request_s = std::max(totals.max_request_s, now_s() - ses.submitted);
      if (out.outputs.front().finish_reason == FinishReason::kAbort) {
        ++totals.aborted;  // Stop: the reply so far stays in the conversation
      } else {
        ++totals.finished;
      }
      ses.conversation.insert(ses.conversation.end(), ses.question.begin(), ses.question.end());
      auto& reply = replies[static_cast<std::size_t>(s)];
      ses.conversation.insert(ses.conversation.end(), reply.begin(), reply.end());
      reply.clear();
      if (coin(rng) < opt.new_chat_rate) {
        ses.conversation.clear();
        ++totals.new_chats;
      }
      ses.request.clear();
      ++ses.turn;
      new_question(ses);
      submit(s);
    }
    ++totals.steps;
    // Random user actions on the sessions still generating.
    for (int s = 0; s < opt.sessions; ++s) {
      Session& ses = sessions[static_cast<std::size_t>(s)];
      if (ses.request.empty()) continue;
      if (now_s() - ses.last_progress > opt.stuck_s) {
        totals.stuck.push_back(ses.request);
        engine.abort_request(ses.request);  // reported once; its next output ends it
        ses.last_progress = now_s();
        continue;
      }
      const double r = coin(rng);
      if (r < opt.abort_rate) {
        engine.abort_request(ses.request);  // finishes with "abort" at the next step
      } else if (r < opt.abort_rate + opt.edit_rate) {
        engine.abort_request(ses.request);  // its final "abort" output is ignored (owner stays)
        replies[static_cast<std::size_t>(s)].clear();
        new_question(ses);
        ++totals.edits;
        submit(s);
      }
    }
  }
  // The end: everything in flight is stopped, and every block must come back.
  for (const Session& ses : sessions)
    if (!ses.request.empty()) engine.abort_request(ses.request);
  int drain_steps = 0;
  while (engine.has_unfinished_requests() && drain_steps < 100000) {
    engine.step();
    ++drain_steps;
  }
  const EngineStats stats = engine.stats();
  samples.push_back({now_s() - start, rss_bytes()});

  // Resident memory after the warm-up: first, last, highest, and the least-squares slope.
  std::vector<Sample> warm;
  for (const Sample& s : samples)
    if (s.t >= warmup) warm.push_back(s);
  if (warm.empty()) warm.push_back(samples.back());
  std::size_t max_rss = 0;
  double st = 0, sr = 0, stt = 0, str = 0;
  for (const Sample& s : warm) {
    max_rss = std::max(max_rss, s.rss);
    st += s.t;
    sr += static_cast<double>(s.rss);
    stt += s.t * s.t;
    str += s.t * static_cast<double>(s.rss);
  }
  const double n = static_cast<double>(warm.size());
  const double denom = n * stt - st * st;
  const double slope = denom > 0 ? (n * str - st * sr) / denom : 0.0;  // bytes per second

  const bool leak = stats.num_free_blocks != stats.num_total_blocks;
  const bool stuck = !totals.stuck.empty() || engine.has_unfinished_requests();
  nlohmann::json j = {{"duration_s", now_s() - start},
                      {"sessions", opt.sessions},
                      {"steps", totals.steps},
                      {"requests_submitted", totals.submitted},
                      {"requests_finished", totals.finished},
                      {"requests_aborted", totals.aborted},
                      {"edits", totals.edits},
                      {"new_chats", totals.new_chats},
                      {"generated_tokens", totals.tokens},
                      {"max_request_s", totals.max_request_s},
                      {"num_preemptions", stats.num_preemptions},
                      {"num_total_blocks", stats.num_total_blocks},
                      {"num_free_blocks_at_end", stats.num_free_blocks},
                      {"stuck_requests", totals.stuck},
                      {"warmup_s", warmup},
                      {"rss_after_warmup_bytes", warm.front().rss},
                      {"rss_end_bytes", warm.back().rss},
                      {"rss_max_after_warmup_bytes", max_rss},
                      {"rss_slope_bytes_per_min", slope * 60.0},
                      {"block_leak", leak},
                      {"stuck", stuck},
                      {"engine", engine_json(engine)}};
  if (opt.common.json) {
    std::cout << dump(j) << "\n";
  } else {
    std::printf("%s\n", engine_line(engine).c_str());
    std::printf(
        "soak: %d sessions, %.0f s, %lld steps: %lld requests (%lld finished, %lld aborted, %lld edits, %lld new "
        "chats), "
        "%lld tokens, %lld preemptions\n",
        opt.sessions, now_s() - start, totals.steps, totals.submitted, totals.finished, totals.aborted, totals.edits,
        totals.new_chats, totals.tokens, stats.num_preemptions);
    std::printf("blocks free at the end: %d of %d%s; stuck requests: %zu; longest request %.1f s\n",
                stats.num_free_blocks, stats.num_total_blocks, leak ? " (LEAK)" : "", totals.stuck.size(),
                totals.max_request_s);
    std::printf("resident memory after %.0f s warm-up: %.1f MiB, end %.1f MiB, max %.1f MiB, slope %+.2f MiB/min\n",
                warmup, warm.front().rss / 1048576.0, warm.back().rss / 1048576.0, max_rss / 1048576.0,
                slope * 60.0 / 1048576.0);
  }
  return leak || stuck ? 1 : 0;
}

}  // namespace

Command add_soak_command(CLI::App& bench) {
  auto opt = std::make_shared<SoakOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "soak",
      "Chat sessions generating without pause, with random stops, edits and new chats, for a bounded "
      "time: checks that every KV block comes back, memory stays flat and no request gets stuck "
      "(exit status 1 otherwise)");
  add_common_options(cmd, opt->common, false);
  cmd->add_option("--sessions", opt->sessions, "concurrent chat sessions")->capture_default_str();
  cmd->add_option("--duration", opt->duration_s, "seconds to run")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", opt->warmup_s,
                  "seconds before memory is watched (default: a fifth of the duration, at most 60)");
  cmd->add_option("--user-len", opt->user_len, "most new user tokens per turn")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-output", opt->max_output, "most tokens per reply")
      ->capture_default_str()
      ->check(CLI::Range(4, 1 << 20));
  cmd->add_option("--abort-rate", opt->abort_rate, "chance per step that a generating session stops")
      ->capture_default_str();
  cmd->add_option("--edit-rate", opt->edit_rate, "chance per step that a generating session edits its question")
      ->capture_default_str();
  cmd->add_option("--stuck-after", opt->stuck_s, "seconds without progress that make a request stuck")
      ->capture_default_str();
  return [opt]() { return run_soak(*opt); };
}

}  // namespace pagedchat::cli::bench
