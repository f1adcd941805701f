// Phi-3 and Phi-4-mini (GGUF "phi3", transformers Phi3ForCausalLM): fused attn_qkv [q | k | v] and
// fused ffn_up [gate | up], partial rotary (rope.dimension_count < head size: Phi-4-mini rotates 96
// of 128 dims, NEOX pairs within them), LongRoPE (rope_factors_short / rope_factors_long divide the
// frequencies — the long set when the context exceeds rope.scaling.original_context_length, as
// llama.cpp chooses by n_ctx — and rope.scaling.attn_factor scales q and k), an optional sliding
// window on every layer (attention.sliding_window; Phi-4-mini's 262144 is never reached).
// Sources: transformers modeling_phi3.py; ik_llama.cpp src/llama-hparams.cpp (LLM_ARCH_PHI3),
// src/graphs/build_phi3.cpp; config.json: modeling_rope_utils.py _compute_longrope_parameters.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void phi3_hparams(const GgufKeys& k, ModelConfig& c) {
  if (const std::optional<int64_t> w = k.get_int("attention.sliding_window")) {
    if (*w < 1 || *w > (1 << 24))
      k.fail(k.prefix + "attention.sliding_window is " + std::to_string(*w) + ", outside [1, 16777216]");
    // A window no sequence can exceed is full attention (one KV-cache group, nothing to free).
    if (*w < c.max_seq_len) {
      c.expand_layer_specs();
      for (LayerSpec& s : c.layer_specs) s.sliding_window = int(*w);
    }
  }
}

// config.json's rope_scaling longrope (or su): the short and long divisors of the frequencies,
// the context past which the long ones apply and the attention factor (as the GGUF loader has it:
// the factor as float32, squared).
void phi3_hf_longrope(const HfKeys& k, const nlohmann::json& rs, ModelConfig& c) {
  const int half = c.rotary_dims() / 2;
  auto factors = [&](const char* key) {
    if (!rs.contains(key) || !rs[key].is_array() || rs[key].size() != std::size_t(half))
      k.fail(std::string("rope_scaling longrope needs '") + key + "': a list of " + std::to_string(half) +
             " numbers (rotated dims / 2), got " + (rs.contains(key) ? load::brief(rs[key]) : "none"));
    std::vector<float> v;
    for (const nlohmann::json& x : rs[key]) {
      if (!x.is_number() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>()))
        k.fail(std::string("rope_scaling '") + key + "' holds " + load::brief(x) + ", not a positive number");
      v.push_back(float(x.get<double>()));
    }
    return v;
  };
  c.rope_freq_factors = factors("short_factor");
  c.rope_freq_factors_long = factors("long_factor");
  const nlohmann::json& orig_src = rs.contains("original_max_position_embeddings") ? rs : k.values;
  const int64_t original =
      k.nested(orig_src).get_int("original_max_position_embeddings", 1, load::kMaxPositions).value_or(4096);
  c.rope_long_threshold = int(original);
  double attention = 1.0;
  if (const auto af = k.nested(rs).get_number("attention_factor")) {
    if (!(*af > 0) || *af > 16)
      k.fail("rope_scaling 'attention_factor' " + std::to_string(*af) + " is outside (0, 16]");
    attention = *af;
  } else if (const double s = double(c.max_seq_len) / double(original); s > 1.0) {
    attention = std::sqrt(1.0 + std::log(s) / std::log(double(original)));
  }
  const double af32 = double(float(attention));
  c.rope_attn_factor = float(af32 * af32);
}

// Phi-3 / Phi-4-mini (modeling_phi3.py): the leading int(head_dim * partial_rotary_factor) dims
// rotate; LongRoPE divides the frequencies by short_factor (or long_factor past
// original_max_position_embeddings) and scales cos/sin by the attention factor, which the engine
// applies to the scores (squared); a sliding_window below max_position_embeddings on every layer.
void phi3_hf_hparams(const HfKeys& k, ModelConfig& c) {
  hf_partial_rotary(k, c, 1.0);
  if (k.has("rope_scaling")) {
    const nlohmann::json& rs = k.values["rope_scaling"];
    if (!rs.is_object()) k.fail("'rope_scaling' is " + load::brief(rs) + ", not an object or null");
    std::string type;
    for (const char* key : {"rope_type", "type"})
      if (rs.contains(key) && rs[key].is_string()) {
        type = rs[key].get<std::string>();
        break;
      }
    if (type != "default") {
      if (type != "longrope" && type != "su")
        k.fail("rope_scaling type '" + type + "' is not supported for Phi-3 (supported: default, longrope)");
      phi3_hf_longrope(k, rs, c);
    }
  }
  if (const auto w = k.get_int("sliding_window", 1, 1 << 24); w && *w < c.max_seq_len) {
    c.expand_layer_specs();
    for (LayerSpec& s : c.layer_specs) s.sliding_window = int(*w);
  }
}

void phi3_hf_write(const ModelConfig& c, nlohmann::json& config) {
  if (c.rotary_dim != 0) config["partial_rotary_factor"] = double(c.rotary_dim) / double(c.head_dim);
  if (!c.rope_freq_factors.empty()) {
    // The attention factor whose float32 square is rope_attn_factor.
    const double af = std::sqrt(double(c.rope_attn_factor));
    float af32 = float(af);
    for (float f : {af32, std::nextafter(af32, 0.0f), std::nextafter(af32, 100.0f)})
      if (float(double(f) * double(f)) == c.rope_attn_factor) af32 = f;
    nlohmann::json shorts = nlohmann::json::array(), longs = nlohmann::json::array();
    for (float f : c.rope_freq_factors) shorts.push_back(hf_short_double(f));
    for (float f : c.rope_freq_factors_long) longs.push_back(hf_short_double(f));
    config["rope_scaling"] = {{"type", "longrope"},
                              {"short_factor", shorts},
                              {"long_factor", longs},
                              {"attention_factor", hf_short_double(af32)}};
    config["original_max_position_embeddings"] = c.rope_long_threshold;
  }
  const int window = hf_sliding_window(c);
  config["sliding_window"] = window > 0 ? nlohmann::json(window) : nlohmann::json(nullptr);
}

}  // namespace

const ModelFamily kPhi3Family = [] {
  ModelFamily f;
  f.gguf_name = "phi3";
  f.hf_classes = {{"Phi3ForCausalLM", "phi3"}};
  f.description = "Phi-3";
  f.fused_qkv = true;
  f.fused_gate_up = true;
  f.longrope = true;
  f.gguf_hparams = phi3_hparams;
  f.hf_own_keys = {"rope_scaling", "partial_rotary_factor"};
  f.hf_hparams = phi3_hf_hparams;
  f.hf_write_config = phi3_hf_write;
  return f;
}();

}  // namespace pagedchat
