// `pagedchat-cli bench structured`: the cost of a structured output's token mask per decode step
// (engine/sample/structured/). Loads a tokenizer, compiles a JSON Schema (default: a list of
// weather reports), tokenizes a valid instance (default: 20 reports) and walks it token by token
// as the engine does: fill the next-token bitmask, take the token. Prints the vocabulary trie's
// build time, the schema's compile time, and the mask time per step (mean, p95, max; the first
// visit of a grammar position computes its mask, later visits copy it from the cache).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/bench_common.h"
#include "cli/input_file.h"
#include "cli/json_output.h"
#include "engine/sample/structured/grammar_matcher.h"
#include "engine/sample/structured/json_schema_grammar.h"
#include "engine/text/tokenizer.h"

namespace pagedchat::cli::bench {

namespace {
struct StructuredBenchOptions {
  std::string model, schema_file, instance_file;
  int reports = 20;
  bool json = false;
};

const char* const kSchema = R"({"type": "array", "items": {"type": "object", "properties": {
  "city": {"type": "string", "maxLength": 40}, "day": {"type": "string", "format": "date"},
  "temperature": {"type": "number", "minimum": -60, "maximum": 60}, "sunny": {"type": "boolean"},
  "wind": {"enum": ["calm", "breeze", "gale"]}}, "required": ["city", "day", "temperature", "sunny"]}})";

std::string default_instance(int n) {
  const char* cities[] = {"Seoul", "Busan", "Lisbon", "Montréal", "Nairobi", "Kyoto", "Oslo"};
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += "{\"city\": \"" + std::string(cities[i % 7]) + "\", \"day\": \"2026-12-" + (i % 28 < 9 ? "0" : "") +
         std::to_string(i % 28 + 1) + "\", \"temperature\": " + std::to_string(i % 40 - 10) + "." +
         std::to_string(i % 10) + ", \"sunny\": " + (i % 3 ? "true" : "false") + ", \"wind\": \"" +
         (i % 2 ? "breeze" : "calm") + "\"}";
  }
  return s + "]";
}

int run(const StructuredBenchOptions& o) {
  const auto tok = load_tokenizer(o.model);
  const std::string schema_text = o.schema_file.empty() ? kSchema : read_input_file(o.schema_file, "the schema");
  const std::string instance = o.instance_file.empty() ? default_instance(o.reports)
                                                       : read_input_file(o.instance_file, "the instance");
  double t = now_s();
  auto trie = std::make_shared<const structured::TokenTrie>(*tok, tok->vocab_size(), tok->eos_ids());
  const double trie_s = now_s() - t;
  t = now_s();
  const auto grammar = structured::json_schema_grammar(nlohmann::ordered_json::parse(schema_text));
  const double compile_s = now_s() - t;
  structured::GrammarMatcher matcher(grammar, trie);
  const std::vector<int> ids = tok->encode(instance);
  std::vector<uint64_t> mask(std::size_t(trie->mask_words()));
  std::vector<double> ms;
  for (int id : ids) {
    t = now_s();
    matcher.fill_next_token_bitmask(mask.data());
    ms.push_back((now_s() - t) * 1e3);
    if (!((mask[std::size_t(id) >> 6] >> (id & 63)) & 1) || !matcher.accept_token(id))
      throw std::runtime_error("the instance leaves the schema's grammar at token " + std::to_string(id) + " ('" +
                               tok->token_text(id) + "')");
  }
  t = now_s();
  matcher.fill_next_token_bitmask(mask.data());  // the end: only end-of-sequence ids
  ms.push_back((now_s() - t) * 1e3);
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : ms) sum += v;
  const double mean = sum / double(ms.size()), p95 = sorted[std::size_t(0.95 * double(sorted.size() - 1))],
               max = sorted.back();
  if (o.json) {
    std::cout << dump(nlohmann::json{{"model", o.model},
                                     {"vocab_size", tok->vocab_size()},
                                     {"trie_build_s", trie_s},
                                     {"compile_s", compile_s},
                                     {"grammar_states", grammar->states.size()},
                                     {"steps", ms.size()},
                                     {"mask_ms_mean", mean},
                                     {"mask_ms_p95", p95},
                                     {"mask_ms_max", max},
                                     {"mask_ms_first", ms.front()}})
              << "\n";
  } else {
    std::cout << "tokenizer " << o.model << " (" << tok->vocab_size() << " tokens): trie built in " << trie_s * 1e3
              << " ms\nschema: " << grammar->states.size() << " grammar states, compiled in " << compile_s * 1e3
              << " ms\n"
              << ms.size() << " steps: mask " << mean << " ms mean, " << p95 << " ms p95, " << max
              << " ms max (first step " << ms.front() << " ms)\n";
  }
  return 0;
}
}  // namespace

Command add_structured_bench_command(CLI::App& bench) {
  auto opt = std::make_shared<StructuredBenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "structured", "Structured outputs: the token mask's time per step while a JSON instance is generated");
  cmd->add_option("--model", opt->model, "tokenizer source (as for `tokenize`)")->required();
  cmd->add_option("--schema", opt->schema_file, "a JSON Schema file (default: a list of weather reports)");
  cmd->add_option("--instance", opt->instance_file, "a JSON text valid against it (default: generated)");
  cmd->add_option("--reports", opt->reports, "reports in the default instance (default 20)")
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("--json", opt->json, "print the figures as JSON");
  return [opt]() { return run(*opt); };
}

}  // namespace pagedchat::cli::bench
