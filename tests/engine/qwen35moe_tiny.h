// The tiny Qwen3.5-MoE model of test_arch_qwen35moe and test_hf_qwen35, written from
// ../shared/models/arch/qwen35-tiny.gguf: the same keys under the qwen35moe prefix, the same
// attention and Gated DeltaNet tensors, and in place of each dense FFN kExperts experts of width
// kExpertWidth (top-kTopK, softmax then renormalised) plus a shared expert of width kSharedWidth
// behind ffn_gate_inp_shexp's sigmoid gate, with weights from a fixed generator (uniform, std
// 0.02; router std 0.3). tests/data/qwen35moe/golden.json holds ik_llama.cpp's ids and logits on it.
#pragma once

#include <QString>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "arch_golden.h"
#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/model/decoder_model.h"

#include <nlohmann/json.hpp>

namespace qwen35moe_tiny {

using namespace pagedchat;

constexpr int kExperts = 8, kTopK = 2, kExpertWidth = 32, kSharedWidth = 48;

// Writes the qwen35moe model to `dst` (see the header); deterministic.
inline void writeModel(const QString& src, const QString& dst, std::vector<std::vector<float>>& keep) {
  GgufFile f = GgufFile::open(src.toStdString());
  GgufMetaWriter meta;
  for (const auto& [k, v] : f.metadata()) {
    if (k == "general.alignment") continue;
    if (k == "general.architecture") {
      meta.kv_str(k, "qwen35moe");
    } else if (k.rfind("qwen35.", 0) == 0) {
      if (k == "qwen35.feed_forward_length") continue;
      meta.kv_value("qwen35moe." + k.substr(7), v);
    } else {
      meta.kv_value(k, v);
    }
  }
  meta.kv_u32("qwen35moe.expert_count", kExperts);
  meta.kv_u32("qwen35moe.expert_used_count", kTopK);
  meta.kv_u32("qwen35moe.expert_feed_forward_length", kExpertWidth);
  meta.kv_u32("qwen35moe.expert_shared_feed_forward_length", kSharedWidth);
  std::mt19937 rng(20261205);
  auto values = [&](std::size_t n, double stddev) {
    std::vector<float> v(n);
    // uniform on [-a, a] with a = sqrt(3) * stddev, from 24 random bits (no library distribution)
    for (float& x : v) x = float((double(rng() >> 8) / double(1 << 24) - 0.5) * 2.0 * std::sqrt(3.0) * stddev);
    keep.push_back(std::move(v));
    return keep.back().data();
  };
  std::vector<GgufTensorOut> out;
  const uint64_t dim = uint64_t(*f.get_int("qwen35.embedding_length"));
  for (const GgufTensorInfo& t : f.tensors()) {
    const bool dense_ffn = t.name.find(".ffn_gate.") != std::string::npos ||
                           t.name.find(".ffn_up.") != std::string::npos ||
                           t.name.find(".ffn_down.") != std::string::npos;
    if (dense_ffn) continue;
    out.push_back(gguf_tensor_copy(f, t));
    // After each layer's last original tensor (ssm_out or attn_v sort after the ffn names), add
    // its FFN: appended after post_attention_norm, which every layer has.
    if (t.name.find(".post_attention_norm.") != std::string::npos) {
      const std::string p = t.name.substr(0, t.name.find("post_attention_norm"));
      auto add = [&](const std::string& name, uint64_t experts, uint64_t rows, uint64_t cols, double sd) {
        GgufTensorOut e;
        e.name = p + name;
        e.cols = cols;
        e.rows = rows;
        e.experts = experts;
        e.type = GgmlType::F32;
        e.src = values(std::max<uint64_t>(experts, 1) * std::max<uint64_t>(rows, 1) * cols, sd);
        out.push_back(e);
      };
      add("ffn_gate_inp.weight", 0, kExperts, dim, 0.3);
      add("ffn_gate_exps.weight", kExperts, kExpertWidth, dim, 0.02);
      add("ffn_up_exps.weight", kExperts, kExpertWidth, dim, 0.02);
      add("ffn_down_exps.weight", kExperts, dim, kExpertWidth, 0.02);
      add("ffn_gate_inp_shexp.weight", 0, 0, dim, 0.3);
      add("ffn_gate_shexp.weight", 0, kSharedWidth, dim, 0.02);
      add("ffn_up_shexp.weight", 0, kSharedWidth, dim, 0.02);
      add("ffn_down_shexp.weight", 0, dim, kSharedWidth, 0.02);
    }
  }
  write_gguf_file(dst.toStdString(), meta, out);
}

/// A model's teacher-forced logits against golden.json (ik_llama.cpp's greedy ids and each step's
/// top-20 [id, logit]): the largest |Δlogit| over every step's top-20, the steps whose golden gap
/// exceeds 1e-2 and the first of them whose argmax differs ("" when none).
struct IkComparison {
  double worst = 0;
  int checked = 0;
  std::string mismatch;
};
inline IkComparison compareWithIk(DecoderModel& m, const nlohmann::json& golden) {
  IkComparison r;
  for (const auto& gp : golden["prompts"]) {
    archtest::GoldenPrompt p;
    p.prompt_ids = gp["prompt_ids"].get<std::vector<int>>();
    p.generated_ids = gp["generated_ids"].get<std::vector<int>>();
    const auto steps = archtest::teacherForced(m, p);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const auto& top = gp["top20_per_step"][s];
      for (const auto& e : top)
        r.worst = std::max(r.worst, std::fabs(double(steps[s][e[0].get<std::size_t>()]) - e[1].get<double>()));
      const double gap = top[0][1].get<double>() - top[1][1].get<double>();
      if (gap > 1e-2) {
        ++r.checked;
        const int got = archtest::argmax(steps[s]);
        if (got != p.generated_ids[s] && r.mismatch.empty())
          r.mismatch = "step " + std::to_string(s) + ": argmax " + std::to_string(got) + ", ik " +
                       std::to_string(p.generated_ids[s]);
      }
    }
  }
  return r;
}

}  // namespace qwen35moe_tiny
