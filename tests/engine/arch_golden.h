// The goldens of ../shared/models/arch (README.md there): llama.cpp b4747 (llama3-tiny, qwen2-tiny)
// and a float64 numpy forward written from transformers (qwen3-tiny). Each golden holds three
// prompts with their prompt ids, 24 greedy ids, every step's top-5 [id, logit] and two full
// logits rows ([p][0]: after the prompt, choosing generated_ids[0]; [p][1]: choosing
// generated_ids[23]). Compared teacher-forced, as the README prescribes: the prompt as one batch,
// then the golden's generated ids one at a time, so a legitimate near-tie flip cannot derail the
// later steps.
#pragma once

#include <QTest>

#include <QFile>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/decoder_model.h"
#include "engine/model/model_weights.h"
#include "kernels/ops.h"
#include "test_paths.h"

namespace archtest {

inline QString archDir() { return testpaths::modelFile("arch"); }
/// A model or golden stem under arch/, or an absolute path (tests/data models) as it is.
inline QString archPath(const QString& rel) { return rel.startsWith('/') ? rel : archDir() + "/" + rel; }

struct GoldenPrompt {
  std::string name, prompt;
  std::vector<int> prompt_ids, generated_ids;
  std::vector<std::vector<std::pair<int, double>>> top5;  // [step][5]
  std::vector<std::string> pieces;                        // bytes of each generated id
  std::vector<float> first_row, last_row;                 // [vocab]
  /// top1 - top2 of step s, from the golden's top-5.
  double gap(int s) const { return top5[s][0].second - top5[s][1].second; }
};

struct Golden {
  int vocab = 0;
  bool add_bos = false;
  std::vector<GoldenPrompt> prompts;
};

inline std::string fromHex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

/// Reads `<stem>.golden.json` and `.golden.f32` from arch/; false when unreadable (message in *why).
inline bool loadGolden(const QString& stem, Golden& g, QString* why) {
  const QString base = archPath(stem);
  QFile jf(base + ".golden.json"), lf(base + ".golden.f32");
  if (!jf.open(QIODevice::ReadOnly) || !lf.open(QIODevice::ReadOnly)) {
    *why = "cannot open " + jf.fileName() + " / " + lf.fileName();
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(jf.readAll().toStdString());
  g.vocab = j["n_vocab"].get<int>();
  g.add_bos = j["add_bos"].get<bool>();
  const QByteArray raw = lf.readAll();
  const std::size_t nprompts = j["prompts"].size();
  if (std::size_t(raw.size()) != nprompts * 2 * std::size_t(g.vocab) * sizeof(float)) {
    *why = "unexpected size of " + lf.fileName();
    return false;
  }
  const float* rows = reinterpret_cast<const float*>(raw.constData());
  for (std::size_t p = 0; p < nprompts; ++p) {
    const nlohmann::json& jp = j["prompts"][p];
    GoldenPrompt gp;
    gp.name = jp["name"].get<std::string>();
    gp.prompt = jp["prompt"].get<std::string>();
    gp.prompt_ids = jp["prompt_ids"].get<std::vector<int>>();
    gp.generated_ids = jp["generated_ids"].get<std::vector<int>>();
    for (const auto& step : jp["top5_per_step"]) {
      std::vector<std::pair<int, double>> t;
      for (const auto& e : step) t.emplace_back(e[0].get<int>(), e[1].get<double>());
      gp.top5.push_back(std::move(t));
    }
    for (const auto& h : jp["generated_pieces_hex"]) gp.pieces.push_back(fromHex(h.get<std::string>()));
    gp.first_row.assign(rows + (2 * p) * g.vocab, rows + (2 * p + 1) * g.vocab);
    gp.last_row.assign(rows + (2 * p + 1) * g.vocab, rows + (2 * p + 2) * g.vocab);
    g.prompts.push_back(std::move(gp));
  }
  return true;
}

/// Logits of every generation step of `p`, teacher-forced: step 0 after the whole prompt in one
/// batch, step s after feeding generated_ids[s-1]. [steps][vocab].
inline std::vector<std::vector<float>> teacherForced(
    pagedchat::DecoderModel& model, const GoldenPrompt& p,
    pagedchat::kernels::KvDType kv_type = pagedchat::kernels::KvDType::kFloat32) {
  using namespace pagedchat;
  const ModelConfig& c = model.config();
  const int bs = 16, total = int(p.prompt_ids.size() + p.generated_ids.size());
  const int nblocks = (total + bs - 1) / bs;
  // One range of blocks per KV-cache group (sliding-window layers have groups of their own).
  const int groups = KVCacheGroups::of(c).num_groups();
  KVCache cache(c, nblocks * groups, bs, kv_type, nullptr, /*num_state_slots=*/1);
  std::vector<int> table(nblocks);
  for (int i = 0; i < nblocks; ++i) table[i] = nblocks - 1 - i;  // scattered blocks
  std::vector<std::vector<float>> steps;
  int pos = 0;
  auto feed = [&](const std::vector<int>& ids) {
    ForwardBatch b;
    b.max_blocks_per_seq = nblocks;
    b.block_tables = table;
    b.query_start_loc = {0, int(ids.size())};
    b.seq_lens = {pos + int(ids.size())};
    for (std::size_t i = 0; i < ids.size(); ++i, ++pos) {
      b.input_ids.push_back(ids[i]);
      b.positions.push_back(pos);
      b.slot_mapping.push_back(int64_t(table[pos / bs]) * bs + pos % bs);
    }
    b.logits_indices = {int(ids.size()) - 1};
    b.add_shifted_groups(groups, nblocks, bs);
    if (c.num_recurrent_layers() > 0) b.state_slots = {0};  // recurrent layers: state slot 0
    std::vector<float> logits;
    model.forward(b, cache, logits);
    steps.push_back(std::move(logits));
  };
  feed(p.prompt_ids);
  for (std::size_t s = 0; s + 1 < p.generated_ids.size(); ++s) feed({p.generated_ids[s]});
  return steps;
}

/// The comparison of one prompt with the golden.
struct Comparison {
  double max_row = 0;       ///< max |Δlogit| over the two stored rows
  double max_top5 = 0;      ///< max |Δlogit| over every step's top-5
  double max_gap_diff = 0;  ///< max |Δ(top1 - top2)| over the steps
  int checked = 0;          ///< steps whose golden gap exceeds the threshold
  int mismatches = 0;       ///< of those, steps whose argmax differs from the golden id
  std::string first_mismatch;
  double max_abs() const { return std::max(max_row, max_top5); }
};

inline int argmax(const std::vector<float>& v) {
  return int(std::max_element(v.begin(), v.end()) - v.begin());  // first maximum = lowest id on ties
}

inline Comparison compare(const GoldenPrompt& p, const std::vector<std::vector<float>>& steps, double gap_threshold) {
  Comparison r;
  for (std::size_t i = 0; i < p.first_row.size(); ++i) {
    r.max_row = std::max(r.max_row, double(std::fabs(steps.front()[i] - p.first_row[i])));
    r.max_row = std::max(r.max_row, double(std::fabs(steps.back()[i] - p.last_row[i])));
  }
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (const auto& [id, v] : p.top5[s]) r.max_top5 = std::max(r.max_top5, std::fabs(double(steps[s][id]) - v));
    const double ours = double(steps[s][p.top5[s][0].first]) - double(steps[s][p.top5[s][1].first]);
    r.max_gap_diff = std::max(r.max_gap_diff, std::fabs(ours - p.gap(int(s))));
    if (p.gap(int(s)) > gap_threshold) {
      ++r.checked;
      const int got = argmax(steps[s]);
      if (got != p.generated_ids[s]) {
        if (!r.mismatches)
          r.first_mismatch = p.name + " step " + std::to_string(s) + ": argmax " + std::to_string(got) + ", golden " +
                             std::to_string(p.generated_ids[s]);
        ++r.mismatches;
      }
    }
  }
  return r;
}

/// Steps of `p` from the start up to (not including) the first one whose golden gap is at most
/// `gap_threshold`: free-running greedy ids must equal the golden's there.
inline int reliablePrefix(const GoldenPrompt& p, double gap_threshold) {
  int n = 0;
  while (n < int(p.generated_ids.size()) && p.gap(n) > gap_threshold) ++n;
  return n;
}

}  // namespace archtest

/// At the top of a test function: `golden` (a stem under arch/) must exist (REQUIRE_MODEL_FILE:
/// fails with CI=true, else skips) and load into a new Golden `g`.
#define REQUIRE_GOLDEN_FILES(golden, g)                                 \
  REQUIRE_MODEL_FILE(archtest::archPath(golden) + ".golden.json");      \
  archtest::Golden g;                                                   \
  {                                                                     \
    QString why_;                                                       \
    QVERIFY2(archtest::loadGolden(golden, g, &why_), qPrintable(why_)); \
  }
