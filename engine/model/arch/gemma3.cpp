// Gemma 3 (text part of 1B-27B; GGUF "gemma3", transformers Gemma3ForCausalLM): 5 sliding-window
// layers then 1 global one (layer l is global iff (l + 1) % 6 == 0 — a rule in code, not in the
// file, unless the file lists attention.sliding_window_pattern), local RoPE base 10000 without the
// global layers' frequency scaling, global base rope.freq_base (with rope_scaling), per-head q/k
// RMSNorm, "sandwich" norms (pre and post of attention and MLP), GELU(tanh) gated MLP, embeddings
// scaled by sqrt(hidden_size), attention scale 1/sqrt(head_dim) — except the 27B (62 layers),
// whose query_pre_attn_scalar is hidden_size / num_heads. GGUF norm weights already hold
// Gemma's (1 + w). Sources: transformers modeling_gemma3.py; ik_llama.cpp src/llama-hparams.cpp
// (LLM_ARCH_GEMMA3) and src/graphs/build_gemma3.cpp. Hugging Face checkpoints store Gemma's norm
// weights as w (hf_norm_weight_offset 1); config.json: transformers configuration_gemma3.py.
#include <cmath>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

namespace pagedchat {

namespace {

void gemma3_hparams(const GgufKeys& k, ModelConfig& c) {
  const int window = gguf_sliding_window(k);
  const std::optional<std::vector<int64_t>> pattern = k.get_per_layer("attention.sliding_window_pattern", c.n_layers);
  c.layer_specs.assign(std::size_t(c.n_layers), LayerSpec{});
  for (int l = 0; l < c.n_layers; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    const bool sliding = pattern ? (*pattern)[std::size_t(l)] != 0 : (l + 1) % 6 != 0;
    s.sliding_window = sliding ? window : 0;
    s.rope_theta = sliding ? 10000.0 : c.rope_theta;
    s.rope_scaled = !sliding;
  }
  c.activation = MlpActivation::kGeluTanh;
  c.embedding_scale = std::sqrt(float(c.hidden_size));
  if (c.n_layers == 62) c.attention_scale = 1.0f / std::sqrt(float(c.hidden_size / c.n_heads));
}

// Gemma3TextConfig's defaults: a Gemma3ForConditionalGeneration config.json's text_config leaves
// most of them out (gemma-3-4b-it gives hidden_size, intermediate_size, num_hidden_layers,
// rope_scaling and sliding_window only).
constexpr const char* kGemma3TextDefaults = R"({
  "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
  "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 131072, "rms_norm_eps": 1e-6,
  "tie_word_embeddings": true, "rope_theta": 1000000.0, "attention_bias": false,
  "query_pre_attn_scalar": 256, "sliding_window": 4096, "rope_local_base_freq": 10000.0,
  "sliding_window_pattern": 6})";

// Gemma 3 (modeling_gemma3.py): sliding layers with their own RoPE base and no rope_scaling,
// global layers with rope_theta and rope_scaling; GELU-tanh (hidden_activation, hidden_act is not
// read), embeddings times sqrt(hidden_size), scores times query_pre_attn_scalar^-0.5.
void gemma3_hf_hparams(const HfKeys& k, ModelConfig& c) {
  const nlohmann::json act = k.has("hidden_activation") ? k.values["hidden_activation"]
                                                        : nlohmann::json("gelu_pytorch_tanh");
  if (!act.is_string() || act.get<std::string>() != "gelu_pytorch_tanh")
    k.fail("hidden_activation " + load::brief(act) + " is not supported (only \"gelu_pytorch_tanh\")");
  if (k.get_bool("attention_bias").value_or(false))
    k.fail("'attention_bias' true is not supported for Gemma 3 (no attention bias terms)");
  if (k.has("attn_logit_softcapping"))
    k.fail("'attn_logit_softcapping' " + load::brief(k.values["attn_logit_softcapping"]) +
           " (attention logit soft-capping) is not supported");
  if (const auto cap = k.get_number("final_logit_softcapping")) {
    if (!(*cap > 0)) k.fail("'final_logit_softcapping' " + std::to_string(*cap) + " must be positive");
    c.final_logit_softcap = float(*cap);
  }
  const std::optional<int64_t> window = k.get_int("sliding_window", 1, 1 << 24);
  if (!window) k.fail("a Gemma 3 model needs 'sliding_window' (its local layers' window)");
  std::optional<std::vector<bool>> sliding = hf_sliding_layers(k, c.n_layers);
  if (!sliding) {
    // transformers: layer i is global iff (i + 1) % sliding_window_pattern == 0.
    const int64_t period = k.get_int("sliding_window_pattern", 1, load::kMaxLayers).value_or(6);
    sliding.emplace();
    for (int l = 0; l < c.n_layers; ++l) sliding->push_back((l + 1) % period != 0);
  }
  const double local = k.get_number("rope_local_base_freq").value_or(10000.0);
  if (!(local > 1)) k.fail("'rope_local_base_freq' " + std::to_string(local) + " must be greater than 1");
  c.layer_specs.assign(std::size_t(c.n_layers), LayerSpec{});
  for (int l = 0; l < c.n_layers; ++l) {
    LayerSpec& s = c.layer_specs[std::size_t(l)];
    const bool slides = (*sliding)[std::size_t(l)];
    s.sliding_window = slides ? int(*window) : 0;
    s.rope_theta = slides ? double(float(local)) : double(c.rope_theta);
    s.rope_scaled = !slides;
  }
  c.embedding_scale = std::sqrt(float(c.hidden_size));
  // Scores times query_pre_attn_scalar^-0.5; 0 (the default 1 / sqrt(head_dim)) when it is head_dim.
  const double qpas = k.get_number("query_pre_attn_scalar").value_or(double(c.head_dim));
  if (!(qpas > 0)) k.fail("'query_pre_attn_scalar' " + std::to_string(qpas) + " must be positive");
  if (qpas != double(c.head_dim)) c.attention_scale = 1.0f / std::sqrt(float(qpas));
}

void gemma3_hf_write(const ModelConfig& c, nlohmann::json& config) {
  const int window = hf_sliding_window(c);
  double local_theta = 10000.0;  // the RoPE base of the sliding layers
  for (int l = 0; l < c.n_layers; ++l)
    if (c.layer(l).sliding_window > 0) local_theta = c.layer(l).rope_theta;
  config.erase("hidden_act");
  config["hidden_activation"] = "gelu_pytorch_tanh";
  config["sliding_window"] = window > 0 ? window : c.max_seq_len;
  config["layer_types"] = hf_layer_types(c);
  // transformers before layer_types (4.50-4.52) read the period: written when the layers follow one.
  for (int period = 1; period <= c.n_layers + 1; ++period) {
    bool fits = true;
    for (int l = 0; l < c.n_layers; ++l) fits = fits && (c.layer(l).sliding_window > 0) == ((l + 1) % period != 0);
    if (fits) {
      config["sliding_window_pattern"] = period;
      break;
    }
  }
  config["rope_local_base_freq"] = hf_short_double(float(local_theta));
  const float scale = c.attention_scale;
  double qpas = c.head_dim;
  if (scale != 0.0f) {
    qpas = std::round(1.0 / (double(scale) * double(scale)));
    if (1.0f / std::sqrt(float(qpas)) != scale) qpas = 1.0 / (double(scale) * double(scale));
  }
  config["query_pre_attn_scalar"] = qpas == std::floor(qpas) ? nlohmann::json(int64_t(qpas)) : nlohmann::json(qpas);
  config["final_logit_softcapping"] = c.final_logit_softcap > 0.0f
                                          ? nlohmann::json(hf_short_double(c.final_logit_softcap))
                                          : nlohmann::json(nullptr);
  config["attn_logit_softcapping"] = nullptr;
  config["attention_bias"] = false;
}

}  // namespace

const ModelFamily kGemma3Family = [] {
  ModelFamily f;
  f.gguf_name = "gemma3";
  f.hf_classes = {{"Gemma3ForCausalLM", "gemma3_text"}, {"Gemma3ForConditionalGeneration", "gemma3", true}};
  f.description = "Gemma 3";
  f.qk_norm = true;
  f.pre_norm = true;
  f.post_norm = true;
  f.activation = MlpActivation::kGeluTanh;
  f.gguf_hparams = gemma3_hparams;
  f.hf_defaults = kGemma3TextDefaults;
  f.hf_own_keys = {"layer_types", "hidden_act"};
  f.hf_norm_weight_offset = 1.0f;
  f.hf_hparams = gemma3_hf_hparams;
  f.hf_write_config = gemma3_hf_write;
  return f;
}();

}  // namespace pagedchat
