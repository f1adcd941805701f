// `pagedchat-cli bench kl`: how far a model's next-token distributions move from a base model's
// on the same text, the measure llama.cpp's `llama-perplexity --kl-divergence` reports for a
// quantized file against its full-precision one (tools/perplexity: the text is cut into chunks of
// --ctx tokens, the first of each replaced by BOS; the second half of each chunk is scored, every
// position j predicting token j + 1). Per scored position, with p the base model's softmax and q
// the model's: KLD = sum_v p_v (log p_v - log q_v); "same top" = argmax p == argmax q; dp = q(next)
// - p(next), the change in the probability of the token that follows. Both models run through
// the engine's forward (DecoderModel, a float32 KV cache), teacher-forced, one chunk at a time;
// figures are in float64.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "cli/bench_common.h"
#include "cli/dtype_options.h"
#include "engine/core/kv_cache_groups.h"
#include "engine/loader/model_loader.h"
#include "engine/model/decoder_model.h"
#include "engine/model/weight_dtype.h"
#include "kernels/ops.h"

namespace pagedchat::cli::bench {

namespace {

struct KlOptions {
  std::string model, base_model, file;
  WeightDType dtype = WeightDType::kAuto, base_dtype = WeightDType::kAuto;
  int ctx = 512, chunks = 0, threads = 0;
  bool json = false;
};

// A model ready to run chunks: its weights, backend and packed forward.
struct Runner {
  ModelBundle bundle;
  std::unique_ptr<kernels::Backend> backend;
  std::unique_ptr<DecoderModel> model;

  Runner(const std::string& path, WeightDType dtype, int threads) {
    EngineConfig c;
    c.model = path;
    bundle = load_model(c);
    backend = kernels::make_cpu_backend(threads);
    model = std::make_unique<DecoderModel>(bundle.model.config, bundle.model.weights, *backend, dtype);
  }

  /// Logits [ids.size(), vocab] of every position of one sequence, from an empty cache.
  std::vector<float> logits(const std::vector<int>& ids) {
    const int bs = 16, n = int(ids.size()), nblocks = (n + bs - 1) / bs;
    // A range of blocks per KV-cache group (sliding-window layers have groups of their own).
    const int groups = KVCacheGroups::of(model->config()).num_groups();
    KVCache cache(model->config(), nblocks * groups, bs, kernels::KvDType::kFloat32);
    ForwardBatch b;
    b.max_blocks_per_seq = nblocks;
    for (int i = 0; i < nblocks; ++i) b.block_tables.push_back(i);
    b.query_start_loc = {0, n};
    b.seq_lens = {n};
    for (int i = 0; i < n; ++i) {
      b.input_ids.push_back(ids[i]);
      b.positions.push_back(i);
      b.slot_mapping.push_back(i);
      b.logits_indices.push_back(i);
    }
    b.add_shifted_groups(groups, nblocks, bs);
    std::vector<float> out;
    model->forward(b, cache, out);
    return out;
  }
};

// log-softmax of one row in float64.
std::vector<double> log_softmax(const float* row, int vocab) {
  double m = row[0];
  for (int v = 1; v < vocab; ++v) m = std::max(m, double(row[v]));
  double s = 0;
  for (int v = 0; v < vocab; ++v) s += std::exp(double(row[v]) - m);
  const double lse = m + std::log(s);
  std::vector<double> out(static_cast<std::size_t>(vocab));
  for (int v = 0; v < vocab; ++v) out[std::size_t(v)] = double(row[v]) - lse;
  return out;
}

int run(const KlOptions& o) {
  std::ifstream in(o.file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + o.file + "'");
  std::stringstream text;
  text << in.rdbuf();
  Runner base(o.base_model, o.base_dtype, o.threads), test(o.model, o.dtype, o.threads);
  const ModelConfig& bc = base.model->config();
  const ModelConfig& tc = test.model->config();
  if (bc.vocab_size != tc.vocab_size)
    throw std::invalid_argument("the models' vocabularies differ (" + std::to_string(bc.vocab_size) + " and " +
                                std::to_string(tc.vocab_size) + " rows)");
  if (!base.bundle.tokenizer) throw std::invalid_argument("'" + o.base_model + "' has no tokenizer");
  if (o.ctx < 4 || o.ctx > std::min(bc.max_seq_len, tc.max_seq_len))
    throw std::invalid_argument("--ctx must be in [4, " + std::to_string(std::min(bc.max_seq_len, tc.max_seq_len)) +
                                "] (the models' positions)");
  const Tokenizer& tok = *base.bundle.tokenizer;
  const std::vector<int> ids = tok.encode(text.str(), false);
  int chunks = int(ids.size()) / o.ctx;
  if (o.chunks > 0) chunks = std::min(chunks, o.chunks);
  if (chunks < 1)
    throw std::invalid_argument("'" + o.file + "' has " + std::to_string(ids.size()) + " tokens, fewer than --ctx " +
                                std::to_string(o.ctx));
  const int vocab = bc.vocab_size;
  std::vector<double> kld, dp;
  double nll_base = 0, nll_test = 0;
  long same_top = 0;
  const double t0 = now_s();
  for (int c = 0; c < chunks; ++c) {
    std::vector<int> chunk(ids.begin() + long(c) * o.ctx, ids.begin() + long(c + 1) * o.ctx);
    if (tok.bos_id() >= 0) chunk[0] = tok.bos_id();
    const std::vector<float> lb = base.logits(chunk), lt = test.logits(chunk);
    for (int j = o.ctx / 2; j < o.ctx - 1; ++j) {
      const std::vector<double> p = log_softmax(lb.data() + std::size_t(j) * vocab, vocab);
      const std::vector<double> q = log_softmax(lt.data() + std::size_t(j) * vocab, vocab);
      double k = 0;
      int ap = 0, aq = 0;
      for (int v = 0; v < vocab; ++v) {
        k += std::exp(p[std::size_t(v)]) * (p[std::size_t(v)] - q[std::size_t(v)]);
        if (p[std::size_t(v)] > p[std::size_t(ap)]) ap = v;
        if (q[std::size_t(v)] > q[std::size_t(aq)]) aq = v;
      }
      const int next = chunk[std::size_t(j) + 1];
      kld.push_back(std::max(0.0, k));
      dp.push_back(std::exp(q[std::size_t(next)]) - std::exp(p[std::size_t(next)]));
      nll_base -= p[std::size_t(next)];
      nll_test -= q[std::size_t(next)];
      same_top += ap == aq;
    }
  }
  const double n = double(kld.size());
  double dp_rms = 0;
  for (double d : dp) dp_rms += d * d;
  dp_rms = std::sqrt(dp_rms / n);
  nlohmann::json j = {{"benchmark", "kl"},
                      {"model", o.model},
                      {"base_model", o.base_model},
                      {"weights", test.model->packed_types()},
                      {"base_weights", base.model->packed_types()},
                      {"ctx", o.ctx},
                      {"chunks", chunks},
                      {"scored_tokens", kld.size()},
                      {"ppl", std::exp(nll_test / n)},
                      {"base_ppl", std::exp(nll_base / n)},
                      {"kld_mean", mean(kld)},
                      {"kld_median", median(kld)},
                      {"kld_p99", percentile(kld, 99)},
                      {"kld_max", *std::max_element(kld.begin(), kld.end())},
                      {"same_top_pct", 100.0 * double(same_top) / n},
                      {"dp_rms_pct", 100.0 * dp_rms},
                      {"elapsed_s", now_s() - t0}};
  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::printf("%s against %s: %d chunks of %d tokens, %zu scored\n", o.model.c_str(), o.base_model.c_str(), chunks,
                o.ctx, kld.size());
    std::printf(
        "PPL %.4f (base %.4f)\nMean KLD %.6f  median %.6f  99%% %.6f  max %.6f\nSame top %.2f %%  RMS dp %.3f %%\n",
        j["ppl"].get<double>(), j["base_ppl"].get<double>(), j["kld_mean"].get<double>(), j["kld_median"].get<double>(),
        j["kld_p99"].get<double>(), j["kld_max"].get<double>(), j["same_top_pct"].get<double>(),
        j["dp_rms_pct"].get<double>());
  }
  return 0;
}

}  // namespace

Command add_kl_bench_command(CLI::App& bench) {
  auto o = std::make_shared<KlOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "kl",
      "KL divergence of a model's next-token distributions from a base model's on a text (llama.cpp's "
      "llama-perplexity --kl-divergence): mean/median/99%/max KLD, same top token, RMS change of p(next), PPL");
  cmd->add_option("--model", o->model, "the model measured (e.g. a Q4_K_M GGUF)")->required();
  cmd->add_option("--base-model", o->base_model, "the reference (e.g. the same model in F32 or F16)")->required();
  cmd->add_option("--file", o->file, "a UTF-8 text file, tokenized with the base model's tokenizer")->required();
  cmd->add_option("--ctx", o->ctx, "tokens per chunk (llama-perplexity -c; the second half of each is scored)");
  cmd->add_option("--chunks", o->chunks, "at most this many chunks (0 = every whole chunk of the file)");
  cmd->add_option("--threads", o->threads, "CPU threads (0 = all cores)");
  add_weight_dtype_option(cmd, "--dtype", o->dtype, "the measured model's weight policy (as generate --dtype)");
  add_weight_dtype_option(cmd, "--base-dtype", o->base_dtype,
                          "the base model's weight policy (auto; float32 for exact)");
  cmd->add_flag("--json", o->json, "print one JSON object");
  return [o]() { return run(*o); };
}

}  // namespace pagedchat::cli::bench
