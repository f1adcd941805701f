// `pagedchat-cli bench tokenize`: tokenizer speed — encode (and decode) of a text of about 1 MB,
// in MB/s and tokens/s. The first encode runs with an empty word cache (cold); the figure is the
// median of the runs after it. The default text mixes English prose, source code, numbers,
// Korean, Chinese, Japanese and emoji (deterministic, --seed).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

#include "cli/bench_common.h"
#include "cli/input_file.h"
#include "cli/json_output.h"
#include "engine/text/tokenizer.h"

namespace pagedchat::cli::bench {

namespace {
struct TokenizeBenchOptions {
  std::string model, file;
  double size_mb = 1.0;
  int runs = 5;
  uint64_t seed = 0;
  bool json = false;
};

const char* const kParagraphs[] = {
    "The quick brown fox jumps over the lazy dog. It's a sentence we've all typed, isn't it? "
    "Scientists say the experiment, which ran for 1,234 days, produced 56.7% more data than expected.\n\n",
    "def tokenize(text: str) -> list[int]:\n    ids = []\n    for word in text.split():\n        "
    "ids.extend(vocab.get(word, [0]))\n    return ids  # TODO: handle\tunknown words\n\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];  // dot product\n}\nprintf(\"%d\\n\", sum);\n",
    "안녕하세요! 오늘은 날씨가 정말 좋네요. 우리는 공원에서 산책을 하고 점심을 먹었습니다.\n",
    "人工智能正在改变世界。机器学习模型需要大量的数据进行训练。今日はいい天気ですね、散歩に行きましょう。\n",
    "Emoji time 🙂👍🏽🎉🇰🇷 — “quotes”, ‘apostrophes’, and … ellipses; naïve café "
    "façade.\n",
    "In 2024, the population was 8,118,835,999; by 2050 it may reach 9.7 billion (±0.3).\n",
    "    Indented   text  with    runs   of    spaces\n\n\n\nand blank lines\r\n",
};

std::string make_text(std::size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  s.reserve(bytes + 512);
  constexpr std::size_t n = sizeof(kParagraphs) / sizeof(kParagraphs[0]);
  while (s.size() < bytes) {
    std::string p = kParagraphs[rng() % n];
    // Vary the numbers so that not every word is a cache hit.
    for (char& c : p)
      if (c >= '0' && c <= '9') c = char('0' + rng() % 10);
    s += p;
  }
  s.resize(bytes);
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();  // whole characters
  if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();
  return s;
}

int run(const TokenizeBenchOptions& o) {
  const double t0 = now_s();
  const auto tok = load_tokenizer(o.model);
  const double load_s = now_s() - t0;
  std::string text;
  if (!o.file.empty()) {
    text = read_input_file(o.file, "the text file");
  } else {
    if (!(o.size_mb > 0 && o.size_mb <= 1024)) throw std::invalid_argument("--size-mb must be in (0, 1024]");
    text = make_text(std::size_t(o.size_mb * 1e6), o.seed);
  }
  const double mb = double(text.size()) / 1e6;
  std::vector<int> ids;
  double t = now_s();
  ids = tok->encode(text);
  const double cold_s = now_s() - t;
  std::vector<double> enc, dec;
  for (int r = 0; r < o.runs; ++r) {
    t = now_s();
    ids = tok->encode(text);
    enc.push_back(now_s() - t);
    t = now_s();
    const std::string back = tok->decode(ids);
    dec.push_back(now_s() - t);
  }
  const double enc_s = median(enc), dec_s = median(dec);
  const double n = double(ids.size());
  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"kind", tok->kind()},
                        {"vocab_size", tok->vocab_size()},
                        {"load_s", load_s},
                        {"bytes", text.size()},
                        {"tokens", ids.size()},
                        {"runs", o.runs},
                        {"encode_cold_s", cold_s},
                        {"encode_s", enc_s},
                        {"encode_mb_per_s", mb / enc_s},
                        {"encode_tokens_per_s", n / enc_s},
                        {"decode_s", dec_s},
                        {"decode_tokens_per_s", n / dec_s}};
    std::cout << dump(j) << "\n";
  } else {
    std::cout << "tokenizer " << o.model << " (" << tok->kind() << ", " << tok->vocab_size() << " tokens, loaded in "
              << load_s << " s)\n"
              << "text: " << text.size() << " bytes -> " << ids.size() << " tokens\n"
              << "encode: " << mb / enc_s << " MB/s, " << n / enc_s << " tokens/s (median of " << o.runs
              << "; first run, cold cache: " << mb / cold_s << " MB/s)\n"
              << "decode: " << n / dec_s << " tokens/s\n";
  }
  return 0;
}
}  // namespace

Command add_tokenize_bench_command(CLI::App& bench) {
  auto opt = std::make_shared<TokenizeBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("tokenize",
                                       "Tokenizer speed: encode/decode of ~1 MB of mixed text (MB/s, tokens/s)");
  cmd->add_option("--model", opt->model, "tokenizer source (as for `tokenize`)")->required();
  auto* file = cmd->add_option("--file", opt->file, "text to encode (default: generated mixed text)");
  cmd->add_option("--size-mb", opt->size_mb, "size of the generated text in MB (default 1)")->excludes(file);
  cmd->add_option("--runs", opt->runs, "timed runs after the cold one (default 5)")->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", opt->seed, "seed of the generated text");
  cmd->add_flag("--json", opt->json, "print the figures as JSON");
  return [opt]() { return run(*opt); };
}

}  // namespace pagedchat::cli::bench
